#!/usr/bin/env bash
# Discovery with a real avahi-daemon and Avahi's own tools (`make test-avahi`; root; ~20 s). On a private bus and
# daemon (scripts/avahi/private-avahi.sh), it checks what a peer sees and what `aulos devices` lists:
#   1. `aulos play --network-midi 25004` is advertised: avahi-browse -rpt _apple-midi._udp resolves 'Aulos' on
#      port 25004;
#   2. `aulos devices` lists services avahi-publish announces (_apple-midi._udp and _midi2._udp), with their
#      address, port and interface;
#   3. the daemon goes away: aulos says once that it is not advertised and plays on; `aulos devices` says so in
#      one line and exits 0; the daemon comes back: aulos is advertised again, by itself;
#   4. the bus itself goes away and comes back (a client cannot even be made): advertised again;
#   5. aulos ends: withdrawn; a name in use: with avahi-publish holding 'Aulos', aulos is advertised as 'Aulos #2'.
# $AULOS, else the newer of .build/release/aulos and .build/debug/aulos. KEEP=1 keeps the logs (kept on a failure).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
aulos=${AULOS:-}
if [ -z "$aulos" ]; then
  for candidate in "$root/.build/release/aulos" "$root/.build/debug/aulos"; do
    if [ -x "$candidate" ] && { [ -z "$aulos" ] || [ "$candidate" -nt "$aulos" ]; }; then aulos=$candidate; fi
  done
fi
[ -x "$aulos" ] || { echo "avahi-test: no aulos built (swift build, or set AULOS)" >&2; exit 1; }
for tool in avahi-browse avahi-publish; do
  command -v "$tool" >/dev/null || { echo "avahi-test: no $tool: run scripts/setup.sh --tests" >&2; exit 1; }
done

folder=$(mktemp -d /tmp/aulos-avahi-test.XXXXXX)
private="$root/scripts/avahi/private-avahi.sh"
pids=()
failed=0
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  "$private" stop "$folder" || true
  if [ "$failed" -eq 0 ] && [ -z "${KEEP:-}" ]; then rm -rf "$folder"; else echo "avahi-test: logs in $folder"; fi
}
trap cleanup EXIT

fail() {
  echo "avahi-test: FAIL: $*" >&2
  failed=1
  exit 1
}
pass() { echo "avahi-test: ok: $*"; }

# Waits up to $2 s (default 10) for file $1 to hold a line matching $3 ($4: at least that many such lines).
wait_for() {
  local file=$1 seconds=$2 pattern=$3 count=${4:-1}
  for _ in $(seq $((seconds * 10))); do
    [ "$(grep -c -- "$pattern" "$file" 2>/dev/null || true)" -ge "$count" ] && return 0
    sleep 0.1
  done
  return 1
}

# The resolved lines (=;…) avahi-browse prints for _apple-midi._udp once its cache is answered.
browse() { avahi-browse -rpt _apple-midi._udp 2>/dev/null | grep '^=' || true; }

line=$("$private" start "$folder") || { echo "avahi-test: $line" >&2; exit 1; }
export "${line?}"

# 1. Aulos advertised, as a peer resolves it.
"$aulos" play --device null --network-midi 25004 --control-socket none --duration 120 >"$folder/aulos.log" 2>&1 &
pids+=($!)
wait_for "$folder/aulos.log" 10 "advertised as 'Aulos' (_apple-midi._udp port 25004)" ||
  fail "aulos did not say it was advertised: $(tail -n 3 "$folder/aulos.log")"
browse >"$folder/browse1.txt"
grep -q '^=;[^;]*;IPv4;Aulos;_apple-midi._udp;local;aulos-test.local;10.78.0.1;25004;' "$folder/browse1.txt" ||
  fail "avahi-browse does not resolve Aulos on port 25004: $(cat "$folder/browse1.txt")"
pass "avahi-browse -rpt _apple-midi._udp resolves 'Aulos' at 10.78.0.1:25004"

# 2. Peers announced by avahi-publish, in aulos devices.
avahi-publish -s "Studio Mac" _apple-midi._udp 5004 >"$folder/publish1.log" 2>&1 &
pids+=($!)
avahi-publish -s "Desk Controller" _midi2._udp 5506 >"$folder/publish2.log" 2>&1 &
pids+=($!)
wait_for "$folder/publish1.log" 10 "Established" && wait_for "$folder/publish2.log" 10 "Established" ||
  fail "avahi-publish did not establish its services"
"$aulos" devices >"$folder/devices1.txt" 2>/dev/null || fail "aulos devices failed"
grep -q '^  Studio Mac: AppleMIDI 10.78.0.1:5004 on ' "$folder/devices1.txt" &&
  grep -q '^  Desk Controller: Network MIDI 2.0 10.78.0.1:5506 on ' "$folder/devices1.txt" &&
  grep -q '^  Aulos: AppleMIDI 10.78.0.1:25004 on ' "$folder/devices1.txt" ||
  fail "aulos devices does not list the published peers: $(sed -n '/Network MIDI peers/,$p' "$folder/devices1.txt")"
pass "aulos devices lists Studio Mac (AppleMIDI 5004), Desk Controller (Network MIDI 2.0 5506) and Aulos"

# 3. The daemon goes away and comes back.
"$private" stop-avahi "$folder"
wait_for "$folder/aulos.log" 10 "not advertised: avahi-daemon is not running; peers can add this box by address" ||
  fail "aulos did not say it is no longer advertised"
status=0
"$aulos" devices >"$folder/devices2.txt" 2>/dev/null || status=$?
[ "$status" -eq 0 ] || fail "aulos devices without the daemon exited $status"
grep -q '^  none: avahi-daemon is not running; peers can still be reached by address$' "$folder/devices2.txt" ||
  fail "aulos devices without the daemon: $(sed -n '/Network MIDI peers/,$p' "$folder/devices2.txt")"
pass "without the daemon: aulos says it is not advertised; aulos devices says so in one line, exit status 0"
"$private" start-avahi "$folder" >/dev/null
wait_for "$folder/aulos.log" 15 "advertised as 'Aulos' (_apple-midi._udp port 25004)" 2 ||
  fail "aulos was not advertised again when the daemon came back"
browse | grep -q ';Aulos;_apple-midi._udp;local;aulos-test.local;10.78.0.1;25004;' ||
  fail "avahi-browse does not see Aulos after the daemon came back"
pass "the daemon back: aulos advertised again by itself"

# 4. The bus and the daemon go away and come back.
"$private" stop "$folder"
sleep 1
line=$("$private" start "$folder") || fail "cannot restart the private daemon: $line"
wait_for "$folder/aulos.log" 20 "advertised as 'Aulos' (_apple-midi._udp port 25004)" 3 ||
  fail "aulos was not advertised again when the bus came back"
pass "the bus back: aulos advertised again by itself"
kill -0 "${pids[0]}" 2>/dev/null || fail "aulos play ended: $(tail -n 3 "$folder/aulos.log")"
[ "$(grep -c "not advertised" "$folder/aulos.log")" -le 2 ] ||
  fail "aulos repeated its notice: $(grep "not advertised" "$folder/aulos.log")"

# 5. Withdrawn when aulos ends; then a name in use: Avahi's alternative.
kill "${pids[0]}"
wait "${pids[0]}" 2>/dev/null || true
for _ in $(seq 50); do browse | grep -q ';25004;' || break; sleep 0.1; done
! browse | grep -q ';25004;' || fail "Aulos is still advertised after it ended"
pass "aulos ended: its service is withdrawn"
avahi-publish -s "Aulos" _apple-midi._udp 6004 >"$folder/publish3.log" 2>&1 &
pids+=($!)
wait_for "$folder/publish3.log" 10 "Established" || fail "avahi-publish did not establish 'Aulos'"
"$aulos" play --device null --network-midi 26004 --control-socket none --duration 120 >"$folder/aulos2.log" 2>&1 &
pids+=($!)
wait_for "$folder/aulos2.log" 10 "advertised as 'Aulos #2' (_apple-midi._udp port 26004)" ||
  fail "the second aulos was not renamed: $(grep network "$folder/aulos2.log")"
# avahi-browse -p writes the space as \032 and the # as \035.
browse >"$folder/browse5.txt"
grep -q ';Aulos\\032\\0352;_apple-midi._udp;local;aulos-test.local;10.78.0.1;26004;' "$folder/browse5.txt" ||
  fail "avahi-browse does not resolve 'Aulos #2' on port 26004: $(cat "$folder/browse5.txt")"
pass "a name in use: the second aulos is advertised as 'Aulos #2'"
echo "avahi-test: passed in ${SECONDS} s"
