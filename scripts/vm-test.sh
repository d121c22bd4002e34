#!/usr/bin/env bash
# `make vm-test`: aulos on a real kernel sound stack (QEMU, snd-aloop). Builds a release aulos with the
# Swift runtime linked in, boots the VM (scripts/alsa-vm/run.sh), plays a score to the loopback card
# while the guest captures it, then checks on the host that the capture is the offline render of the
# same score: same level (RMS within 0.5 dB) once the capture's leading silence is trimmed.
set -euo pipefail
cd "$(dirname "$0")/.."
work=.build-vm/aulos-test
rm -rf "$work" && mkdir -p "$work/bin" "$work/out"

scripts/setup.sh --static
swift build -c release --static-swift-stdlib --product aulos
cp .build/release/aulos soundfonts/AulosGM.sf2 "$work/bin/"
cp -r presets "$work/bin/presets"
cat > "$work/bin/test.score" <<'SCORE'
0b tempo 120
0b note A4 4b vel=100
1b note C#5 3b vel=90
2b note E5 2b vel=80
SCORE

echo "0b tempo 120" > "$work/bin/silence.score"
sox -n -r 48000 -c 2 -b 16 "$work/bin/sine.wav" synth 4 sine 440 vol 0.5

scripts/alsa-vm/run.sh "$work/bin" scripts/alsa-vm/aulos-play-test.sh "$work/out"

# Duplex: what aulos captured and passed through its mixer must be the 440 Hz sine at its own level.
sox "$work/out/duplex.wav" "$work/duplex-trimmed.wav" remix 1 silence 1 1 0.001 trim 0.2 1.5
duplex_rms=$(sox "$work/duplex-trimmed.wav" -n stat 2>&1 | awk '/RMS     amplitude/ { print $3 }')
duplex_hz=$(sox "$work/duplex-trimmed.wav" -n stat 2>&1 | awk '/Rough   frequency/ { print $3 }')
echo "vm-test: duplex pass-through RMS $duplex_rms (sine 0.354), rough frequency $duplex_hz Hz"
python3 - "$duplex_rms" "$duplex_hz" <<'PY'
import math, sys
rms, hz = map(float, sys.argv[1:])
db = 20 * math.log10(rms / (0.5 / math.sqrt(2))) if rms > 0 else -999
print(f"vm-test: duplex level {db:+.2f} dB, frequency {hz:.0f} Hz")
sys.exit(0 if abs(db) < 0.5 and abs(hz - 440) < 10 else 1)
PY

.build/release/aulos render "$work/bin/test.score" -o "$work/offline.wav" --slice 256 --tail 1.5
# Trim the capture's leading silence (arecord starts first) and compare the first 2.5 s of both.
sox "$work/out/capture.wav" "$work/captured.wav" silence 1 1 0.0005 trim 0 2.5
sox "$work/offline.wav" "$work/reference.wav" silence 1 1 0.0005 trim 0 2.5
rms() { sox "$1" -n stat 2>&1 | awk '/RMS     amplitude/ { print $3 }'; }
captured=$(rms "$work/captured.wav")
reference=$(rms "$work/reference.wav")
echo "vm-test: RMS captured $captured, offline render $reference"
python3 - "$captured" "$reference" <<'PY'
import math, sys
captured, reference = map(float, sys.argv[1:])
difference = 20 * math.log10(captured / reference) if captured > 0 else -999
print(f"vm-test: level difference {difference:+.2f} dB")
sys.exit(0 if abs(difference) < 0.5 else 1)
PY
echo "vm-test: passed"
