#!/usr/bin/env bash
# `make soak`: aulos as the headless service would run it (--service, the factory rig set, the
# control socket), paced in real time by JACK's dummy backend (scripts/jack-pacing.sh), driven for
# SECONDS (default 600) by scripts/soak-driver.py: random MIDI at full polyphony, a graph change every
# second, a rig switch by program change every second. Passes when aulos never crashes, its resident
# memory stays within 1 MiB after warm-up, no voice sounds after all-notes-off, and SIGTERM stops it
# cleanly. Release build. Numbers go to docs/reliability.md by hand.
#   scripts/soak.sh [SECONDS] [PERIOD]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
period=${2:-128}
swift build -c release --product aulos >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/run.sh" <<RUN
#!/usr/bin/env bash
set -euo pipefail
socket="$work/control"
.build/release/aulos play --service --rig presets/rigs/stage.yaml --device aulosjack_raw --periods 3 \
    --control-socket "\$socket" > "$work/aulos.out" 2> "$work/aulos.err" &
pid=\$!
for _ in \$(seq 100); do [ -S "\$socket" ] && break; sleep 0.1; done
sleep 1
status=0
python3 scripts/soak-driver.py "\$socket" "$seconds" "\$pid" || status=\$?
if ! kill -0 "\$pid" 2>/dev/null; then echo "soak: FAILED: aulos died" >&2; cat "$work/aulos.err" >&2; exit 1; fi
kill -TERM "\$pid"
code=0; wait "\$pid" || code=\$?
echo "aulos: exit \$code after SIGTERM"; cat "$work/aulos.out"
grep -v "memory not locked" "$work/aulos.err" | tail -5 || true
[ "\$code" -eq 0 ] || { echo "soak: FAILED: exit \$code after SIGTERM" >&2; exit 1; }
exit \$status
RUN
chmod +x "$work/run.sh"
scripts/jack-pacing.sh --period "$period" -- "$work/run.sh"
echo "soak: passed: $seconds s"
