import AulosIO
import AulosMIDI

/// Network MIDI as a live instrument's MIDI input (`LiveMIDISource`): an `AppleMIDIHost` on sockets bound
/// beforehand (so a port in use is said when the command starts), each peer's session a source of its own.
/// MIDI clock is not sent over the network.
///
/// Threads: the control thread, for every member; the host's network thread calls the receiver.
public final class NetworkMIDISource: LiveMIDISource {
    public let host: AppleMIDIHost

    public init(_ host: AppleMIDIHost) { self.host = host }

    /// How to open network MIDI on `sockets` (bound by the command line) with `options`.
    public static func opener(_ sockets: AppleMIDISockets, options: AppleMIDIHost.Options = .init())
        -> LiveMIDISourceOpener
    {
        { receiver in NetworkMIDISource(AppleMIDIHost(sockets: sockets, receiver: receiver, options: options)) }
    }

    public var isStarted: Bool { host.isStarted }
    public func start() throws { try host.start() }
    public func stop() { host.stop() }
    public func takeNotices() -> [MIDIInputNotice] { host.takeNotices() }
    public func sendClock(from clockOutput: MIDIClockOutput) {}
    public var worstReadDelayNanos: Int64 { 0 }
    public var listensToSequencer: Bool { false }

    public var networkSessions: [NetworkSessionCounters]? {
        host.sessionStatuses.map { status in
            NetworkSessionCounters(
                peerName: status.peerName, address: status.peer, kind: "AppleMIDI", packets: status.packets,
                lost: status.lostPackets, repaired: status.journalRepairs,
                latencyMs: status.lastTransitMicros.map { Double($0) / 1000 },
                clockRoundTripMs: status.oneWayLatencyMicros.map { Double($0 * 2) / 1000 })
        }
    }
}
