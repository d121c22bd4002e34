#!/usr/bin/env python3
"""`make gm-songs`: the song corpus check. Every openmsx song (Debian's `openttd-openmsx`, GPL-2: 31 General
MIDI files from OpenTTD's music set, jazz, blues, ragtime and game themes with drums) is rendered by the release
`aulos render` with its defaults except the instrument and font, named so the check means the same whatever
render's defaults become: the sampler on FluidR3_GM.sf2, and the synth. Each must have no sample at full scale
and a true peak at or below −1 dBTP; the sampler's integrated loudness must be within ±3 LU of `fluidsynth -F
-g 0.2` (FluidSynth's own gain, its default reverb and chorus) on the same file and font.

Prints the table, writes it into docs/sound.md's corpus section (between the gm-songs markers; the rest of
the page is scripts/sound-sheet.py's) and exits 1 when a bound fails.

Usage: scripts/gm-songs.py [SONG.mid …]  (after swift build -c release --product aulos --product SoundMeasure)
"""
import concurrent.futures
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soundcheck  # noqa: E402
from soundcheck import FLUIDR3  # noqa: E402

TRUE_PEAK_LIMIT = -1.0
LOUDNESS_TOLERANCE = 3.0


def check(song, work):
    """Renders and measures one song: its name and the sampler's, the synth's and FluidSynth's measurements
    (the two renders' with what their summaries say the limiter did)."""
    folder = tempfile.mkdtemp(dir=work)
    sampler, synth, fluid = (os.path.join(folder, name) for name in ("sampler.wav", "synth.wav", "fluid.wav"))
    sampler_summary = soundcheck.render(song, sampler, "sampler", FLUIDR3)
    synth_summary = soundcheck.render(song, synth, "synth")
    soundcheck.fluidsynth(song, fluid, FLUIDR3)
    results = [soundcheck.measure(path, whole=True)[0] for path in (sampler, synth, fluid)]
    results[0].limiter = soundcheck.limiter_activity(sampler_summary)
    results[1].limiter = soundcheck.limiter_activity(synth_summary)
    shutil.rmtree(folder, ignore_errors=True)
    return (os.path.basename(song), *results)


def main():
    soundcheck.require_tools()
    songs = sys.argv[1:] or soundcheck.songs()
    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="aulos-gm-songs-")
    try:
        # Two at a time: each render is one thread, and this machine (and CI's) has two cores.
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda song: check(song, work), songs))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    elapsed = time.monotonic() - started

    failures, rows = [], []
    for name, sampler, synth, fluid in results:
        difference = sampler.lufs - fluid.lufs
        for label, measured in (("sampler", sampler), ("synth", synth)):
            if measured.full_scale:
                failures.append(f"{name}: {label}: {measured.full_scale} samples at full scale")
            if measured.true_peak > TRUE_PEAK_LIMIT:
                failures.append(f"{name}: {label}: true peak {measured.true_peak:.2f} dBTP, above −1")
        if abs(difference) > LOUDNESS_TOLERANCE:
            failures.append(f"{name}: sampler {difference:+.1f} LU from fluidsynth -F")
        rows.append(f"| {name} | {sampler.full_scale} | {sampler.true_peak:.2f} | {sampler.limiter} | "
                    f"{sampler.lufs:.1f} | {fluid.lufs:.1f} | {difference:+.1f} | {synth.full_scale} | "
                    f"{synth.true_peak:.2f} | {synth.limiter} | {synth.lufs:.1f} | {synth.lufs - fluid.lufs:+.1f} |")
    differences = [sampler.lufs - fluid.lufs for _, sampler, _, fluid in results]
    synth_differences = [synth.lufs - fluid.lufs for _, _, synth, fluid in results]
    verdict = "every bound holds" if not failures else f"{len(failures)} bound(s) failed"
    failed = "".join(f"\n- {failure}" for failure in failures)
    table = "\n".join(rows)
    section = f"""## The song corpus (`make gm-songs`)

Generated: {soundcheck.provenance("make gm-songs")}, in {elapsed / 60:.1f} minutes.

{"All" if len(results) == len(soundcheck.songs()) else "Of"} {len(results)} songs of Debian's `openttd-openmsx` \
(`/usr/share/games/openttd/baseset/openmsx/*.mid`, GPL-2), each rendered by the release `aulos render SONG --instrument sampler --soundfont FluidR3_GM.sf2` and
`--instrument synth`, otherwise its defaults (16-bit WAV, 48 kHz, the limiter on), and by `fluidsynth -F -g 0.2
-r 48000` (its default reverb and chorus; float output) on the same font. Bounds: no sample at full scale and a
true peak ≤ −1 dBTP on both instruments; the sampler within ±{LOUDNESS_TOLERANCE:.0f} LU of FluidSynth. The synth's
difference from FluidSynth is shown but not bounded (the issue bounds its balance program by program, above).

**Result: {verdict}.** Sampler − FluidSynth: {min(differences):+.1f} … {max(differences):+.1f} LU (mean
{sum(differences) / len(differences):+.1f}); synth − FluidSynth: {min(synth_differences):+.1f} …
{max(synth_differences):+.1f} LU (mean {sum(synth_differences) / len(synth_differences):+.1f}).
{failed}

"Limiter" is what the render's summary says the output stage did: the share of the song it turned down and
the deepest reduction, or – when it never acted.

| Song | sampler: at full scale | true peak (dBTP) | limiter | LUFS | fluidsynth LUFS | sampler − fluidsynth | synth: at full scale | true peak (dBTP) | limiter | LUFS | synth − fluidsynth |
|---|---|---|---|---|---|---|---|---|---|---|---|
{table}
"""
    print(section)
    sheet = open(soundcheck.SHEET, encoding="utf-8").read() if os.path.exists(soundcheck.SHEET) else (
        "# How Aulos sounds: a General MIDI listening sheet\n\nThe listening sheet itself: `make sound-sheet`.\n")
    with open(soundcheck.SHEET, "w", encoding="utf-8") as handle:
        handle.write(soundcheck.replace_section(sheet, "gm-songs", section))
    print(f"gm-songs: {len(results)} songs in {elapsed:.0f} s; {verdict}; wrote docs/sound.md's corpus section")
    for failure in failures:
        print(f"gm-songs: FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
