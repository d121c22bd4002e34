#!/usr/bin/env bash
# make test-web: the web panel end to end, on alsa-lib's null PCM (no sound card needed).
#  1. scripts/web/panel-test.py: the page in headless Chromium against a live aulos (rig menu, sliders, rig
#     upload, refused cross-origin writes, no JavaScript errors); its screenshots go to docs/images.
#  2. scripts/web/load-test.py: 50 status WebSockets and OSC at 1000 messages/s for 60 s, against aulos at
#     64-frame slices (band.yaml), the slice the panel must not disturb; it fails on a dropped client, a slow
#     status feed or an xrun. The numbers are also written as JSON (.build/web-test/load.json).
# Builds the release aulos first; AULOS=PATH uses that binary instead and skips the build (its resource
# bundles must sit beside it). LOAD_SECONDS=N shortens the load. Exit 0 when both pass, 1 otherwise.
#   scripts/web-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${AULOS:-}" ]; then
    swift build -c release --product aulos >/dev/null
    AULOS=.build/release/aulos
fi
seconds=${LOAD_SECONDS:-60}
json=.build/web-test/load.json
mkdir -p "$(dirname "$json")"
work=$(mktemp -d)
pid=
cleanup() {
    # SIGTERM first, as systemd would; SIGKILL only if aulos has not ended 10 s later.
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM  # through the EXIT trap, so aulos is stopped on Ctrl-C too

failed=0
echo "== panel test (headless Chromium), with $AULOS"
scripts/web/panel-test.py --aulos "$AULOS" --screenshots docs/images || failed=1

echo "== load test: 50 status clients, OSC at 1000/s, ${seconds} s, 64-frame slices"
# Free ports: the kernel's pick for port 0 (TCP for the panel, UDP for OSC).
read -r web osc < <(python3 -c '
import socket
ports = []
for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
    probe = socket.socket(socket.AF_INET, kind)
    probe.bind(("127.0.0.1", 0))
    ports.append(probe.getsockname()[1])
    probe.close()
print(*ports)')
"$AULOS" play --service --device null --rig presets/rigs/band.yaml --slice 64 \
    --web "127.0.0.1:$web" --osc "127.0.0.1:$osc" --control-socket "$work/control.sock" > "$work/aulos.log" 2>&1 &
pid=$!
# The panel answers before the rig is built: wait until the status says it plays (the SoundFont loads first).
if ! python3 - "$web" <<'PY'
import json, sys, time, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}"
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        csrf = json.load(urllib.request.urlopen(base + "/api/session", timeout=2))["csrf"]
        request = urllib.request.Request(base + "/api/control", data=b'{"request": "status"}',
                                         headers={"X-Aulos-CSRF": csrf, "Content-Type": "application/json"})
        if "activeRig" in json.load(urllib.request.urlopen(request, timeout=2)):
            sys.exit(0)
    except (OSError, ValueError, KeyError):
        pass  # not listening yet, or "not playing yet" (an HTTP 400)
    time.sleep(0.2)
sys.exit("web-test: aulos did not start playing within 60 s")
PY
then
    tail -n 5 "$work/aulos.log"
    exit 1
fi
scripts/web/load-test.py --web "127.0.0.1:$web" --osc "127.0.0.1:$osc" --clients 50 --rate 1000 \
    --seconds "$seconds" --json "$json" || failed=1
echo "(numbers in $json)"
# aulos's own account of the run (xruns, late slices) as it stops; a crash under load shows here too.
kill "$pid"
status=0
wait "$pid" || status=$?
pid=
grep -v '^\[FlyingFox\]' "$work/aulos.log" | tail -n 3
if [ "$status" -ne 0 ]; then
    echo "web-test: aulos exited with status $status under the load"
    failed=1
fi

if [ "$failed" -ne 0 ]; then
    echo "web-test: FAILED"
    exit 1
fi
echo "web-test: passed"
