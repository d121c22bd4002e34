#!/usr/bin/env bash
# `make test-sfz-stream`: the SFZ player streams under load (docs/sfz.md, "Memory and disk"). A synthesised
# library whose samples are far larger than a memory cap (scripts/make-sfz-stream-library.py: 176 stereo
# samples, 169 MB as 16-bit, 338 MB as the player's floats) plays a dense minute (chords, runs in both hands,
# held bass notes under the sustain pedal: 40-64 voices streaming at once):
#   live      `aulos play` on alsa-lib's null PCM (paced by the clock) at 64-frame periods, release build, with
#             the loader slowed (AULOS_SFZ_DISK_DELAY_MS, a sleep before every 4,096-frame chunk it reads) so
#             that it falls behind: 0 xruns and 0 late slices, late voices counted (underruns > 0: the render
#             played silence instead of waiting), and the process's peak RSS under the cap (the samples do not
#             fit in it: they were streamed). The null PCM never underruns, so its xruns are always 0: a
#             render that waited for the disk shows as a late slice (one that took longer than its period).
#             Then with the delay so long that an offline render would take hours: the live run still ends on
#             time, and the process exits within 2 s of it. Then without the delay: 0 xruns, 0 late slices,
#             0 underruns.
#   offline   `aulos render` with the loader slowed, at 64- and 1,000-frame slices: both files bit-identical to
#             each other and to a render without the delay (the render waits for the loader).
# One line per check with its numbers; exit 1 if any fails. About 5 minutes after the release build.
#   scripts/sfz-stream-test.sh [SECONDS]     (default 60; SFZ_STREAM_DELAY_MS, SFZ_STREAM_OFFLINE_DELAY_MS,
#                                             SFZ_STREAM_RSS_CAP_MB override the delays and the cap;
#                                             SFZ_STREAM_ONLY=live or offline runs those checks alone;
#                                             SFZ_STREAM_AULOS=BINARY tests that aulos instead of building)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
delay=${SFZ_STREAM_DELAY_MS:-5}                  # live: 200 chunks a second at most, a third of what it needs
offline_delay=${SFZ_STREAM_OFFLINE_DELAY_MS:-1}  # offline: slower than the render, without taking minutes
stall_delay=5000                                 # a chunk every 5 s: an offline render would take hours
cap_mb=${SFZ_STREAM_RSS_CAP_MB:-64}
only=${SFZ_STREAM_ONLY:-all}
aulos=${SFZ_STREAM_AULOS:-}  # another aulos binary to test (a fault injected); default: the release build
if [ -z "$aulos" ]; then
    swift build -c release --product aulos >/dev/null
    aulos=$PWD/.build/release/aulos
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
check() {  # check NAME CONDITION MESSAGE: one line, PASS or FAIL
    if eval "$2"; then echo "sfz-stream-test: PASS $1: $3"; else echo "sfz-stream-test: FAIL $1: $3"; failed=1; fi
}

library_summary=$(scripts/make-sfz-stream-library.py "$work/library")
library="$work/library/stream.sfz"
sample_mb=$(du -sm --apparent-size "$work/library/samples" | cut -f1)
echo "sfz-stream-test: library: $library_summary on disk (${sample_mb} MiB), ${cap_mb} MiB memory cap"

# The dense minute at 120 BPM: per bar (2 s) a held bass note (8 beats), a four-note chord on every beat, and
# runs of sixteenths in both hands; the sustain pedal held through each bar and lifted at the next.
python3 - "$work/dense.score" "$seconds" <<'PY'
import random, sys
random.seed(11)
beats = int(float(sys.argv[2]) * 2)
lines = ["0b tempo 120"]
for bar in range(beats // 4):
    b = 4 * bar
    lines += [f"{b}b cc 64 0", f"{b + 0.1:.1f}b cc 64 127"]
    lines.append(f"{b}b note {random.randint(21, 45)} 8b vel={random.randint(60, 127)}")
    for beat in range(4):
        root = random.randint(48, 76)
        lines += [f"{b + beat}b note {root + i} 0.9b vel={random.randint(30, 127)}" for i in (0, 4, 7, 11)]
    up, down = random.randint(36, 60), random.randint(72, 96)
    for step in range(16):
        lines.append(f"{b + step / 4:.2f}b note {up + 2 * step} 0.2b vel={random.randint(50, 120)}")
        lines.append(f"{b + step / 4 + 0.125:.3f}b note {down - 2 * step} 0.2b vel={random.randint(50, 120)}")
lines += [f"{beats - 2}b cc 64 0", f"{beats}b end"]
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY

# live NAME DELAY_MS SECONDS: plays the score; leaves its summary in $work/NAME.log, its peak RSS (KiB) and
# wall time in $work/NAME.time.
live() {
    AULOS_SFZ_DISK_DELAY_MS=$2 /usr/bin/time -v -o "$work/$1.time" \
        "$aulos" play "$work/dense.score" --instrument "sfz:$library" --device null --slice 64 --periods 3 \
        --duration "$3" >"$work/$1.log" 2>&1 || { cat "$work/$1.log"; echo "sfz-stream-test: $1: aulos play failed"; }
}
field() {  # field NAME REGEX: the first number the regex's group matches in NAME's summary line, or -1
    local value
    value=$(grep -oP "$2" "$work/$1.log" | head -1 | grep -oP '[0-9.]+' | head -1 || true)
    echo "${value:--1}"
}
report_live() {  # report_live NAME: prints the summary and sets the variables the checks read
    grep -h '^played\|warning\|error' "$work/$1.log" || true
    xruns=$(field "$1" '[0-9]+ xruns')
    late_slices=$(field "$1" '[0-9]+ late slices')
    underruns=$(field "$1" 'SFZ: [0-9]+ underruns')
    late_frames=$(field "$1" '[0-9]+ late frames')
    streamed=$(field "$1" '[0-9.]+ MB streamed')
    rss_kib=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/$1.time")
    rss_mb=$((rss_kib / 1024))
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/$1.time")
    played=$(sed -n 's/^played \([0-9:.]*\) .*/\1/p' "$work/$1.log")
}

if [ "$only" != offline ]; then
    echo "sfz-stream-test: live, $seconds s, loader slowed by $delay ms a chunk ($(uptime | sed 's/.*load/load/'))"
    live slowed "$delay" "$seconds"
    report_live slowed
    check "live slowed: xruns" '[ "$xruns" = 0 ] && [ "$late_slices" = 0 ]' \
        "$xruns xruns, $late_slices late slices at 64-frame periods, played $played in $wall"
    check "live slowed: late voices counted" '[ "$underruns" -gt 0 ] && [ "$late_frames" -gt 0 ]' \
        "$underruns underruns, $late_frames late frames, $streamed MB streamed"
    check "live slowed: memory" '[ "$rss_mb" -gt 0 ] && [ "$rss_mb" -lt "$cap_mb" ]' \
        "peak RSS $rss_mb MiB (cap $cap_mb MiB) playing $sample_mb MiB of samples"

    echo "sfz-stream-test: live, 10 s, loader slowed by $stall_delay ms a chunk (offline this would take hours)"
    start=$(date +%s.%N)
    live stalled "$stall_delay" 10
    report_live stalled
    elapsed=$(echo "$(date +%s.%N) - $start" | bc)
    check "live stalled disk: on time" \
        '[ "$xruns" = 0 ] && [ "$late_slices" = 0 ] && [ "$played" = "0:10.0" ] && [ "$underruns" -gt 0 ] &&
         [ "$(echo "$elapsed < 12" | bc)" = 1 ]' \
        "played $played, $xruns xruns, $late_slices late slices, $underruns underruns, exit after ${elapsed%??????} s"

    echo "sfz-stream-test: live, $seconds s, loader at full speed"
    live full 0 "$seconds"
    report_live full
    check "live full speed: xruns" '[ "$xruns" = 0 ] && [ "$late_slices" = 0 ]' \
        "$xruns xruns, $late_slices late slices, played $played"
    check "live full speed: no late voices" '[ "$underruns" = 0 ]' \
        "$underruns underruns, $late_frames late frames, $streamed MB streamed, peak RSS $rss_mb MiB"
fi

# render NAME DELAY_MS SLICE: the score offline into $work/NAME.wav; prints its md5 and time.
render() {
    local start end
    start=$(date +%s.%N)
    AULOS_SFZ_DISK_DELAY_MS=$2 "$aulos" render "$work/dense.score" --instrument "sfz:$library" --slice "$3" \
        --format float --tail 2 -o "$work/$1.wav" >"$work/$1.log" 2>&1 || { cat "$work/$1.log"; return 0; }
    end=$(date +%s.%N)
    eval "md5_$1=$(md5sum "$work/$1.wav" | cut -c1-32)"
    eval "time_$1=$(printf %.1f "$(echo "$end - $start" | bc)")"
    eval "echo \"sfz-stream-test: render $1: delay $2 ms, slice $3: md5 \$md5_$1 in \$time_$1 s\""
}
if [ "$only" != live ]; then
    md5_reference=none md5_slowed64=missing md5_slowed1000=missing
    render reference 0 256
    render slowed64 "$offline_delay" 64
    render slowed1000 "$offline_delay" 1000
    check "offline: bit-identical" \
        '[ "$md5_slowed64" = "$md5_slowed1000" ] && [ "$md5_slowed64" = "$md5_reference" ]' \
        "slowed at 64 frames $md5_slowed64, at 1000 $md5_slowed1000, full speed at 256 $md5_reference"
fi

if [ "$failed" -ne 0 ]; then
    echo "sfz-stream-test: FAILED"
    exit 1
fi
echo "sfz-stream-test: passed"
