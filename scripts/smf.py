"""Writes small Standard MIDI Files for the test scripts (scripts/alsa-test.sh, scripts/fuzz.sh).

Events are (delta ticks, message bytes); `absolute` turns (tick, bytes) pairs into deltas.
"""
import struct


def vlq(n):
    """A variable-length quantity, as MIDI files store delta times."""
    out = [n & 0x7F]
    while n > 0x7F:
        n >>= 7
        out.insert(0, (n & 0x7F) | 0x80)
    return bytes(out)


def absolute(events):
    """(tick, bytes) pairs in any order -> (delta, bytes) in time order."""
    result, now = [], 0
    for tick, data in sorted(events, key=lambda e: e[0]):
        result.append((tick - now, data))
        now = tick
    return result


def track(events):
    """An MTrk chunk from (delta, bytes) events, with the end-of-track meta event added."""
    body = b"".join(vlq(delta) + data for delta, data in events) + b"\x00\xff\x2f\x00"
    return b"MTrk" + struct.pack(">I", len(body)) + body


def smf(fmt, division, tracks):
    """A whole file: header (format, track count, division) and the tracks."""
    return b"MThd" + struct.pack(">IHHH", 6, fmt, len(tracks), division) + b"".join(tracks)
