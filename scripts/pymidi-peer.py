#!/usr/bin/env python3
"""pymidi (PyPI 0.5.0) as the network MIDI tests' independent peer: it builds AppleMIDI and RTP-MIDI packets with
its own `packets` module, and parses the packets Aulos's encoder built, printing JSON for the Swift tests
(Tests/AulosNetworkMIDITests/PymidiInteropTests.swift). Run by the tests with the Python that has pymidi
(scripts/setup.sh --tests installs it in .build-pymidi/venv).

  pymidi-peer.py build                 -> {"name": "hex", ...}
  pymidi-peer.py parse KIND HEX ...    -> [{fields}, ...]   KIND: exchange | timestamp | midi
  pymidi-peer.py session HOST PORT [HOLD] [drop]  -> {what the session did}

`session` is an initiator over real UDP against an AppleMIDI responder (aulos play --network-midi): IN on the
control port and then the data port (resent every second, up to 12 times, as Apple's initiators do), three CK
exchanges on CLOCK_MONOTONIC in 100 us ticks, then a note-on (C4, velocity 100) with a controller (CC 1 = 64),
the note-off HOLD seconds later (default 1), and BY. Every packet is built and every answer parsed by
`pymidi.packets`; the sockets are driven here, because pymidi's own client is a stub with bugs (brief 3.6 B4).
With `drop` the packet with the note-off is never sent: the next one (CC 7 = 100) carries a recovery journal
whose chapter N has the note's OFFBITS, so the receiver must repair the loss to end the note.

pymidi's known deviations (docs in the tests): delta times are LEB128 (only deltas < 128 agree with RFC 6295),
Z is ignored, program change / pitch bend / SysEx swallow the rest of the list, only one channel journal is read
and the system journal is gated on S instead of Y, names are ASCII only.
"""
import json
import random
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


if __name__ == '__main__':
    if sys.argv[1:2] == ['build']:
        build()
    elif sys.argv[1:2] == ['parse'] and len(sys.argv) >= 3:
        parse(sys.argv[2], sys.argv[3:])
    elif sys.argv[1:2] == ['session'] and len(sys.argv) in (4, 5, 6) and sys.argv[5:] in ([], ['drop']):
        session(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]) if len(sys.argv) >= 5 else 1.0,
                drop=sys.argv[5:] == ['drop'])
    else:
        sys.exit(__doc__)
