#!/usr/bin/env bash
# Network MIDI under real timing between two network namespaces, with delay and loss (issue 35's quality bar;
# `make test-network-midi`, not part of `make test`). Needs root, iproute2, python3 and pymidi
# (scripts/setup.sh --tests).
#
#   scripts/network-midi-test.sh [NOTES [SECONDS [LOSSES [DELAY_MS [JITTER_MS [SEED]]]]]]
#   defaults:                     500    60       "0 1 5"  5          2           1
#
# Namespace B runs `aulos play --device null --record … --network-midi 10.77.0.2:5004` ($AULOS, else the
# newer of .build/release/aulos and .build/debug/aulos). Namespace A, joined to B by a veth pair, runs the sender,
# `scripts/pymidi-peer.py stream` (pymidi's packets, a recovery journal with chapters N and C in every packet,
# CK every 10 s, RS moving the checkpoint), through `scripts/udp-relay.py`, which adds DELAY ± JITTER ms and
# drops LOSS % of the datagrams both ways on both ports (seeded: the same drops every run) and counts them: this
# kernel has no netem (docs/network-midi.md). For each loss rate: NOTES notes over SECONDS s; after the last
# event and RS confirming the last packet, 3 s of quiet, then `aulos status --json` must show 0 voices; then BY,
# and the session's end line must say 0 notes released (the notes still held: "stuck notes" in the table), as
# many packets lost as the relay dropped, and every loss repaired from the journal. A summary table at the end;
# exit status 1 on any stuck note, count mismatch or crash. KEEP=1 keeps the logs (kept anyway on a failure).
set -euo pipefail

notes=${1:-500}
seconds=${2:-60}
losses=${3:-"0 1 5"}
delay=${4:-5}
jitter=${5:-2}
seed=${6:-1}

root=$(cd "$(dirname "$0")/.." && pwd)
aulos=${AULOS:-}
if [ -z "$aulos" ]; then
  # The newer build of the two (a stale release build must not stand in for today's debug one).
  for candidate in "$root/.build/release/aulos" "$root/.build/debug/aulos"; do
    if [ -x "$candidate" ] && { [ -z "$aulos" ] || [ "$candidate" -nt "$aulos" ]; }; then aulos=$candidate; fi
  done
fi
[ -x "$aulos" ] || { echo "network-midi-test: no aulos built (swift build, or set AULOS)" >&2; exit 1; }
python=${AULOS_PYMIDI_PYTHON:-$root/.build-pymidi/venv/bin/python3}
"$python" -c 'import pymidi.packets' 2>/dev/null ||
  { echo "network-midi-test: no Python with pymidi: run scripts/setup.sh --tests" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "network-midi-test: needs root (network namespaces)" >&2; exit 1; }
command -v ip >/dev/null || { echo "network-midi-test: needs iproute2 (ip)" >&2; exit 1; }

# Names unique to this run (parallel runs do not clash); the addresses live only inside the two namespaces.
tag="nm$$"
nsa="aulos-${tag}-a"
nsb="aulos-${tag}-b"
work=$(mktemp -d /tmp/aulos-network-midi.XXXXXX)
pids=()

# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  ip netns del "$nsa" 2>/dev/null || true
  ip netns del "$nsb" 2>/dev/null || true
  if [ "${KEEP:-0}" = 1 ] || [ "$status" -ne 0 ]; then
    echo "network-midi-test: logs kept in $work" >&2
  else
    rm -rf "$work"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ip netns add "$nsa"
ip netns add "$nsb"
ip link add "v${tag}a" type veth peer name "v${tag}b"
ip link set "v${tag}a" netns "$nsa"
ip link set "v${tag}b" netns "$nsb"
ip -n "$nsa" addr add 10.77.0.1/24 dev "v${tag}a"
ip -n "$nsb" addr add 10.77.0.2/24 dev "v${tag}b"
for ns in "$nsa" "$nsb"; do ip -n "$ns" link set lo up; done
ip -n "$nsa" link set "v${tag}a" up
ip -n "$nsb" link set "v${tag}b" up
if ip netns exec "$nsa" tc qdisc add dev "v${tag}a" root netem delay 1ms 2>/dev/null; then
  ip netns exec "$nsa" tc qdisc del dev "v${tag}a" root
  echo "network-midi-test: netem is available here; the relay is used anyway (it counts drops per packet kind)"
fi
echo "network-midi-test: $aulos; $notes notes over $seconds s; ${delay} ms ± ${jitter} ms; loss: $losses %; seed $seed"

# Waits (≤ $2 s) until the command $1 succeeds.
wait_for() {
  local deadline=$((SECONDS + $2))
  until eval "$1"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.1
  done
}

rows=()
failed=0
for loss in $losses; do
  run="$work/loss-$loss"
  mkdir -p "$run"
  echo "--- loss $loss %"
  ip netns exec "$nsb" "$aulos" play --device null --duration $((seconds + 120)) --record "$run/take.wav" \
    --control-socket "$run/control" --network-midi 10.77.0.2:5004 >"$run/aulos.out" 2>"$run/aulos.log" &
  aulos_pid=$!
  pids+=("$aulos_pid")
  wait_for "grep -qs 'network MIDI (AppleMIDI) on' '$run/aulos.log' || ! kill -0 $aulos_pid 2>/dev/null" 30
  wait_for "'$aulos' status --json --socket '$run/control' >/dev/null 2>&1 || ! kill -0 $aulos_pid 2>/dev/null" 30
  ip netns exec "$nsa" python3 "$root/scripts/udp-relay.py" --listen 127.0.0.1:6004,6005 \
    --target 10.77.0.2:5004,5005 --delay-ms "$delay" --jitter-ms "$jitter" \
    --loss "$(python3 -c "print($loss / 100)")" --seed "$seed" --stats "$run/relay.json" >/dev/null &
  relay_pid=$!
  pids+=("$relay_pid")
  sleep 0.3
  ip netns exec "$nsa" "$python" "$root/scripts/pymidi-peer.py" stream 127.0.0.1 6004 "$notes" "$seconds" \
    "$seed" "$run/barrier" >"$run/stream.json" 2>"$run/stream.err" &
  sender_pid=$!
  pids+=("$sender_pid")
  voices=-1
  if wait_for "[ -e '$run/barrier.done' ] || ! kill -0 $sender_pid 2>/dev/null" $((seconds + 90)) &&
    [ -e "$run/barrier.done" ]; then
    sleep 3  # release tails end; the pedal was lifted with the last event
    "$aulos" status --json --socket "$run/control" >"$run/status.json" 2>&1 || true
    voices=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('voices', -1))" \
      "$run/status.json" 2>/dev/null || echo -1)
  fi
  touch "$run/barrier.go"
  sender_status=0
  wait "$sender_pid" || sender_status=$?
  sleep 0.5  # the BYs through the relay's delay
  kill -TERM "$relay_pid" 2>/dev/null || true
  wait "$relay_pid" || true
  kill -INT "$aulos_pid" 2>/dev/null || true
  aulos_status=0
  wait "$aulos_pid" || aulos_status=$?
  # One row: checks and the figures, from the three sides' reports.
  row=$(python3 - "$run" "$loss" "$voices" "$sender_status" "$aulos_status" <<'EOF'
import json, re, sys
run, loss = sys.argv[1], sys.argv[2]
voices, sender_status, aulos_status = (int(value) for value in sys.argv[3:6])
problems = []
def load(name):
    try:
        return json.load(open(f'{run}/{name}'))
    except (OSError, ValueError):
        problems.append(f'no {name}')
        return {}
stream = load('stream.json')
relay = load('relay.json').get('ports', {})
out = relay.get('6005/out', {})
dropped = out.get('dropped_rtp', -1)
sequences = out.get('dropped_rtp_sequence', [])
# Loss events as the receiver sees them: runs of consecutive sequence numbers dropped.
events = sum(1 for i, s in enumerate(sequences) if i == 0 or (sequences[i - 1] + 1) & 0xFFFF != s)
dropped_other = sum(p.get('dropped', 0) for p in relay.values()) - max(dropped, 0)
log = open(f'{run}/aulos.log', errors='replace').read()
end = re.search(r'said goodbye after (\d+) packets?, (\d+) lost(?:, (\d+) repaired from the journal)?'
                r'(?:, (\d+) ended every note \(no usable journal\))?; released (\d+) notes?', log)
if end:
    packets, lost, repaired, released_all, released = (int(g or 0) for g in end.groups())
else:
    packets = lost = repaired = released_all = released = -1
    problems.append('no session-end line in the log')
if sender_status != 0: problems.append(f'sender exit {sender_status}')
if aulos_status != 0: problems.append(f'aulos exit {aulos_status}')
if not stream.get('confirmed_last'): problems.append('last packet never confirmed by RS')
if voices != 0: problems.append(f'{voices} voices sounding at the end')
if released != 0: problems.append(f'{released} notes held at BY')
if lost != dropped: problems.append(f'aulos lost {lost}, relay dropped {dropped}')
if packets != out.get('forwarded_rtp', -2):
    problems.append(f'aulos got {packets}, relay forwarded {out.get("forwarded_rtp")}')
if repaired != events: problems.append(f'{repaired} repaired of {events} loss events')
if released_all: problems.append(f'{released_all} losses without a usable journal')
verdict = 'pass' if not problems else 'FAIL: ' + '; '.join(problems)
print('|'.join(str(x) for x in (loss, stream.get('packets', '?'), dropped, dropped_other, lost, events, repaired,
                                 released, voices, stream.get('ck_completed', '?'), stream.get('rs', '?'),
                                 stream.get('journal_bytes_max', '?'), verdict)))
EOF
)
  echo "$row"
  rows+=("$row")
  case "$row" in *"|pass") ;; *) failed=1 ;; esac
done

echo
echo "Network MIDI between namespaces: $notes notes over $seconds s, ${delay} ms ± ${jitter} ms each way, seed $seed"
format='%-6s %-8s %-9s %-9s %-8s %-7s %-9s %-7s %-7s %-4s %-4s %-8s %s\n'
# shellcheck disable=SC2059  # the format is the one above, for every line
printf "$format" "loss%" "packets" "dropped" "other" "lost" "loss" "repaired" "stuck" "voices" "CK" "RS" "journal" \
  "result"
# shellcheck disable=SC2059
printf "$format" "" "sent" "(RTP)" "dropped" "(aulos)" "events" "(aulos)" "notes" "at end" "" "" "max B" ""
for row in "${rows[@]}"; do
  IFS='|' read -r l p d o lo e r s vo c rs j v <<<"$row"
  # shellcheck disable=SC2059
  printf "$format" "$l" "$p" "$d" "$o" "$lo" "$e" "$r" "$s" "$vo" "$c" "$rs" "$j" "$v"
done
exit $failed
