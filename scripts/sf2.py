"""Writes tiny SoundFont 2 files for the fuzzer's seed corpus (scripts/fuzz.sh): a few short samples, one
instrument zone per sample with a key range, presets in bank 0 and the drum bank 128. Small, so libFuzzer
can mutate thousands of them a second, and whole, so mutations start from a font FluidSynth loads.
"""
import math
import struct


def chunk(tag, body):
    """A RIFF chunk, padded to an even length."""
    return tag + struct.pack("<I", len(body)) + body + (b"\x00" if len(body) & 1 else b"")


def riff_list(kind, *chunks):
    return chunk(b"LIST", kind + b"".join(chunks))


def name(text, size=20):
    return text.encode()[:size].ljust(size, b"\x00")


def sf2(samples=1, frames=64, presets=((0, 0),), loop=True):
    """A font of `samples` sine samples of `frames` frames, and one preset per (bank, program) in
    `presets`, each playing every sample across its key range."""
    data, headers = b"", b""
    for index in range(samples):
        start = len(data) // 2
        wave = [int(12000 * math.sin(2 * math.pi * (index + 1) * n / frames)) for n in range(frames)]
        data += struct.pack("<%dh" % frames, *wave) + b"\x00\x00" * 46  # 46 zero frames after each sample
        headers += name("sample%d" % index) + struct.pack(
            "<IIIIIBbHH", start, start + frames, start + 4, start + frames - 4, 32000, 60 + index, 0, 0, 1)
    headers += name("EOS") + b"\x00" * 26

    # One instrument: a zone per sample over its share of the keyboard.
    igen, ibag = b"", b""
    for index in range(samples):
        low, high = index * 128 // samples, (index + 1) * 128 // samples - 1
        ibag += struct.pack("<HH", len(igen) // 4, 0)
        igen += struct.pack("<HBB", 43, low, high)  # keyRange first
        igen += struct.pack("<HH", 54, 1 if loop else 0)  # sampleModes
        igen += struct.pack("<HH", 53, index)  # sampleID last
    ibag += struct.pack("<HH", len(igen) // 4, 0)
    igen += b"\x00" * 4
    inst = name("instrument") + struct.pack("<H", 0) + name("EOI") + struct.pack("<H", samples)

    phdr, pbag, pgen = b"", b"", b""
    for index, (bank, program) in enumerate(presets):
        phdr += name("preset%d" % index) + struct.pack("<HHHIII", program, bank, index, 0, 0, 0)
        pbag += struct.pack("<HH", len(pgen) // 4, 0)
        pgen += struct.pack("<HH", 41, 0)  # instrument 0
    phdr += name("EOP") + struct.pack("<HHHIII", 0, 0, len(presets), 0, 0, 0)
    pbag += struct.pack("<HH", len(pgen) // 4, 0)
    pgen += b"\x00" * 4
    terminal_modulator = b"\x00" * 10

    info = riff_list(b"INFO", chunk(b"ifil", struct.pack("<HH", 2, 1)), chunk(b"isng", b"EMU8000\x00"),
                     chunk(b"INAM", b"Fuzz seed\x00"))
    sdta = riff_list(b"sdta", chunk(b"smpl", data))
    pdta = riff_list(b"pdta", chunk(b"phdr", phdr), chunk(b"pbag", pbag), chunk(b"pmod", terminal_modulator),
                     chunk(b"pgen", pgen), chunk(b"inst", inst), chunk(b"ibag", ibag),
                     chunk(b"imod", terminal_modulator), chunk(b"igen", igen), chunk(b"shdr", headers))
    return chunk(b"RIFF", b"sfbk" + info + sdta + pdta)
