#!/usr/bin/env python3
"""Writes the bundled wavetables in presets/wavetables/: mono 16-bit WAVs of 2048-sample single cycles,
the frames the synth's `wavetable` waveform morphs through (docs: presets/README.md).

    analog-morph.wav    8 frames: sine, then triangle, saw and square, each blended into the next
    harmonic-sweep.wav  16 frames: frame k holds the first 2^(k/2) harmonics of a saw, so the position
                        opens the sound like a filter sweep

Run from the repository root: python3 scripts/make-wavetables.py (the files are committed; this is how
they were made)."""
import math
import struct
import wave

N = 2048


def shape(name, n):
    phase = n / N
    if name == "sine":
        return math.sin(2 * math.pi * phase)
    if name == "triangle":
        return 1 - 4 * abs(phase - 0.25) if phase < 0.75 else 4 * phase - 4
    if name == "saw":
        return 2 * ((phase + 0.5) % 1) - 1
    return 1.0 if phase < 0.5 else -1.0


def blend(a, b, t):
    return [shape(a, n) * (1 - t) + shape(b, n) * t for n in range(N)]


def write(path, frames):
    with wave.open(path, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(48000)
        peak = max(max(abs(x) for x in frame) for frame in frames)
        data = b"".join(struct.pack("<h", int(round(x / peak * 32000))) for frame in frames for x in frame)
        out.writeframes(data)


shapes = ["sine", "triangle", "saw", "square"]
morph = []
for step in range(8):
    position = step / 7 * 3
    index = min(int(position), 2)
    morph.append(blend(shapes[index], shapes[index + 1], position - index))
write("presets/wavetables/analog-morph.wav", morph)

sweep = []
for k in range(16):
    harmonics = max(1, int(2 ** (k / 2)))
    sweep.append([sum(math.sin(2 * math.pi * h * n / N) / h for h in range(1, harmonics + 1)) for n in range(N)])
write("presets/wavetables/harmonic-sweep.wav", sweep)
