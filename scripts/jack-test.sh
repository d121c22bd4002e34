#!/usr/bin/env bash
# `make test-jack`: the JACK driver in real time. One JACK server (`jackd -d dummy`, timer-paced at 48 kHz,
# scripts/jack-pacing.sh) per period size; on it, the same rig and score played for SECONDS (default 60)
# twice: through the JACK I/O unit (`--driver jack`, a JACK client) and through the ALSA I/O unit (`--device
# aulosjack_raw`: alsa-lib's jack plugin, a client of the same server). Prints both summaries and a table of
# xruns, who caused them (jackd's log names a client that missed its deadline; a late timer is the server's
# own; aulos says whether a late render was its work or its thread not running) and DSP load for
# docs/performance.md; fails if aulos's own render made the JACK client late. Release build.
#   scripts/jack-test.sh [SECONDS] [PERIODS...]     (default: 60 64 32)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
periods=("$@")
[ ${#periods[@]} -gt 0 ] || periods=(64 32)
rig=presets/rigs/band.yaml
rig_name=Band  # the rig's name: its JACK client's
swift build -c release --product aulos >/dev/null
work=.build/jack-test
rm -rf "$work" && mkdir -p "$work"

# The demo piece (32 beats at 100 BPM) four times over: music throughout a minute.
python3 - "$work/minute.score" <<'PY'
import re, sys
lines = [l for l in open("presets/scores/demo.score") if l.strip() and not l.startswith("#")]
out = []
for copy in range(4):
    for line in lines:
        when, rest = line.split(None, 1)
        if rest.startswith("end") or (copy > 0 and (rest.startswith("tempo") or rest.startswith("program"))):
            continue
        out.append(f"{float(when[:-1]) + 32 * copy}b {rest}")
out.append("128b end\n")
open(sys.argv[1], "w").write("".join(out))
PY

# One run at one period: sets `own` to the renders late by aulos's own work (-1: no summary) and adds the
# run's rows to the table.
run_period() {
  local period=$1 attempt=$2
  log="$work/run-$period-$attempt.log"
  # Both runs inside one server's life: the same timer, the same machine state. JACK first, then ALSA with
  # two periods of the JACK period (the plugin's buffer on top of JACK's own).
  scripts/jack-pacing.sh --period "$period" --log "$work/jackd-$period-$attempt.log" -- bash -c "
    .build/release/aulos play $work/minute.score --rig $rig --driver jack --duration $seconds
    .build/release/aulos play $work/minute.score --rig $rig --device aulosjack_raw --slice $period --periods 2 \
        --duration $seconds
  " 2>&1 | tee "$log"
  jack_line=$(grep '^played .* on jack:' "$log" || true)
  alsa_line=$(grep '^played .* on aulosjack_raw' "$log" || true)
  if [ -z "$jack_line" ] || [ -z "$alsa_line" ]; then
    own=-1
    return
  fi
  field() { sed -n "$2" <<<"$1"; }
  jack_xruns=$(field "$jack_line" 's/.* \([0-9]*\) xruns.*/\1/p')
  alsa_xruns=$(field "$alsa_line" 's/.* \([0-9]*\) xruns.*/\1/p')
  jack_load=$(field "$jack_line" 's/.*DSP load [0-9.]*% (peak \([0-9.]*%\).*, mean \([0-9.]*%\).*/\2 (peak \1)/p')
  alsa_load=$(field "$alsa_line" 's/.*DSP load [0-9.]*% (peak \([0-9.]*%\).*, mean \([0-9.]*%\).*/\2 (peak \1)/p')
  # jackd's log says whose fault each xrun was: its timer waking late (JackTimedDriver) or a client that had
  # not finished its cycle by the deadline ("client = NAME was not finished"). aulos's JACK client is named
  # after the rig; the ALSA plugin's client is aulos.P.PID.
  jlog="$work/jackd-$period-$attempt.log"
  timer_late=$(grep -c 'JackTimedDriver::Process XRun' "$jlog" || true)
  jack_missed=$(grep -c "client = $rig_name was not finished" "$jlog" || true)
  alsa_missed=$(grep -c 'client = aulos\.P\.[0-9.]* was not finished' "$jlog" || true)
  jack_late=$(field "$jack_line" 's/.* \([0-9]*\) late slices.*/\1/p')
  alsa_late=$(field "$alsa_line" 's/.* \([0-9]*\) late slices.*/\1/p')
  # A late render whose thread lost its time to not running (preempted: "stalled outside the render") is
  # the scheduler's; one that is not, is aulos's own work taking too long.
  jack_stalled=$(field "$jack_line" 's/.* \([0-9]*\) slices\{0,1\} stalled outside the render.*/\1/p')
  jack_own=$(( ${jack_late:-0} - ${jack_stalled:-0} ))
  [ "$jack_own" -ge 0 ] || jack_own=0
  local run=""
  [ "$attempt" -eq 1 ] || run=", run $attempt"
  table+=("| $period | JACK unit (--driver jack$run) | $jack_xruns | $jack_missed | $jack_late | $jack_load |"
    "| $period | ALSA unit (jack PCM plugin$run) | $alsa_xruns | $alsa_missed | $alsa_late | $alsa_load |")
  echo "jack-test: $period frames: jackd's timer woke late ${timer_late:-0} time(s) over both runs"
  echo "jack-test: $period frames: aulos's JACK client missed ${jack_missed:-0} cycle(s); ${jack_late:-0} render(s) late, ${jack_stalled:-0} of them stalled outside the render"
  own=$jack_own
}

# This VM charges a vCPU's stall (a host-side pause, an interrupt: the kernel has no IRQ time accounting) to
# whichever thread was running, as its CPU time: scripts/cpu-stall-probe.sh measures a few 3-4 ms ones a
# minute on an idle machine. One landing in a 1.3 ms render reads as the render's own work, and nothing inside
# the guest can tell them apart. Work that is too slow is slow again on the same music, so a period whose run
# shows own late renders is measured again, after the probe has shown what the machine did meanwhile, and
# fails only when the second run is late too. Both runs are printed and tabled.
status=0
table=()
for period in "${periods[@]}"; do
  run_period "$period" 1
  if [ "$own" -gt 0 ]; then
    echo "jack-test: $period frames: the first run had $own late render(s) counted as aulos's own; measuring the" \
      "machine's stalls for 10 s, then running again"
    scripts/cpu-stall-probe.sh 10 || true
    run_period "$period" 2
  fi
  if [ "$own" -lt 0 ]; then
    echo "jack-test: FAILED: a run at $period frames printed no summary" >&2
    status=1
  elif [ "$own" -gt 0 ]; then
    echo "jack-test: FAILED: at $period frames aulos's own render was late in two runs, $own time(s) in the second" >&2
    status=1
  fi
done

echo
echo "== jack-test: $rig playing $seconds s of music, jackd -d dummy at 48 kHz (scripts/jack-test.sh $seconds ${periods[*]})"
echo "| period | I/O unit | xruns reported | cycles missed (jackd) | late renders | mean DSP load (peak) |"
echo "|---:|---|---:|---:|---:|---|"
printf '%s\n' "${table[@]}"
[ "$status" -eq 0 ] && echo "jack-test: passed"
exit "$status"
