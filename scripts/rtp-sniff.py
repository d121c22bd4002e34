#!/usr/bin/env python3
"""Logs the RTP-MIDI sequence numbers that arrive on one network interface, for the netem mode of
scripts/network-midi-test.sh: netem drops at random (unseeded) and only counts how many it dropped; which
sequence numbers never arrived, and so the loss events (runs of consecutive lost packets) a receiver must repair
from the recovery journal, are seen here, beside the receiver and independently of it. Standard library only;
needs CAP_NET_RAW (root). Linux only (AF_PACKET).

  rtp-sniff.py INTERFACE PORT OUT.json

Every IPv4 UDP datagram to PORT arriving on INTERFACE whose payload starts as an RTP-MIDI packet (version 2,
payload type 0x61, either marker bit) adds its sequence number to a list, in arrival order. OUT.json is written
once when the socket is listening ({"received": []}: the caller can wait for it) and again, whole, on SIGTERM
or SIGINT: {"interface", "port", "received": [...], "other": datagrams to PORT that were not RTP-MIDI}.
"""
import json
import os
import signal
import socket
import struct
import sys

ETH_P_IP = 0x0800
PACKET_OUTGOING = 4


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split('\n\n')[1])
    interface, port, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    # SOCK_DGRAM: the link-layer header is removed, the data starts at the IP header.
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_IP))
    sock.bind((interface, ETH_P_IP))
    sock.settimeout(0.2)
    received = []
    other = 0
    stopping = []

    def write():
        # Written to a temporary name and renamed, so a reader never sees half a file.
        with open(out + '.tmp', 'w') as file:
            json.dump(dict(interface=interface, port=port, received=received, other=other), file)
        os.replace(out + '.tmp', out)

    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))
    write()
    while not stopping:
        try:
            data, address = sock.recvfrom(65535)
        except (socket.timeout, InterruptedError):
            continue
        if address[2] == PACKET_OUTGOING or len(data) < 20 or data[0] >> 4 != 4 or data[9] != 17:
            continue
        header = (data[0] & 0x0F) * 4
        if struct.unpack('>H', data[6:8])[0] & 0x1FFF:
            continue  # a later fragment has no UDP header (these datagrams are never fragmented)
        udp = data[header:header + 8]
        if len(udp) < 8 or struct.unpack('>H', udp[2:4])[0] != port:
            continue
        payload = data[header + 8:]
        if len(payload) >= 12 and payload[0] & 0xC0 == 0x80 and payload[1] & 0x7F == 0x61:
            received.append(struct.unpack('>H', payload[2:4])[0])
        else:
            other += 1
    write()


if __name__ == '__main__':
    main()
