#!/bin/sh
# Guest script for scripts/alsa-vm/run.sh (runs inside the VM under busybox sh).
# Proves the ALSA stack: plays $BIN/sine.wav (made on the host by selftest.sh) to the loopback's
# playback side while arecord records the capture side into /out/capture.wav; the host then checks
# the capture's level and pitch with sox. Also checks that MIDI bytes written to a virmidi port
# come out of the sequencer (amidi -> snd-virmidi -> aseqdump).
set -u
fail=0

echo "== cards";       cat /proc/asound/cards
echo "== seq clients"; aconnect -l
echo "== pcm";         aplay -l

# PCM loopback. Start the capture first: snd-aloop then fixes the format both sides must share,
# and the recording (3 s) brackets the 2 s sine with silence on both ends.
# Record into the guest's tmpfs, not straight into /out: every write to the 9p share is a slow
# round trip to the host, and with the host's cores busy (other builds) that stalled arecord long
# enough to overrun, which also made snd-aloop fail aplay's writes with EIO. A 2 s capture buffer
# (instead of arecord's 0.5 s default) gives the same headroom against an emulator stall.
echo "== loopback"
arecord -D hw:Loopback,1,0 -f S16_LE -r 48000 -c 2 -d 3 --buffer-time=2000000 /tmp/capture.wav &
rec=$!
sleep 0.3
start=$(cut -d' ' -f1 /proc/uptime)
aplay -D hw:Loopback,0,0 "$BIN/sine.wav" || { echo "aplay failed"; fail=1; }
echo "aplay of a 2.0 s file took $(awk -v a="$start" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { print b - a }') s (emulated time)"
wait $rec || { echo "arecord failed"; fail=1; }
cp /tmp/capture.wav /out/capture.wav
ls -l /out/capture.wav

# MIDI through the kernel: a note-on written to the raw MIDI side of VirMIDI card's first device
# leaves the sequencer from that card's client (the first virmidi client, normally 20:0).
echo "== virmidi"
client=$(aconnect -l | awk -F'[ :]+' '/Virtual Raw MIDI/ { print $2; exit }')
aseqdump -p "$client:0" > /tmp/seq.txt 2>&1 &
dump=$!
sleep 0.5
amidi -p hw:VirMIDI,0 -S '90 3C 64'
sleep 0.5
kill $dump
cat /tmp/seq.txt
grep -q 'Note on.*note 60, velocity 100' /tmp/seq.txt || { echo "note-on not seen by aseqdump"; fail=1; }

exit $fail
