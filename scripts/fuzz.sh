#!/usr/bin/env bash
# `make fuzz`: libFuzzer on everything that reads untrusted input — the MIDI byte parser (serial/raw MIDI
# streams), the Standard MIDI File reader read strictly and forgivingly (a million inputs up to 64 KB, then — `midi-file-large` — a
# hundredth as many up to 1.2 MB from a 1 MB seed of dense notes: ~90 a second), the score parser, the
# rig loader (YAML), rig sets made of several files (cycles, missing files, deep nesting), and SoundFonts
# through the sampler's loading path (Aulos's inspection, then libfluidsynth loading and playing), and SFZ
# libraries of several files in memory (include loops and depth, #define chains; the selector built and
# played), and such libraries built into a rig with real samples and played (sfz-build), and network MIDI
# datagrams through both readers, AppleMIDI session packets and RTP-MIDI with its recovery journal, each read
# written back and read again and each RTP-MIDI packet repaired from (network-midi), and Network MIDI 2.0
# datagrams (network-midi2: commands built back and read again, UMP data through the sequence tracker, the UMP
# decoder and the stream responder, up to 64 KiB). Builds the Fuzz/ package with AddressSanitizer and coverage instrumentation, linked to libFuzzer without its main (each
# target calls LLVMFuzzerRunDriver), seeds each corpus from the project's own files, and runs each target
# for RUNS inputs (default 1,000,000). A crash stops that target, leaves the input in
# .build-fuzz/artifacts/TARGET/ and fails the run; turn it into a test and fix it.
#
# Usage: scripts/fuzz.sh [RUNS] [TARGET ...]
#   targets: midi-parser midi-file midi-file-large score rig rig-set rig-build soundfont tuning osc http sfz
#            sfz-build network-midi network-midi2
#   (midi-file-large runs RUNS/100; rig-build and sfz-build, which build and play each input, RUNS/20)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
shift || true
targets=("${@:-midi-parser midi-file midi-file-large score rig rig-set rig-build soundfont tuning osc http sfz sfz-build network-midi network-midi2}")
targets=(${targets[*]})
work=.build-fuzz
mkdir -p "$work"

# The toolchain's libFuzzer runtime for this machine's architecture (x86_64 here, aarch64 on a Pi).
arch=$(uname -m)
toolchain_lib="$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")/lib"
fuzzer_lib=$(find "$toolchain_lib" -name "libclang_rt.fuzzer_no_main-$arch.a" 2>/dev/null | head -n1 || true)
[ -n "$fuzzer_lib" ] || { echo "fuzz: libclang_rt.fuzzer_no_main not found in the Swift toolchain" >&2; exit 2; }
# A failed build must stop the run: fuzzing a stale binary would report on code that no longer exists.
# SwiftPM keeps the build plan of a local dependency (the Aulos package at ..) without noticing source files
# added to it since: remove the plan so it is made again (compiled objects stay cached).
rm -f Fuzz/.build/release.yaml
if ! (cd Fuzz && swift build -c release -Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp \
    -Xlinker "$fuzzer_lib" -Xlinker -lstdc++ > ../"$work/build.log" 2>&1); then
    grep -m 20 -E "error" "$work/build.log" >&2 || true
    echo "fuzz: the fuzz targets did not build (see $work/build.log)" >&2
    exit 2
fi
bin=Fuzz/.build/release

# Seeds: the factory rigs, the score documentation's example and the demo piece, and a few MIDI files
# written here (format 0 and 1, running status, tempo and time signature, sysex, SMPTE division).
seed() { mkdir -p "$work/corpus/$1"; }
seed midi-parser; seed midi-file; seed midi-file-large; seed score; seed rig; seed rig-set; seed soundfont; seed tuning
seed osc; seed http; seed rig-build; seed sfz; seed sfz-build; seed network-midi; seed network-midi2
# Network MIDI: a Mac's IN and CK2 and its three RTP-MIDI packets (pymidi's test captures: running status, two
# channel journals, chapters C and N), pymidi-built note and controller packets, RS, a long header, SysEx
# segments, every system message, and chapters P, M, W, N, T, A behind a system journal.
python3 - "$work/corpus/network-midi" <<'PY'
import sys
seeds = {
    "in": "ffff494e000000026633487347d810966d626f6f6b2d73657373696f6e00",
    "ck2": "ffff434b47d8109602000000000000004400227e00000dfaad1e5c820000000044002288",
    "by": "ffff4259000000020000000047d81096", "rs": "ffff5253cafebabe12340000",
    "single": "8061427a4b9f303647d8109643903026204276000608006685",
    "multi": "8061429a51d2dc8747d8109646903e310a403b21427c00090881673c250d50c8060880440e",
    "control": "80614ba55944067e47d8109643b06c00204ba0000948006c7f807708",
    "pymidi-notes": "80e1123400010000cafebabe07903c640a803c00",
    "pymidi-controllers": "80e1123500010100cafebabe0bb3076405b3407f7f933e5a",
    "chapters": "806100010000000500000006" + "43903c64" + "6000070004abcd1013bb0500000004ffff0040807708" + "7f803c40",
    "system": "806100020000000500000006" + "0ff11200f2010200f30500f600f900f4",
    "sysex": "806100030000000500000006" + "0df001020304f000f705060708f7",
    "long": "806100040000000500000006" + "8012" + "923c5a013d5a013e5a013f5a01405a01415a",
}
for name, text in seeds.items():
    open(f"{sys.argv[1]}/{name}.bin", "wb").write(bytes.fromhex(text))
PY
# Network MIDI 2.0: an invitation, authentication with a digest, ping, UMP data with FEC copies (MIDI 1.0 and 2.0
# notes, per-note pitch bend, SysEx7 in three parts, endpoint and function block discovery), a gap, a retransmit
# error, session reset, NAK, BYE, and a command Aulos does not know. Written from the specification's structure.
python3 - "$work/corpus/network-midi2" <<'PY'
import sys
m = "4d494449"
seeds = {
    "invite": m + "01020101" + "4b657900" + "50310000",
    "auth": m + "02080000" + "ab" * 32,
    "ping": m + "20010000cafef00d",
    "notes-fec": m + "ff0100002090 3c64".replace(" ", "") + "ff02000140903c00ffff0000" + "ff0200024062 3c00c0000000".replace(" ", ""),
    "sysex": m + "ff020000" + "30160102 03040506".replace(" ", "") + "ff020001" + "30260708090a0b0c" + "ff020002" + "30320d0e00000000",
    "discovery": m + "ff040000f0000101 0000001f 00000000 00000000".replace(" ", "") + "ff040001f010ff03000000000000000000000000",
    "gap": m + "ff010005209 03c64".replace(" ", "") + "ff010009208 03c00".replace(" ", "") + "81010100 00060000".replace(" ", ""),
    "reset-nak-bye": m + "82000000" + "8f020100 77000000 6e6f0000".replace(" ", "") + "f0010100 62796500".replace(" ", "") + "77011234 00000005".replace(" ", ""),
}
for name, text in seeds.items():
    open(f"{sys.argv[1]}/{name}.bin", "wb").write(bytes.fromhex(text))
# A large datagram: 60 UMP data commands of 255 words (61 KiB), every other one out of order.
large = bytes.fromhex(m)
for n in range(60):
    sequence = n ^ 1
    large += bytes([0xFF, 255, sequence >> 8, sequence & 0xFF]) + bytes.fromhex("20903c64") * 255
open(f"{sys.argv[1]}/large.bin", "wb").write(large)
PY
# SFZ libraries in memory (parts at "\n%%%\n" are lib/f0.sfz … lib/f7.sfz): the project's own library with
# its includes, an include loop, includes nested past the limit, and a #define chain that doubles each line.
{ sed 's/inc\/control.sfzh/f1.sfz/; s/inc\/drums.sfzh/f2.sfz/' sfz/aulos-test/aulos-test.sfz; printf '\n%%%%%%\n'
  cat sfz/aulos-test/inc/control.sfzh; printf '\n%%%%%%\n'; cat sfz/aulos-test/inc/drums.sfzh; } > "$work/corpus/sfz/own.txt"
printf '#include "f1.sfz"\n<region> sample=a.wav\n%%%%%%\n#include "f2.sfz"\n%%%%%%\n#include "f0.sfz"\n' > "$work/corpus/sfz/loop.txt"
{ for i in 0 1 2 3 4 5 6; do printf '#include "f%d.sfz"\n<group> key=%d\n<region> sample=s%d.wav\n%%%%%%\n' $((i + 1)) $((60 + i)) "$i"; done
  printf '<region> sample=last.wav\n'; } > "$work/corpus/sfz/deep.txt"
{ printf '#define $A0 xxxxxxxx\n'; for i in $(seq 1 16); do printf '#define $A%d $A%d$A%d\n' "$i" $((i - 1)) $((i - 1)); done
  printf '<region> sample=$A16.wav key=c4\n'; } > "$work/corpus/sfz/defines.txt"
# HTTP as clients send the web panel (the first byte is the chunk size): pipelined requests with a body and
# a WebSocket upgrade, and one head just under the 16 KB limit.
printf '\x07GET / HTTP/1.1\r\nHost: a\r\n\r\nPOST /api/control HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET /api/status HTTP/1.1\r\nUpgrade: websocket\r\n\r\n\x81\x80' > "$work/corpus/http/pipelined.bin"
{ printf '\xffGET / HTTP/1.1\r\nX: '; head -c 16300 /dev/zero | tr '\0' 'a'; printf '\r\n\r\n'; } > "$work/corpus/http/large.bin"
# OSC: a note, a part parameter, and a bundle of the two (the packets aulos play --osc reads).
python3 - "$work/corpus/osc" <<'PY'
import struct, sys
def pad(b): return b + b"\0" * (4 - len(b) % 4)
note = pad(b"/aulos/note") + pad(b",iii") + struct.pack(">iii", 1, 60, 100)
cutoff = pad(b"/aulos/part/Lead/cutoff") + pad(b",f") + struct.pack(">f", 1200.0)
bundle = pad(b"#bundle") + bytes(7) + b"\1" + b"".join(struct.pack(">i", len(m)) + m for m in (note, cutoff))
# Large inputs too: a bundle of 227 notes just under the 8 KB packet limit (8,188 bytes), and one a message over it.
big = pad(b"#bundle") + bytes(7) + b"\1" + b"".join(struct.pack(">i", len(note)) + note for _ in range(227))
over = big + struct.pack(">i", len(note)) + note
for name, packet in (("note", note), ("cutoff", cutoff), ("bundle", bundle), ("large", big), ("over", over)):
    open(f"{sys.argv[1]}/{name}.bin", "wb").write(packet)
PY
# Scales (12-EDO in cents, just intonation in ratios), one with a keyboard mapping after a "%%%" line.
{ printf '! 12-EDO\n12 tone\n12\n'; for i in 1 2 3 4 5 6 7 8 9 10 11; do printf '%d00.0\n' "$i"; done; printf '2/1\n'; } > "$work/corpus/tuning/12.scl"
# MIDI Tuning Standard messages (the same target reads its bytes as one): a single-note change, a bulk dump.
printf '\x7f\x7f\x08\x02\x00\x01\x3c\x3c\x40\x00' > "$work/corpus/tuning/mts-single.bin"
python3 -c 'import sys; sys.stdout.buffer.write(bytes([0x7E,0x7F,8,1,0]) + b"Aulos bulk dump " + bytes(b for k in range(128) for b in (k, 0, 0)) + bytes([0]))' > "$work/corpus/tuning/mts-bulk.bin"
# The largest scale there may be (4,096 degrees, 40 KB): mutations reach the reader's limits.
{ printf 'big\n4096\n'; seq 1 4095 | awk '{ printf "%.4f\n", $1 * 1200 / 4096 }'; printf '2/1\n'; } > "$work/corpus/tuning/4096.scl"
printf 'just\n7\n9/8\n5/4\n4/3\n3/2\n5/3\n15/8\n2/1\n\n%%%%%%\n12\n0\n127\n62\n62\n293.66\n7\n0\nx\n1\nx\n2\n3\nx\n4\nx\n5\nx\n6\n' > "$work/corpus/tuning/just-white.txt"
cp presets/rigs/*.yaml "$work/corpus/rig/"
# The synth part's keys from issue 17: drums, MPE zones, a wavetable.
printf 'parts:\n  - instrument: synth\n    channels: [1, 2, 10]\n    drum-channels: [10]\n    mpe: "lower 7, upper 7"\n    wavetable: analog-morph\n    wavetable-cycle: 2048\n    polyphony: 32\n' > "$work/corpus/rig/synth-issue17.yaml"
# The live servers' keys: the panel's address and password file, OSC's port.
printf 'web: "0.0.0.0:8080"\nweb-password: /etc/aulos/web-password\nosc: 9000\nparts:\n  - instrument: synth\n' > "$work/corpus/rig/servers.yaml"
# Rig sets: files separated by "\n%%%\n" become f0.yaml, f1.yaml, …; f0.yaml is loaded.
rig='name: R\nparts:\n  - instrument: synth\n    channels: [1]\n'
set_of() { printf 'name: S\ncontrol-channel: 16\nrigs:\n  - program: 0\n    rig: %s\n  - program: 1\n    rig: %s\n' "$1" "$2"; }
{ set_of f1.yaml f0.yaml; printf '\n%%%%%%\n'; printf "$rig"; } > "$work/corpus/rig-set/self.txt"
{ set_of f1.yaml f2.yaml; printf '\n%%%%%%\n'; set_of f2.yaml f0.yaml; printf '\n%%%%%%\n'; set_of f0.yaml f1.yaml; } > "$work/corpus/rig-set/cycle3.txt"
{ set_of f1.yaml missing.yaml; printf '\n%%%%%%\n'; printf "$rig"; } > "$work/corpus/rig-set/missing.txt"
{ set_of f1.yaml f2.yaml; printf '\n%%%%%%\n'; printf "$rig"; printf '\n%%%%%%\n'; printf 'parts: '; printf '[%.0s' $(seq 1 300); printf ']%.0s' $(seq 1 300); } > "$work/corpus/rig-set/deep.txt"
cp presets/rigs/stage.yaml "$work/corpus/rig-set/stage.txt"
cp presets/scores/*.score "$work/corpus/score/"
awk '/^```$/ { n++; next } n == 3' docs/score.md > "$work/corpus/score/doc.score"
printf '0b tempo 120\n0b note A4 4b vel=100\n1b note C#5 3b vel=90\n2b on E5\n3b off E5\n2b cc 64 127 ch=2\n3b bend -2048\n4b pressure 30\n5b end\n' > "$work/corpus/score/small.score"
PYTHONPATH=scripts python3 - "$work/corpus" <<'PY'
import os, sys
from smf import smf, track
corpus = sys.argv[1]
notes = [(0, b"\xff\x51\x03\x07\xa1\x20"), (0, b"\xff\x58\x04\x04\x02\x18\x08"), (0, b"\x90\x3c\x64"),
         (240, b"\x40\x64"), (240, b"\x80\x3c\x00"), (0, b"\xb0\x40\x7f"), (120, b"\xe0\x00\x40"),
         (0, b"\xf0\x05\x7e\x7f\x09\x01\xf7"), (480, b"\x80\x40\x00")]
open(os.path.join(corpus, "midi-file", "format0.mid"), "wb").write(smf(0, 480, [track(notes)]))
open(os.path.join(corpus, "midi-file", "format1.mid"), "wb").write(
    smf(1, 96, [track(notes[:2]), track([(0, b"\xc9\x00"), (0, b"\x99\x24\x64"), (48, b"\x89\x24\x00")])]))
open(os.path.join(corpus, "midi-file", "smpte.mid"), "wb").write(smf(0, 0xE728, [track(notes[2:5])]))
# Files a forgiving reader reads past: illegal system messages, the running status kept across a meta
# event, a format-0 file of two tracks, a format-2 file, a last chunk one byte short, a RIFF RMID wrapper.
scale = [(0, b"\x90\x3c\x64"), (96, b"\x3c\x00"), (0, b"\x3e\x64"), (96, b"\x3e\x00")]
illegal = [(0, b"\xf1\x7f"), (0, b"\xf2\x7f\x7f"), (0, b"\xf4"), (0, b"\xf8"), (0, b"\xfe")]
open(os.path.join(corpus, "midi-file", "illegal.mid"), "wb").write(smf(0, 96, [track(scale[:2] + illegal + scale[2:])]))
kept = scale[:2] + [(0, b"\xff\x01\x05break")] + scale[2:]
open(os.path.join(corpus, "midi-file", "kept-status.mid"), "wb").write(smf(0, 96, [track(kept)]))
open(os.path.join(corpus, "midi-file", "format0-two.mid"), "wb").write(smf(0, 96, [track(scale), track(scale)]))
open(os.path.join(corpus, "midi-file", "format2.mid"), "wb").write(smf(2, 96, [track(scale), track(scale)]))
open(os.path.join(corpus, "midi-file", "short.mid"), "wb").write(smf(1, 96, [track(scale)])[:-1])
inner = smf(1, 96, [track(scale)])
riff = b"RMID" + b"data" + len(inner).to_bytes(4, "little") + inner
open(os.path.join(corpus, "midi-file", "wrapped.rmi"), "wb").write(b"RIFF" + len(riff).to_bytes(4, "little") + riff)
# A 1 MB file of dense notes in running status: mutations of it reach the reader's large-input paths.
dense = [(0, b"\x90\x3c\x64")] + [(1, b"\x3c\x00"), (1, b"\x3c\x64")] * 170_000
open(os.path.join(corpus, "midi-file-large", "dense.mid"), "wb").write(smf(0, 960, [track(dense)]))
from sf2 import sf2
open(os.path.join(corpus, "soundfont", "one.sf2"), "wb").write(sf2())
# Rigs with the files they name (rig-build): a wavetable of two cycles, a 5-note scale and its mapping, a
# SoundFont; split at "\n%%%\n" in the order rig.yaml, table.wav, scale.scl, map.kbm, font.sf2.
import struct, math
def wav(samples):
    data = b"".join(struct.pack("<f", s) for s in samples)
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 3, 1, 48000, 192000, 4, 32)
            + b"data" + struct.pack("<I", len(data)) + data)
table = wav([math.sin(2 * math.pi * i / 64) for i in range(64)] + [1.0 if i < 32 else -1.0 for i in range(64)])
scale = b"! five\nfive notes\n 5\n 240.0\n 480.0\n 3/2\n 960.0\n 2/1\n"
keymap = b"! map\n5\n0\n127\n60\n60\n440.0\n5\n0\n1\n2\n3\n4\n"
rig = (b"name: Fuzz\ntuning: scale.scl\nkeymap: map.kbm\nparts:\n  - name: Wave\n    instrument: synth\n"
       b"    wavetable: table.wav\n    wavetable-cycle: 64\n    effects:\n      - unit: delay\n"
       b"  - name: Font\n    instrument: sampler\n    soundfont: font.sf2\n    channels: [2]\n"
       b"    sends: {reverb: 0.5}\nreturns:\n  - name: reverb\n    effects:\n      - unit: reverb\n")
sep = b"\n%%%\n"
open(os.path.join(corpus, "rig-build", "full.bin"), "wb").write(sep.join([rig, table, scale, keymap, sf2()]))
open(os.path.join(corpus, "rig-build", "synth.bin"), "wb").write(b"name: S\nparts:\n  - instrument: synth\n")
open(os.path.join(corpus, "soundfont", "three.sf2"), "wb").write(sf2(3, 100, ((0, 0), (0, 1), (128, 0))))
open(os.path.join(corpus, "soundfont", "oneshot.sf2"), "wb").write(sf2(2, 40, ((0, 5),), loop=False))
open(os.path.join(corpus, "midi-parser", "stream"), "wb").write(
    b"\x00\x90\x3c\x64\x40\x64\xf8\x80\x3c\x00\xf0\x7e\x7f\x09\x01\xf7\xb0\x07\x64\xe0\x00\x40\xfa\xf2\x10\x00")
PY

failed=0
for target in "${targets[@]}"; do
  count=$runs
  case $target in
    midi-parser) exe=FuzzMIDIParser; max=4096 ;; midi-file) exe=FuzzMIDIFile; max=65536 ;;
    midi-file-large) exe=FuzzMIDIFile; max=1200000; count=$(( runs / 100 > 1000 ? runs / 100 : 1000 ))
      cp "$work"/corpus/midi-file/*.mid "$work/corpus/midi-file-large/" 2>/dev/null || true ;;
    score) exe=FuzzScore; max=4096 ;; rig) exe=FuzzRig; max=4096 ;; rig-set) exe=FuzzRigSet; max=65536 ;;
    rig-build) exe=FuzzRigBuild; max=65536; count=$(( runs / 20 > 1000 ? runs / 20 : 1000 )) ;;
    soundfont) exe=FuzzSoundFont; max=16384 ;; tuning) exe=FuzzTuning; max=65536 ;; osc) exe=FuzzOSC; max=9000 ;; http) exe=FuzzRequestFraming; max=65536 ;;
    sfz) exe=FuzzSFZParser; max=65536 ;;
    network-midi) exe=FuzzNetworkMIDI; max=8192 ;;
    network-midi2) exe=FuzzNetworkMIDI2; max=65536 ;;
    sfz-build) exe=FuzzSFZBuild; max=65536; count=$(( runs / 20 > 1000 ? runs / 20 : 1000 ))
      cp "$work"/corpus/sfz/*.txt "$work/corpus/sfz-build/" ;;
    *) echo "fuzz: unknown target $target" >&2; exit 2 ;;
  esac
  mkdir -p "$work/artifacts/$target"
  start=$(date +%s)
  set +e
  # FluidSynth's own leak on refused fonts is known and reported (scripts/fuzz-lsan.supp); other leaks fail.
  LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/fuzz-lsan.supp} "$bin/$exe" -runs="$count" -max_len="$max" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$PWD/$work/artifacts/$target/" "$PWD/$work/corpus/$target" > "$work/$target.log" 2>&1 < /dev/null
  status=$?
  set -e
  seconds=$(( $(date +%s) - start ))
  done_runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$target.log" | grep -o '[0-9]*$' || echo "?")
  coverage=$(grep -o 'cov: [0-9]*' "$work/$target.log" | tail -n1 | grep -o '[0-9]*' || echo "?")
  largest=$(find "$work/corpus/$target" -type f -printf '%s\n' | sort -n | tail -n1)
  if [ $status -eq 0 ]; then
    echo "fuzz: $target: $done_runs inputs in $seconds s, 0 crashes (coverage $coverage edges, corpus $(ls "$work/corpus/$target" | wc -l) files, largest $largest bytes)"
  else
    echo "fuzz: $target: FAILED after $seconds s (exit $status); see $work/$target.log and $work/artifacts/$target/"
    grep -m 5 -E "ERROR|Fatal error|SUMMARY|artifact" "$work/$target.log" || true
    failed=1
  fi
done
exit $failed
