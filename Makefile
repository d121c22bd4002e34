# Aulos: the two commands a newcomer needs are `make demo` and `make test`; both install missing
# system packages first (scripts/setup.sh). Slow suites have their own targets.
SWIFT ?= swift
DEMO_DIR ?= .

# The version being packaged: debian/changelog's, made from CHANGELOG.md (scripts/debian-changelog.py).
VERSION := $(shell dpkg-parsechangelog -S Version 2>/dev/null)

.PHONY: all setup setup-tests setup-package build build-release install install-files uninstall deb test-install test lint tsan asan demo bench bench-sfz vm-test test-alsa test-network-midi test-network-midi-vm test-avahi realtime-test record-test test-sfz-stream test-web test-jack jack-midi-frames lv2-sweep fuzz soak sound-sheet gm-songs clean

all: build

setup:
	@scripts/setup.sh

setup-tests:
	@scripts/setup.sh --tests

build: setup
	$(SWIFT) build

## The binary as installed software: release, the Swift runtime linked statically (it then needs only Debian's
## libraries), the checkout's path mapped out of the debug info and #file strings (`strings` of the installed
## binary names no folder of the build machine), and Debian's hardening of the link: relocations read-only and
## bound at load (SwiftPM reads no LDFLAGS). (-D_FORTIFY_SOURCE through -Xcc reaches Swift's C importer too,
## whose modules then disagree about glibc's inline functions: not used.) Its own scratch folder, so `make
## demo`'s build stays warm.
DIST_SCRATCH = .build-dist
SOURCE_MAP = -Xswiftc -file-prefix-map -Xswiftc $(CURDIR)=/usr/src/aulos -Xcc -ffile-prefix-map=$(CURDIR)=/usr/src/aulos
HARDENING = -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now
build-release: setup
	$(SWIFT) build -c release --product aulos --static-swift-stdlib --scratch-path $(DIST_SCRATCH) \
		$(SOURCE_MAP) $(HARDENING)

## Installs aulos under PREFIX (default /usr/local; DESTDIR stages it): the binary, share/aulos (presets, rigs,
## the SoundFont, the panel's page, the SFZ example), man pages, completions, the systemd unit (not enabled),
## sysusers.d and tmpfiles.d entries. `make uninstall` (same PREFIX) removes exactly what it recorded.
PREFIX ?= /usr/local
install: build-release install-files

install-files:
	PREFIX=$(PREFIX) scripts/install.sh install $(DIST_SCRATCH)/release/aulos

uninstall:
	PREFIX=$(PREFIX) scripts/install.sh uninstall

## The Debian package, dist/aulos_VERSION_ARCH.deb (and its -dbgsym), with dpkg-buildpackage (debian/rules
## calls build-release and install-files); then lintian on it (~12 minutes from a cold build).
deb: setup-package
	scripts/debian-changelog.py --check debian/changelog
	dpkg-buildpackage -us -uc -b
	mkdir -p dist
	mv ../aulos_$(VERSION)_* ../aulos-dbgsym_$(VERSION)_* dist/
	lintian --fail-on warning dist/aulos_$(VERSION)_*.changes

## The package in a clean Debian 12 made by debootstrap, the source tree hidden: installed with apt from
## Debian's archive, played, its service installed, then purged with nothing left (~6 minutes warm).
test-install: deb
	scripts/install-test.sh dist/aulos_$(VERSION)_$(shell dpkg --print-architecture).deb

setup-package:
	@scripts/setup.sh --package

## Builds and runs every test suite (unit, graph, render, CLI, zero-allocation), after checking that
## Package.swift declares exactly the modules each target imports. The command-line suites run in a process
## beside the others (scripts/run-tests.sh says why); `swift test` runs them all in one.
test: setup-tests
	scripts/check-package-graph.py
	scripts/debian-changelog.py --check debian/changelog
	@# The SFZ test library's samples are committed; the script rewrites them deterministically (same bytes).
	@scripts/make-sfz-library.py >/dev/null
	$(SWIFT) build --build-tests
	scripts/run-tests.sh

## Style: swift-format with the project's .swift-format (4 spaces, 120 columns) on every Swift file, strict;
## nothing wider than 120 columns, comments and strings included (the formatter leaves those alone); and the
## package graph. CI runs it; `swift format format -i -r Sources Tests …` fixes most of what it reports.
LINTED = Sources Tests Tools Package.swift Benchmarks/Benchmarks Benchmarks/Package.swift Fuzz/Sources Fuzz/Package.swift
lint:
	scripts/check-package-graph.py
	$(SWIFT) format lint --strict --recursive $(LINTED)
	@find $(LINTED) -name '*.swift' -exec awk 'length > 120 { print FILENAME ":" FNR ": wider than 120 columns"; bad = 1 } END { exit bad }' {} +
	@echo "lint: clean"

## The threaded tests (live graph updates under a render thread, the SPSC rings, the ALSA I/O thread) under
## ThreadSanitizer. (No command-line suite is among them; those that run would run the TSan-built aulos of
## .build-tsan, as every CLI test runs the aulos beside its test bundle.)
## The allocation-counting tests skip themselves here: the sanitizer owns malloc.
tsan: setup
	$(SWIFT) build --build-tests --scratch-path .build-tsan --sanitize=thread
	$(SWIFT) test --skip-build --scratch-path .build-tsan --sanitize=thread --filter 'RealtimeSafetyTests|RealtimeTests|ALSAOutputTests|LiveMIDIThreadingTests|ServiceTests|LiveMIDIPathTests|FilePlaybackTests'

## Every test under AddressSanitizer with LeakSanitizer: memory errors and leaks fail it (two leaks outside
## Aulos, in Foundation's Process and XCTest's runner, are suppressed in scripts/lsan.supp). The command-line
## tests run the ASan-built aulos of .build-asan (the one beside the test bundle), with the same options.
asan: setup
	$(SWIFT) build --build-tests --scratch-path .build-asan --sanitize=address
	LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp $(SWIFT) test --skip-build --scratch-path .build-asan --sanitize=address

## Renders the built-in demo piece offline on both instruments (the oscillator synth and the FluidSynth
## sampler with the bundled SoundFont), then plays it live on the sampler where a sound device exists.
demo: setup
	$(SWIFT) build -c release --product aulos
	.build/release/aulos graph --instrument sampler --soundfont soundfonts/AulosGM.sf2
	.build/release/aulos render --instrument synth --output $(DEMO_DIR)/demo-synth.wav
	.build/release/aulos render --instrument sampler --soundfont soundfonts/AulosGM.sf2 --output $(DEMO_DIR)/demo-sampler.wav
	.build/release/aulos render --instrument sfz:sfz/aulos-test/aulos-test.sfz --output $(DEMO_DIR)/demo-sfz.wav
	@if [ -e /dev/snd/pcmC0D0p ]; then \
		.build/release/aulos play --demo --instrument sampler --soundfont soundfonts/AulosGM.sf2; \
	else \
		echo "demo: no sound device here; open demo-synth.wav, demo-sampler.wav and demo-sfz.wav in any player"; \
	fi

## Benchmarks against their C and library peers (own package: ~4 minutes to build the first time). The LV2
## hosting benchmark needs the test plugins (Dragonfly), so this installs what the tests install.
bench: setup-tests
	cd Benchmarks && $(SWIFT) package --disable-sandbox benchmark --format markdown
	$(MAKE) bench-sfz

## SFZ voices per core against bare libfluidsynth on the same looped sample, at the root and over ±16 semitones
## (docs/performance.md, "SFZ voices per core"); a plain executable, not a framework benchmark (~2 minutes).
bench-sfz: setup-tests
	cd Benchmarks && $(SWIFT) build -c release --product sfz-voices
	Benchmarks/.build/release/sfz-voices all 2000 64 16
	Benchmarks/.build/release/sfz-voices all 2000 64 0

## aulos on a real kernel sound stack: QEMU boots a Debian kernel with snd-aloop; aulos plays to the
## loopback card, the guest captures it, the host compares it with the offline render (~1 min warm).
vm-test: setup
	scripts/vm-test.sh

## aulos as a live MIDI instrument in the same VM: aplaymidi, virmidi unplug/re-plug with a note held,
## SIGINT, and event-to-onset latency/jitter measured by scripts/alsa-vm/latency-probe.c (~1 min warm).
test-alsa: setup
	scripts/alsa-test.sh

## Network MIDI under real timing: aulos in one network namespace, pymidi's stream (500 notes, the sustain pedal,
## a recovery journal in every packet) in another joined by a veth pair, through a UDP relay adding 5 ms ± 2 ms
## and 0, 1 and 5 % loss (no netem on every kernel): no stuck notes, aulos's lost/repaired counts equal to the
## relay's drops (~4 minutes; root; the newer of .build/release/aulos and .build/debug/aulos, or $AULOS).
## Not part of `make test`.
test-network-midi: setup-tests build
	scripts/network-midi-test.sh

## The same with the kernel's real `tc netem` (delay 5 ms ± 2 ms, 0, 1 and 5 % loss; netem's own drop counts) in a
## QEMU VM booting a stock Debian 12 kernel (TCG; scripts/alsa-vm/run.sh), for kernels without sch_netem like
## this one: the guest chroots into the host's / and runs the test with the release aulos (4–7 minutes warm;
## root; args as the test's: `scripts/network-midi-vm.sh NOTES SECONDS LOSSES …`). Not part of `make test`.
test-network-midi-vm: setup-tests
	scripts/network-midi-vm.sh

## Discovery with a real avahi-daemon on a private D-Bus bus in its own network namespace: avahi-browse resolves
## aulos's advertisement, aulos devices lists what avahi-publish announces, the daemon and the bus going away and
## coming back, a name in use (~20 s; root). Not part of `make test` (which has a shorter check of the same).
test-avahi: setup-tests build
	scripts/avahi/avahi-test.sh

## libFuzzer on the MIDI byte parser, the MIDI file reader, the score parser, the rig loader and the SFZ parser: a million
## inputs each (~9 minutes; `scripts/fuzz.sh RUNS TARGET…` for other counts), zero crashes expected.
fuzz: setup
	scripts/fuzz.sh 1000000

## Real-time pacing with no sound card: 30 s at 64-frame slices through JACK's dummy backend, zero xruns.
# Every installed LV2 plugin rendered through aulos, each in its own process (a crash costs one plugin).
lv2-sweep: setup-tests build
	scripts/lv2-sweep.py .build/debug/aulos

realtime-test: setup
	scripts/realtime-test.sh 64 30

## A 10-minute file played live with --record equals its offline render, sample for sample; then two minutes
## through the band rig with --record-parts, the mix and each part against `aulos render --parts` (~1.5 min
## after a release build).
record-test: setup
	scripts/record-test.sh

## SFZ streaming under load: a synthesised library of 169 MB of samples played for 60 s live (null PCM, 64-frame
## periods, release build) with the loader slowed by AULOS_SFZ_DISK_DELAY_MS: 0 xruns and late slices, late
## voices counted, peak RSS under 64 MiB; again with a loader that all but stops, and at full speed (0 late
## voices); offline with the loader slowed at 64- and 1,000-frame slices, bit-identical to a full-speed render
## (~5 minutes after the release build). Not part of `make test`.
test-sfz-stream: setup
	scripts/sfz-stream-test.sh 60

## The web panel in a real browser (Debian's headless Chromium, installed by setup --web): switch a rig,
## move a slider, upload a bad rig, phone and desktop screenshots into docs/images; then the load test,
## 50 WebSocket clients and 1,000 OSC messages a second for 60 s at 64-frame slices (~2 minutes warm).
setup-web:
	@scripts/setup.sh --web

test-web: setup setup-web
	scripts/web-test.sh

## The JACK driver in real time: 60 s at 64 and at 32 frames on jackd -d dummy, through the JACK unit and
## through the ALSA unit on the same server (jackd2 and the ALSA jack plugin are installed by the pacing
## script); xruns attributed from jackd's log, mean DSP load of both (~5 minutes after a release build).
test-jack: setup-tests
	scripts/jack-test.sh 60 64 32

## JACK MIDI routed and played in the cycle it arrives in, 20 runs beside two CPU hogs, 0 misses (~5 min).
jack-midi-frames: setup-tests
	$(SWIFT) build --build-tests
	scripts/jack-midi-frames.sh 20

## The headless service under load for 10 minutes (SOAK_SECONDS to change): random MIDI at full polyphony,
## a graph change and a rig switch by program change every second, paced by JACK's dummy backend; no
## crash, resident memory flat within 1 MiB after warm-up, silence after all-notes-off, clean SIGTERM.
SOAK_SECONDS ?= 600
soak: setup
	scripts/soak.sh $(SOAK_SECONDS)

## The General MIDI listening sheet, docs/sound.md and its pictures in docs/images/sound: every GM family and
## the kit on the synth, on the sampler with the bundled font and on FluidR3 (the reference), measured (BS.1770
## loudness) and drawn (spectrograms), and the limiter on a dense openmsx song (~3 minutes after the builds).
sound-sheet: setup-tests
	$(SWIFT) build -c release --product aulos
	$(SWIFT) build -c release --product SoundMeasure
	scripts/sound-sheet.py

## The song corpus: every openmsx song rendered with render's defaults on the sampler (FluidR3) and the synth;
## fails unless no sample reaches full scale, true peaks stay at or below -1 dBTP and the sampler is within
## 3 LU of `fluidsynth -F -g 0.2`; the table goes into docs/sound.md (~15-20 minutes on two cores after the
## builds; GM_SONGS="a.mid b.mid" checks only those).
GM_SONGS ?=
gm-songs: setup-tests
	$(SWIFT) build -c release --product aulos
	$(SWIFT) build -c release --product SoundMeasure
	scripts/gm-songs.py $(GM_SONGS)

clean:
	rm -rf .build .build-tsan .build-asan .build-vm .build-fuzz Benchmarks/.build Fuzz/.build demo-synth.wav demo-sampler.wav
