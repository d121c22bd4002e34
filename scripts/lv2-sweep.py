#!/usr/bin/env python3
"""Every installed LV2 plugin through `aulos render`, each in its own process (a plugin that crashes takes
only its own render down): instruments as a part playing a short score, MIDI effects (aumf) before the
synth in a part's midi-effects, effects as the master effect of a rig playing it. Prints one line per plugin that fails and a summary; exits non-zero if
any plugin Aulos says it can host fails to render.

    scripts/lv2-sweep.py [path/to/aulos]        (make lv2-sweep)
"""

import os
import re
import subprocess
import sys
import tempfile

aulos = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/debug/aulos")
listing = subprocess.run([aulos, "units", "--lv2"], capture_output=True, text=True, check=True).stdout

# Each plugin's block starts "type subtype manufacturer  Name  <URI>" and says whether Aulos can host it.
plugins = []
for block in re.split(r"\n(?=\S)", listing):
    head = re.match(r"(au\w\w) \S+ \S+  (.*)  <(.+)>", block)
    if head:
        hostable = "Aulos cannot host it" not in block
        has_audio_in = re.search(r"port \d+ in  audio", block) is not None
        plugins.append((head.group(1), head.group(2), head.group(3), hostable, has_audio_in))

score = "0b tempo 120\n0b note C4 1b vel=100\n0b note E4 1b vel=100\n1b note G4 1b vel=100\n2b end\n"
# "unloadable": the plugin's own library does not load (dlopen fails: Debian 12's swh-lv2 builds mbeq and
# pitchScaleHQ without linking libfftw3f, `ldd -r` lists fftwf_execute undefined); no host can run it, and
# Aulos says so in one line. Counted apart, not as Aulos failing to host what it can.
results = {"rendered": [], "refused": [], "failed": [], "crashed": [], "not hostable": [], "unloadable": []}
with tempfile.TemporaryDirectory() as folder:
    with open(os.path.join(folder, "song.score"), "w") as file:
        file.write(score)
    for index, (kind, name, uri, hostable, has_audio_in) in enumerate(plugins):
        if not hostable:
            results["not hostable"].append((name, uri, "missing features"))
            continue
        rig = os.path.join(folder, f"rig{index}.yaml")
        with open(rig, "w") as file:
            if kind == "aufx" and has_audio_in:
                file.write("name: sweep\nparts:\n  - instrument: synth\n    channels: [1]\n"
                           f"output:\n  effects:\n    - unit: \"lv2:{uri}\"\n")
            elif kind == "aumf":
                # A MIDI effect plays into an instrument: before the synth, in the part's midi-effects.
                file.write("name: sweep\nparts:\n  - instrument: synth\n    channels: [1]\n"
                           f"    midi-effects:\n      - unit: \"lv2:{uri}\"\n")
            else:
                file.write(f"name: sweep\nparts:\n  - instrument: \"lv2:{uri}\"\n    channels: [1]\n")
        try:
            run = subprocess.run(
                [aulos, "render", "song.score", "--rig", rig, "-o", "out.wav"],
                cwd=folder, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            results["failed"].append((name, uri, "timed out after 120 s"))
            continue
        last = (run.stderr.strip().splitlines() or [""])[-1]
        if run.returncode == 0:
            results["rendered"].append((name, uri, ""))
        elif run.returncode < 0:
            results["crashed"].append((name, uri, f"signal {-run.returncode}"))
        elif "Failed to open library" in last:
            results["unloadable"].append((name, uri, last))
        elif "cannot" in last or "requires" in last or "hosts mono and stereo" in last:
            results["refused"].append((name, uri, last))
        else:
            results["failed"].append((name, uri, last))

for outcome in ["refused", "unloadable", "failed", "crashed", "not hostable"]:
    for name, uri, why in results[outcome]:
        print(f"{outcome}: {name} <{uri}>: {why}")
hostable = len(plugins) - len(results["not hostable"])
print(f"{len(plugins)} LV2 plugins installed, {hostable} with every feature they require; rendered "
      f"{len(results['rendered'])}, refused {len(results['refused'])}, failed {len(results['failed'])}, "
      f"crashed {len(results['crashed'])}, unloadable (their library does not load) {len(results['unloadable'])}")
sys.exit(0 if not results["failed"] and not results["crashed"] else 1)
