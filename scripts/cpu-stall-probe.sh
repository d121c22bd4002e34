#!/usr/bin/env bash
# How often this machine stalls a running thread and charges the stall to it as CPU time (see
# scripts/cpu-stall-probe.c): what a render thread cannot tell from its own work. Busy on every CPU for
# SECONDS (default 10). Used by scripts/jack-test.sh before it measures again.
#   scripts/cpu-stall-probe.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .build/cpu-stall-probe
binary=.build/cpu-stall-probe/cpu-stall-probe
if [ ! -x "$binary" ] || [ scripts/cpu-stall-probe.c -nt "$binary" ]; then
  gcc -O2 -Wall -Wextra -pthread scripts/cpu-stall-probe.c -o "$binary"
fi
exec "$binary" "${1:-10}"
