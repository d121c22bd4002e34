#!/usr/bin/env python3
"""Drives a running `aulos play --service` through its control socket for the soak test (scripts/soak.sh).

For SECONDS: random MIDI at full polyphony (notes held on ten channels, more than any instrument's
polyphony, with sustain pedal, mod wheel, mapped controllers, bends), a graph change every second
(the master EQ taken out of and put back into the running graph), and a rig switch by program change
on the control channel every second, half a second apart from the graph change. Samples the process's
resident memory every second. At the end: every key released, all-notes-off, and after the release
tails the instrument must report no voice sounding.

Prints one JSON object with the measurements; exits non-zero when a check fails.
"""
import json
import random
import socket
import sys
import time

path, seconds, pid = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
random.seed(int(sys.argv[4]) if len(sys.argv) > 4 else 1)


def request(line):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    s.sendall((line + "\n").encode())
    reply = s.makefile().readline()
    s.close()
    answer = json.loads(reply)
    if "error" in answer:
        raise RuntimeError(f"{line!r}: {answer['error']}")
    return answer


def midi(messages):
    if messages:
        request("midi " + " ".join(f"{b:02x}" for m in messages for b in m))


def rss_kib():
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


held = set()  # (channel, note)
rss = []
requests = notes_on = switches = graph_changes = 0
peak_voices = 0
start = time.monotonic()
next_second = start + 1.0
eq_in = True
rig_count = len(request("status")["rigs"])
while time.monotonic() - start < seconds:
    batch = []
    # Keep about 160 keys down across ten channels: more than any part's polyphony.
    for _ in range(random.randint(4, 12)):
        channel = random.randrange(10)
        note = random.randrange(24, 108)
        if len(held) < 160 or random.random() < 0.3:
            batch.append((0x90 | channel, note, random.randint(1, 127)))
            held.add((channel, note))
            notes_on += 1
        if held and random.random() < 0.6:
            channel, note = random.choice(sorted(held))
            held.discard((channel, note))
            batch.append((0x80 | channel, note, 64))
    roll = random.random()
    channel = random.randrange(10)
    if roll < 0.15:
        batch.append((0xB0 | channel, random.choice([1, 7, 74, 10, 11]), random.randrange(128)))
    elif roll < 0.2:
        batch.append((0xB0 | channel, 64, random.choice([0, 127])))
    elif roll < 0.3:
        bend = random.randrange(16384)
        batch.append((0xE0 | channel, bend & 0x7F, bend >> 7))
    midi(batch)
    requests += 1
    now = time.monotonic()
    if now >= next_second:
        # A graph change: the master EQ out of or into the running graph (a new render plan).
        request("set output.eq " + ("off" if eq_in else random.choice(["Rock", "Acoustic", "Bass Booster", "Flat"])))
        eq_in = not eq_in
        graph_changes += 1
        status = request("status")
        peak_voices = max(peak_voices, status["voices"])
        rss.append(rss_kib())
        next_second += 1.0
    elif now >= next_second - 0.5 and switches <= graph_changes:
        # A rig switch by program change on the control channel (16), half a second after the graph change.
        midi([(0xBF, 0, 0), (0xBF, 32, 0), (0xCF, random.randrange(rig_count))])
        switches += 1
    time.sleep(0.005)

# Release everything, then all notes off on every channel; after the tails nothing may sound.
midi([(0x80 | c, n, 0) for c, n in sorted(held)])
midi([(0xB0 | c, 64, 0) for c in range(16)] + [(0xB0 | c, 123, 0) for c in range(16)])
time.sleep(4)
final = request("status")
warmup = max(1, len(rss) // 10)
steady = rss[warmup:] or rss
result = {
    "seconds": round(time.monotonic() - start, 1),
    "requests": requests,
    "noteOns": notes_on,
    "graphChanges": graph_changes,
    "rigSwitches": final["rigSwitches"],
    "peakVoices": peak_voices,
    "voicesShed": final["voicesShed"],
    "voicesAfterAllNotesOff": final["voices"],
    "xruns": final["xruns"],
    "lateSlices": final["lateSlices"],
    "peakLoad": final["peakLoad"],
    "midiDelivered": final["midiDelivered"],
    "midiDropped": final["midiDropped"],
    "rssStartKiB": rss[0] if rss else 0,
    "rssAfterWarmupMinKiB": min(steady) if steady else 0,
    "rssAfterWarmupMaxKiB": max(steady) if steady else 0,
    "rssGrowthAfterWarmupKiB": (max(steady) - min(steady)) if steady else 0,
}
print(json.dumps(result))
failures = []
if final["voices"] != 0:
    failures.append(f"{final['voices']} voices still sounding after all-notes-off")
if result["rssGrowthAfterWarmupKiB"] > 1024:
    failures.append(f"resident memory grew {result['rssGrowthAfterWarmupKiB']} KiB after warm-up (limit 1024)")
if graph_changes < int(seconds) - 2:
    failures.append(f"only {graph_changes} graph changes in {seconds} s")
if failures:
    print("soak: FAILED: " + "; ".join(failures), file=sys.stderr)
    sys.exit(1)
