#!/bin/sh
# Guest script (scripts/alsa-vm/run.sh; host side: scripts/alsa-test.sh): aulos as a live instrument.
# `aulos play` with no file is a sequencer client "Aulos" playing to hw:Loopback,0,0; we capture
# hw:Loopback,1,0 and check here what needs the guest (exit codes, stderr, connections); the host
# checks pitches and silences in the WAVs. Phases:
#   a) aplaymidi plays a C-major arpeggio to Aulos:0            -> /out/arpeggio.wav
#   b) the virmidi card is a keyboard: unplug it (sysfs unbind) with a note held, the note must stop;
#      plug it back (bind), aulos must reconnect and play a new note  -> /out/hotplug.wav
#   c) latency-probe: 20 notes, event -> onset latency and jitter  -> /out/probe.txt
#   d) SIGINT while a note sounds: exit 0 within 2 s, audio silent  -> /out/stop.wav
#   e) latency-probe again with a fresh `aulos --lowest-latency`, stopped by SIGTERM -> /out/probe-lowest.txt
#   f) the service at boot: `aulos play --service` with no sound card and no keyboard waits; the loopback
#      card appears (insmod) and it plays; the keyboard appears and it connects; a program change on
#      channel 16 switches rigs; `aulos set` changes the graph; SIGHUP reloads; SIGTERM exits 0
# Facts this relies on (seen in this VM): the virmidi card is card 2, its sequencer clients are
# 24..27 (16 + 4 * card + device) and get the same numbers back on re-bind; unbind deletes them
# (announce: Port exit, Client exit) and drops their subscriptions, bind recreates them unsubscribed.
set -u
fail=0
bad() { echo "FAIL: $*"; fail=1; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }
export AULOS_SOUNDFONT="$BIN/AulosGM.sf2" AULOS_PRESETS="$BIN/presets"
VIRMIDI=/sys/bus/platform/drivers/snd_virmidi

# Period settings from the host (scripts/alsa-test.sh). Under TCG, 256 x 2 xruns ~90 times a second
# (snd-aloop moves in 4-8 ms timer ticks, emulated wake-ups are late); 256 x 4 runs clean.
play_options=$(cat "$BIN/play-options" 2>/dev/null || echo "--slice 256 --periods 4")

# Starts aulos live in the background (pid in $aulos) from the copy in RAM, logging to
# /out/NAME-stderr.txt (MIDI connect/release notices) and /out/NAME-stdout.txt (final line: xruns).
# Drawbar Organ: 4 ms attack, full sustain, 60 ms release: clean onsets, a clear pitch, and a held
# note that rings until released. --duration is only a safety net.
start_aulos() {
    log=/out/$1-stderr.txt; out=/out/$1-stdout.txt; shift
    # $play_options unquoted on purpose: it is a list of words.
    /tmp/aulos play --device hw:Loopback,0,0 $play_options --instrument synth --preset "Drawbar Organ" --duration 150 "$@" > "$out" 2> "$log" &
    aulos=$!
    # Ready once it has autoconnected to the virmidi keyboard: under emulation that can take
    # seconds after the client appears. /proc, not aconnect, while waiting: no client churn.
    i=0
    until grep -A3 '"Virtual Raw MIDI [0-9]*-0"' /proc/asound/seq/clients | grep -q 'Connecting To.*:0'; do
        i=$((i + 1))
        if [ $i -gt 300 ] || ! kill -0 $aulos 2>/dev/null; then cat "$log"; return 1; fi
        sleep 0.1
    done
}
# The senders subscribed to Aulos port 0, from `aconnect -l` ("Connected From: 24:0, 25:0").
aulos_sources() {
    aconnect -l | awk '/^client/ { in_aulos = /'"'"'Aulos'"'"'/ } in_aulos && /^ +[0-9]+ / { port = $1 }
                       in_aulos && port == "0" && /Connected From/ { sub(/.*From: /, ""); print }'
}
# arecord into the guest's /tmp (writing straight to 9p can overrun); stopped with SIGINT, which
# makes it finish the WAV header.
start_capture() { arecord -q -D hw:Loopback,1,0 -f S16_LE -r 48000 -c 2 --buffer-time=2000000 "/tmp/$1" & rec=$!; sleep 0.5; }
stop_capture() { sleep 0.5; kill -INT $rec; wait $rec; cp "/tmp/$1" /out/; }

# The binary into RAM: paging an 80 MB binary in over 9p while playing stalls the audio for tens of
# ms (a real machine has it on a local disk).
cp "$BIN/aulos" /tmp/aulos
vm0=$(aconnect -l | awk -F'[ :]+' "/'Virtual Raw MIDI [0-9]+-0'/ { print \$2 }")   # client of hw:VirMIDI,0
echo "== virmidi clients: $(grep -o 'Virtual Raw MIDI [0-9-]*' /proc/asound/seq/clients | tr '\n' ' ')(hw:VirMIDI,0 = $vm0:0)"

echo "== start aulos (capture open first: it fixes the loopback at S16_LE/48k/stereo)"
start_capture warmup.wav
start_aulos live --send-clock || { bad "aulos did not start and autoconnect within 30 s"; exit 1; }
aconnect -l > /out/aconnect-start.txt
sources=$(aulos_sources)
echo "Aulos:0 connected from: $sources"
echo "$sources" | grep -q "$vm0:0" || bad "aulos did not autoconnect to the virmidi port $vm0:0"
echo "$sources" | grep -q "14:0" && bad "aulos connected to Midi Through"
grep -i "connected" /out/live-stderr.txt | grep -qi "virtual raw midi\|$vm0:0" || bad "stderr names no virmidi connection"
grep -q "MIDI: listening as [0-9]*:0" /out/live-stderr.txt || bad "stderr does not say where aulos listens"

# One note first, so the first measured note does not pay for code paged in on first use.
amidi -p hw:VirMIDI,0 -S '90 30 64'; sleep 0.3; amidi -p hw:VirMIDI,0 -S '80 30 00'
stop_capture warmup.wav

echo "== aulos devices lists the sequencer ports, its own included"
/tmp/aulos devices > /out/devices.txt 2>&1
grep -q "Aulos: Aulos MIDI In" /out/devices.txt || bad "aulos devices does not list Aulos's input port"
grep -q "Virtual Raw MIDI" /out/devices.txt || bad "aulos devices does not list the virmidi ports"

echo "== a) aplaymidi arpeggio (and the echo port re-sends it)"
aseqdump -p Aulos:1 > /tmp/echo.txt 2>&1 &
dump=$!
t_dump=$(uptime_s)
sleep 0.3
start_capture arpeggio.wav
aplaymidi -p Aulos:0 "$BIN/arpeggio.mid" || bad "aplaymidi failed"
stop_capture arpeggio.wav
kill $dump; wait $dump 2>/dev/null
t_dump_end=$(uptime_s)
cp /tmp/echo.txt /out/echo.txt
[ "$(grep -c 'Note on' /tmp/echo.txt)" -ge 7 ] || bad "the echo port (Aulos:1) did not re-send the arpeggio's 7 note-ons"
# --send-clock at the default 120 BPM: 48 clocks a second on the same port.
clocks=$(grep -c 'Clock' /tmp/echo.txt)
rate=$(awk -v n="$clocks" -v a="$t_dump" -v b="$t_dump_end" 'BEGIN { printf "%.1f", n / (b - a) }')
echo "MIDI clock out: $clocks clocks in $(awk -v a="$t_dump" -v b="$t_dump_end" 'BEGIN { printf "%.2f", b - a }') s = $rate a second (120 BPM: 48)"
awk -v r="$rate" 'BEGIN { exit !(r > 40 && r < 52) }' || bad "MIDI clock out at $rate a second, not about 48"

echo "== b) hot-plug: unplug the virmidi card with a note held, plug it back"
start_capture hotplug.wav
amidi -p hw:VirMIDI,0 -S '90 3C 64' || bad "amidi note-on failed"   # C4, held
t0=$(uptime_s)   # after amidi: its start-up under emulation would skew the times
sleep 1
t_unbind=$(uptime_s)
echo snd_virmidi.0 > $VIRMIDI/unbind || bad "unbind failed"
sleep 1.5
kill -0 $aulos 2>/dev/null || bad "aulos died when the card went away"
grep -iE "released [1-9]" /out/live-stderr.txt || bad "aulos stderr does not mention releasing the held note"
t_bind=$(uptime_s)
echo snd_virmidi.0 > $VIRMIDI/bind || bad "bind failed"
i=0
until aulos_sources | grep -q "$vm0:0"; do   # reconnection follows the announce of the new port
    i=$((i + 1)); [ $i -gt 30 ] && { bad "aulos did not reconnect to $vm0:0 after re-bind"; break; }
    sleep 0.1
done
t_note2=$(uptime_s)
amidi -p hw:VirMIDI,0 -S '90 43 64' || bad "amidi note-on after re-bind failed"   # G4
sleep 0.6
amidi -p hw:VirMIDI,0 -S '80 43 00'
stop_capture hotplug.wav
# Times relative to the held note-on; the host anchors them on that note's onset in the capture.
awk -v a="$t0" -v b="$t_unbind" -v c="$t_bind" -v d="$t_note2" \
    'BEGIN { printf "unbind=%.3f bind=%.3f note2=%.3f\n", b - a, c - a, d - a }' | tee /out/hotplug-times.txt
grep -i "connected" /out/live-stderr.txt | tail -n 4

echo "== c) latency probe against the running aulos"
"$BIN/latency-probe" -n 20 -w /tmp/probe.wav Aulos:0 > /out/probe.txt 2>&1 || bad "latency probe (see probe.txt)"
cat /out/probe.txt
cp /tmp/probe.wav /out/

echo "== d) SIGINT with a note sounding"
start_capture stop.wav
amidi -p hw:VirMIDI,0 -S '90 48 64'   # C5, held
t0=$(uptime_s)
sleep 0.7
t_int=$(uptime_s)
kill -INT $aulos
i=0
while kill -0 $aulos 2>/dev/null && [ $i -lt 50 ]; do i=$((i + 1)); sleep 0.1; done
if kill -0 $aulos 2>/dev/null; then bad "aulos still running 5 s after SIGINT"; kill -KILL $aulos; fi
wait $aulos; rc=$?
t_exit=$(uptime_s)
[ $rc -eq 0 ] || bad "aulos exited $rc after SIGINT"
cat /out/live-stdout.txt
sleep 1
stop_capture stop.wav
awk -v a="$t0" -v b="$t_int" -v c="$t_exit" \
    'BEGIN { printf "sigint=%.3f exited=%.3f exit_after=%.3f\n", b - a, c - a, c - b }' | tee /out/stop-times.txt
awk -v a="$t_int" -v b="$t_exit" 'BEGIN { exit !(b - a > 2) }' && bad "aulos took more than 2 s to exit"

echo "== e) latency probe with aulos --lowest-latency"
# The probe opens the capture first (fixing S16) and waits for Aulos:0 to appear.
"$BIN/latency-probe" -n 20 -W 60 -w /tmp/probe-lowest.wav Aulos:0 > /out/probe-lowest.txt 2>&1 &
probe=$!
sleep 0.5
if start_aulos live-lowest --lowest-latency; then
    wait $probe || bad "latency probe with --lowest-latency (see probe-lowest.txt)"
    # SIGTERM this time (what systemd sends): the same clean stop as SIGINT, exit 0.
    kill -TERM $aulos; wait $aulos || bad "aulos --lowest-latency exited $? after SIGTERM"
    cat /out/live-lowest-stdout.txt
else
    bad "aulos --lowest-latency did not start"; kill $probe
fi
cat /out/probe-lowest.txt
cp /tmp/probe-lowest.wav /out/ 2>/dev/null

echo "== f) the service: no sound card and no keyboard at boot, then both appear"
status() { /tmp/aulos status --json --socket /tmp/control 2>&1; }
echo snd_virmidi.0 > $VIRMIDI/unbind || bad "unbind failed"
aloop_ko=$(grep aloop /etc/alsa-vm/modules)
rmmod snd_aloop || bad "rmmod snd_aloop failed"
[ -e /proc/asound/Loopback ] && bad "the loopback card is still there"
/tmp/aulos play --service --rig "$BIN/presets/rigs/stage.yaml" --device hw:Loopback,0,0 $play_options \
    --control-socket /tmp/control > /out/service-stdout.txt 2> /out/service-stderr.txt &
aulos=$!
sleep 4
kill -0 $aulos 2>/dev/null || bad "aulos --service exited without a sound card"
grep -q "waiting for the audio device" /out/service-stderr.txt || bad "aulos --service did not say it waits for the device"
status | tee /out/service-status-waiting.txt | grep -q "waiting for the audio device" || bad "aulos status did not report the wait"
insmod "$aloop_ko" || bad "insmod snd-aloop failed"
i=0
until status | grep -q '"device":"hw:Loopback,0,0"'; do
    i=$((i + 1)); [ $i -gt 100 ] && { bad "aulos --service did not start playing within 20 s of the card appearing"; break; }
    sleep 0.2
done
status > /out/service-status-playing.txt
grep -q '"keyboards":\[\]' /out/service-status-playing.txt || bad "keyboards listed with the virmidi card unplugged"
echo snd_virmidi.0 > $VIRMIDI/bind || bad "bind failed"
i=0
until status | grep -q 'Virtual Raw MIDI'; do
    i=$((i + 1)); [ $i -gt 100 ] && { bad "aulos --service did not connect the keyboard plugged in later"; break; }
    sleep 0.2
done
amidi -p hw:VirMIDI,0 -S 'CF 01' || bad "amidi program change failed"
sleep 1
status > /out/service-status-switched.txt
grep -q '"activeRig":1' /out/service-status-switched.txt || bad "program change 2 on channel 16 did not switch to rig 2"
grep -q '"rig":"Split Keys"' /out/service-status-switched.txt || bad "the active rig is not Split Keys"
/tmp/aulos set output.eq off --socket /tmp/control >> /out/service-set.txt 2>&1 || bad "aulos set output.eq off failed"
/tmp/aulos set Lead.cutoff 900 --socket /tmp/control >> /out/service-set.txt 2>&1 || bad "aulos set Lead.cutoff failed"
# The reload tries the whole rig set before it replaces anything; under TCG emulation that takes seconds,
# so the status is polled (for up to 60 s) rather than read once after a fixed sleep.
t_hup=$(date +%s.%N)
kill -HUP $aulos
i=0
until status > /out/service-status-reloaded.txt && grep -q '"reloads":1' /out/service-status-reloaded.txt; do
    i=$((i + 1)); [ $i -gt 300 ] && { bad "SIGHUP did not reload the rig within 60 s"; break; }
    sleep 0.2
done
awk -v a="$t_hup" -v b="$(date +%s.%N)" 'BEGIN { printf "reload seen in the status %.1f s after SIGHUP\n", b - a }' \
    | tee /out/reload-time.txt
grep -q '"activeRig":1' /out/service-status-reloaded.txt || bad "the reload did not keep rig 2 playing"
/tmp/aulos status --socket /tmp/control > /out/service-status.txt 2>&1 || bad "aulos status (text) failed"
cat /out/service-status.txt
kill -TERM $aulos
i=0
while kill -0 $aulos 2>/dev/null && [ $i -lt 50 ]; do i=$((i + 1)); sleep 0.1; done
wait $aulos; rc=$?
[ $rc -eq 0 ] || bad "aulos --service exited $rc after SIGTERM"
[ -e /tmp/control ] && bad "the control socket was left behind"
cat /out/service-stderr.txt

exit $fail
