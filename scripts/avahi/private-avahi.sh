#!/usr/bin/env bash
# A private avahi-daemon for the discovery tests: its own D-Bus system bus on a socket in FOLDER, and the daemon
# in a network namespace of its own with one veth interface (multicast on), so it neither meets the machine's
# network nor another avahi-daemon (its pid file and socket are on a tmpfs in its own mount namespace).
#
#   scripts/avahi/private-avahi.sh start FOLDER         # prints DBUS_SYSTEM_BUS_ADDRESS=unix:path=FOLDER/bus
#   scripts/avahi/private-avahi.sh stop FOLDER          # ends both daemons (by the pids it kept in FOLDER)
#   scripts/avahi/private-avahi.sh stop-avahi FOLDER    # ends the avahi-daemon only (the bus stays)
#   scripts/avahi/private-avahi.sh start-avahi FOLDER   # starts it again on the same bus
#
# Avahi's client library and its tools (avahi-browse, avahi-publish) reach this daemon when the variable is set.
# Root is needed (a network namespace; the daemon's own checks). Exit status 2 says "cannot run here", with why.
set -euo pipefail

command=${1:-}
folder=${2:-}
usage="usage: $0 start|stop|stop-avahi|start-avahi FOLDER"
[ -n "$command" ] && [ -n "$folder" ] || { echo "$usage" >&2; exit 64; }

# Whether process $1 runs (a zombie nobody has reaped yet does not: here the daemon's parent may be gone).
alive() {
  [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat"
}

# Ends daemon $1 (avahi or dbus) by the pid kept in FOLDER.
end() {
  local name=$1 pid
  [ -f "$folder/$name.pid" ] || return 0
  pid=$(cat "$folder/$name.pid")
  # avahi-daemon withdraws its records on SIGTERM; a system-type dbus-daemon ignores it, and holds nothing.
  if [ "$name" = avahi ]; then kill "$pid" 2>/dev/null || true; else kill -9 "$pid" 2>/dev/null || true; fi
  for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$folder/$name.pid"
}

cannot() {
  echo "cannot run a private avahi-daemon: $*" >&2
  exit 2
}

start_bus() {
  # The bus: the system bus's type (Avahi asks for the system bus), on our socket, open to every client.
  cat >"$folder/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$folder/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
  </policy>
</busconfig>
CONF
  rm -f "$folder/bus"
  dbus-daemon --config-file="$folder/bus.conf" --fork --print-pid=3 3>"$folder/dbus.pid" >/dev/null 2>"$folder/dbus.log"
  for _ in $(seq 50); do [ -S "$folder/bus" ] && return 0; sleep 0.1; done
  end dbus
  cannot "dbus-daemon made no socket ($(tail -n 1 "$folder/dbus.log"))"
}

start_avahi() {
  cat >"$folder/avahi.conf" <<CONF
[server]
host-name=aulos-test
domain-name=local
use-ipv4=yes
use-ipv6=no
allow-interfaces=avahi0
enable-dbus=yes
ratelimit-interval-usec=1000000
ratelimit-burst=1000
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
[reflector]
[rlimits]
CONF
  # One end of a veth pair (multicast on) is an interface Avahi uses (it passes lo by; this kernel has no dummy
  # interfaces); the kernel loops the daemon's multicast back to it, which is all one machine needs. The mount
  # namespace gives the daemon its own pid file.
  DBUS_SYSTEM_BUS_ADDRESS="unix:path=$folder/bus" unshare --net --mount --propagation private bash -c '
    set -e
    ip link set lo up
    # IPv4 only: a link-local IPv6 address would be resolved now and then instead of 10.78.0.1.
    sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip link add avahi0 type veth peer name avahi1
    ip link set avahi1 up
    ip link set avahi0 multicast on up
    ip addr add 10.78.0.1/24 dev avahi0
    mkdir -p /run/avahi-daemon
    mount -t tmpfs tmpfs /run/avahi-daemon
    exec avahi-daemon --no-drop-root --no-chroot --no-rlimits -f "$1"
  ' avahi-namespace "$folder/avahi.conf" >"$folder/avahi.log" 2>&1 &
  echo $! >"$folder/avahi.pid"
  # Ready once it has registered its host name (it is on the bus by then).
  for _ in $(seq 100); do
    grep -q "Server startup complete" "$folder/avahi.log" 2>/dev/null && return 0
    alive "$(cat "$folder/avahi.pid")" || break
    sleep 0.1
  done
  end avahi
  cannot "$(tail -n 1 "$folder/avahi.log" 2>/dev/null)"
}

case "$command" in
  stop) end avahi; end dbus; exit 0 ;;
  stop-avahi) end avahi; exit 0 ;;
  start | start-avahi) ;;
  *) echo "$usage" >&2; exit 64 ;;
esac

for tool in dbus-daemon avahi-daemon unshare ip; do
  command -v "$tool" >/dev/null 2>&1 || cannot "no $tool (scripts/setup.sh --tests)"
done
[ "$(id -u)" -eq 0 ] || cannot "needs root (a network namespace)"
mkdir -p "$folder"
folder=$(cd "$folder" && pwd)
# The daemons outlive this script: they must not hold the caller's descriptors (a test reading this script's
# output to its end, or waiting for it, would wait for them too).
for descriptor in /proc/$$/fd/*; do
  descriptor=${descriptor##*/}
  if [ "$descriptor" -gt 2 ]; then eval "exec $descriptor>&-" 2>/dev/null || true; fi
done

end avahi
if [ "$command" = start ]; then
  end dbus
  start_bus
fi
[ -S "$folder/bus" ] || cannot "no bus in $folder (start it first)"
start_avahi
echo "DBUS_SYSTEM_BUS_ADDRESS=unix:path=$folder/bus"
