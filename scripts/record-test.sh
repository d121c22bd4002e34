#!/usr/bin/env bash
# make record-test: a 10-minute file played live (alsa-lib's null PCM, unpaced) with --record equals the
# offline render of the same file, sample for sample (issue 18's recording bar); then two minutes through
# the band rig with --record-parts, the master and each part against `aulos render --parts`. Release build;
# about a minute after it. Exit 0 when all are identical, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product aulos >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/long.score" <<'PY'
import random, sys
random.seed(3)
lines = ["0b tempo 120"]
for beat in range(1200):  # ten minutes at 120 BPM: three synth channels and drums
    note = random.choice(["C4", "E4", "G4", "A3", "D4", "F4"])
    lines.append(f"{beat}b note {note} 0.9b vel={random.randint(60, 110)} ch={random.choice([1, 2, 3])}")
    if beat % 2 == 0:
        lines.append(f"{beat}b note {random.choice([36, 38, 42, 46])} 0.25b ch=10")
lines.append("1200b end")
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
.build/release/aulos play "$work/long.score" --device null --unpaced --slice 64 --record "$work/played.wav"
.build/release/aulos render "$work/long.score" --slice 64 --format float32 --tail 1.5 -o "$work/offline.wav"
# Then every part on its own (--record-parts, render --parts): the first two minutes through the band rig
# (three samplers, a synth, reverb and chorus returns), five files each side.
awk '$1 + 0 < 240' "$work/long.score" > "$work/band.score"
echo "240b end" >> "$work/band.score"
.build/release/aulos play "$work/band.score" --rig presets/rigs/band.yaml --device null --unpaced \
  --record "$work/band-played.wav" --record-parts
.build/release/aulos render "$work/band.score" --rig presets/rigs/band.yaml --format float32 --tail 1.5 --parts \
  -o "$work/band-offline.wav" >/dev/null
python3 - "$work" <<'PY'
import os, struct, sys
def open_data(path):
    """The file positioned at its sample data, and the data's size (a plain WAV: the RIFF chunks in order)."""
    file = open(path, "rb")
    head = file.read(1 << 16)
    at = head.find(b"data")
    file.seek(at + 8)
    return file, struct.unpack("<I", head[at + 4:at + 8])[0]
def compare(played_path, offline_path, silent_after):
    """Whether the recording begins with the render, sample for sample. The live run ends on a whole period,
    so the recording may be a few frames longer: silence for the synth piece (its tail has died away), the
    reverb's continuing tail for the band (`silent_after` False)."""
    (played, played_size), (offline, offline_size) = open_data(played_path), open_data(offline_path)
    same, left = played_size >= offline_size, offline_size
    while same and left > 0:  # compared a megabyte at a time
        size = min(left, 1 << 20)
        same = played.read(size) == offline.read(size)
        left -= size
    extra = played.read(played_size - offline_size)
    same = same and (not extra.strip(b"\0") if silent_after else len(extra) < 256 * 8)
    print(f"record-test: {os.path.basename(played_path)}: {played_size // 8} frames recorded, "
          f"{offline_size // 8} rendered: " + ("identical" if same else "DIFFERENT"))
    return same
work = sys.argv[1]
results = [compare(f"{work}/played.wav", f"{work}/offline.wav", True)]
for part in ["", ".Piano", ".Bass", ".Strings", ".Drums"]:
    results.append(compare(f"{work}/band-played{part}.wav", f"{work}/band-offline{part}.wav", False))
sys.exit(0 if all(results) else 1)
PY
