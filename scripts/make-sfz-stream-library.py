#!/usr/bin/env python3
"""Writes a large synthesised SFZ library for the streaming test (scripts/sfz-stream-test.sh): a piano-like
instrument over all 88 keys (a0-c8) with two velocity layers, one 48 kHz stereo 16-bit sample per key and
layer, SECONDS long (default 5 s: 176 files, 169 MB of samples, 338 MB as the player's floats), far more than
the memory a streaming player may use. Deterministic: the same bytes on every run.

Pure Python (the standard library only), and fast (a few seconds): each sample is one block of whole periods
of its tone (about 1,000 frames), computed at a few levels and laid end to end, each block a step quieter, so
a sample decays like a struck string without computing every frame.

  scripts/make-sfz-stream-library.py OUTPUT_FOLDER [SECONDS]

Writes OUTPUT_FOLDER/stream.sfz and OUTPUT_FOLDER/samples/k021_p.wav … k108_f.wav, and prints the file count
and the samples' total size.
"""
import array
import math
import os
import struct
import sys

RATE = 48000
LEVELS = 16  # 2 dB apart: from full level down 30 dB over the sample
BLOCK = 1024  # frames a block aims for (whole periods of the tone)


def block_frames(hz):
    """A block of whole periods close to BLOCK frames: (frames, periods), the tone's pitch within 0.05 %."""
    periods = max(1, round(BLOCK * hz / RATE))
    return round(periods * RATE / hz), periods


def sample_bytes(key, loud, seconds):
    """A stereo 16-bit sample of key `key` (interleaved little-endian bytes): partials in sines (each block
    starts and ends at zero), the right channel's mix a little different from the left's, louder and brighter
    when `loud`; each block `2 dB` quieter than the one before, the last one silent."""
    hz = 440.0 * 2 ** ((key - 69) / 12)
    frames, periods = block_frames(hz)
    count = 6 if loud else 3
    partials = [k for k in range(1, count + 1) if k * hz < 20000]
    peak = 0.7 if loud else 0.3
    left, right = [], []
    for n in range(frames):
        phase = 2 * math.pi * periods * n / frames
        left.append(sum(math.sin(k * phase) / k ** 1.3 for k in partials))
        right.append(sum(math.sin(k * phase) * (0.8 if k % 2 == 0 else 1.0) / k ** 1.5 for k in partials))
    scale = peak * 32767 / max(max(map(abs, left)), max(map(abs, right)))
    blocks = []
    for level in range(LEVELS):
        gain = scale * 10 ** (-2 * level / 20)
        pcm = array.array("h", [0]) * (2 * frames)
        pcm[0::2] = array.array("h", (int(round(v * gain)) for v in left))
        pcm[1::2] = array.array("h", (int(round(v * gain)) for v in right))
        if sys.byteorder != "little":
            pcm.byteswap()
        blocks.append(pcm.tobytes())
    total = int(seconds * RATE)
    whole = total // frames
    # Higher keys decay faster, as a piano's do: the last level at 60 % of the sample for the top key.
    reach = whole * (1 - 0.4 * (key - 21) / 87)
    data = b"".join(blocks[min(LEVELS - 1, int(b * LEVELS / reach))] for b in range(whole - 1))
    data += bytes(4 * (total - (whole - 1) * frames))  # the last block and the rest: silence
    return data


def wav(data):
    fmt = struct.pack("<HHIIHH", 1, 2, RATE, RATE * 4, 4, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
    os.makedirs(os.path.join(out, "samples"), exist_ok=True)
    lines = [
        "// A large synthesised library for the streaming test: written by scripts/make-sfz-stream-library.py.",
        "<control> default_path=samples/",
        "<global> ampeg_release=0.3 amp_veltrack=100 volume=-12",
    ]
    size = 0
    for layer, (low, high) in (("p", (1, 80)), ("f", (81, 127))):
        lines.append(f"<group> lovel={low} hivel={high}")
        for key in range(21, 109):
            name = f"k{key:03d}_{layer}.wav"
            data = wav(sample_bytes(key, layer == "f", seconds))
            with open(os.path.join(out, "samples", name), "wb") as file:
                file.write(data)
            size += len(data)
            lines.append(f"<region> sample={name} key={key}")
    with open(os.path.join(out, "stream.sfz"), "w") as file:
        file.write("\n".join(lines) + "\n")
    print(f"{2 * 88} samples, {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
