#!/usr/bin/env python3
"""Control latency: how long an OSC float and a panel request take to reach a parameter.

Starts the built `aulos play --service` on ALSA's null device with a one-part synth rig (part Lead),
OSC and the web panel on loopback, then sends N changes of Lead.cutoff each way, one at a time, with a
random pause of 0-25 ms between them (so requests arrive at every phase of the 20 ms control tick), and
times each with the monotonic clock from the send to the reply. aulos stores the parameter before it
sends the reply (both before and after issue 31), so the round trip bounds the time to the parameter
from above; the last value of each run is checked with `get Lead.cutoff` on the control socket. The
panel's floor is the same number of `GET /api/session` requests, which never reach the control loop.

    scripts/control-latency.py [--count 1000] [--aulos .build/debug/aulos]
"""

import argparse
import http.client
import json
import os
import random
import socket
import struct
import subprocess
import sys
import tempfile
import time


def padded(text: bytes) -> bytes:
    return text + b"\0" * (4 - len(text) % 4)


def osc_float(address: str, value: float) -> bytes:
    return padded(address.encode()) + padded(b",f") + struct.pack(">f", value)


def socket_request(path: str, line: str) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(5)
        client.connect(path)
        client.sendall((line + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = client.recv(65536)
            if not chunk:
                break
            data += chunk
        return data.decode().strip()


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def summary(name, samples):
    ms = [s / 1e6 for s in samples]
    return (f"{name}: n={len(ms)} p50={percentile(ms, 0.5):.3f} ms p99={percentile(ms, 0.99):.3f} ms "
            f"max={max(ms):.3f} ms mean={sum(ms) / len(ms):.3f} ms")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--aulos", default=".build/debug/aulos")
    arguments = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="aulos-latency-")
    rig = os.path.join(folder, "one.yaml")
    with open(rig, "w") as file:
        file.write("name: One\nparts:\n  - name: Lead\n    instrument: synth\n")
    control = os.path.join(folder, "control")
    osc_port = 20000 + os.getpid() % 20000
    web_port = osc_port + 1
    aulos = subprocess.Popen(
        [arguments.aulos, "play", "--service", "--rig", rig, "--device", "null", "--osc", f"127.0.0.1:{osc_port}",
         "--web", f"127.0.0.1:{web_port}", "--control-socket", control],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(folder, "stderr"), "w"))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if "rig" in json.loads(socket_request(control, "status")):
                    break
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline or aulos.poll() is not None:
                sys.exit("aulos did not start: " + open(os.path.join(folder, "stderr")).read())
            time.sleep(0.1)
        random.seed(31)
        values = [float(random.randint(200, 8000)) for _ in range(arguments.count)]

        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.settimeout(5)
        osc = []
        for value in values:
            time.sleep(random.uniform(0, 0.025))
            start = time.monotonic_ns()
            udp.sendto(osc_float("/aulos/part/Lead/cutoff", value), ("127.0.0.1", osc_port))
            reply = udp.recv(65536)
            osc.append(time.monotonic_ns() - start)
            if b"ok" not in reply:
                sys.exit(f"OSC reply: {reply!r}")
        landed = json.loads(socket_request(control, "get Lead.cutoff"))["value"]
        if landed != values[-1]:
            sys.exit(f"OSC: Lead.cutoff is {landed}, not {values[-1]}")

        session = http.client.HTTPConnection("127.0.0.1", web_port, timeout=5)
        session.request("GET", "/api/session", headers={"Host": f"127.0.0.1:{web_port}"})
        csrf = json.loads(session.getresponse().read())["csrf"]
        panel = []
        random.shuffle(values)
        for value in values:
            time.sleep(random.uniform(0, 0.025))
            body = json.dumps({"request": f"set Lead.cutoff {value:g}"})
            start = time.monotonic_ns()
            connection = http.client.HTTPConnection("127.0.0.1", web_port, timeout=5)
            connection.request(
                "POST", "/api/control", body=body,
                headers={"Host": f"127.0.0.1:{web_port}", "X-Aulos-CSRF": csrf, "Content-Type": "application/json"})
            response = connection.getresponse()
            text = response.read()
            panel.append(time.monotonic_ns() - start)
            connection.close()
            if response.status != 200:
                sys.exit(f"panel reply {response.status}: {text!r}")
        landed = json.loads(socket_request(control, "get Lead.cutoff"))["value"]
        if landed != values[-1]:
            sys.exit(f"panel: Lead.cutoff is {landed}, not {values[-1]}")
        # The panel's floor: a request that never reaches the control loop (GET /api/session), on a new
        # connection the same way.
        floor = []
        for _ in values:
            time.sleep(random.uniform(0, 0.025))
            start = time.monotonic_ns()
            connection = http.client.HTTPConnection("127.0.0.1", web_port, timeout=5)
            connection.request("GET", "/api/session", headers={"Host": f"127.0.0.1:{web_port}"})
            connection.getresponse().read()
            floor.append(time.monotonic_ns() - start)
            connection.close()
        print(summary("OSC -> parameter  ", osc))
        print(summary("panel -> parameter", panel))
        print(summary("panel floor (GET /api/session)", floor))
    finally:
        aulos.terminate()
        aulos.wait(10)


if __name__ == "__main__":
    main()
