import AulosIO
import AulosMIDI

/// What a network MIDI host offers its live input: its thread started and stopped, its notices, and its sessions'
/// counters as the status shows them. `AppleMIDIHost` and `NetworkMIDI2Host` are both one.
///
/// Threads: the control thread.
public protocol NetworkMIDIHosting: AnyObject, Sendable {
    var isStarted: Bool { get }
    func start() throws(AppleMIDIHostError)
    func stop()
    func takeNotices() -> [MIDIInputNotice]
    /// The sessions open now, as `aulos status` and the panel show them.
    var sessionCounters: [NetworkSessionCounters] { get }
}

/// Network MIDI as a live instrument's MIDI input (`LiveMIDISource`): an AppleMIDI or Network MIDI 2.0 host on
/// sockets bound beforehand (so a port in use is said when the command starts), each peer's session a source of
/// its own. Nothing is sent back but the protocols' own answers (no MIDI clock).
///
/// Threads: the control thread, for every member; the host's network thread calls the receiver.
public final class NetworkMIDISource: LiveMIDISource {
    public let host: any NetworkMIDIHosting

    public init(_ host: any NetworkMIDIHosting) { self.host = host }

    /// How to open AppleMIDI on `sockets` (bound by the command line) with `options`.
    public static func opener(_ sockets: AppleMIDISockets, options: AppleMIDIHost.Options = .init())
        -> LiveMIDISourceOpener
    {
        { receiver in NetworkMIDISource(AppleMIDIHost(sockets: sockets, receiver: receiver, options: options)) }
    }

    /// How to open Network MIDI 2.0 on `socket` (bound by the command line) with `options`.
    public static func opener(_ socket: NetworkMIDI2Socket, options: NetworkMIDI2Host.Options = .init())
        -> LiveMIDISourceOpener
    {
        { receiver in NetworkMIDISource(NetworkMIDI2Host(socket: socket, receiver: receiver, options: options)) }
    }

    public var isStarted: Bool { host.isStarted }
    public func start() throws { try host.start() }
    public func stop() { host.stop() }
    public func takeNotices() -> [MIDIInputNotice] { host.takeNotices() }
    public func sendClock(from clockOutput: MIDIClockOutput) {}
    public var worstReadDelayNanos: Int64 { 0 }
    public var listensToSequencer: Bool { false }
    public var networkSessions: [NetworkSessionCounters]? { host.sessionCounters }
}

extension AppleMIDIHost: NetworkMIDIHosting {
    public var sessionCounters: [NetworkSessionCounters] {
        sessionStatuses.map { status in
            NetworkSessionCounters(
                peerName: status.peerName, address: status.peer, kind: "AppleMIDI", packets: status.packets,
                lost: status.lostPackets, repaired: status.journalRepairs,
                latencyMs: status.lastTransitMicros.map { Double($0) / 1000 },
                clockRoundTripMs: status.oneWayLatencyMicros.map { Double($0 * 2) / 1000 })
        }
    }
}

extension NetworkMIDI2Host: NetworkMIDIHosting {
    /// UMP data commands as packets, those given up as lost, and gaps filled by retransmission as repaired (a copy
    /// taken from the next datagram, forward error correction, never showed as a gap). Network MIDI 2.0 has no
    /// clock exchange and its UMP carries no sender's time here: no latencies.
    public var sessionCounters: [NetworkSessionCounters] {
        sessionStatuses.map { status in
            NetworkSessionCounters(
                peerName: status.peerName, address: status.peer, kind: "Network MIDI 2.0", packets: status.commands,
                lost: status.lostCommands, repaired: status.recoveredByRetransmit, latencyMs: nil,
                clockRoundTripMs: nil)
        }
    }
}
