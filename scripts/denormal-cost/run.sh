#!/usr/bin/env bash
# What subnormal floats cost here, for docs/performance.md (not a test: timings depend on the machine and
# its load). Builds scripts/denormal-cost/svf.swift (AulosDSP's StateVariableFilter arithmetic) with -O
# against the FlushToZero C shim and runs it without and with FTZ/DAZ.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=.build/denormal-cost
mkdir -p "$work"
clang -O2 -c Sources/CAulosRealtime/control.c -I Sources/CAulosRealtime/include -o "$work/control.o"
swiftc -O scripts/denormal-cost/svf.swift "$work/control.o" -o "$work/svf"
"$work/svf"
"$work/svf" ftz
# An LV2 effect's tail (mda Tracker leaves subnormals in half its outputs once its input stops): x86_64.
gcc -O2 scripts/denormal-cost/lv2tail.c -o "$work/lv2tail" $(pkg-config --cflags --libs lilv-0) -lm
"$work/lv2tail" http://drobilla.net/plugins/mda/Tracker
"$work/lv2tail" http://drobilla.net/plugins/mda/Tracker ftz
