#!/usr/bin/env bash
# make record-test: a 10-minute file played live (alsa-lib's null PCM, unpaced) with --record equals the
# offline render of the same file, sample for sample (issue 18's recording bar). Release build; about
# 20 s after it. Exit 0 when identical, 1 otherwise.
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
.build/release/aulos render "$work/long.score" --slice 64 --format float32 -o "$work/offline.wav"
python3 - "$work/played.wav" "$work/offline.wav" <<'PY'
import struct, sys
def open_data(path):
    """The file positioned at its sample data, and the data's size (a plain WAV: the RIFF chunks in order)."""
    file = open(path, "rb")
    head = file.read(1 << 16)
    at = head.find(b"data")
    file.seek(at + 8)
    return file, struct.unpack("<I", head[at + 4:at + 8])[0]
(played, played_size), (offline, offline_size) = open_data(sys.argv[1]), open_data(sys.argv[2])
same, left = played_size >= offline_size, offline_size
while same and left > 0:  # compared a megabyte at a time
    size = min(left, 1 << 20)
    same = played.read(size) == offline.read(size)
    left -= size
same = same and not played.read(played_size - offline_size).strip(b"\0")
print(f"record-test: {played_size // 8} frames recorded, {offline_size // 8} rendered: "
      + ("identical" if same else "DIFFERENT"))
sys.exit(0 if same else 1)
PY
