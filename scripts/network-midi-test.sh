#!/usr/bin/env bash
# Network MIDI under real timing between two network namespaces, with delay and loss (issue 35's quality bar;
# `make test-network-midi`, and in a QEMU VM with a stock kernel `make test-network-midi-vm`; not part of
# `make test`). Needs root, iproute2, python3 and pymidi (scripts/setup.sh --tests).
#
#   scripts/network-midi-test.sh [NOTES [SECONDS [LOSSES [DELAY_MS [JITTER_MS [SEED]]]]]]
#   defaults:                     500    60       "0 1 5"  5          2           1
#
# Namespace B runs `aulos play --device null --record … --network-midi 10.77.0.2:5004` ($AULOS, else the
# newer of .build/release/aulos and .build/debug/aulos). Namespace A, joined to B by a veth pair, runs the sender,
# `scripts/pymidi-peer.py stream` (pymidi's packets, a recovery journal with chapters N and C in every packet,
# CK every 10 s, RS moving the checkpoint). Delay, jitter and loss come from one of two places:
#   netem  the kernel's `tc qdisc … netem delay DELAY JITTER loss LOSS%` on both veth ends (order kept by a
#          `rate`), RTP-MIDI packets to the data port in a netem of their own (a prio qdisc and a u32 filter),
#          so its "dropped" count is the RTP-MIDI loss; session packets (IN, OK, CK, RS) in another, both ways.
#          netem's drops are random, not seeded: scripts/rtp-sniff.py in B logs which sequence numbers arrived,
#          which gives the loss events. The BYs at the end are spared (loss 0 from then on).
#   relay  `scripts/udp-relay.py` in A adds DELAY ± JITTER ms and drops LOSS % of the datagrams both ways on both
#          ports (seeded: the same drops every run) and counts them, for kernels without netem
#          (CONFIG_NET_SCH_NETEM unset, as on this project's CI machines; docs/network-midi.md).
# NETEM=1 needs netem, NETEM=0 uses the relay, unset: netem when `tc qdisc add … netem` works here.
# For each loss rate: NOTES notes over SECONDS s; after the last event and RS confirming the last packet, 3 s
# of quiet, then `aulos status --json` must show 0 voices; then BY, and the session's end line must say 0
# notes released (the notes still held: "stuck notes" in the table), as many packets lost as were dropped on
# the way, and every loss event repaired from the journal. A summary table at the end; exit status 1 on any
# stuck note, count mismatch or crash. KEEP=1 keeps the logs (kept anyway on a failure). PYMIDI_PEER=FILE runs
# another copy of the sender (to check that the checks bite: e.g. one whose journal leaves out OFFBITS).
# AULOS_DEVICE (default null) is the PCM aulos plays to; AULOS_PLAY_OPTIONS adds options to its command line.
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
peer=${PYMIDI_PEER:-$root/scripts/pymidi-peer.py}
device=${AULOS_DEVICE:-null}
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
# A veth hands each packet to the receive backlog of the CPU that sent it, and two CPUs' backlogs can deliver two
# packets in the other order (seen in the 2-CPU VM: 1 RTP-MIDI packet in 230 overtaken by the next). Receive
# Packet Steering to CPU 0 puts every packet into one backlog, in the order they were sent, as the relay and
# netem (with a rate) keep it. Overtaken packets are still counted below if they happen.
ip netns exec "$nsb" sh -c "echo 1 >/sys/class/net/v${tag}b/queues/rx-0/rps_cpus" 2>/dev/null ||
  echo "network-midi-test: cannot steer received packets to one CPU (RPS); they may arrive out of order"
netem_here=false
if ip netns exec "$nsa" tc qdisc add dev "v${tag}a" root netem delay 1ms 2>/dev/null; then
  ip netns exec "$nsa" tc qdisc del dev "v${tag}a" root
  netem_here=true
fi
case "${NETEM:-}" in
  1) $netem_here || { echo "network-midi-test: NETEM=1 but this kernel has no netem (sch_netem)" >&2; exit 1; }
     mode=netem ;;
  0) mode=relay ;;
  "") if $netem_here; then mode=netem; else mode=relay; fi ;;
  *) echo "network-midi-test: NETEM must be 1, 0 or unset" >&2; exit 1 ;;
esac
if [ $mode = netem ]; then
  # netem sits on the veth itself, so the sender talks to aulos directly; otherwise to the relay's ports.
  target=(10.77.0.2 5004)
  drops="netem, unseeded"
else
  target=(127.0.0.1 6004)
  drops="relay, seed $seed"
fi
echo "network-midi-test: $aulos; $notes notes over $seconds s; ${delay} ms ± ${jitter} ms; loss: $losses %;" \
  "seed $seed; $mode"

# netem on one veth end (namespace $1, device $2) with loss $3 %: a prio qdisc whose band 1:1 (netem 10:) takes
# the RTP-MIDI packets to aulos's data port, band 1:2 (netem 20:) every other UDP datagram (the session's), band
# 1:3 (a plain fifo) the rest (ARP: a lost ARP would only stall the link). Two netems, so that netem's own
# "dropped" count of 10: is the RTP-MIDI loss. `rate 1gbit` makes netem keep the order (a packet waits for the
# one before it, as the relay does), which jitter alone would not; its serialisation time is ~1 µs a packet.
shape() {
  local ns=$1 dev=$2 loss=$3 band
  ip netns exec "$ns" tc qdisc del dev "$dev" root 2>/dev/null || true
  ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: prio bands 3 priomap 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2
  for band in 1 2; do
    ip netns exec "$ns" tc qdisc add dev "$dev" parent "1:$band" handle "${band}0:" netem limit 10000 \
      delay "${delay}ms" "${jitter}ms" loss "${loss}%" rate 1gbit
  done
  # RTP-MIDI: IPv4 with a 20-byte header, UDP to port 5005, and at offset 28 RTP version 2, payload type 0x61
  # with or without the marker bit (an AppleMIDI session packet starts FF FF instead).
  ip netns exec "$ns" tc filter add dev "$dev" parent 1: protocol ip prio 1 u32 match u8 0x45 0xff at 0 \
    match ip protocol 17 0xff match ip dport 5005 0xffff match u16 0x8061 0xc07f at 28 flowid 1:1
  ip netns exec "$ns" tc filter add dev "$dev" parent 1: protocol ip prio 2 u32 match ip protocol 17 0xff \
    flowid 1:2
}
# The same delays from now on, without loss (`change` keeps the packets queued in netem, a new qdisc would not).
unlossy() {
  local band
  for band in 1 2; do
    ip netns exec "$1" tc qdisc change dev "$2" parent "1:$band" handle "${band}0:" netem limit 10000 \
      delay "${delay}ms" "${jitter}ms" rate 1gbit
  done
}

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
  started=$SECONDS
  # shellcheck disable=SC2086  # AULOS_PLAY_OPTIONS is a list of options
  ip netns exec "$nsb" "$aulos" play --device "$device" ${AULOS_PLAY_OPTIONS:-} --duration $((seconds + 120)) \
    --record "$run/take.wav" --control-socket "$run/control" --network-midi 10.77.0.2:5004 \
    >"$run/aulos.out" 2>"$run/aulos.log" &
  aulos_pid=$!
  pids+=("$aulos_pid")
  wait_for "grep -qs 'network MIDI (AppleMIDI) on' '$run/aulos.log' || ! kill -0 $aulos_pid 2>/dev/null" 30
  wait_for "'$aulos' status --json --socket '$run/control' >/dev/null 2>&1 || ! kill -0 $aulos_pid 2>/dev/null" 30
  up=$((SECONDS - started))
  if [ $mode = netem ]; then
    shape "$nsa" "v${tag}a" "$loss"
    shape "$nsb" "v${tag}b" "$loss"
    ip netns exec "$nsb" python3 "$root/scripts/rtp-sniff.py" "v${tag}b" 5005 "$run/sniff.json" &
    relay_pid=$!  # stopped as the relay is
    wait_for "[ -e '$run/sniff.json' ] || ! kill -0 $relay_pid 2>/dev/null" 30
  else
    ip netns exec "$nsa" python3 "$root/scripts/udp-relay.py" --listen 127.0.0.1:6004,6005 \
      --target 10.77.0.2:5004,5005 --delay-ms "$delay" --jitter-ms "$jitter" \
      --loss "$(python3 -c "print($loss / 100)")" --seed "$seed" --stats "$run/relay.json" >/dev/null &
    relay_pid=$!
    sleep 0.3
  fi
  pids+=("$relay_pid")
  ip netns exec "$nsa" "$python" "$peer" stream "${target[0]}" "${target[1]}" "$notes" "$seconds" \
    "$seed" "$run/barrier" >"$run/stream.json" 2>"$run/stream.err" &
  sender_pid=$!
  pids+=("$sender_pid")
  voices=-1
  played=-1
  if wait_for "[ -e '$run/barrier.done' ] || ! kill -0 $sender_pid 2>/dev/null" $((seconds + 90)) &&
    [ -e "$run/barrier.done" ]; then
    played=$((SECONDS - started - up))
    sleep 3  # release tails end; the pedal was lifted with the last event
    "$aulos" status --json --socket "$run/control" >"$run/status.json" 2>&1 || true
    voices=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('voices', -1))" \
      "$run/status.json" 2>/dev/null || echo -1)
  fi
  if [ $mode = netem ]; then
    # netem's counts now that the stream is over and confirmed; then no more loss, so the BYs arrive (a lost
    # pair would leave the session to the 30 s silence rule, which is not what this measures).
    ip netns exec "$nsa" tc -s -j qdisc show dev "v${tag}a" >"$run/qdisc-a.json"
    ip netns exec "$nsb" tc -s -j qdisc show dev "v${tag}b" >"$run/qdisc-b.json"
    unlossy "$nsa" "v${tag}a"
    unlossy "$nsb" "v${tag}b"
  fi
  touch "$run/barrier.go"
  sender_status=0
  wait "$sender_pid" || sender_status=$?
  sleep 0.5  # the BYs through the delay
  kill -TERM "$relay_pid" 2>/dev/null || true
  wait "$relay_pid" || true
  kill -INT "$aulos_pid" 2>/dev/null || true
  aulos_status=0
  wait "$aulos_pid" || aulos_status=$?
  # One row: checks and the figures, from the three sides' reports (four with netem: the sniffer's).
  row=$(python3 - "$run" "$loss" "$voices" "$sender_status" "$aulos_status" "$mode" "$((SECONDS - started))" \
    <<'EOF'
import json, re, sys
run, loss, mode, wall = sys.argv[1], sys.argv[2], sys.argv[6], sys.argv[7]
voices, sender_status, aulos_status = (int(value) for value in sys.argv[3:6])
problems = []
def load(name):
    try:
        return json.load(open(f'{run}/{name}'))
    except (OSError, ValueError):
        problems.append(f'no {name}')
        return {}
stream = load('stream.json')
first, last = (stream.get('sequence') or [0, -1])[:2]
span = (last - first) & 0xFFFF  # the sender's packets are first + 0 … first + span (sequence numbers mod 2^16)
if mode == 'netem':
    # netem's counts per qdisc (handle 10: the RTP-MIDI band, 20: the session band; both veth ends).
    qdiscs = {(end, q.get('handle')): q for end in 'ab' for q in (load(f'qdisc-{end}.json') or [])}
    rtp = qdiscs.get(('a', '10:'), {})
    dropped, forwarded = rtp.get('drops', -1), rtp.get('packets', -1)
    dropped_other = sum(q.get('drops', 0) for (end, handle), q in qdiscs.items() if handle == '20:' or
                        (end == 'b' and handle == '10:'))
    if forwarded + dropped != stream.get('packets', -2):
        problems.append(f'netem classified {forwarded + dropped} RTP-MIDI packets, the sender sent '
                        f'{stream.get("packets")}')
    # What arrived in B, in arrival order (offsets from the sender's first packet).
    arrivals = [(s - first) & 0xFFFF for s in load('sniff.json').get('received', [])]
    never = span + 1 - len(set(arrivals))
    if never != dropped:
        problems.append(f'{never} sequence numbers never arrived, netem dropped {dropped}')
    if len(arrivals) != forwarded:
        problems.append(f'{len(arrivals)} RTP-MIDI packets arrived, netem passed {forwarded}')
else:
    relay = load('relay.json').get('ports', {})
    out = relay.get('6005/out', {})
    dropped, forwarded = out.get('dropped_rtp', -1), out.get('forwarded_rtp', -2)
    dropped_other = sum(p.get('dropped', 0) for p in relay.values()) - max(dropped, 0)
    # The relay keeps the order: everything not dropped arrived, in order.
    gone = {(s - first) & 0xFFFF for s in out.get('dropped_rtp_sequence', [])}
    arrivals = [i for i in range(span + 1) if i not in gone]
# The losses as the receiver sees them (RFC 6295 §4, as Aulos does): a packet older than one already received
# is ignored ("overtaken": lost to the receiver though it arrived), and packets dropped before the first one
# that arrived are no gap to it (it handles its first packet as if it ended a loss, uncounted).
accepted, kept, overtaken = [], set(), 0
for offset in arrivals:
    if accepted and offset <= accepted[-1]:
        overtaken += offset not in kept  # a copy of one received is no loss
    else:
        accepted.append(offset)
        kept.add(offset)
sequences = [i for i in range(accepted[0], accepted[-1] + 1) if i not in kept] if accepted else []
before_first = accepted[0] if accepted else 0
# Loss events: runs of consecutive sequence numbers the receiver did not get.
events = sum(1 for i, s in enumerate(sequences) if i == 0 or sequences[i - 1] + 1 != s)
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
if lost != len(sequences):
    problems.append(f'aulos lost {lost}, the receiver should miss {len(sequences)} ({dropped} dropped by {mode}, '
                    f'{overtaken} overtaken, {before_first} before the first that arrived)')
if packets != forwarded: problems.append(f'aulos got {packets}, {mode} passed {forwarded}')
if repaired != events: problems.append(f'{repaired} repaired of {events} loss events')
if released_all: problems.append(f'{released_all} losses without a usable journal')
verdict = 'pass' if not problems else 'FAIL: ' + '; '.join(problems)
print('|'.join(str(x) for x in (loss, stream.get('packets', '?'), dropped, dropped_other, overtaken, lost, events,
                                 repaired, released, voices, stream.get('ck_completed', '?'), stream.get('rs', '?'),
                                 stream.get('journal_bytes_max', '?'), wall, verdict)))
EOF
)
  echo "$row"
  echo "time: aulos up after $up s, the stream over $played s later"
  # How aulos placed the events (by the device's clock, or at the next slice when it has none, as null's) and
  # the session's latency and CK round trip as aulos saw them (inflated in an emulator).
  grep -o 'MIDI: [^;]*' "$run/aulos.out" || true
  python3 -c "import json, sys; [print('session:', s) for s in json.load(open(sys.argv[1]))['networkSessions']]" \
    "$run/status.json" 2>/dev/null || true
  rows+=("$row")
  case "$row" in *"|pass") ;; *) failed=1 ;; esac
done

echo
echo "Network MIDI between namespaces: $notes notes over $seconds s, ${delay} ms ± ${jitter} ms each way ($drops)"
format='%-6s %-8s %-8s %-8s %-9s %-8s %-7s %-9s %-6s %-7s %-4s %-4s %-8s %-5s %s\n'
# shellcheck disable=SC2059  # the format is the one above, for every line
printf "$format" "loss%" "packets" "dropped" "other" "overtaken" "lost" "loss" "repaired" "stuck" "voices" "CK" "RS" \
  "journal" "time" "result"
# shellcheck disable=SC2059
printf "$format" "" "sent" "(RTP)" "dropped" "(RTP)" "(aulos)" "events" "(aulos)" "notes" "at end" "" "" "max B" "s" ""
for row in "${rows[@]}"; do
  IFS='|' read -r l p d o ov lo e r s vo c rs j t v <<<"$row"
  # shellcheck disable=SC2059
  printf "$format" "$l" "$p" "$d" "$o" "$ov" "$lo" "$e" "$r" "$s" "$vo" "$c" "$rs" "$j" "$t" "$v"
done
exit $failed
