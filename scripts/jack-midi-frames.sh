#!/usr/bin/env bash
# JACK MIDI on its frame, in the cycle it arrived in, under load: runs the CLI test jackMIDILandsOnItsFrame
# RUNS times in a row (default 20) beside two CPU hogs (`yes > /dev/null`, one per core here) and counts
# the runs where a note was off its frame. A run whose jackd lost a cycle (its log says so) is excused by
# the test as a known issue and counted apart; aulos placing MIDI late is a miss.
# Usage: scripts/jack-midi-frames.sh [RUNS]   (after swift build --build-tests; needs jackd: setup.sh --tests)
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
bundle="$(swift build --show-bin-path)/AulosPackageTests.xctest"
[ -x "$bundle" ] || { echo "jack-midi-frames: $bundle is not built (swift build --build-tests)" >&2; exit 2; }
yes > /dev/null &
hog1=$!
yes > /dev/null &
hog2=$!
trap 'kill $hog1 $hog2 2>/dev/null' EXIT
clean=0 excused=0 missed=0
for run in $(seq 1 "$runs"); do
    output=$("$bundle" --testing-library swift-testing --filter jackMIDILandsOnItsFrame 2>&1)
    if ! grep -q "Test run with 1 test" <<<"$output"; then
        echo "run $run: the test did not run"; echo "$output" | tail -5; missed=$((missed + 1))
    elif grep -q "✘" <<<"$output"; then
        echo "run $run: MISSED"; grep -E "heard at|not on their frames|is heard at" <<<"$output" | head -3
        missed=$((missed + 1))
    elif grep -q "known issue" <<<"$output"; then
        echo "run $run: excused (jackd lost a cycle)"; excused=$((excused + 1))
    else
        echo "run $run: on its frame"; clean=$((clean + 1))
    fi
done
echo "jack-midi-frames: $runs runs beside two CPU hogs: $clean on their frame, $excused excused (jackd lost a" \
    "cycle), $missed missed"
[ "$missed" -eq 0 ]
