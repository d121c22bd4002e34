"""What scripts/sound-sheet.py and scripts/gm-songs.py share: the programs they run (the release `aulos`,
`SoundMeasure` from Tools/SoundMeasure, `fluidsynth`), the fonts and songs they use, a small Standard MIDI
File reader (to find a song's density), and how a generated section of docs/sound.md is replaced.

Python's standard library only (CI's python3 has nothing else); the audio itself is measured by
SoundMeasure, in compiled Swift with AulosDSP's BS.1770 meter.
"""
import glob
import os
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AULOS = os.path.join(ROOT, ".build", "release", "aulos")
MEASURE = os.path.join(ROOT, ".build", "release", "SoundMeasure")
FLUIDR3 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"
AULOSGM = os.path.join(ROOT, "soundfonts", "AulosGM.sf2")
SONGS = "/usr/share/games/openttd/baseset/openmsx"
SHEET = os.path.join(ROOT, "docs", "sound.md")
# FluidSynth's own default gain, which the sampler now shares; the comparison renders use it explicitly.
FLUID_GAIN = "0.2"
RATE = 48000  # aulos render's default rate; FluidSynth is asked for the same.


def require(paths_and_fixes):
    """Stops with the fix when something the measurement needs is missing."""
    missing = [(path, fix) for path, fix in paths_and_fixes if not os.path.exists(path)]
    for path, fix in missing:
        print(f"{path} is missing: {fix}", file=sys.stderr)
    if missing:
        sys.exit(2)


def require_tools():
    require([(AULOS, "make builds it (swift build -c release --product aulos)"),
             (MEASURE, "make builds it (swift build -c release --product SoundMeasure)"),
             (FLUIDR3, "scripts/setup.sh --tests installs fluid-soundfont-gm"),
             (SONGS, "scripts/setup.sh --tests installs openttd-openmsx"),
             ("/usr/bin/fluidsynth", "scripts/setup.sh --tests installs fluidsynth")])


def run(command):
    """Runs a command and returns its standard output; stops with its error output when it fails."""
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        print(f"failed ({result.returncode}): {' '.join(command)}\n{result.stderr}", file=sys.stderr)
        sys.exit(1)
    return result.stdout


def render(song, output, instrument, soundfont=None, extra=()):
    """`aulos render` with the instrument (and font) named explicitly, so the result does not depend on
    render's defaults of the day; returns the summary line."""
    command = [AULOS, "render", song, "--instrument", instrument, "--output", output]
    if soundfont:
        command += ["--soundfont", soundfont]
    lines = run(command + list(extra)).strip().splitlines()
    return lines[-1] if lines else ""


def fluidsynth(song, output, font, effects=True):
    """`fluidsynth -F` at its own gain 0.2 and aulos's rate, as float so its peaks are kept; reverb and
    chorus at FluidSynth's defaults, or off."""
    command = ["fluidsynth", "-n", "-i", "-q", "-F", output, "-O", "float", "-r", str(RATE), "-g", FLUID_GAIN]
    if not effects:
        command += ["-R", "0", "-C", "0"]
    run(command + [font, song])


def limiter_activity(summary):
    """What `aulos render`'s summary says the limiter did, shortly: "–" (never acted), "0.42 %, 4.1 dB" (the
    share of the output it turned down, and at most by how much), or "?" for a summary without the report."""
    if "never acted" in summary:
        return "–"
    marker = "the limiter turned "
    if marker not in summary:
        return "?"
    words = summary[summary.index(marker) + len(marker):].split()
    deepest = summary[summary.index("(at most ") + 9:].split()[0] if "(at most " in summary else "?"
    return f"{words[0]} %, {deepest} dB"


class Measurement:
    """One SoundMeasure line: loudness (LUFS), true peak (dBTP), sample peak (dBFS), samples at full scale."""

    def __init__(self, fields):
        self.lufs, self.true_peak, self.peak = (float(value) for value in fields[:3])
        self.full_scale = int(fields[3])


def measure(path, windows=(), whole=False, pictures=(), picture_options=()):
    """Measures `path`: the whole file and/or (start, seconds) windows, and writes spectrograms given as
    (start, seconds, out.pgm). Returns (whole measurement or None, [window measurements])."""
    command = [MEASURE, path] + list(picture_options)
    if whole:
        command.append("--whole")
    for start, seconds in windows:
        command += ["--window", f"{start:.6f}", f"{seconds:.6f}"]
    for start, seconds, output in pictures:
        command += ["--spectrogram", f"{start:.6f}", f"{seconds:.6f}", output]
    everything, parts = None, []
    for line in run(command).splitlines():
        fields = line.split()
        if fields[0] == "whole":
            everything = Measurement(fields[3:])
        elif fields[0] == "window":
            parts.append(Measurement(fields[3:]))
    return everything, parts


def songs():
    return sorted(glob.glob(os.path.join(SONGS, "*.mid")))


def note_density(path):
    """(note-ons, seconds) of a Standard MIDI File: every track's note-ons with velocity > 0, and the time of
    the last event through the file's tempo map (format 0 and 1, ticks per quarter note)."""
    data = open(path, "rb").read()
    division = struct.unpack(">H", data[12:14])[0]
    at, notes, tempos, last = 14, 0, [], 0
    while at + 8 <= len(data):
        kind, length = data[at:at + 4], struct.unpack(">I", data[at + 4:at + 8])[0]
        body, at = data[at + 8:at + 8 + length], at + 8 + length
        if kind != b"MTrk":
            continue
        i, tick, status = 0, 0, 0
        while i < len(body):
            delta = 0
            while True:
                byte = body[i]
                i += 1
                delta = (delta << 7) | (byte & 0x7F)
                if byte < 0x80:
                    break
            tick += delta
            event = status  # running status: a channel message may leave its status byte out
            if body[i] >= 0x80:
                event = body[i]
                i += 1
                if event < 0xF0:  # meta and system exclusive events do not set the running status
                    status = event
            if event == 0xFF:
                meta, size = body[i], 0
                i += 1
                while True:
                    byte = body[i]
                    i += 1
                    size = (size << 7) | (byte & 0x7F)
                    if byte < 0x80:
                        break
                if meta == 0x51:
                    tempos.append((tick, int.from_bytes(body[i:i + 3], "big")))
                i += size
            elif event in (0xF0, 0xF7):
                size = 0
                while True:
                    byte = body[i]
                    i += 1
                    size = (size << 7) | (byte & 0x7F)
                    if byte < 0x80:
                        break
                i += size
            else:
                high = event & 0xF0
                count = 1 if high in (0xC0, 0xD0) else 2
                if high == 0x90 and body[i + 1] > 0:
                    notes += 1
                i += count
            last = max(last, tick)
    seconds, previous_tick, tempo = 0.0, 0, 500000
    for tick, value in sorted(tempos):
        if tick > last:
            break
        seconds += (tick - previous_tick) * tempo / 1e6 / division
        previous_tick, tempo = tick, value
    seconds += (last - previous_tick) * tempo / 1e6 / division
    return notes, seconds


def replace_section(text, name, section):
    """`text` with the part between `<!-- name:begin -->` and `<!-- name:end -->` replaced by `section`
    (appended, markers and all, when the markers are not there yet)."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    block = f"{begin}\n{section.strip()}\n{end}\n"
    if begin in text and end in text:
        return text[:text.index(begin)] + block + text[text.index(end) + len(end) + 1:]
    return text.rstrip("\n") + "\n\n" + block


def provenance(command):
    """'made by `command` on DATE at commit HASH (main's merges: …)': what the sheet says about itself."""
    commit = run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).strip()
    dirty = run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]).strip()
    date = run(["date", "-u", "+%Y-%m-%d %H:%M UTC"]).strip()
    state = f"commit {commit}" + (" with uncommitted changes" if dirty else "")
    # What of main it holds: the other branches of the work reach this one through main.
    base = run(["git", "-C", ROOT, "merge-base", "HEAD", "main"]).strip()
    subject = run(["git", "-C", ROOT, "log", "-1", "--format=%h %s", base]).strip()
    if len(subject) > 100:
        subject = subject[:99] + "…"
    return f"made by `{command}` on {date} at {state}, which holds main up to {subject}"
