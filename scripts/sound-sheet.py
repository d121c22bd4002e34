#!/usr/bin/env python3
"""`make sound-sheet`: docs/sound.md, the General MIDI listening sheet, and its pictures in
docs/images/sound/.

Every one of the 128 GM programs and the drum kit is played the same phrase at velocities 64 and 100 on the
oscillator synth (`--instrument synth`), on the sampler with the bundled AulosGM.sf2, and on the reference,
the sampler with FluidR3_GM.sf2: one MIDI file of back-to-back segments, rendered once per instrument by the
release `aulos render` (dry, no limiter, float: the instrument's own level, however loud). SoundMeasure
(Tools/SoundMeasure, AulosDSP's BS.1770 meter) measures each segment's integrated loudness and draws a
spectrogram of one program per family; this script writes the MIDI file, turns the spectrograms into
palette PNGs (zlib) and writes the tables. Then the limiter on the densest openmsx song.

The corpus section of docs/sound.md (scripts/gm-songs.py, `make gm-songs`) is kept as it is.

Usage: scripts/sound-sheet.py (after swift build -c release --product aulos --product SoundMeasure)
"""
import os
import shutil
import struct
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from smf import absolute, smf, track  # noqa: E402
import soundcheck  # noqa: E402
from soundcheck import AULOSGM, FLUIDR3, ROOT  # noqa: E402

IMAGES = os.path.join(ROOT, "docs", "images", "sound")
VELOCITIES = (64, 100)
# The phrase, as the synth's conformance test (Tests/AulosUnitsTests/GeneralMIDIMeasurement.swift) plays it:
# C3, C4, E4, G4 entering 0.2 s apart, all released at 1.2 s; loudness over its first 1.5 s. Here the segment
# rings on to 3.0 s (the spectrogram shows the release), then all sound off and 0.5 s of quiet.
PHRASE_KEYS = (48, 60, 64, 67)
SEGMENT, MEASURED, PICTURED = 3.5, 1.5, 3.0
# The kit: every GM drum key 35…81 in turn, 0.125 s apart (a column of the picture each), all sound off at
# 7 s; loudness over those 7 s.
KIT_SEGMENT, KIT_MEASURED = 7.5, 7.0
TICKS_PER_SECOND = 960  # 480 ticks a quarter note at 120 BPM
PICTURE = dict(width=320, height=120, low=40, high=16000, floor=-100, ceiling=-10)

FAMILIES = [  # name, first program, the program pictured (a typical one, not always the family's first)
    ("Piano", 0, 0), ("Chromatic percussion", 8, 11), ("Organ", 16, 16), ("Guitar", 24, 25), ("Bass", 32, 33),
    ("Strings", 40, 40), ("Ensemble", 48, 48), ("Brass", 56, 56), ("Reed", 64, 65), ("Pipe", 72, 73),
    ("Synth lead", 80, 81), ("Synth pad", 88, 89), ("Synth effects", 96, 99), ("Ethnic", 104, 105),
    ("Percussive", 112, 114), ("Sound effects", 120, 122),
]
PROGRAMS = [
    "Acoustic Grand Piano", "Bright Acoustic Piano", "Electric Grand Piano", "Honky-tonk Piano",
    "Electric Piano 1", "Electric Piano 2", "Harpsichord", "Clavinet", "Celesta", "Glockenspiel", "Music Box",
    "Vibraphone", "Marimba", "Xylophone", "Tubular Bells", "Dulcimer", "Drawbar Organ", "Percussive Organ",
    "Rock Organ", "Church Organ", "Reed Organ", "Accordion", "Harmonica", "Tango Accordion",
    "Acoustic Guitar (nylon)", "Acoustic Guitar (steel)", "Electric Guitar (jazz)", "Electric Guitar (clean)",
    "Electric Guitar (muted)", "Overdriven Guitar", "Distortion Guitar", "Guitar Harmonics", "Acoustic Bass",
    "Electric Bass (finger)", "Electric Bass (pick)", "Fretless Bass", "Slap Bass 1", "Slap Bass 2",
    "Synth Bass 1", "Synth Bass 2", "Violin", "Viola", "Cello", "Contrabass", "Tremolo Strings",
    "Pizzicato Strings", "Orchestral Harp", "Timpani", "String Ensemble 1", "String Ensemble 2",
    "Synth Strings 1", "Synth Strings 2", "Choir Aahs", "Voice Oohs", "Synth Voice", "Orchestra Hit",
    "Trumpet", "Trombone", "Tuba", "Muted Trumpet", "French Horn", "Brass Section", "Synth Brass 1",
    "Synth Brass 2", "Soprano Sax", "Alto Sax", "Tenor Sax", "Baritone Sax", "Oboe", "English Horn",
    "Bassoon", "Clarinet", "Piccolo", "Flute", "Recorder", "Pan Flute", "Blown Bottle", "Shakuhachi",
    "Whistle", "Ocarina", "Lead 1 (square)", "Lead 2 (sawtooth)", "Lead 3 (calliope)", "Lead 4 (chiff)",
    "Lead 5 (charang)", "Lead 6 (voice)", "Lead 7 (fifths)", "Lead 8 (bass + lead)", "Pad 1 (new age)",
    "Pad 2 (warm)", "Pad 3 (polysynth)", "Pad 4 (choir)", "Pad 5 (bowed)", "Pad 6 (metallic)", "Pad 7 (halo)",
    "Pad 8 (sweep)", "FX 1 (rain)", "FX 2 (soundtrack)", "FX 3 (crystal)", "FX 4 (atmosphere)",
    "FX 5 (brightness)", "FX 6 (goblins)", "FX 7 (echoes)", "FX 8 (sci-fi)", "Sitar", "Banjo", "Shamisen",
    "Koto", "Kalimba", "Bagpipe", "Fiddle", "Shanai", "Tinkle Bell", "Agogo", "Steel Drums", "Woodblock",
    "Taiko Drum", "Melodic Tom", "Synth Drum", "Reverse Cymbal", "Guitar Fret Noise", "Breath Noise",
    "Seashore", "Bird Tweet", "Telephone Ring", "Helicopter", "Applause", "Gunshot",
]
INSTRUMENTS = [  # key, what the sheet calls it, aulos render's instrument and font
    ("synth", "synth", "synth", None),
    ("aulosgm", "sampler, AulosGM.sf2", "sampler", AULOSGM),
    ("fluidr3", "sampler, FluidR3 (reference)", "sampler", FLUIDR3),
]


def segments():
    """[(label, start seconds, measured seconds, pictured seconds or 0)]: 128 programs × 2 velocities, then
    the kit at both velocities; the pictured ones are each family's chosen program and the kit at 100."""
    pictured = {family[2] for family in FAMILIES}
    result, start = [], 0.0
    for program in range(128):
        for velocity in VELOCITIES:
            picture = PICTURED if program in pictured and velocity == 100 else 0
            result.append(((program, velocity), start, MEASURED, picture))
            start += SEGMENT
    for velocity in VELOCITIES:
        result.append((("kit", velocity), start, KIT_MEASURED, KIT_MEASURED if velocity == 100 else 0))
        start += KIT_SEGMENT
    return result


def phrase_file(path):
    """The MIDI file every instrument renders: the segments of `segments()`, back to back."""
    events = [(0, b"\xff\x51\x03\x07\xa1\x20")]  # 500,000 µs a quarter note: 120 BPM

    def at(seconds):
        return round(seconds * TICKS_PER_SECOND)

    def silence(channel, seconds):
        # All sound off and reset all controllers, so nothing rings into the next segment.
        events.append((at(seconds), bytes([0xB0 | channel, 120, 0])))
        events.append((at(seconds), bytes([0xB0 | channel, 121, 0])))

    for (what, velocity), start, _, _ in segments():
        if what == "kit":
            for index, key in enumerate(range(35, 82)):
                events.append((at(start + index * 0.125), bytes([0x99, key, velocity])))
                events.append((at(start + index * 0.125 + 0.1), bytes([0x89, key, 0])))
            silence(9, start + KIT_MEASURED)
            continue
        events.append((at(start), bytes([0xC0, what])))
        for index, key in enumerate(PHRASE_KEYS):
            events.append((at(start + index * 0.2), bytes([0x90, key, velocity])))
            events.append((at(start + 1.2), bytes([0x80, key, 0])))
        silence(0, start + PICTURED)
    with open(path, "wb") as handle:
        handle.write(smf(0, 480, [track(absolute(events))]))


def palette():
    """256 colours from black through violet, red and orange to pale yellow (dark = quiet), as PLTE bytes."""
    stops = [(0, (0, 0, 0)), (60, (40, 12, 90)), (130, (170, 40, 70)), (195, (245, 130, 30)),
             (255, (252, 250, 200))]
    colours = []
    for level in range(256):
        for (a, low), (b, high) in zip(stops, stops[1:]):
            if a <= level <= b:
                t = (level - a) / (b - a)
                colours.append(bytes(round(low[i] + (high[i] - low[i]) * t) for i in range(3)))
                break
    return b"".join(colours)


def png(path, width, height, pixels):
    """An 8-bit palette PNG of `pixels` (row-major grey levels), levels kept to 64 steps (4 LU-ish each at
    the sheet's 90 dB range) so the pictures compress to a few kilobytes."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes((value >> 2) << 2 for value in pixels[y * width:(y + 1) * width])
                    for y in range(height))
    with open(path, "wb") as handle:
        handle.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0))
                     + chunk(b"PLTE", palette()) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def read_pgm(path):
    data = open(path, "rb").read()
    fields = data.split(maxsplit=4)
    width, height = int(fields[1]), int(fields[2])
    return width, height, list(data[-width * height:])


def mark_axes(width, height, pixels, seconds):
    """Small white ticks: on the left edge at 100 Hz, 1 kHz and 10 kHz, along the bottom every second."""
    import math
    span = math.log(PICTURE["high"] / PICTURE["low"])
    for frequency in (100, 1000, 10000):
        row = height - 1 - int(math.log(frequency / PICTURE["low"]) / span * height)
        for x in range(6):
            pixels[row * width + x] = 255
    for second in range(1, int(seconds) + 1):
        x = min(width - 1, round(second / seconds * width))
        for y in range(height - 5, height):
            pixels[y * width + x] = 255
    return pixels


def scale_picture(path):
    """The colour scale: −100 dB at the left to −10 dB at the right, a tick every 10 dB."""
    width, height = 180, 10
    pixels = [round(x / (width - 1) * 255) for _ in range(height) for x in range(width)]
    for step in range(10):
        x = round(step / 9 * (width - 1))
        for y in range(height - 3, height):
            pixels[y * width + x] = 255 if x < width / 2 else 0
    png(path, width, height, pixels)


def render_phrases(work):
    """{instrument key: {(program or 'kit', velocity): Measurement}}; writes the pictures."""
    midi = os.path.join(work, "phrases.mid")
    phrase_file(midi)
    options = ["--size", str(PICTURE["width"]), str(PICTURE["height"]), "--band", str(PICTURE["low"]),
               str(PICTURE["high"]), "--range", str(PICTURE["floor"]), str(PICTURE["ceiling"])]
    results = {}
    for key, name, instrument, font in INSTRUMENTS:
        wav = os.path.join(work, f"{key}.wav")
        summary = soundcheck.render(midi, wav, instrument, font, ["--dry", "--no-limiter", "--format", "float"])
        print(f"{name}: {summary}")
        listed = segments()
        pictures = [(start, pictured, os.path.join(work, f"{key}-{what}.pgm"))
                    for (what, velocity), start, _, pictured in listed if pictured]
        _, measured = soundcheck.measure(wav, windows=[(start, seconds) for _, start, seconds, _ in listed],
                                         pictures=pictures, picture_options=options)
        results[key] = {label: value for (label, _, _, _), value in zip(listed, measured)}
        for start, pictured, pgm in pictures:
            width, height, pixels = read_pgm(pgm)
            what = os.path.basename(pgm)[len(key) + 1:-4]
            png(os.path.join(IMAGES, f"{picture_name(what)}-{key}.png"), width, height,
                mark_axes(width, height, pixels, pictured))
        os.remove(wav)
    return results


def picture_name(what):
    if what == "kit":
        return "kit"
    words = "".join(c if c.isalnum() else " " for c in PROGRAMS[int(what)].lower()).split()
    return f"{int(what):03d}-" + "-".join(words)


def fmt(value, signed=False):
    if value == float("-inf"):
        return "silent"
    return f"{value:+.1f}" if signed else f"{value:.1f}"


def family_row(name, labels, results):
    """Loudness at 64 and 100 (mean over the family's programs) on each instrument; each instrument's error
    against FluidR3 (mean over programs and velocities) and its worst program."""
    cells = [name]
    for key in ("fluidr3", "synth", "aulosgm"):
        for velocity in VELOCITIES:
            values = [results[key][(label, velocity)].lufs for label in labels]
            heard = [value for value in values if value != float("-inf")]
            cells.append(fmt(sum(heard) / len(heard)) if heard else "silent")
        if key == "fluidr3":
            continue
        errors, silent, worst = [], 0, None
        for label in labels:
            for velocity in VELOCITIES:
                mine, reference = results[key][(label, velocity)].lufs, results["fluidr3"][(label, velocity)].lufs
                if mine == float("-inf") or reference == float("-inf"):
                    silent += mine == float("-inf")
                    continue
                errors.append(mine - reference)
                if worst is None or abs(mine - reference) > abs(worst[0]):
                    worst = (mine - reference, label)
        mean = f"{sum(errors) / len(errors):+.1f}" if errors else "–"
        if worst and len(labels) > 1:
            mean += f" ({worst[0]:+.1f} {PROGRAMS[worst[1]]})"
        if silent:
            mean += f", {silent} silent"
        cells.append(mean)
    return "| " + " | ".join(cells) + " |"


def limiter_section(work):
    """The limiter on the densest openmsx song: each instrument with and without it, and FluidSynth."""
    density = [(notes / seconds, path) for path in soundcheck.songs()
               for notes, seconds in [soundcheck.note_density(path)]]
    rate, song = max(density)
    name = os.path.basename(song)
    rows = []
    # At the default gain, and 12 dB up (a user turning it up, or a louder song): the limiter at work.
    for gain in ("0", "12"):
        for key, label, instrument, font in INSTRUMENTS:
            extra = ["--gain", gain]
            summary = soundcheck.render(song, os.path.join(work, "on.wav"), instrument, font, extra)
            soundcheck.render(song, os.path.join(work, "off.wav"), instrument, font,
                              extra + ["--no-limiter", "--format", "float"])
            on, _ = soundcheck.measure(os.path.join(work, "on.wav"), whole=True)
            off, _ = soundcheck.measure(os.path.join(work, "off.wav"), whole=True)
            stage = summary[summary.find("peak "):].split(";")[0] if "peak " in summary else "(no limiter report)"
            rows.append(f"| {label} | {gain} | {fmt(off.peak)} / {fmt(off.true_peak)} | {off.full_scale} | "
                        f"{fmt(on.peak)} / {fmt(on.true_peak)} | {on.full_scale} | {fmt(off.lufs)} → {fmt(on.lufs)}"
                        f" | {stage} |")
    comparisons = []
    for font, font_name in ((FLUIDR3, "FluidR3"), (AULOSGM, "AulosGM.sf2")):
        for effects in (False, True):
            fluid_path = os.path.join(work, "fluid.wav")
            soundcheck.fluidsynth(song, fluid_path, font, effects)
            extra = [] if effects else ["--dry"]
            soundcheck.render(song, os.path.join(work, "aulos.wav"), "sampler", font, extra)
            fluid, _ = soundcheck.measure(fluid_path, whole=True)
            mine, _ = soundcheck.measure(os.path.join(work, "aulos.wav"), whole=True)
            flags = "" if effects else " -R 0 -C 0"
            ours = "" if effects else " --dry"
            comparisons.append(
                f"| {font_name}, {'default reverb and chorus' if effects else 'no effects'} | "
                f"`fluidsynth -F -g 0.2{flags}`: {fmt(fluid.lufs)} LUFS, true peak {fmt(fluid.true_peak)} dBTP, "
                f"{fluid.full_scale} at full scale | `aulos render --instrument sampler{ours}`: {fmt(mine.lufs)} LUFS,"
                f" true peak {fmt(mine.true_peak)} dBTP | {mine.lufs - fluid.lufs:+.1f} LU |")
    return f"""## The limiter on a dense song

`{name}` from openmsx, the densest of its songs ({rate:.1f} note-ons a second), rendered with `aulos render`'s
defaults (16-bit, limiter on) and with `--no-limiter --format float` (what the instruments put out, unclipped),
at 48 kHz; at the default gain and again with `--gain 12` (a user turning it up, or a song mixed hotter), where
the limiter has work to do. Peaks are sample peak / true peak (4× oversampled, BS.1770) in dBFS; "at full
scale" counts samples whose magnitude is the format's largest (in float, 1.0 or more: what a 16-bit file would
have clipped). The last column is `aulos render`'s own summary of the output stage.

| Instrument | `--gain` (dB) | Without the limiter: peak / true peak | at full scale | With it (default) | at full scale | Loudness (LUFS) without → with | The render's summary |
|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

Loudness against FluidSynth on the same song and font (48 kHz, both with their limiter or clipping as shipped;
FluidSynth's output taken as float so nothing of it is clipped):

| Font and effects | FluidSynth | aulos | aulos − FluidSynth |
|---|---|---|---|
{chr(10).join(comparisons)}
"""


def main():
    soundcheck.require_tools()
    os.makedirs(IMAGES, exist_ok=True)
    work = tempfile.mkdtemp(prefix="aulos-sound-sheet-")
    try:
        results = render_phrases(work)
        limiter = limiter_section(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    scale_picture(os.path.join(IMAGES, "scale.png"))
    write_sheet(results, limiter)


def write_sheet(results, limiter):
    rows = [family_row(name, list(range(first, first + 8)), results) for name, first, _ in FAMILIES]
    rows.append(family_row("Drum kit (keys 35–81)", ["kit"], results))
    pictures = []
    for name, _, pictured in FAMILIES + [("Drum kit", None, "kit")]:
        stem = picture_name(str(pictured) if pictured != "kit" else "kit")
        title = f"{name}: {PROGRAMS[pictured]}" if pictured != "kit" else "Drum kit: keys 35–81 in turn"
        cells = " | ".join(f"![{title}, {label}](images/sound/{stem}-{key}.png)" for key, label, _, _ in INSTRUMENTS)
        pictures.append(f"| {title} | {cells} |")
    every = []
    for program in range(128):
        cells = [f"{program}", PROGRAMS[program]]
        for key in ("fluidr3", "synth", "aulosgm"):
            for velocity in VELOCITIES:
                cells.append(fmt(results[key][(program, velocity)].lufs))
        for key in ("synth", "aulosgm"):
            pairs = [(results[key][(program, v)].lufs, results["fluidr3"][(program, v)].lufs) for v in VELOCITIES]
            cells.append(" / ".join(fmt(mine - reference, signed=True) if float("-inf") not in (mine, reference)
                                    else "–" for mine, reference in pairs))
        every.append("| " + " | ".join(cells) + " |")
    command = "make sound-sheet"
    sheet = f"""# How Aulos sounds: a General MIDI listening sheet

What each General MIDI family and the drum kit sound like on Aulos's two instruments — the oscillator synth
(`--instrument synth`) and the FluidSynth sampler on the bundled `soundfonts/AulosGM.sf2` — beside the
reference, the same sampler on FluidR3_GM (Debian's `fluid-soundfont-gm`): how loud, and a picture of the
sound, to look at before listening. Then what the output limiter does to a dense real song, and (from `make
gm-songs`) every openmsx song's peaks and loudness.

Generated, not written: {soundcheck.provenance(command)}. Do not edit by hand; run the command again.

**How it is made.** `scripts/sound-sheet.py` writes one MIDI file holding every GM program's phrase at
velocity 64 and again at 100, back to back, then the kit; the release `aulos render` renders it once per
instrument with `--dry --no-limiter --format float` (no reverb or chorus, no limiter: each instrument's own
level, however loud) at 48 kHz. `SoundMeasure` (`Tools/SoundMeasure`, built with the release binary) reads
each render and measures every segment with AulosDSP's `LoudnessMeter` (ITU-R BS.1770-4 integrated loudness,
K-weighted, 400 ms blocks, −70 LUFS and −10 LU gates) and draws the spectrograms as PGM; the script turns
those into palette PNGs with zlib and writes this page. Nothing beyond Python's standard library.

**The phrase** (the one the synth's conformance test plays, `GeneralMIDIMeasurement`): C3, C4, E4, G4 entering
0.2 s apart on channel 1 after the program change, all released at 1.2 s; loudness is measured over the first
1.5 s; the segment rings on to 3 s (the pictures show the release), then all sound off. **The kit**: every GM
drum key 35–81 in turn on channel 10, 0.125 s apart, held 0.1 s; loudness over 7 s.

## Loudness by family

Integrated loudness in LUFS, the mean over the family's eight programs, at velocity 64 / 100; then each
instrument's error against FluidR3 (instrument − FluidR3, in LU), the mean over the family's programs and both
velocities, with its worst program in brackets. The issue's bar is ±3 dB per program.

| Family | FluidR3 64 | FluidR3 100 | synth 64 | synth 100 | synth − FluidR3 | AulosGM 64 | AulosGM 100 | AulosGM − FluidR3 |
|---|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

## What they look like

One program of each family (velocity 100) and the kit. Time runs left to right over 3 s (the kit: 7 s; a
tick along the bottom every second), frequency bottom to top on a logarithmic axis from 40 Hz to 16 kHz
(ticks on the left edge at 100 Hz, 1 kHz and 10 kHz); colour is level, from −100 dB (black) to −10 dB (pale
yellow), where 0 dB is a full-scale sine: ![scale](images/sound/scale.png). 2048-point Hann windows of the two
channels' mean. Look for: how long a note rings after its release at 1.2 s, how high its harmonics reach
(brightness), noise as a smear between the harmonics, and in the kit, a dark column for a key that is silent.

| Program | synth | sampler, AulosGM.sf2 | sampler, FluidR3 (reference) |
|---|---|---|---|
{chr(10).join(pictures)}

<details><summary>Every program: loudness (LUFS) at 64 / 100 and the errors against FluidR3</summary>

| # | Program | FluidR3 64 | FluidR3 100 | synth 64 | synth 100 | AulosGM 64 | AulosGM 100 | synth − FluidR3 | AulosGM − FluidR3 |
|---|---|---|---|---|---|---|---|---|---|
{chr(10).join(every)}

</details>

{limiter}"""
    old = open(soundcheck.SHEET, encoding="utf-8").read() if os.path.exists(soundcheck.SHEET) else ""
    begin = "<!-- gm-songs:begin -->"
    corpus = old[old.index(begin):] if begin in old else (
        f"{begin}\n## The song corpus\n\nNot measured yet: run `make gm-songs`.\n<!-- gm-songs:end -->\n")
    with open(soundcheck.SHEET, "w", encoding="utf-8") as handle:
        handle.write(sheet.rstrip("\n") + "\n\n" + corpus)
    print(f"sound-sheet: wrote {os.path.relpath(soundcheck.SHEET, ROOT)} and {len(pictures) * 3 + 1} pictures")


if __name__ == "__main__":
    main()
