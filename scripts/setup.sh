#!/usr/bin/env bash
# Installs the system packages Aulos builds and runs against, if any are missing, and says what it does.
# Works as root or through sudo on Debian 12 / Raspberry Pi OS (bookworm). Safe to run again: with
# everything present it only checks and exits.
set -euo pipefail

packages=(
  pkg-config
  python3              # the package-graph check and the test scripts' MIDI-file writer
  libasound2-dev       # ALSA PCM and sequencer (alsa-lib)
  libfluidsynth-dev    # the SoundFont sampler
  libjack-jackd2-dev   # satisfies libfluidsynth-dev's JACK dependency with JACK 2, so installing jackd2
                       # later (the real-time pacing test) does not remove libfluidsynth-dev
  fluidsynth           # the fluidsynth program: tests compare the default reverb and chorus with fluidsynth -F
  libsndfile1-dev      # WAV/FLAC reading and writing
  libsamplerate0-dev   # sample-rate conversion in the format converter
  liblilv-dev          # LV2 plugin discovery (and lv2-dev's headers, which it brings)
  libcrypt-dev         # crypt(3) (libxcrypt): the web panel's password hash
  libavahi-client-dev  # network MIDI's DNS-SD advertising and browsing through avahi-daemon (libavahi-client)
  util-linux           # prlimit: the tests' stand-in for a full disk (essential on Debian; named to be sure)
)

# `scripts/setup.sh --tests` (what `make test` runs) also installs what only the tests use: real LV2
# plugins for the LV2 host's tests, its sweep (make lv2-sweep) and its benchmark.
if [ "${1:-}" = "--tests" ]; then
  packages+=(
    mda-lv2              # 36 LV2 plugins: the JX10 and DX10 synths, effects
    lv2-examples         # the LV2 specification's example plugins (eg-amp, eg-sampler, eg-params, ...)
    dragonfly-reverb-lv2 # Dragonfly's reverbs: options and the worker; the LV2 hosting benchmark's plate
    x42-plugins          # 116 more plugins (sidechains, multi-channel meters) for the hosting sweep
    swh-lv2              # Steve Harris's plugins: lv2:sampleRate ports (Single band parametric's fc in Hz)
    fomp                 # Fons's filters and oscillators: more lv2:sampleRate ports, defaults in Hz
    zynaddsubfx-lv2      # ZynAddSubFX: 1,150 presets (bank select past 128), a big state to its UI port
    jackd2               # a real JACK server (jackd -d dummy) for the JACK driver's tests, and jack_bufsize
    gcc                  # builds the JACK tests' C client (scripts/jack/jack-probe.c)
    pipewire             # a headless PipeWire (scripts/jack/pipewire-null.conf) for the JACK driver through it
    pipewire-bin
    pipewire-jack        # pw-jack: JACK clients as PipeWire clients
    fluid-soundfont-gm   # FluidR3 (MIT, 141 MB): the General MIDI reference the synth's programs are measured
                         # against, and the default font a user with it installed gets
    systemd              # systemd-analyze verify: the service's unit as systemd reads it (present on most systems)
    openttd-openmsx      # real General MIDI songs (GPL-2, 36 files) for the song corpus (make gm-songs)
    python3-venv         # the venv pymidi goes into (below)
    iproute2             # ip netns, veth pairs and tc for make test-network-midi (loss and delay from netem where
                         # the kernel has it, else from scripts/udp-relay.py) and, in its VM, test-network-midi-vm
    avahi-daemon         # a real mDNS daemon (on a private bus, scripts/avahi/private-avahi.sh) for discovery
    avahi-utils          # avahi-browse and avahi-publish: the peer's side in make test-avahi
    dbus-daemon          # the private D-Bus system bus that daemon and aulos meet on
  )
fi

# pymidi (PyPI, MIT), the network MIDI tests' independent peer (Tests/AulosNetworkMIDITests/PymidiInteropTests):
# installed with --tests into a venv in the checkout's ignored .build-pymidi/, which the tests look for. A venv,
# because Debian's pip refuses to install into the system Python (PEP 668) and `pip install --user` would touch
# the user's ~/.local for a test tool; the version is pinned because the tests check its known deviations.
# Without it (no network) the interop tests say "skipped" and the rest run.
install_pymidi() {
  local root venv
  root=$(cd "$(dirname "$0")/.." && pwd)
  venv="$root/.build-pymidi/venv"
  if "$venv/bin/python3" -c 'import pymidi.packets' 2>/dev/null; then
    echo "setup: pymidi present ($venv)"
    return 0
  fi
  echo "setup: installing pymidi 0.5.0 into $venv"
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install --quiet --disable-pip-version-check 'pymidi==0.5.0'; }; then
    echo "setup: warning: pymidi could not be installed; the pymidi interop tests will be skipped" >&2
  fi
}

# `scripts/setup.sh --static` (what the QEMU suites run before `swift build --static-swift-stdlib`) needs
# nothing more since the web panel has its own server: it installed libcurl's development link while
# FlyingFox brought FoundationNetworking, whose static library links against -lcurl.

# `scripts/setup.sh --web` (what `make test-web` runs) also installs the browser that drives the panel.
if [ "${1:-}" = "--web" ]; then
  packages+=(chromium)
fi

# `scripts/setup.sh --package` (what `make deb` and `make test-install` run) also installs Debian's packaging
# tools and what the package test uses: the clean Debian 12 it installs into is made by debootstrap.
if [ "${1:-}" = "--package" ]; then
  packages+=(
    dpkg-dev             # dpkg-buildpackage, dpkg-shlibdeps (the package's Depends), dpkg-parsechangelog
    debhelper            # dh: the package's build sequence, its sysusers/tmpfiles/systemd scripts
    fakeroot
    lintian              # Debian's checks of the built package (make deb fails on a warning)
    debootstrap          # a clean Debian 12 in a folder for make test-install
    binutils             # strings: the packaged binary names no build path
    man-db               # man -l: the man pages render
    groff-base
    bash-completion      # the completion script loads
    systemd              # systemd-sysusers and systemd-tmpfiles read the packaged entries
  )
fi

if ! command -v swift >/dev/null 2>&1; then
  echo "setup: no 'swift' on PATH. Aulos needs Swift 6.1 or newer (swift.org toolchain for Debian 12 / aarch64)." >&2
  exit 1
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: system packages present (${packages[*]})"
  if [ "${1:-}" = "--tests" ]; then install_pymidi; fi
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "setup: missing ${missing[*]}; run as root or install sudo" >&2
  exit 1
fi

echo "setup: installing ${missing[*]} with apt-get"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
if [ "${1:-}" = "--tests" ]; then install_pymidi; fi
echo "setup: done"
