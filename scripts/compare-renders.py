#!/usr/bin/env python3
"""How far a change moved the sound: compares two folders of raw renders (32-bit float samples, as
`AULOS_SYNTH_DUMP` writes them from the synth's digest harness) file by file.

    scripts/compare-renders.py BEFORE_DIR AFTER_DIR

For each file present in both: the number of samples that differ, the largest difference, and that
difference and the difference's RMS in dB below the render's own peak. Exits non-zero when a file is missing
on one side or the two differ in length (not a measurement of the same render).
"""

import array
import math
import os
import sys


def read(path):
    samples = array.array("f")
    with open(path, "rb") as f:
        samples.frombytes(f.read())
    return samples


def decibels(value, reference):
    if value == 0:
        return "-inf"
    return "%.1f" % (20 * math.log10(value / reference)) if reference > 0 else "n/a"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compare-renders.py BEFORE_DIR AFTER_DIR")
    before_dir, after_dir = sys.argv[1:]
    names = sorted(set(os.listdir(before_dir)) | set(os.listdir(after_dir)))
    problems = 0
    worst = None
    print("%-28s %9s %12s %12s %12s" % ("render", "differ", "max |diff|", "max dB/peak", "rms dB/peak"))
    for name in names:
        a_path, b_path = os.path.join(before_dir, name), os.path.join(after_dir, name)
        if not (os.path.exists(a_path) and os.path.exists(b_path)):
            print("%-28s missing on one side" % name)
            problems += 1
            continue
        a, b = read(a_path), read(b_path)
        if len(a) != len(b):
            print("%-28s lengths differ (%d, %d)" % (name, len(a), len(b)))
            problems += 1
            continue
        peak = max((abs(x) for x in a), default=0.0)
        differ = 0
        largest = 0.0
        square = 0.0
        for x, y in zip(a, b):
            d = abs(x - y)
            if d > 0 or (math.isnan(x) != math.isnan(y)):
                differ += 1
                largest = max(largest, d)
                square += d * d
        rms = math.sqrt(square / len(a)) if a else 0.0
        print("%-28s %9d %12.3g %12s %12s" % (name[:-4], differ, largest, decibels(largest, peak), decibels(rms, peak)))
        if differ and peak > 0:
            ratio = largest / peak
            if worst is None or ratio > worst[0]:
                worst = (ratio, name)
    if worst:
        print("largest difference against its render's peak: %s dB (%s)" % (decibels(worst[0], 1), worst[1]))
    else:
        print("no render differs")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
