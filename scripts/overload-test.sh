#!/usr/bin/env bash
# Overload: 16 layered synth parts (64 voices each) at 64-frame slices, 128 keys held through the
# control socket — far more voices than this machine renders in real time. Run twice through JACK's
# dummy backend: with the overload governor (voices shed before the device runs dry) and with it off
# (AULOS_NO_SHEDDING=1). Prints xruns, late slices, voices shed and peak load for each.
#   scripts/overload-test.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
swift build -c release --product aulos >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
    echo "name: Overload"; echo "slice: 64"; echo "parts:"
    for i in $(seq 16); do printf '  - name: P%d\n    instrument: synth\n    preset: String Ensemble\n    channels: [1]\n' "$i"; done
} > "$work/overload.yaml"
cat > "$work/run.sh" <<RUN
#!/usr/bin/env bash
set -euo pipefail
socket="$work/control-\$\$"
.build/release/aulos play --service --rig "$work/overload.yaml" --device aulosjack_raw --periods 3 \
    --control-socket "\$socket" > /dev/null 2> "$work/err" &
pid=\$!
for _ in \$(seq 100); do [ -S "\$socket" ] && break; sleep 0.1; done
sleep 2
python3 - "\$socket" "$seconds" <<'PY'
import json, socket, sys, time
path, seconds = sys.argv[1], float(sys.argv[2])
def request(line):
    s = socket.socket(socket.AF_UNIX); s.connect(path); s.sendall((line + "\n").encode())
    reply = s.makefile().readline(); s.close(); return json.loads(reply)
# 128 keys, a few at a time (one request is a whole batch), then held.
for start in range(0, 128, 16):
    request("midi " + " ".join(f"90 {n:02x} 64" for n in range(start, start + 16)))
    time.sleep(0.05)
before = request("status")
time.sleep(seconds)
after = request("status")
print(json.dumps({"mode": "governor off" if __import__("os").environ.get("AULOS_NO_SHEDDING") else "governor on",
                  "seconds": seconds, "voicesNow": after["voices"], "voicesShed": after["voicesShed"],
                  "xruns": after["xruns"], "xrunsWhileHeld": after["xruns"] - before["xruns"],
                  "lateSlices": after["lateSlices"], "dspLoad": round(after["dspLoad"], 3), "peakLoad": round(after["peakLoad"], 3)}))
request("midi " + " ".join(f"b0 7b 00" for _ in range(1)))
PY
kill -TERM \$pid; wait \$pid || true
RUN
chmod +x "$work/run.sh"
scripts/jack-pacing.sh --period 64 -- "$work/run.sh"
AULOS_NO_SHEDDING=1 scripts/jack-pacing.sh --period 64 -- "$work/run.sh"
