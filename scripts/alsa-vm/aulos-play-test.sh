#!/bin/sh
# Guest script (scripts/alsa-vm/run.sh): aulos plays a score through the kernel's loopback card while
# arecord captures the other side. The host (scripts/vm-test.sh) compares the capture with the offline
# render of the same score. Also checks `aulos devices` sees the cards, and that a missing card is one
# clear error line.
set -u
fail=0
export AULOS_SOUNDFONT="$BIN/AulosGM.sf2"
export AULOS_PRESETS="$BIN/presets"  # without them the synth would fall back to its bare default patch

echo "== aulos devices"
"$BIN/aulos" devices | tee /out/devices.txt
grep -q "Loopback" /out/devices.txt || { echo "Loopback not listed"; fail=1; }

echo "== aulos play → hw:Loopback,0,0, captured on hw:Loopback,1,0"
# Capture first: snd-aloop then fixes S16/48k/stereo for both sides (aulos negotiates down to S16).
arecord -D hw:Loopback,1,0 -f S16_LE -r 48000 -c 2 -d 5 --buffer-time=2000000 /tmp/capture.wav &
rec=$!
sleep 0.3
"$BIN/aulos" play "$BIN/test.score" --device hw:Loopback,0,0 --slice 256 --periods 3 --duration 3.5 \
    > /out/play.txt 2> /out/play-stderr.txt || { echo "aulos play failed"; cat /out/play-stderr.txt; fail=1; }
cat /out/play.txt /out/play-stderr.txt
wait $rec || { echo "arecord failed"; fail=1; }
cp /tmp/capture.wav /out/capture.wav

echo "== duplex: hw:Loopback,1,0 (aplay's sine) → aulos input → mixer → hw:Loopback,0,1, captured on hw:Loopback,1,1"
arecord -D hw:Loopback,1,1 -f S16_LE -r 48000 -c 2 -d 4 --buffer-time=2000000 /tmp/duplex.wav &
rec=$!
aplay -q -D hw:Loopback,0,0 "$BIN/sine.wav" &
player=$!
sleep 0.3
"$BIN/aulos" play "$BIN/silence.score" --device hw:Loopback,0,1 --input hw:Loopback,1,0 --slice 1024 --duration 2.5 \
    > /out/duplex.txt 2> /out/duplex-stderr.txt || { echo "aulos duplex failed"; cat /out/duplex-stderr.txt; fail=1; }
cat /out/duplex.txt
wait $rec || { echo "arecord failed"; fail=1; }
wait $player
cp /tmp/duplex.wav /out/duplex.wav

echo "== a card that does not exist"
if "$BIN/aulos" play "$BIN/test.score" --device hw:9,0 --duration 1 2> /out/missing.txt; then
    echo "playing to hw:9,0 succeeded?"; fail=1
fi
cat /out/missing.txt
[ "$(wc -l < /out/missing.txt)" -eq 1 ] || { echo "expected one error line"; fail=1; }

exit $fail
