#!/usr/bin/env python3
"""pymidi (PyPI 0.5.0) as the network MIDI tests' independent peer: it builds AppleMIDI and RTP-MIDI packets with
its own `packets` module, and parses the packets Aulos's encoder built, printing JSON for the Swift tests
(Tests/AulosNetworkMIDITests/PymidiInteropTests.swift). Run by the tests with the Python that has pymidi
(scripts/setup.sh --tests installs it in .build-pymidi/venv).

  pymidi-peer.py build                 -> {"name": "hex", ...}
  pymidi-peer.py parse KIND HEX ...    -> [{fields}, ...]   KIND: exchange | timestamp | midi
  pymidi-peer.py session HOST PORT [HOLD] [drop]  -> {what the session did}
  pymidi-peer.py stream HOST PORT NOTES SECONDS [SEED [BARRIER]]  -> {what the stream did}
  pymidi-peer.py server HOST PORT SECONDS [play]  -> {"listening": ...}, then {what pymidi's server saw}

`session` is an initiator over real UDP against an AppleMIDI responder (aulos play --network-midi): IN on the
control port and then the data port (resent every second, up to 12 times, as Apple's initiators do), three CK
exchanges on CLOCK_MONOTONIC in 100 us ticks, then a note-on (C4, velocity 100) with a controller (CC 1 = 64),
the note-off HOLD seconds later (default 1), and BY. Every packet is built and every answer parsed by
`pymidi.packets`; the sockets are driven here, because pymidi's own client is a stub with bugs (brief 3.6 B4).
With `drop` the packet with the note-off is never sent: the next one (CC 7 = 100) carries a recovery journal
whose chapter N has the note's OFFBITS, so the receiver must repair the loss to end the note.

`stream` plays a known long performance (NOTES notes over SECONDS on channels 1 and 2, the sustain pedal, the
modulation wheel; SEED chooses it) as an initiator should: CK every 10 s, RS moving the journal's checkpoint, and
every RTP-MIDI packet carrying a recovery journal (chapter N, chapter C with CC 64 by the toggle tool) that
JournalSender encodes by hand from RFC 6295 App. A, since pymidi builds no journals (pymidi builds the RTP
header, the command section and the session packets). Used by scripts/network-midi-test.sh; see `stream()`.

`server` is pymidi's own *server* (`pymidi.server.Server`, the responder, unchanged) on HOST:PORT and PORT + 1, for
Aulos to invite (Aulos the initiator). It prints one JSON line when bound, then runs until the peer it accepted says
BY, or SECONDS pass, and prints what it saw, from its Handler and its own log records: the peers connected and
disconnected (the Handler, called for the control port), the invitations each port accepted ("Accepted connection
from ..."), the CK2s its data port read ("offset estimate ..."). pymidi's server cannot send MIDI (its protocols only
answer), so with `play`, once three CK2s have come, a note-on (C4, velocity 100) and 0.3 s later its note-off go to
the peer's data port from the server's own data socket, as RTP-MIDI packets built by `pymidi.packets` with the
server's data-port SSRC and timestamps on the clock its CK1 answers with (time.time() in 100 us ticks).

pymidi's known deviations (docs in the tests): delta times are LEB128 (only deltas < 128 agree with RFC 6295),
Z is ignored, program change / pitch bend / SysEx swallow the rest of the list, only one channel journal is read
and the system journal is gated on S instead of Y, names are ASCII only.
"""
import json
import random
import select
import socket
import struct
import sys
import time

from pymidi import packets


def exchange(command, token, ssrc, name=None):
    return packets.AppleMIDIExchangePacket.build(
        dict(command=command, protocol_version=2, initiator_token=token, ssrc=ssrc, name=name))


def clock(count, ssrc, t1, t2=0, t3=0):
    return packets.AppleMIDITimestampPacket.build(
        dict(command=b'CK', ssrc=ssrc, count=count, timestamp_1=t1, timestamp_2=t2, timestamp_3=t3))


def command(status, kind, params, delta=None):
    return dict(delta_time=delta, __next=status, command_byte=status, command=kind, channel=status & 0x0F,
                params=params)


def midi(seq, ts, commands, length, journal=None, j=0, ssrc=0xCAFEBABE):
    header = dict(rtp_header=dict(flags=dict(v=2, p=0, x=0, cc=0, m=1, pt=0x61), sequence_number=seq),
                  timestamp=ts, ssrc=ssrc)
    return packets.MIDIPacket.build(dict(
        header=header, command=dict(flags=dict(b=0, j=j, z=0, p=0, len=length), midi_list=commands),
        journal=journal))


def build():
    note_on_off = midi(0x1234, 0x00010000, [
        command(0x90, 'note_on', dict(key=60, velocity=100)),
        command(0x80, 'note_off', dict(key=60, velocity=0), delta=10)], 7)
    # CC 7 and CC 64 on channel 3 (running status for the second), then a note-on; deltas < 128 (LEB128 = RFC).
    controllers = midi(0x1235, 0x00010100, [
        command(0xB3, 'control_mode_change', dict(controller=7, value=100)),
        command(0xB3, 'control_mode_change', dict(controller=64, value=127), delta=5),
        command(0x93, 'note_on', dict(key=62, velocity=90), delta=127)], 11)
    # One channel journal with raw chapter N bytes (OFFBITS: note 60 off), checkpoint 7, as the brief built it.
    journal = dict(header=dict(s=False, y=False, a=True, h=False, totchan=0), checkpoint_seqnum=7,
                   system_journal=None, channel_journal=dict(
                       header=dict(s=False, chan=0, h=False, length=6, p=False, c=False, m=False, w=False,
                                   n=True, e=False, t=False, a=False),
                       journal=bytes.fromhex('007708')))
    with_journal = midi(8, 0x00010000, [command(0x90, 'note_on', dict(key=62, velocity=90))], 3, journal, j=1)
    built = {
        'IN': exchange(b'IN', 0x12345678, 0xCAFEBABE, 'aulos-test'),
        'OK': exchange(b'OK', 0x12345678, 0x0BADF00D, 'peer'),
        'NO': exchange(b'NO', 0x12345678, 0x0BADF00D),
        'BY': exchange(b'BY', 0, 0xCAFEBABE),
        'CK0': clock(0, 0xCAFEBABE, 1000),
        'CK1': clock(1, 0x0BADF00D, 1000, 15370297433218),
        'CK2': clock(2, 0xCAFEBABE, 1000, 15370297433218, 1010),
        'noteOnOff': note_on_off,
        'controllers': controllers,
        'journal': with_journal,
    }
    print(json.dumps({name: packet.hex() for name, packet in built.items()}))


def plain(value, key=None):
    """construct's containers as JSON: bytes as hex (the AppleMIDI command as its letters), enums as numbers
    except a MIDI command's kind (its name), private keys dropped."""
    if isinstance(value, dict):
        return {name: plain(item, name) for name, item in value.items() if not name.startswith('_')}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, bytes):
        return value.decode('ascii') if key == 'command' else value.hex()
    if isinstance(value, str) and hasattr(value, '__int__'):  # construct's EnumIntegerString
        return str(value) if key == 'command' else int(value)
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return str(value)


def parse(kind, texts):
    parser = {'exchange': packets.AppleMIDIExchangePacket, 'timestamp': packets.AppleMIDITimestampPacket,
              'midi': packets.MIDIPacket}[kind]
    out = []
    for text in texts:
        try:
            out.append(plain(parser.parse(bytes.fromhex(text))))
        except Exception as error:  # pymidi's own refusal is a result the test reads
            out.append({'error': f'{type(error).__name__}: {error}'})
    print(json.dumps(out))


def ticks():
    """CLOCK_MONOTONIC in AppleMIDI's 100 us ticks."""
    return int(time.monotonic() * 10000)


def session(host, port, hold=1.0, drop=False):
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    control = socket.socket(family, socket.SOCK_DGRAM)
    data = socket.socket(family, socket.SOCK_DGRAM)
    for sock in (control, data):
        sock.bind((host, 0))
        sock.settimeout(1.0)
    token = random.getrandbits(32)
    ssrc = random.getrandbits(32) or 1
    name = 'pymidi-session'
    report = {'ssrc': ssrc}
    feedback = []

    def ask(sock, destination, packet, parser):
        for _ in range(12):
            sock.sendto(packet, destination)
            try:
                reply, _ = sock.recvfrom(2048)
            except socket.timeout:
                continue
            return parser.parse(reply)
        sys.exit(f'no answer from {destination}')

    for label, sock, destination in (('control', control, (host, port)), ('data', data, (host, port + 1))):
        reply = ask(sock, destination, exchange(b'IN', token, ssrc, name), packets.AppleMIDIExchangePacket)
        report[label] = dict(command=reply.command.decode('ascii'), token=reply.initiator_token, ssrc=reply.ssrc,
                             name=reply.name)
        if reply.command != b'OK':
            print(json.dumps(report))
            return
    syncs = []
    for _ in range(3):
        t1 = ticks()
        answer = ask(data, (host, port + 1), clock(0, ssrc, t1), packets.AppleMIDITimestampPacket)
        t3 = ticks()
        data.sendto(clock(2, ssrc, t1, answer.timestamp_2, t3), (host, port + 1))
        syncs.append(dict(count=answer.count, echoed=answer.timestamp_1 == t1, t2=answer.timestamp_2,
                          rtt=t3 - t1, offset=(t1 + t3) // 2 - answer.timestamp_2))
        time.sleep(0.05)
    report['clock'] = syncs
    sequence = random.getrandbits(16)
    played = midi(sequence, ticks() & 0xFFFFFFFF, [
        command(0x90, 'note_on', dict(key=60, velocity=100)),
        command(0xB0, 'control_mode_change', dict(controller=1, value=64), delta=0)], 7, ssrc=ssrc)
    data.sendto(played, (host, port + 1))
    time.sleep(hold)
    released = midi((sequence + 1) & 0xFFFF, ticks() & 0xFFFFFFFF, [
        command(0x80, 'note_off', dict(key=60, velocity=0))], 3, ssrc=ssrc)
    last = (sequence + 1) & 0xFFFF
    if drop:
        # The note-off's packet is "lost"; the next one carries a journal: checkpoint at the note-on's packet,
        # channel 1's chapter N with LOW = HIGH = 7 and OFFBITS 0x08 (note 60 ended).
        last = (sequence + 2) & 0xFFFF
        journal = dict(header=dict(s=False, y=False, a=True, h=False, totchan=0), checkpoint_seqnum=sequence,
                       system_journal=None, channel_journal=dict(
                           header=dict(s=False, chan=0, h=False, length=6, p=False, c=False, m=False, w=False,
                                       n=True, e=False, t=False, a=False),
                           journal=bytes.fromhex('007708')))
        repaired = midi(last, ticks() & 0xFFFFFFFF, [
            command(0xB0, 'control_mode_change', dict(controller=7, value=100))], 3, journal, j=1, ssrc=ssrc)
        data.sendto(repaired, (host, port + 1))
    else:
        data.sendto(released, (host, port + 1))
    # Receiver feedback comes about once a second: wait for the one that confirms the note-off.
    deadline = time.monotonic() + 2.5
    control.settimeout(0.1)
    while time.monotonic() < deadline:
        try:
            packet, _ = control.recvfrom(2048)
        except socket.timeout:
            continue
        if packet[:4] == b'\xff\xffRS':
            _, _, _, fed, _ = struct.unpack('>2s2sIHH', packet)
            feedback.append(fed)
            if fed == last:
                break
    report['sequence'] = [sequence, last]
    report['feedback'] = feedback
    control.sendto(exchange(b'BY', token, ssrc), (host, port))
    print(json.dumps(report))


# ---- stream: a long performance with recovery journals (scripts/network-midi-test.sh) ----

def ch_n(notes, previous, now):
    """Chapter N (RFC 6295 App. A.6) for one channel's checkpoint history. `notes`: note -> (velocity or 0 for
    an off, extended seq, time), most recent command per note, in the order they happened. Returns (bytes,
    S bit) or None."""
    logs = [(note, vel, seq, when) for note, (vel, seq, when) in notes.items() if vel > 0]
    offs = sorted(note for note, (vel, _, _) in notes.items() if vel == 0)
    if not logs and not offs:
        return None
    logs = logs[-127:]  # oldest first; more than 127 sounding notes at once does not happen here
    b = 0 if any(notes[note][1] == previous for note in offs) else 1
    if offs:
        low, high = offs[0] // 8, offs[-1] // 8
    else:
        low, high = 15, 1  # no OFFBITS; (15, 1) so LEN 127 would still mean 127 logs
    out = bytearray([b << 7 | len(logs), low << 4 | high])
    s_all = b
    for note, vel, seq, when in logs:
        s = 0 if seq == previous else 1
        s_all &= s
        # Y: play a recovered note-on only while it is recent (RFC 4696 §4.2): within a second here.
        y = 1 if now - when < 1.0 else 0
        out += bytes([s << 7 | note, y << 7 | vel])
    if offs:
        bits = bytearray(high - low + 1)
        for note in offs:
            bits[note // 8 - low] |= 0x80 >> (note % 8)
        out += bits
    return bytes(out), s_all


def ch_c(controllers, toggles, previous):
    """Chapter C (App. A.3): CC 64 with the toggle tool (ALT = off/on toggles since the session began, mod 64),
    every other controller with the value tool; logs oldest first. `controllers`: number -> (value, seq)."""
    if not controllers:
        return None
    out = bytearray([0])
    s_all = 1
    for number, (value, seq) in controllers.items():
        s = 0 if seq == previous else 1
        s_all &= s
        if number == 64:
            out += bytes([s << 7 | number, 0x80 | (toggles.get(number, 0) & 0x3F)])  # A=1, T=0: toggle tool
        else:
            out += bytes([s << 7 | number, value & 0x7F])  # A=0: value tool
    out[0] = s_all << 7 | (len(controllers) - 1)
    return bytes(out), s_all


class JournalSender:
    """The recovery journal a sender keeps (RFC 6295 §4, App. A; the closed-loop policy of App. C.2.2.2): the
    checkpoint is the last sequence number the receiver confirmed with RS (the first packet's before any), and
    each packet's journal codes, per channel, the most recent note and controller commands from the checkpoint
    packet through the one before it: chapter N (note logs and OFFBITS) and chapter C (CC 64 by the toggle
    tool, others by value). S bits are 0 on every element coding a command of the previous packet (App. A.1).
    Encoded here by hand, from the RFC's layouts (pymidi builds no journals)."""

    def __init__(self):
        self.history = []  # (extended seq, time, [(status, d1, d2)])
        self.checkpoint = None  # extended
        self.toggles = [dict() for _ in range(16)]  # channel -> controller -> toggle count since session start
        self.values = [dict() for _ in range(16)]

    def confirmed(self, sequence16, last_sent):
        """RS said `sequence16` arrived: it becomes the checkpoint (widened next to the last extended seq)."""
        extended = last_sent - ((last_sent - sequence16) & 0xFFFF)
        if self.checkpoint is None or extended > self.checkpoint:
            self.checkpoint = extended
            self.history = [entry for entry in self.history if entry[0] >= extended]

    def journal(self, sequence, now):
        """The journal for packet `sequence` (extended) as bytes."""
        previous = sequence - 1
        if self.checkpoint is None:
            self.checkpoint = sequence
        channels = {}
        for seq, when, commands in self.history:
            for status, d1, d2 in commands:
                kind, channel = status & 0xF0, status & 0x0F
                notes, controllers = channels.setdefault(channel, ({}, {}))
                if kind in (0x80, 0x90):
                    notes.pop(d1, None)
                    notes[d1] = (d2 if kind == 0x90 else 0, seq, when)
                elif kind == 0xB0:
                    controllers.pop(d1, None)
                    controllers[d1] = (d2, seq)
        body = bytearray()
        count = 0
        s_journal = 1
        for channel in sorted(channels):
            notes, controllers = channels[channel]
            chapters = bytearray()
            toc = 0
            s_channel = 1
            c = ch_c(controllers, self.toggles[channel], previous)
            if c:
                toc |= 0x40
                chapters += c[0]
                s_channel &= c[1]
            n = ch_n(notes, previous, now)
            if n:
                toc |= 0x08
                chapters += n[0]
                s_channel &= n[1]
            if not toc:
                continue
            length = len(chapters) + 3
            body += bytes([s_channel << 7 | channel << 3 | length >> 8, length & 0xFF, toc]) + chapters
            s_journal &= s_channel
            count += 1
        checkpoint = self.checkpoint & 0xFFFF
        if count == 0:
            return bytes([s_journal << 7, checkpoint >> 8, checkpoint & 0xFF])  # empty journal: Y=0, A=0
        return bytes([s_journal << 7 | 0x20 | (count - 1), checkpoint >> 8, checkpoint & 0xFF]) + bytes(body)

    def sent(self, sequence, now, commands):
        self.history.append((sequence, now, commands))
        for status, d1, d2 in commands:
            if status & 0xF0 == 0xB0:
                channel = status & 0x0F
                before = self.values[channel].get(d1, 0)
                if (before >= 64) != (d2 >= 64):
                    self.toggles[channel][d1] = (self.toggles[channel].get(d1, 0) + 1) & 0x3F
                self.values[channel][d1] = d2


def performance(notes, seconds, seed):
    """A known stream as [(time in 100 us ticks, status, d1, d2)], sorted: `notes` notes over `seconds` on
    channels 1 and 2 (durations 50 ms–1.2 s, never the same note twice at once on a channel), channel 1's
    sustain pedal pressed and lifted every 1.5–4 s, channel 2's modulation wheel moved every ~0.4 s and channel
    1's volume now and then. Everything ends before `seconds`: the last note-off and the pedal lifted."""
    rng = random.Random(seed)
    end = seconds - 1.0
    events = []
    busy = {}  # (channel, note) -> until
    starts = sorted(rng.uniform(0.2, end - 1.3) for _ in range(notes))
    for start in starts:
        channel = 0 if rng.random() < 0.7 else 1
        for _ in range(100):
            note = rng.randint(36, 96)
            if busy.get((channel, note), -1) < start:
                break
        length = rng.uniform(0.05, 1.2)
        busy[(channel, note)] = start + length + 0.02
        events.append((start, 0x90 | channel, note, rng.randint(30, 127)))
        # Mostly note-off, sometimes note-on with velocity 0 (both end a note, App. A.6).
        if rng.random() < 0.8:
            events.append((start + length, 0x80 | channel, note, 64))
        else:
            events.append((start + length, 0x90 | channel, note, 0))
    time_at = rng.uniform(0.5, 2.0)
    down = False
    while time_at < end:
        down = not down
        events.append((time_at, 0xB0, 64, 127 if down else 0))
        time_at += rng.uniform(1.5, 4.0)
    events.append((end, 0xB0, 64, 0))  # lifted at the end (again, if it was up: not a toggle)
    time_at = 0.3
    while time_at < end:
        events.append((time_at, 0xB1, 1, rng.randint(0, 127)))
        time_at += rng.uniform(0.2, 0.6)
    for time_at in (rng.uniform(1, end) for _ in range(8)):
        events.append((time_at, 0xB0, 7, rng.randint(80, 127)))
    return sorted((int(when * 10000), status, d1, d2) for when, status, d1, d2 in events)


def packetize(events, window=50, largest=8):
    """Events grouped into packets: those within `window` ticks (5 ms) of the packet's first, at most `largest`;
    each as (time, [(delta from the previous, status, d1, d2)]). Deltas < 128 ticks (pymidi's LEB128 agrees)."""
    packets_out = []
    for when, status, d1, d2 in events:
        if packets_out and when - packets_out[-1][0] < window and len(packets_out[-1][1]) < largest:
            start, commands = packets_out[-1]
            commands.append((when - start, status, d1, d2))
        else:
            packets_out.append((when, [(0, status, d1, d2)]))
    return packets_out


def stream(host, port, notes, seconds, seed=1, barrier=None):
    """An initiator that plays performance() over a real session: IN on both ports (retried every second), three
    CK exchanges and then one every 10 s while playing, each packet built with pymidi.packets and carrying the
    JournalSender's journal, RS moving the checkpoint; after the last event, journal-only packets until RS
    confirms the last one (so the receiver sees every loss as a gap); then, with BARRIER, writes BARRIER.done
    and waits (≤ 60 s) for BARRIER.go before saying BY (on both ports, twice: a lost BY would leave the session
    to the 30 s silence rule)."""
    import os
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    control = socket.socket(family, socket.SOCK_DGRAM)
    data = socket.socket(family, socket.SOCK_DGRAM)
    for sock in (control, data):
        sock.bind(('', 0))
    token = random.getrandbits(32)
    ssrc = random.getrandbits(32) or 1
    name = 'pymidi-stream'
    control_to, data_to = (host, port), (host, port + 1)
    report = dict(ssrc=ssrc, invitations=0, ck_sent=0, ck_completed=0, rs=0, packets=0, guard_packets=0,
                  commands=0, journal_bytes_max=0, journal_bytes_total=0, late_sends_ms_max=0.0,
                  late_sends=[])

    def wait_for(sock, accept, timeout):
        sock.settimeout(0.05)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                reply, _ = sock.recvfrom(4096)
            except socket.timeout:
                continue
            result = accept(reply)
            if result is not None:
                return result
        return None

    for sock, destination in ((control, control_to), (data, data_to)):
        for _ in range(12):
            report['invitations'] += 1
            sock.sendto(exchange(b'IN', token, ssrc, name), destination)
            reply = wait_for(sock, lambda raw: raw if raw[2:4] in (b'OK', b'NO') else None, 1.0)
            if reply is not None:
                break
        else:
            sys.exit(f'no answer from {destination}')
        if reply[2:4] != b'OK':
            sys.exit(f'invitation refused by {destination}')

    pending = {}  # t1 -> sent at

    def on_data(raw):
        if raw[2:4] == b'CK':
            answer = packets.AppleMIDITimestampPacket.parse(raw)
            if answer.count == 1 and answer.timestamp_1 in pending:
                del pending[answer.timestamp_1]
                data.sendto(clock(2, ssrc, answer.timestamp_1, answer.timestamp_2, ticks()), data_to)
                report['ck_completed'] += 1
                return True
        return None

    def sync():
        t1 = ticks()
        pending[t1] = t1
        report['ck_sent'] += 1
        data.sendto(clock(0, ssrc, t1), data_to)

    for _ in range(6):  # three good exchanges, retried when one is lost
        if report['ck_completed'] >= 3:
            break
        sync()
        wait_for(data, on_data, 0.5)

    journal = JournalSender()
    sequence = random.getrandbits(16) + (1 << 16)  # extended; the 16 low bits go on the wire
    first_sequence = sequence
    last_sent = None

    def on_control(raw):
        if raw[2:4] == b'RS' and len(raw) >= 12:
            _, _, _, fed, _ = struct.unpack('>2s2sIHH', raw[:12])
            report['rs'] += 1
            if last_sent is not None:
                journal.confirmed(fed, last_sent)
            return fed
        return None

    def send(commands, when_ticks):
        nonlocal sequence, last_sent
        now = time.monotonic()
        built = [command(status, {0x80: 'note_off', 0x90: 'note_on', 0xB0: 'control_mode_change'}[status & 0xF0],
                         dict(key=d1, velocity=d2) if status & 0xF0 != 0xB0 else dict(controller=d1, value=d2),
                         delta=delta if index else None)
                 for index, (delta, status, d1, d2) in enumerate(commands)]
        length = sum(3 + (1 if index else 0) for index in range(len(commands)))
        body = journal.journal(sequence, now)
        header = dict(rtp_header=dict(flags=dict(v=2, p=0, x=0, cc=0, m=1 if length else 0, pt=0x61),
                                      sequence_number=sequence & 0xFFFF), timestamp=when_ticks & 0xFFFFFFFF,
                      ssrc=ssrc)
        packet = bytearray(packets.MIDIPacket.build(dict(
            header=header, command=dict(flags=dict(b=1 if length > 15 else 0, j=0, z=0, p=0, len=length),
                                        midi_list=built), journal=None)))
        packet[12] |= 0x40  # J: the journal built above follows the MIDI list
        data.sendto(bytes(packet) + body, data_to)
        report['journal_bytes_max'] = max(report['journal_bytes_max'], len(body))
        report['journal_bytes_total'] += len(body)
        journal.sent(sequence, now, [(status, d1, d2) for _, status, d1, d2 in commands])
        last_sent = sequence
        sequence += 1

    def service(until):
        """Reads both sockets until monotonic time `until`."""
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return
            readable, _, _ = select.select([control, data], [], [], left)
            for sock in readable:
                raw, _ = sock.recvfrom(4096)
                if raw[:2] != b'\xff\xff':
                    continue
                (on_control if sock is control else on_data)(raw)

    events = performance(notes, seconds, seed)
    planned = packetize(events)
    report['notes'] = sum(1 for _, status, _, d2 in events if status & 0xF0 == 0x90 and d2 > 0)
    report['pedal_changes'] = sum(1 for _, status, d1, _ in events if status & 0xF0 == 0xB0 and d1 == 64)
    start = time.monotonic() + 0.2
    origin = ticks() + 2000
    next_sync = time.monotonic() + 10
    for when, commands in planned:
        due = start + when / 10000
        service(due)
        if time.monotonic() >= next_sync:
            sync()
            next_sync += 10
        late = (time.monotonic() - due) * 1000
        report['late_sends_ms_max'] = max(report['late_sends_ms_max'], late)
        if late > 10:
            report['late_sends'].append([round(when / 10000, 3), round(late, 1)])
        send(commands, origin + when)
        report['packets'] += 1
        report['commands'] += len(commands)
    # Journal-only packets (an empty MIDI list) until RS confirms the newest one.
    confirmed = False
    for _ in range(10):
        send([], ticks())
        report['guard_packets'] += 1
        report['packets'] += 1
        target = last_sent & 0xFFFF
        deadline = time.monotonic() + 2.5
        while time.monotonic() < deadline:
            fed = wait_for(control, on_control, deadline - time.monotonic())
            if fed == target:
                confirmed = True
                break
        if confirmed:
            break
    report['confirmed_last'] = confirmed
    report['sequence'] = [first_sequence & 0xFFFF, last_sent & 0xFFFF]
    report['mean_journal_bytes'] = round(report.pop('journal_bytes_total') / max(1, report['packets']), 1)
    report['late_sends_ms_max'] = round(report['late_sends_ms_max'], 2)
    if barrier:
        with open(barrier + '.done', 'w') as file:
            json.dump(report, file)
        deadline = time.monotonic() + 60
        while not os.path.exists(barrier + '.go') and time.monotonic() < deadline:
            time.sleep(0.05)
    for _ in range(2):
        control.sendto(exchange(b'BY', token, ssrc), control_to)
        data.sendto(exchange(b'BY', token, ssrc), data_to)
        time.sleep(0.1)
    print(json.dumps(report))


# ---- server: pymidi's own server for Aulos to invite (Tests/AulosNetworkMIDITests/InitiatorInteropTests.swift) ----

def server(host, port, seconds, play=False):
    import logging
    from pymidi.server import Handler, Server

    report = dict(connected=[], disconnected=[], accepted=dict(control=[], data=[]), ck2=0, sent=[], exited=[])

    class Seen(Handler):
        def on_peer_connected(self, peer):
            report['connected'].append(dict(name=peer.name, ssrc=peer.ssrc, addr=list(peer.addr[:2])))

        def on_peer_disconnected(self, peer):
            report['disconnected'].append(dict(name=peer.name, ssrc=peer.ssrc))

    class Records(logging.Handler):
        def emit(self, record):
            message = record.getMessage()
            side = 'control' if record.name.endswith('ControlProtocol') else 'data'
            if message.startswith('Accepted connection from'):
                report['accepted'][side].append(message)
            elif message.startswith('offset estimate'):
                report['ck2'] += 1
            elif message.startswith('Peer ') and message.endswith(' exited'):
                report['exited'].append(side)

    logging.getLogger('pymidi').addHandler(Records())
    logging.getLogger('pymidi').setLevel(logging.DEBUG)
    pymidi_server = Server([(host, port)])
    pymidi_server.add_handler(Seen())
    pymidi_server._init_protocols()
    control, data = pymidi_server.ipv6_protocols if ':' in host else pymidi_server.ipv4_protocols
    print(json.dumps(dict(listening=[host, port], control_ssrc=control.ssrc, data_ssrc=data.ssrc)), flush=True)
    report.update(control_ssrc=control.ssrc, data_ssrc=data.ssrc)
    deadline = time.monotonic() + seconds
    note_off_at = None
    sequence = random.getrandbits(16)
    while time.monotonic() < deadline:
        pymidi_server._loop_once(timeout=0.02)
        if report['disconnected']:
            break
        peers = list(data.peers_by_ssrc.values())
        if play and peers and report['ck2'] >= 3 and not report['sent']:
            addr = peers[0].addr
            on = midi(sequence, int(time.time() * 10000) & 0xFFFFFFFF,
                      [command(0x90, 'note_on', dict(key=60, velocity=100))], 3, ssrc=data.ssrc)
            data.socket.sendto(on, addr)
            report['sent'].append(dict(kind='note_on', sequence=sequence, addr=list(addr[:2])))
            note_off_at = time.monotonic() + 0.3
        if note_off_at is not None and time.monotonic() >= note_off_at and peers:
            off = midi((sequence + 1) & 0xFFFF, int(time.time() * 10000) & 0xFFFFFFFF,
                       [command(0x80, 'note_off', dict(key=60, velocity=0))], 3, ssrc=data.ssrc)
            data.socket.sendto(off, peers[0].addr)
            report['sent'].append(dict(kind='note_off', sequence=(sequence + 1) & 0xFFFF))
            note_off_at = None
    report['data_peers_at_end'] = len(data.peers_by_ssrc)
    print(json.dumps(report), flush=True)


if __name__ == '__main__':
    if sys.argv[1:2] == ['build']:
        build()
    elif sys.argv[1:2] == ['parse'] and len(sys.argv) >= 3:
        parse(sys.argv[2], sys.argv[3:])
    elif sys.argv[1:2] == ['session'] and len(sys.argv) in (4, 5, 6) and sys.argv[5:] in ([], ['drop']):
        session(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]) if len(sys.argv) >= 5 else 1.0,
                drop=sys.argv[5:] == ['drop'])
    elif sys.argv[1:2] == ['server'] and len(sys.argv) in (5, 6) and sys.argv[5:] in ([], ['play']):
        server(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), play=sys.argv[5:] == ['play'])
    elif sys.argv[1:2] == ['stream'] and 6 <= len(sys.argv) <= 8:
        stream(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]),
               int(sys.argv[6]) if len(sys.argv) >= 7 else 1, sys.argv[7] if len(sys.argv) >= 8 else None)
    else:
        sys.exit(__doc__)
