import AulosIO
import AulosMIDI

/// Network MIDI 2.0 as a live instrument's MIDI input (`LiveMIDISource`): a `NetworkMIDI2Host` on a socket bound
/// beforehand (so a port in use is said when the command starts), each client's session a source of its own.
/// Nothing is sent back but the protocol's own answers (no MIDI clock).
///
/// Threads: the control thread, for every member; the host's network thread calls the receiver.
public final class NetworkMIDI2Source: LiveMIDISource {
    public let host: NetworkMIDI2Host

    public init(_ host: NetworkMIDI2Host) { self.host = host }

    /// How to open Network MIDI 2.0 on `socket` (bound by the command line) with `options`.
    public static func opener(_ socket: NetworkMIDI2Socket, options: NetworkMIDI2Host.Options = .init())
        -> LiveMIDISourceOpener
    {
        { receiver in NetworkMIDI2Source(NetworkMIDI2Host(socket: socket, receiver: receiver, options: options)) }
    }

    public var isStarted: Bool { host.isStarted }
    public func start() throws { try host.start() }
    public func stop() { host.stop() }
    public func takeNotices() -> [MIDIInputNotice] { host.takeNotices() }
    public func sendClock(from clockOutput: MIDIClockOutput) {}
    public var worstReadDelayNanos: Int64 { 0 }
    public var listensToSequencer: Bool { false }

    /// The sessions for the status: UMP data commands as packets, those given up as lost, and gaps filled by
    /// retransmission as repaired (a copy taken from the next datagram, forward error correction, never showed as
    /// a gap). Network MIDI 2.0 has no clock exchange and its UMP carries no sender's time here: no latencies.
    public var networkSessions: [NetworkSessionCounters]? {
        host.sessionStatuses.map { status in
            NetworkSessionCounters(
                peerName: status.peerName, address: status.peer, kind: "Network MIDI 2.0", packets: status.commands,
                lost: status.lostCommands, repaired: status.recoveredByRetransmit, latencyMs: nil,
                clockRoundTripMs: nil)
        }
    }
}
