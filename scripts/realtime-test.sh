#!/usr/bin/env bash
# `make realtime-test`: aulos plays in real time, paced by JACK's dummy backend (scripts/jack-pacing.sh),
# for SECONDS (default 30) at PERIOD-frame slices (default 64), and must report zero xruns: with no sound
# card this is how "our render cost never makes the device run dry" is checked. Release build.
#   scripts/realtime-test.sh [PERIOD] [SECONDS] [INPUT]
set -euo pipefail
cd "$(dirname "$0")/.."
period=${1:-64}
seconds=${2:-30}
input=${3:---demo}  # the built-in demo piece unless a file is given
swift build -c release --product aulos >/dev/null
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# 3 periods: two in the device buffer plus one being rendered.
scripts/jack-pacing.sh --period "$period" -- \
    .build/release/aulos play $input --device aulosjack_raw --slice "$period" --periods 3 --duration "$seconds" | tee "$log"
xruns=$(sed -n 's/.* \([0-9]*\) xruns.*/\1/p' "$log")
[ -n "$xruns" ] || { echo "realtime-test: no summary line from aulos play" >&2; exit 1; }
if [ "$xruns" -ne 0 ]; then
    echo "realtime-test: FAILED: $xruns xruns in $seconds s at $period-frame slices" >&2
    exit 1
fi
echo "realtime-test: passed: $seconds s at $period-frame slices, 0 xruns"

# A real overrun: renders one second in sleep 50 ms (AULOS_INJECT_OVERRUN), longer than the 3-period
# buffer; the device must underrun, the unit recover and count it, and playback run to the end.
AULOS_INJECT_OVERRUN=0.05 scripts/jack-pacing.sh --period "$period" -- \
    .build/release/aulos play $input --device aulosjack_raw --slice "$period" --periods 3 --duration 3 | tee "$log"
xruns=$(sed -n 's/.* \([0-9]*\) xruns.*/\1/p' "$log")
played=$(sed -n 's/^played \([0-9:.]*\) .*/\1/p' "$log")
if [ -z "$xruns" ] || [ "$xruns" -lt 1 ] || [ "$played" != "0:03.0" ]; then
    echo "realtime-test: FAILED: injected overrun gave xruns='$xruns', played '$played' (want >= 1 and 0:03.0)" >&2
    exit 1
fi
echo "realtime-test: passed: injected overrun recovered and counted ($xruns xruns), played to the end"
