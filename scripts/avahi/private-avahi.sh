#!/usr/bin/env bash
# A private avahi-daemon for the discovery tests: its own D-Bus system bus on a socket in FOLDER, and the daemon
# in a network namespace of its own with one veth interface (multicast on), so it neither meets the machine's
# network nor another avahi-daemon (its pid file and socket are on a tmpfs in its own mount namespace).
#
#   scripts/avahi/private-avahi.sh start FOLDER   # prints DBUS_SYSTEM_BUS_ADDRESS=unix:path=FOLDER/bus
#   scripts/avahi/private-avahi.sh stop FOLDER    # ends both daemons (by the pids it kept in FOLDER)
#
# Avahi's client library and its tools (avahi-browse, avahi-publish) reach this daemon when the variable is set.
# Root is needed (a network namespace; the daemon's own checks). Exit status 2 says "cannot run here", with why.
set -euo pipefail

command=${1:-}
folder=${2:-}
if [ -z "$command" ] || [ -z "$folder" ]; then
  echo "usage: $0 start|stop FOLDER" >&2
  exit 64
fi

# Whether process $1 runs (a zombie nobody has reaped yet does not: here the daemon's parent may be gone).
alive() {
  [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat"
}

stop() {
  for name in avahi dbus; do
    if [ -f "$folder/$name.pid" ]; then
      pid=$(cat "$folder/$name.pid")
      # avahi-daemon withdraws its records on SIGTERM; a system-type dbus-daemon ignores it, and holds nothing.
      if [ "$name" = avahi ]; then kill "$pid" 2>/dev/null || true; else kill -9 "$pid" 2>/dev/null || true; fi
      for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$folder/$name.pid"
    fi
  done
}

if [ "$command" = stop ]; then
  stop
  exit 0
fi
[ "$command" = start ] || { echo "usage: $0 start|stop FOLDER" >&2; exit 64; }

for tool in dbus-daemon avahi-daemon unshare ip; do
  command -v "$tool" >/dev/null 2>&1 || { echo "cannot run a private avahi-daemon: no $tool (scripts/setup.sh --tests)" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "cannot run a private avahi-daemon: needs root (a network namespace)" >&2; exit 2; }

mkdir -p "$folder"
folder=$(cd "$folder" && pwd)
stop
# The daemons outlive this script: they must not hold the caller's descriptors (a test reading this script's
# output to its end, or waiting for it, would wait for them too).
for descriptor in /proc/$$/fd/*; do
  descriptor=${descriptor##*/}
  if [ "$descriptor" -gt 2 ]; then eval "exec $descriptor>&-" 2>/dev/null || true; fi
done

# The bus: the system bus's type (Avahi asks for the system bus), on our socket, with Avahi's own policy.
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
dbus-daemon --config-file="$folder/bus.conf" --fork --print-pid=3 3>"$folder/dbus.pid" >/dev/null 2>"$folder/dbus.log"
for _ in $(seq 50); do [ -S "$folder/bus" ] && break; sleep 0.1; done
[ -S "$folder/bus" ] || { echo "cannot run a private avahi-daemon: dbus-daemon made no socket" >&2; stop; exit 2; }

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

export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$folder/bus"
# One end of a veth pair (multicast on) is an interface Avahi uses (it passes lo by; this kernel has no dummy
# interfaces); the kernel loops the daemon's multicast back to it, which is all one machine needs. The mount
# namespace gives the daemon its own pid file.
unshare --net --mount --propagation private bash -c '
  set -e
  ip link set lo up
  ip link add avahi0 type veth peer name avahi1
  ip link set avahi1 up
  ip link set avahi0 multicast on up
  ip addr add 10.78.0.1/24 dev avahi0
  mkdir -p /run/avahi-daemon
  mount -t tmpfs tmpfs /run/avahi-daemon
  exec avahi-daemon --no-drop-root --no-chroot --no-rlimits -f "$1"
' avahi-namespace "$folder/avahi.conf" >"$folder/avahi.log" 2>&1 &
echo $! >"$folder/avahi.pid"
# Ready when the daemon answers on the bus (its name is taken once it runs).
for _ in $(seq 100); do
  if grep -q "Server startup complete" "$folder/avahi.log" 2>/dev/null; then
    echo "DBUS_SYSTEM_BUS_ADDRESS=$DBUS_SYSTEM_BUS_ADDRESS"
    exit 0
  fi
  alive "$(cat "$folder/avahi.pid")" || break
  sleep 0.1
done
echo "cannot run a private avahi-daemon: $(tail -n 1 "$folder/avahi.log" 2>/dev/null)" >&2
stop
exit 2
