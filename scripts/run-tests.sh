#!/usr/bin/env bash
# make test's runner: the built test bundle in two processes at once — the CLI suites (each of their tests
# runs aulos, jackd or PipeWire and mostly waits for them) and everything else. Swift Testing runs a
# process's tests on a pool as wide as the machine has cores, and a test that waits holds its thread: on
# this 2-core machine the waiting CLI tests held the rest back (181 s of testing in one process, 137 s in
# two). `swift test` cannot run twice at once (SwiftPM locks .build), so this runs the bundle directly, as
# `swift test --skip-build` does. Each half's output is printed whole when both are done; the exit status
# is non-zero if either half failed. Usage: scripts/run-tests.sh (after swift build --build-tests)
set -uo pipefail
cd "$(dirname "$0")/.."
bundle="$(swift build --show-bin-path)/AulosPackageTests.xctest"
[ -x "$bundle" ] || { echo "run-tests: $bundle is not built (swift build --build-tests)" >&2; exit 2; }
# The sampler's default font is the system's General MIDI font when one is installed (FluidR3 from the
# tests' set-up, 141 MB); the suites are written for the bundled one — small, quick to load, and what their
# expected sounds were measured on. A test that wants another font names it.
export AULOS_SOUNDFONT="$PWD/soundfonts/AulosGM.sf2"
# The system bus's address, as libdbus assumes it when none is set: AvahiDiscoveryTests points it at a private
# daemon's bus for a while, and a name that is already in the environment is replaced in place. Adding one
# while other tests' threads call getenv would reallocate the environment under them.
export DBUS_SYSTEM_BUS_ADDRESS="${DBUS_SYSTEM_BUS_ADDRESS:-unix:path=/run/dbus/system_bus_socket}"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
"$bundle" --testing-library swift-testing --filter AulosCLITests > "$logs/cli" 2>&1 &
cli=$!
# The others at a lower priority: the command-line half plays through jackd and PipeWire in real time (the
# dummy backend paces cycles by the clock), and its bit-for-bit captures must not lose a cycle to them.
nice -n 10 "$bundle" --testing-library swift-testing --skip AulosCLITests > "$logs/rest" 2>&1 &
rest=$!
wait "$cli"; cli_status=$?
wait "$rest"; rest_status=$?
echo "== the command-line suites (aulos, jackd and PipeWire as processes)"
cat "$logs/cli"
echo "== every other suite"
cat "$logs/rest"
echo "run-tests: command-line suites $([ $cli_status -eq 0 ] && echo passed || echo "FAILED ($cli_status)"),"\
  "the others $([ $rest_status -eq 0 ] && echo passed || echo "FAILED ($rest_status)")"
[ $cli_status -eq 0 ] && [ $rest_status -eq 0 ]
