#!/usr/bin/env python3
"""A userspace UDP relay with delay, jitter and loss, for the network MIDI test (scripts/network-midi-test.sh):
it stands in for `tc qdisc … netem`, which this project's CI kernel lacks (CONFIG_NET_SCH_NETEM unset). Standard
library only.

  udp-relay.py --listen HOST:PORT[,PORT…] --target HOST:PORT[,PORT…] [--delay-ms 5] [--jitter-ms 2]
               [--loss 0.01] [--seed 1] [--stats FILE] [--reorder]

Each listening port i forwards to target port i (for AppleMIDI: the control port and the data port). Every
client (source address and port) that sends to a listening port gets its own socket towards the target, so the
target's answers come back to that socket and are relayed to the client from the listening port: a UDP proxy,
both directions. Every datagram, both ways, waits DELAY ± JITTER ms (uniform) and is dropped with probability
LOSS. The decisions come from one random generator per port and direction, seeded from --seed, so the same
traffic gets the same drops on every run. Without --reorder a datagram never overtakes the one before it in the
same direction (its delay is stretched instead), as on a link without reordering; with it, jitter may reorder.

Counts per port and direction: forwarded and dropped datagrams, split into AppleMIDI session packets (FF FF …:
IN/OK/BY/CK/RS) and RTP-MIDI packets, and the RTP sequence numbers dropped. They are written as JSON to --stats
(and stdout) when the relay gets SIGTERM or SIGINT, and to --stats every second while it runs.
"""
import argparse
import heapq
import json
import random
import select
import signal
import socket
import sys
import time


def endpoint(text):
    host, _, ports = text.rpartition(':')
    return host.strip('[]'), [int(port) for port in ports.split(',')]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--listen', required=True)
    parser.add_argument('--target', required=True)
    parser.add_argument('--delay-ms', type=float, default=0.0)
    parser.add_argument('--jitter-ms', type=float, default=0.0)
    parser.add_argument('--loss', type=float, default=0.0, help='drop probability, 0…1, both directions')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--stats')
    parser.add_argument('--reorder', action='store_true')
    args = parser.parse_args()
    listen_host, listen_ports = endpoint(args.listen)
    target_host, target_ports = endpoint(args.target)
    if len(listen_ports) != len(target_ports):
        sys.exit('udp-relay: --listen and --target need as many ports')
    family = socket.AF_INET6 if ':' in target_host else socket.AF_INET

    listeners = []
    for port in listen_ports:
        sock = socket.socket(socket.AF_INET6 if ':' in listen_host else socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((listen_host, port))
        sock.setblocking(False)
        listeners.append(sock)
    # (listener index, client address) -> upstream socket; upstream fileno -> (index, client, socket)
    upstream = {}
    by_fd = {}
    stats = {}
    generators = {}
    last_due = {}
    for index, port in enumerate(listen_ports):
        for direction in ('out', 'back'):
            key = f'{port}/{direction}'
            stats[key] = dict(forwarded=0, dropped=0, forwarded_rtp=0, dropped_rtp=0, forwarded_session=0,
                              dropped_session=0, dropped_rtp_sequence=[])
            generators[key] = random.Random(f'{args.seed}/{index}/{direction}')
    queue = []  # (due, order, socket, bytes, address)
    order = 0
    delay = args.delay_ms / 1000
    jitter = args.jitter_ms / 1000

    def write_stats():
        out = dict(delay_ms=args.delay_ms, jitter_ms=args.jitter_ms, loss=args.loss, seed=args.seed,
                   ports=stats)
        if args.stats:
            with open(args.stats + '.tmp', 'w') as file:
                json.dump(out, file)
            import os
            os.replace(args.stats + '.tmp', args.stats)
        return out

    def stop(*_):
        print(json.dumps(write_stats()))
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def admit(key, sock, data, address):
        nonlocal order
        generator = generators[key]
        # Two draws per datagram whatever the outcome, so one decision never shifts the next ones.
        lose = generator.random() < args.loss
        wobble = (generator.random() * 2 - 1) * jitter
        count = stats[key]
        kind = 'session' if data[:2] == b'\xff\xff' else 'rtp'
        if lose:
            count['dropped'] += 1
            count['dropped_' + kind] += 1
            if kind == 'rtp' and len(data) >= 4:
                count['dropped_rtp_sequence'].append(int.from_bytes(data[2:4], 'big'))
            return
        count['forwarded'] += 1
        count['forwarded_' + kind] += 1
        due = time.monotonic() + max(0.0, delay + wobble)
        if not args.reorder:
            due = max(due, last_due.get(key, 0.0))
            last_due[key] = due
        order += 1
        heapq.heappush(queue, (due, order, sock, data, address))

    next_stats = time.monotonic() + 1
    while True:
        now = time.monotonic()
        while queue and queue[0][0] <= now:
            _, _, sock, data, address = heapq.heappop(queue)
            try:
                sock.sendto(data, address)
            except OSError:
                pass  # the far end is gone (ICMP unreachable): a loss the counts do not show
        if now >= next_stats:
            write_stats()
            next_stats = now + 1
        timeout = min(queue[0][0] - now if queue else 0.1, next_stats - now)
        readable, _, _ = select.select(listeners + [entry[2] for entry in by_fd.values()], [], [],
                                       max(0.0, timeout))
        for sock in readable:
            while True:
                try:
                    data, address = sock.recvfrom(65536)
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:
                    break  # ICMP port unreachable from the target, reported on the next read
                if sock in listeners:
                    index = listeners.index(sock)
                    link = upstream.get((index, address))
                    if link is None:
                        link = socket.socket(family, socket.SOCK_DGRAM)
                        link.bind(('', 0))
                        link.setblocking(False)
                        upstream[(index, address)] = link
                        by_fd[link.fileno()] = (index, address, link)
                    admit(f'{listen_ports[index]}/out', link, data, (target_host, target_ports[index]))
                else:
                    index, client, _ = by_fd[sock.fileno()]
                    admit(f'{listen_ports[index]}/back', listeners[index], data, client)


if __name__ == '__main__':
    main()
