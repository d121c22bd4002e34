#!/usr/bin/env python3
"""Loudness of every General MIDI program (and the drum kit) in two SoundFonts, through fluidsynth.

Usage: scripts/font-loudness.py [FONT] [REFERENCE] [--programs 0,1,...] [--per-program]

Each program plays one fixed phrase (a C major arpeggio and chord around middle C, or two octaves lower for
basses, at velocities 64 and 100), rendered by `fluidsynth -F out.wav -r 48000 -g 0.2 -R 0 -C 0 -ni FONT
phrase.mid` (reverb and chorus off), and measured as the RMS over the phrase in dBFS. Prints per family the
mean level of each font and the difference. Only the standard library: it runs where numpy does not.
"""
import array
import math
import os
import struct
import subprocess
import sys
import tempfile
import wave

FAMILIES = [
    "Piano", "Chromatic Percussion", "Organ", "Guitar", "Bass", "Strings", "Ensemble", "Brass", "Reed", "Pipe",
    "Synth Lead", "Synth Pad", "Synth Effects", "Ethnic", "Percussive", "Sound Effects",
]


def variable_length(value):
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.insert(0, (value & 0x7F) | 0x80)
        value >>= 7
    return bytes(out)


def midi_file(events, division=480):
    """events: (tick, bytes) on one track; 120 bpm, so 480 ticks = 0.5 s."""
    track = b""
    last = 0
    for tick, data in sorted(events, key=lambda e: e[0]):
        track += variable_length(tick - last) + data
        last = tick
    track += variable_length(0) + b"\xff\x2f\x00"
    return b"MThd" + struct.pack(">IHHH", 6, 0, 1, division) + b"MTrk" + struct.pack(">I", len(track)) + track


def phrase(program, channel=0, base=60):
    events = [(0, bytes([0xC0 | channel, program]))]
    tick = 0
    for velocity in (64, 100):
        for note in (base, base + 4, base + 7, base + 12):
            events.append((tick, bytes([0x90 | channel, note, velocity])))
            events.append((tick + 400, bytes([0x80 | channel, note, 0])))
            tick += 480
        for note in (base, base + 4, base + 7):
            events.append((tick, bytes([0x90 | channel, note, velocity])))
            events.append((tick + 900, bytes([0x80 | channel, note, 0])))
        tick += 960
    return midi_file(events)


def drum_phrase(keys):
    events = []
    tick = 0
    for velocity in (64, 100):
        for key in keys:
            events.append((tick, bytes([0x99, key, velocity])))
            events.append((tick + 100, bytes([0x89, key, 0])))
            tick += 240
    return midi_file(events)


def render_level(font, midi, seconds):
    with tempfile.TemporaryDirectory() as folder:
        mid = os.path.join(folder, "p.mid")
        wav = os.path.join(folder, "p.wav")
        with open(mid, "wb") as f:
            f.write(midi)
        subprocess.run(
            ["fluidsynth", "-F", wav, "-r", "48000", "-g", "0.2", "-R", "0", "-C", "0", "-ni", font, mid],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with wave.open(wav) as w:
            frames = w.readframes(w.getnframes())
            width = w.getsampwidth()
        samples = array.array("h" if width == 2 else "i", frames)
        scale = 32768.0 if width == 2 else 2147483648.0
        count = min(len(samples), int(seconds * 48000) * 2)
        total = sum(float(s) * s for s in samples[:count]) / (scale * scale)
        peak = max((abs(s) for s in samples), default=0) / scale
        rms = math.sqrt(total / max(1, count))
        return (20 * math.log10(rms) if rms > 0 else -200.0), peak


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    font = args[0] if args else "soundfonts/AulosGM.sf2"
    reference = args[1] if len(args) > 1 else "/usr/share/sounds/sf2/FluidR3_GM.sf2"
    programs = list(range(128))
    for a in sys.argv[1:]:
        if a.startswith("--programs="):
            programs = [int(p) for p in a.split("=", 1)[1].split(",")]
    per_program = "--per-program" in sys.argv
    family_levels = {}
    for program in programs:
        base = 36 if 32 <= program <= 39 or program in (43, 58, 67, 70) else 60
        midi = phrase(program, base=base)
        ours, peak = render_level(font, midi, 7.0)
        theirs, _ = render_level(reference, midi, 7.0)
        family_levels.setdefault(program // 8, []).append((ours, theirs))
        if per_program:
            print(f"{program:3d} ours {ours:6.1f} ref {theirs:6.1f} diff {ours - theirs:+5.1f} peak {peak:.2f}")
    print(f"{'family':22s} {'ours dB':>8s} {'FluidR3':>8s} {'diff':>6s}")
    for family in sorted(family_levels):
        levels = family_levels[family]
        ours = sum(l[0] for l in levels) / len(levels)
        theirs = sum(l[1] for l in levels) / len(levels)
        print(f"{FAMILIES[family]:22s} {ours:8.1f} {theirs:8.1f} {ours - theirs:+6.1f}")
    if "--no-drums" not in sys.argv:
        keys = list(range(35, 82))
        midi = drum_phrase(keys)
        ours, peak = render_level(font, midi, 2 * len(keys) * 0.25)
        theirs, _ = render_level(reference, midi, 2 * len(keys) * 0.25)
        print(f"{'Drum kit (35-81)':22s} {ours:8.1f} {theirs:8.1f} {ours - theirs:+6.1f}  (peak {peak:.2f})")


if __name__ == "__main__":
    main()
