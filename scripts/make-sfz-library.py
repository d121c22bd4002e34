#!/usr/bin/env python3
"""Writes Aulos's own small SFZ library, sfz/aulos-test/: synthesised WAV samples and an .sfz that uses every
opcode family the SFZ parser supports, for the tests and the demo (no download, no recorded audio).

Samples (48 kHz mono PCM, 16-bit unless said; pitches exact so tests can measure them):
  sine_a4.wav      440 Hz sine, 0.5 s; 1,200 frames are exactly 11 periods, so a loop of 1,200 is seamless
  saw_c3.wav       band-limited saw at 130.81 Hz (C3), 0.5 s
  loop_a4.wav      440 Hz tone with harmonics, 0.5 s, with a `smpl` loop 12,000-23,999 (whole periods)
  piano_p_c4.wav   soft decaying "piano" at 261.63 Hz (C4), 1 s, 24-bit
  piano_f_c4.wav   loud, brighter version of the same, 1 s, 24-bit
  stac_c4.wav      short staccato C4, 0.2 s
  release.wav      a damper thump for release triggers, 0.15 s
  kick_1..3.wav    three round-robin drum hits (pitch-dropping sine and noise), 0.25 s each
  hat_open.wav     open hi-hat (filtered noise), 0.4 s; hat_closed.wav 0.1 s
The whole library is under 700 kB. Run from anywhere: `scripts/make-sfz-library.py [OUTPUT_FOLDER]`.
"""
import math
import os
import random
import struct
import sys

RATE = 48000


def wav(samples, bits=16, loop=None, root=None):
    """A mono PCM WAV (16- or 24-bit) of float samples in -1..1, with a `smpl` chunk when `loop` is
    (start, end) in frames (end inclusive, as the chunk defines it) or a root key is given."""
    scale = (1 << (bits - 1)) - 1
    width = bits // 8
    frames = bytearray()
    for value in samples:
        integer = max(-scale, min(scale, int(round(value * scale))))
        frames += integer.to_bytes(4, "little", signed=True)[:width]
    fmt = struct.pack("<HHIIHH", 1, 1, RATE, RATE * width, width, bits)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt
    body += b"data" + struct.pack("<I", len(frames)) + bytes(frames) + (b"\0" if len(frames) & 1 else b"")
    if loop is not None or root is not None:
        loops = [] if loop is None else [struct.pack("<IIIIII", 0, 0, loop[0], loop[1], 0, 0)]
        smpl = struct.pack("<IIIIIIIII", 0, 0, 1_000_000_000 // RATE, root or 60, 0, 0, 0, len(loops), 0)
        smpl += b"".join(loops)
        body += b"smpl" + struct.pack("<I", len(smpl)) + smpl
    return b"RIFF" + struct.pack("<I", len(body)) + body


def frequency(key):
    return 440.0 * 2 ** ((key - 69) / 12)


def seconds(duration):
    return range(int(duration * RATE))


def sine(hz, duration, level=0.5):
    return [level * math.sin(2 * math.pi * hz * n / RATE) for n in seconds(duration)]


def saw(hz, duration, level=0.4):
    """Band-limited: harmonics up to 20 kHz only, so transposing it down does not alias."""
    count = int(20000 / hz)
    return [level * (2 / math.pi) * sum(math.sin(2 * math.pi * k * hz * n / RATE) / k for k in range(1, count + 1))
            for n in seconds(duration)]


def piano(hz, duration, loud):
    """A few inharmonic-free partials, each decaying faster the higher it is; louder is brighter."""
    partials = 8 if loud else 4
    level = 0.7 if loud else 0.25
    out = []
    for n in seconds(duration):
        t = n / RATE
        value = sum(math.sin(2 * math.pi * k * hz * t) * math.exp(-t * (2 + 1.5 * k)) / k ** (1.2 if loud else 1.8)
                    for k in range(1, partials + 1))
        attack = min(1.0, t / 0.003)
        out.append(level * attack * value)
    return out


def drum(seed, duration=0.25):
    generator = random.Random(seed)
    start, end = 160 + 10 * seed, 45
    phase = 0.0
    out = []
    for n in seconds(duration):
        t = n / RATE
        hz = end + (start - end) * math.exp(-t * 30)
        phase += 2 * math.pi * hz / RATE
        out.append(0.8 * math.exp(-t * 12) * math.sin(phase) + 0.2 * math.exp(-t * 60) * generator.uniform(-1, 1))
    return out


def noise(seed, duration, decay, level=0.4):
    generator = random.Random(seed)
    previous = 0.0
    out = []
    for n in seconds(duration):
        white = generator.uniform(-1, 1)
        previous, high = white, white - previous  # a first difference: brighter, like a cymbal
        out.append(level * math.exp(-n / RATE * decay) * high / 2)
    return out


def fade_out(samples, frames=240):
    """A short fade at the end, so a one-shot sample ends without a click."""
    count = len(samples)
    return [value * min(1.0, (count - 1 - n) / frames) for n, value in enumerate(samples)]


SFZ = """// Aulos's own SFZ test library, written by scripts/make-sfz-library.py: do not edit by hand.
// Every opcode family the parser supports appears here; tests load it (Tests/AulosSFZTests) and
// `make test` stands it in for the free libraries musicians use.
//
// Layout, channel 1: keyswitches c1 (sustain) and d1 (staccato); drums c2-a#2 (round robin, random,
// choke groups); a piano-like instrument c3-b5 (velocity layers with a crossfade, release triggers,
// envelopes, filter); a looped pad c6-c7 (LFOs, controller modulation, a <curve>).
// Channel 2: the sine across the keyboard (pitch tests: 440 Hz at a4, the root key its file states).
// Channel 3: sine and saw crossfading by key (c4-c5). Channel 4: by modulation wheel (CC 1). Channel 5:
// first/legato. Channel 6: CC ranges.

#define $PIANO_LO c3
#define $PIANO_HI b5
#include "inc/control.sfzh"

<global> bend_up=200 bend_down=-200 ampeg_release=0.2 amp_veltrack=100 volume=-8

// Channel 1 ---------------------------------------------------------------------------------------------
<master> lochan=1 hichan=1

#include "inc/drums.sfzh"

// The piano: keyswitched articulations over one key range.
<group> sw_lokey=c1 sw_hikey=d1 sw_default=c1 sw_last=c1 sw_label=Sustain
 lokey=$PIANO_LO hikey=$PIANO_HI pitch_keycenter=c4 loop_mode=no_loop
 ampeg_delay=0 ampeg_start=0 ampeg_attack=0.002 ampeg_hold=0.01 ampeg_decay=1.5 ampeg_sustain=30
 ampeg_release=0.4 ampeg_vel2attack=-0.001 ampeg_vel2decay=0.5 ampeg_vel2sustain=10 ampeg_vel2release=0.1
 ampeg_vel2hold=0 ampeg_vel2delay=0 ampeg_decaycc1=0.5 ampeg_release_oncc72=1 ampeg_attack_oncc73=0.5
 fil_type=lpf_2p cutoff=6000 resonance=2 fil_keytrack=50 fil_keycenter=c4 fil_veltrack=2400
 fileg_attack=0.001 fileg_decay=0.8 fileg_sustain=20 fileg_depth=1200 fileg_vel2depth=600 fileg_release=0.3
 amp_keytrack=-0.2 amp_keycenter=c4 amp_velcurve_1=0.05 amp_velcurve_127=1 pitch_veltrack=5
 sustain_sw=on sostenuto_sw=on
<region> sample=piano_p_c4.wav lovel=1 hivel=79 xfout_lovel=64 xfout_hivel=79 xf_velcurve=power
<region> sample=piano_f_c4.wav lovel=64 hivel=127 xfin_lovel=64 xfin_hivel=79 xf_velcurve=power

<group> sw_lokey=c1 sw_hikey=d1 sw_last=d1 sw_label=Staccato lokey=$PIANO_LO hikey=$PIANO_HI
 pitch_keycenter=c4 tune=3 transpose=0 offset=0 end=9599 loop_mode=one_shot ampeg_attack=0.001
<region> sample=stac_c4.wav

// Release triggers: a damper thump that fades with how long the key was held.
<group> lokey=$PIANO_LO hikey=$PIANO_HI trigger=release rt_decay=6 volume=-22 pitch_keytrack=0
 loop_mode=one_shot
<region> sample=release.wav

// The pad: the file's own loop, LFOs, controller modulation through a curve.
<group> lokey=c6 hikey=c7 pitch_keycenter=a4 transpose=-12 loop_mode=loop_continuous
 ampeg_attack=0.3 ampeg_decay=0.2 ampeg_sustain=80 ampeg_release=0.8 width=80 position=10 pan=-5
 amplfo_delay=0.2 amplfo_fade=0.3 amplfo_freq=5 amplfo_depth=1 amplfo_depthcc1=2 amplfo_freqcc1=2
 fillfo_freq=0.5 fillfo_depth=600 fillfo_delay=0 fillfo_fade=1 fillfo_depthcc1=300 fillfo_freqcc2=1
 pitchlfo_delay=0.5 pitchlfo_fade=0.5 pitchlfo_freq=6 pitchlfo_depth=10 pitchlfo_depthcc1=40 pitchlfo_freqcc2=2
 pitcheg_attack=0.1 pitcheg_decay=0.2 pitcheg_sustain=0 pitcheg_depth=-50 pitcheg_vel2depth=20
 pitcheg_delay=0 pitcheg_hold=0 pitcheg_release=0.1 fil_type=lpf_1p cutoff=3000
 volume_oncc11=-12 volume_curvecc11=17 amplitude_oncc7=100 amplitude_curvecc7=0 pan_oncc10=100
 pan_curvecc10=1 cutoff_oncc74=2400 cutoff_curvecc74=4 cutoff_smoothcc74=10 pitch_oncc1=50 tune_oncc2=-50
 width_oncc12=-50 position_oncc13=20 resonance_oncc71=6 sostenuto_sw=off
<region> sample=loop_a4.wav

// Channel 2 ---------------------------------------------------------------------------------------------
<master> lochan=2 hichan=2
<region> sample=sine_a4.wav pitch_keycenter=sample pitch_keytrack=100 loop_mode=loop_sustain
 loop_start=1200 loop_end=2399 ampeg_release=0.05 amp_veltrack=0

// Channel 3: sine below c4, saw above c5, crossfading between -----------------------------------------
<master> lochan=3 hichan=3
<region> sample=sine_a4.wav pitch_keycenter=a4 xfout_lokey=c4 xfout_hikey=c5 xf_keycurve=power
 loop_mode=loop_continuous loop_start=1200 loop_end=2399
<region> sample=saw_c3.wav pitch_keycenter=c3 xfin_lokey=c4 xfin_hikey=c5 xf_keycurve=power

// Channel 4: the modulation wheel crossfades sine into saw --------------------------------------------
<master> lochan=4 hichan=4
<region> sample=sine_a4.wav pitch_keycenter=a4 xfout_locc1=0 xfout_hicc1=127 xf_cccurve=power
<region> sample=saw_c3.wav pitch_keycenter=c3 xfin_locc1=0 xfin_hicc1=127 xf_cccurve=gain

// Channel 5: a monophonic line, first notes and legato notes -----------------------------------------
<master> lochan=5 hichan=5
<group> pitch_keycenter=a4 group=50 off_by=50 off_mode=normal note_polyphony=1
<region> sample=sine_a4.wav trigger=first ampeg_attack=0.01
<region> sample=sine_a4.wav trigger=legato ampeg_attack=0.1 offset=1200 offset_random=0

// Channel 6: controller ranges choose the sample --------------------------------------------------------
<master> lochan=6 hichan=6
<region> sample=sine_a4.wav pitch_keycenter=a4 locc80=0 hicc80=63
<region> sample=saw_c3.wav pitch_keycenter=c3 locc80=64 hicc80=127 lobend=-8192 hibend=8192
 loprog=0 hiprog=127 lorand=0 hirand=1 delay=0 delay_random=0 pitch_random=0 amp_random=0 fil_random=0
 amplitude=90 volume=-9 count=0

<curve> curve_index=17 v000=0 v064=0.8 v127=1
"""

CONTROL = """// The library's controls: where samples are, controllers' starting values and names.
<control> default_path=samples/
 set_cc1=0 set_cc7=127 set_cc10=64 set_cc11=127 set_cc74=64 set_cc80=0
 label_cc1=Vibrato label_cc11=Expression label_cc74=Brightness label_cc80=Sine/Saw
 label_key24=Sustain label_key26=Staccato
"""

DRUMS = """// Drums: a kick in a round robin of three, a snare whose three hits are chosen at random, and hi-hats
// where the closed one chokes the open one.
<group> key=c2 seq_length=3 loop_mode=one_shot amp_veltrack=80 sustain_sw=off pitch_keycenter=c2
 amp_velcurve_64=0.6
<region> sample=kick_1.wav seq_position=1
<region> sample=kick_2.wav seq_position=2
<region> sample=kick_3.wav seq_position=3

<group> key=d2 loop_mode=one_shot pitch_keycenter=d2 tune=700 sustain_sw=off
<region> sample=kick_1.wav lorand=0 hirand=0.34
<region> sample=kick_2.wav lorand=0.34 hirand=0.67
<region> sample=kick_3.wav lorand=0.67 hirand=1

<group> loop_mode=one_shot sustain_sw=off pitch_keytrack=0
<region> sample=hat_closed.wav key=f#2 group=1 polyphony=4
<region> sample=hat_open.wav key=a#2 group=2 off_by=1 off_mode=time off_time=0.05 note_polyphony=2
"""


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "sfz", "aulos-test")
    os.makedirs(os.path.join(out, "samples"), exist_ok=True)
    os.makedirs(os.path.join(out, "inc"), exist_ok=True)
    c3, c4, a4 = frequency(48), frequency(60), frequency(69)
    tone = [0.4 * math.sin(2 * math.pi * a4 * n / RATE) + 0.15 * math.sin(4 * math.pi * a4 * n / RATE)
            + 0.08 * math.sin(6 * math.pi * a4 * n / RATE) for n in seconds(0.5)]
    samples = {
        "sine_a4.wav": wav(sine(a4, 0.5), root=69),
        "saw_c3.wav": wav(fade_out(saw(c3, 0.5)), root=48),
        "loop_a4.wav": wav(tone, loop=(12000, 23999), root=69),
        "piano_p_c4.wav": wav(fade_out(piano(c4, 1.0, loud=False)), bits=24, root=60),
        "piano_f_c4.wav": wav(fade_out(piano(c4, 1.0, loud=True)), bits=24, root=60),
        "stac_c4.wav": wav(fade_out(piano(c4, 0.2, loud=True), 960), root=60),
        "release.wav": wav(fade_out(noise(7, 0.15, 40, 0.3)), root=60),
        "kick_1.wav": wav(fade_out(drum(1)), root=36),
        "kick_2.wav": wav(fade_out(drum(2)), root=36),
        "kick_3.wav": wav(fade_out(drum(3)), root=36),
        "hat_open.wav": wav(fade_out(noise(11, 0.4, 8)), root=46),
        "hat_closed.wav": wav(fade_out(noise(12, 0.1, 50)), root=42),
    }
    for name, data in samples.items():
        with open(os.path.join(out, "samples", name), "wb") as handle:
            handle.write(data)
    for name, text in (("aulos-test.sfz", SFZ), ("inc/control.sfzh", CONTROL), ("inc/drums.sfzh", DRUMS)):
        with open(os.path.join(out, name), "w") as handle:
            handle.write(text)
    total = sum(os.path.getsize(os.path.join(folder, name)) for folder, _, names in os.walk(out) for name in names)
    print(f"make-sfz-library: {len(samples)} samples and 3 SFZ files in {out}, {total // 1024} KiB")


if __name__ == "__main__":
    main()
