#!/usr/bin/env python3
"""Load test of the web panel and OSC together: do status pushes keep up, and does the audio stay clean,
with many panels open while a controller floods OSC?

Against a running `aulos play --service … --web HOST:WPORT --osc 127.0.0.1:OPORT`, for SECONDS:
- CLIENTS WebSockets on ws://HOST:WPORT/api/status, each receiving the status pushed about every 50 ms
  (`{"sequence": N, "sampledNanos": CLOCK_MONOTONIC ns when taken, "status": {…"xruns", "lateSlices"…}}`);
  a message's latency is when it arrived (time.monotonic_ns(), the same clock) less its sampledNanos;
- RATE OSC messages a second, `/aulos/part/PART/volume ,f` (values in 0.70…0.80), each of which must be
  answered with one `/aulos/reply` (or `/aulos/error`), sent on a schedule from one start time so that
  pacing does not drift.

Everything runs on one thread around one selector: no lock or thread switch is timed as latency. Before the
load, `/aulos/status` over OSC checks the port (and names the first part when --part is not given) and one
volume message must be accepted.

Prints a summary (and with --json writes the numbers); exits non-zero if a client was disconnected, if any
client got fewer than 10 status messages a second or one older than one it had, if xruns were added, if an
OSC message was refused or went unanswered, or if no status could be read.

    scripts/web/load-test.py --web 127.0.0.1:8080 --osc 127.0.0.1:9000 [--clients 50 --rate 1000 --seconds 60]
"""

import argparse
import json
import math
import selectors
import socket
import struct
import sys
import time

from wsclient import WebSocket, WebSocketError

STATUS_PATH = "/api/status"
MIN_STATUS_RATE = 10.0  # status messages a second each client must get: half the promised 20
REPLY_WAIT = 1.0  # seconds to wait, after the last message, for the OSC replies still on their way


class Failure(Exception):
    """The test could not run; the message says why, in one line."""


# OSC 1.0: strings NUL-terminated and padded to 4 bytes; int32 and float32 big-endian.


def osc_message(address, *arguments):
    """An OSC message: floats as `f`, ints as `i`, strings as `s`."""
    tags, payload = ",", b""
    for argument in arguments:
        if isinstance(argument, float):
            tags, payload = tags + "f", payload + struct.pack(">f", argument)
        elif isinstance(argument, int):
            tags, payload = tags + "i", payload + struct.pack(">i", argument)
        else:
            tags, payload = tags + "s", payload + _osc_string(argument)
    return _osc_string(address) + _osc_string(tags) + payload


def osc_parse(packet):
    """(address, arguments) of one OSC message; raises ValueError if it is not one."""

    def string(offset):
        end = packet.index(b"\0", offset)
        return packet[offset:end].decode("utf-8", "replace"), (end + 4) & ~3

    address, offset = string(0)
    tags, offset = string(offset)
    if not address.startswith("/") or not tags.startswith(","):
        raise ValueError("not an OSC message")
    arguments = []
    for tag in tags[1:]:
        if tag in "if":
            arguments.append(struct.unpack_from(">i" if tag == "i" else ">f", packet, offset)[0])
            offset += 4
        elif tag == "s":
            text, offset = string(offset)
            arguments.append(text)
        else:
            raise ValueError(f"OSC type tag '{tag}' in a reply")
    return address, arguments


def _osc_string(text):
    data = text.encode() + b"\0"
    return data + b"\0" * (-len(data) % 4)


def host_port(text):
    """'HOST:PORT' as (host, port), for argparse."""
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, not {text!r}")
    return host, int(port)


class Client:
    """One status WebSocket and what it received in the measured window."""

    def __init__(self, index, ws):
        self.index = index
        self.ws = ws
        self.counted = 0
        self.last_sequence = None
        self.sequence_gaps = 0
        self.malformed = 0


class Measurement:
    """What the status messages of every client add up to."""

    def __init__(self):
        self.latencies = []  # ns, one per status message received in the window
        self.first = None  # (sampledNanos, (xruns, lateSlices)) of the status taken earliest, and of the latest
        self.last = None

    def take(self, client, text, received, counted):
        """Records one message; `counted` is False for those that arrived before the window began."""
        try:
            message = json.loads(text)
            sampled, sequence, status = message["sampledNanos"], message["sequence"], message["status"]
            counters = (status["xruns"], status["lateSlices"])
            if not all(isinstance(value, int) for value in (sampled, sequence, *counters)):
                raise TypeError
        except (ValueError, TypeError, KeyError):
            client.malformed += 1
            return
        # The pushes are ordered by when the status was taken, whichever client got them first.
        if self.first is None or sampled < self.first[0]:
            self.first = (sampled, counters)
        if self.last is None or sampled > self.last[0]:
            self.last = (sampled, counters)
        # `sequence` numbers the control loop's statuses (every 20 ms tick); a client is sent the latest one
        # every 50 ms, so numbers are skipped by design. Going backwards or repeating one is the fault.
        if client.last_sequence is not None and sequence <= client.last_sequence:
            client.sequence_gaps += 1
        client.last_sequence = sequence
        if counted:
            client.counted += 1
            self.latencies.append(received - sampled)


class OSCLoad:
    """The OSC side: one UDP socket, messages sent on schedule, replies counted."""

    def __init__(self, address, part):
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        # Connected, so only the server's datagrams reach us and a closed port shows as ECONNREFUSED.
        self.socket.connect(address)
        # Replies come in bursts when the control loop answers a tick's worth at once.
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.address = address
        self.part = part
        self.sent = self.replied = self.errors = 0
        self.first_error = None
        self.max_lag_ns = 0

    def request(self, address, *arguments, timeout=2.0):
        """Sends one message and waits for its reply, before the load (the socket blocks here)."""
        self.socket.settimeout(timeout)
        try:
            self.socket.send(osc_message(address, *arguments))
            return osc_parse(self.socket.recv(65536))
        except TimeoutError:
            raise Failure(f"no OSC reply from {self.address[0]}:{self.address[1]} within {timeout:g} s") from None
        except ConnectionRefusedError:
            raise Failure(f"nothing listens for OSC on {self.address[0]}:{self.address[1]}") from None
        except ValueError as error:
            raise Failure(f"unreadable OSC reply to {address}: {error}") from None
        finally:
            self.socket.setblocking(False)

    def send_next(self):
        # Values that change every time, so that no message can be skipped as a repeat.
        value = 0.70 + 0.001 * (self.sent % 100)
        try:
            self.socket.send(osc_message(f"/aulos/part/{self.part}/volume", value))
        except (BlockingIOError, ConnectionRefusedError):
            pass  # not sent after all (full buffer, or the server is gone): it will count as lost
        self.sent += 1

    def read_replies(self):
        while True:
            try:
                packet = self.socket.recv(65536)
            except BlockingIOError:
                return
            except ConnectionRefusedError:
                continue  # an ICMP error for an earlier datagram: that one is lost; others may be waiting
            try:
                address, arguments = osc_parse(packet)
                text = arguments[0] if arguments and isinstance(arguments[0], str) else ""
                if address == "/aulos/reply" and "error" not in json.loads(text):
                    self.replied += 1
                    continue
                problem = f"{address} {text}"
            except (ValueError, TypeError) as error:  # json.JSONDecodeError is a ValueError
                problem = f"unreadable reply: {error}"
            self.errors += 1
            self.first_error = self.first_error or problem


def prepare(arguments):
    """Checks the OSC port, names the part, and connects the clients: everything before the load."""
    osc = OSCLoad(arguments.osc, arguments.part)
    try:
        check_osc(osc)
    except Failure:
        osc.socket.close()
        raise
    host, port = arguments.web
    url = f"ws://{host}:{port}{STATUS_PATH}"
    clients = []
    try:
        for index in range(arguments.clients):
            # On loopback each client connects from an address of its own (127.0.1.1, 127.0.1.2, …), as phones
            # on a network would: the panel takes at most 16 connections from one address.
            source = f"127.0.{1 + index // 250}.{1 + index % 250}" if host.startswith("127.") else None
            clients.append(Client(index, WebSocket.connect(url, timeout=10, source=source)))
    except (OSError, WebSocketError) as error:
        for client in clients:
            client.ws.close()
        osc.socket.close()
        raise Failure(f"client {len(clients) + 1} of {arguments.clients} could not connect to {url}: {error}")
    return osc, clients


def check_osc(osc):
    """Asks for the status, names the first part if none was given, and sets its volume once."""
    address, reply = osc.request("/aulos/status")
    if address != "/aulos/status":
        raise Failure(f"/aulos/status answered with {address} {reply}")
    status = _reply_json("/aulos/status", address, reply)
    if osc.part is None:
        meters = status.get("meters") or []
        parts = [meter["name"][len("part ") :] for meter in meters if meter["name"].startswith("part ")]
        if not parts:
            raise Failure("the status names no part: give one with --part")
        osc.part = parts[0]
    if " " in osc.part or "/" in osc.part:
        raise Failure(f"part '{osc.part}' cannot be named in an OSC address: give another with --part")
    volume = f"/aulos/part/{osc.part}/volume"
    address, reply = osc.request(volume, 0.75)
    if address != "/aulos/reply" or "error" in _reply_json(volume, address, reply):
        raise Failure(f"{volume} was refused: {address} {reply}")


def _reply_json(request, address, arguments):
    """The JSON object an OSC reply carries as its one string."""
    try:
        value = json.loads(arguments[0])
        if isinstance(value, dict):
            return value
    except (IndexError, TypeError, ValueError):
        pass
    raise Failure(f"{request} answered with {address} {arguments}, not a JSON object")


def run(arguments, osc, clients):
    """The load: OSC on schedule and every client read, for the given seconds, on one selector."""
    measurement = Measurement()
    disconnected = {}  # client index: why
    selector = selectors.DefaultSelector()
    selector.register(osc.socket, selectors.EVENT_READ, None)
    for client in clients:
        # What arrived while the other clients connected sat in the socket: not a latency, and not the window.
        for text in client.ws.read_available():
            measurement.take(client, text, time.monotonic_ns(), counted=False)
        if client.ws.closed:
            disconnected[client.index] = str(client.ws.closed)
        else:
            selector.register(client.ws, selectors.EVENT_READ, client)

    period = 1e9 / arguments.rate
    total = round(arguments.rate * arguments.seconds)
    start = time.monotonic_ns()
    end = start + round(arguments.seconds * 1e9)
    while True:
        now = time.monotonic_ns()
        # Each message is due at start + n × period: a late loop catches up instead of drifting.
        while osc.sent < total and start + osc.sent * period <= now:
            osc.max_lag_ns = max(osc.max_lag_ns, now - (start + osc.sent * period))
            osc.send_next()
        if now >= end:
            break
        due = start + osc.sent * period if osc.sent < total else end
        for key, _ in selector.select(max(min(due, end) - now, 0) / 1e9):
            client = key.data
            if client is None:
                osc.read_replies()
                continue
            # Stamped after reading: a status published and pushed while the socket was being read would
            # otherwise look older than its own sampling (a negative latency).
            texts = client.ws.read_available()
            received = time.monotonic_ns()
            for text in texts:
                measurement.take(client, text, received, counted=True)
            if client.ws.closed:
                disconnected[client.index] = str(client.ws.closed)
                selector.unregister(client.ws)
    window = (time.monotonic_ns() - start) / 1e9

    # Closing waits for each server's close frame; all of them together get two seconds at most.
    close_deadline = time.monotonic() + 2.0
    for client in clients:
        if not client.ws.closed:
            selector.unregister(client.ws)
        client.ws.close(timeout=max(close_deadline - time.monotonic(), 0))
    reply_deadline = time.monotonic() + REPLY_WAIT
    while osc.replied + osc.errors < osc.sent and time.monotonic() < reply_deadline:
        if selector.select(reply_deadline - time.monotonic()):
            osc.read_replies()
    selector.close()
    osc.socket.close()
    return measurement, disconnected, window


def report(arguments, osc, clients, measurement, disconnected, window):
    """The results as a dict, with the list of failed checks."""
    rates = [client.counted / window for client in clients]
    latencies = sorted(measurement.latencies)

    def percentile(fraction):
        # Nearest rank, in ms.
        return round(latencies[max(math.ceil(fraction * len(latencies)) - 1, 0)] / 1e6, 3) if latencies else None

    results = {
        "seconds": round(window, 3),
        "clients": {
            "connected": len(clients),
            "connectedAtEnd": len(clients) - len(disconnected),
            "disconnected": [{"client": index, "reason": reason} for index, reason in sorted(disconnected.items())],
        },
        "statusPerClientPerSecond": {"min": round(min(rates), 2), "mean": round(sum(rates) / len(rates), 2)},
        "latencyMs": {
            "p50": percentile(0.50),
            "p99": percentile(0.99),
            "max": percentile(1.0),
            "samples": len(latencies),
        },
        "sequenceGaps": sum(client.sequence_gaps for client in clients),
        "malformedMessages": sum(client.malformed for client in clients),
        "osc": {
            "part": osc.part,
            "rate": arguments.rate,
            "sent": osc.sent,
            "replied": osc.replied,
            "errors": osc.errors,
            "lost": osc.sent - osc.replied - osc.errors,
            "firstError": osc.first_error,
            "maxLagMs": round(osc.max_lag_ns / 1e6, 3),
        },
        "xrunsAdded": None,
        "lateSlicesAdded": None,
    }
    failures = []
    if disconnected:
        failures.append(f"{len(disconnected)} client(s) disconnected, the first: {next(iter(disconnected.values()))}")
    if min(rates) < MIN_STATUS_RATE:
        slowest = results["statusPerClientPerSecond"]["min"]
        failures.append(f"a client got {slowest:.2f} status messages a second (at least {MIN_STATUS_RATE:g})")
    if measurement.first is None:
        failures.append("no status message could be read")
    else:
        results["xrunsAdded"] = measurement.last[1][0] - measurement.first[1][0]
        results["lateSlicesAdded"] = measurement.last[1][1] - measurement.first[1][1]
        if results["xrunsAdded"] > 0:
            failures.append(f"{results['xrunsAdded']} xrun(s) during the test")
    if latencies and latencies[0] < 0:
        # A status taken after it arrived: sampledNanos is not this machine's CLOCK_MONOTONIC.
        failures.append("negative latency: sampledNanos is not CLOCK_MONOTONIC nanoseconds of this machine")
    if results["sequenceGaps"]:
        failures.append(f"{results['sequenceGaps']} status message(s) older than one already received")
    if results["osc"]["errors"] or results["osc"]["lost"]:
        failures.append(f"OSC: {results['osc']['errors']} error(s) and {results['osc']['lost']} lost replies")
    results["failures"] = failures
    return results


def summary(results):
    """The results in a few lines for a person, ending with PASS or the failures."""
    clients, rates = results["clients"], results["statusPerClientPerSecond"]
    latency, osc = results["latencyMs"], results["osc"]
    milliseconds = "n/a" if latency["p50"] is None else "p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {max:.2f} ms"
    lines = [
        f"clients: {clients['connected']} connected, {clients['connectedAtEnd']} still connected at the end",
        f"status: {rates['min']:.2f} messages/s per client at least, {rates['mean']:.2f} on average; "
        f"{results['sequenceGaps']} out of order, {results['malformedMessages']} malformed",
        f"latency: {milliseconds.format(**latency)} ({latency['samples']} messages)",
        f"OSC: {osc['sent']} sent to part {osc['part']} at {osc['rate']:g}/s, {osc['replied']} replied, "
        f"{osc['errors']} errors, {osc['lost']} lost; sender at most {osc['maxLagMs']:.2f} ms behind schedule",
        f"xruns added: {results['xrunsAdded']}, late slices added: {results['lateSlicesAdded']}",
    ]
    if osc["firstError"]:
        lines.append(f"first OSC error: {osc['firstError']}")
    lines += [f"FAIL: {failure}" for failure in results["failures"]] or ["PASS"]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description="Load-test the web panel's status pushes and OSC together.")
    parser.add_argument("--web", type=host_port, required=True, metavar="HOST:PORT", help="the web panel")
    parser.add_argument("--osc", type=host_port, required=True, metavar="HOST:PORT", help="the OSC port (UDP)")
    parser.add_argument("--clients", type=int, default=50, help="status WebSockets open at once (default 50)")
    parser.add_argument("--rate", type=float, default=1000.0, help="OSC messages a second (default 1000)")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the load lasts (default 60)")
    parser.add_argument("--part", help="the part whose volume OSC sets (default: the first in the status)")
    parser.add_argument("--json", metavar="OUT", help="also write the results here as JSON")
    arguments = parser.parse_args()
    if arguments.clients < 1 or arguments.rate <= 0 or arguments.seconds <= 0:
        parser.error("--clients, --rate and --seconds must be positive")
    try:
        osc, clients = prepare(arguments)
        results = report(arguments, osc, clients, *run(arguments, osc, clients))
    except (Failure, OSError) as error:
        sys.exit(f"load-test: {error}")
    print(summary(results))
    if arguments.json:
        try:
            with open(arguments.json, "w") as file:
                json.dump(results, file, indent=2)
                file.write("\n")
        except OSError as error:
            sys.exit(f"load-test: cannot write {arguments.json}: {error.strerror}")
    if results["failures"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
