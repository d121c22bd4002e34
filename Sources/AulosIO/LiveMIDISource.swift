import AulosMIDI

/// A MIDI input the live instrument listens to beside the audio driver's own port: the ALSA sequencer (USB
/// keyboards, programs that play into it). The host — the command line — says how to open one
/// (`LiveMIDISourceOpener`); the live session opens it, starts and stops it and relays its notices without
/// knowing which it is, so the playback layer imports no driver.
///
/// Threads: the control thread, for every member; the source calls its receiver on a thread of its own.
public protocol LiveMIDISource: AnyObject {
    /// Whether `start` ran (a reload keeps a started source running).
    var isStarted: Bool { get }
    func start() throws
    /// Stops listening and releases, through the receiver, what every source still holds.
    func stop()
    /// What happened to connections since the last call, oldest first.
    func takeNotices() -> [MIDIInputNotice]
    /// Sends MIDI clock from `clockOutput` on the source's readable port (Aulos as clock master), if it has one.
    func sendClock(from clockOutput: MIDIClockOutput)
    /// The longest a message waited between arriving and being read (ns): how late the input's thread ran.
    var worstReadDelayNanos: Int64 { get }
    /// Whether the ALSA sequencer is among what it listens to (status says "no ALSA sequencer yet" if not).
    var listensToSequencer: Bool { get }
    /// The network MIDI sessions open now, with their counters; nil for an input that has no network.
    var networkSessions: [NetworkSessionCounters]? { get }
}

extension LiveMIDISource {
    public var listensToSequencer: Bool { true }
    public var networkSessions: [NetworkSessionCounters]? { nil }
}

/// Opens the live MIDI input, handing what arrives to `receiver`. Throws a one-line `ReportableError` when
/// there is none (yet): an unattended instrument tries again.
public typealias LiveMIDISourceOpener = @Sendable (_ receiver: any MIDIReceiver) throws -> any LiveMIDISource

/// A port of a MIDI input, as its notices name it.
public struct MIDIPortName: Hashable, Sendable, CustomStringConvertible {
    /// Where it is (the sequencer's client and port), for ordering and as a key.
    public var client: Int
    public var port: Int
    public var clientName: String
    public var portName: String

    public init(client: Int, port: Int, clientName: String, portName: String) {
        self.client = client
        self.port = port
        self.clientName = clientName
        self.portName = portName
    }

    /// Where network MIDI sessions are numbered from (`client` = this + the session's number): above every
    /// sequencer client.
    public static let networkClientBase = 0x10000

    /// A network MIDI session rather than a sequencer port.
    public var isNetwork: Bool { client >= Self.networkClientBase }

    /// `client:port`.
    public var address: String { "\(client):\(port)" }
    public var description: String { "\(address) \(clientName): \(portName)" }
}

/// What happened to a MIDI input's connections, for the control thread to report.
public enum MIDIInputNotice: Equatable, Sendable {
    /// Started: where programs can play into Aulos (`client:port`), and how many ports it connected to itself.
    case listening(address: String, connected: Int)
    case connected(MIDIPortName)
    case connectFailed(MIDIPortName, reason: String)
    /// The port went away; the keys it held down were released.
    case disconnected(MIDIPortName, releasedNotes: Int)
    /// Another program subscribed to (or played into) our input port.
    case subscribed(MIDIPortName)
    /// The input's buffer overflowed: events were lost (its thread fell behind).
    case inputOverflow
    /// Network MIDI (AppleMIDI sessions) listens on this address and port.
    case networkListening(address: String)
    /// Network MIDI inviting a peer (Aulos the initiator): what became of the invitation, as the words that follow
    /// the peer's name (`AppleMIDI 192.168.1.5:5004`, `does not answer the invitation …`).
    case networkInvitation(peer: String, event: String)
    /// Network MIDI 2.0 (UMP over UDP) listens on this address and port.
    case networkMIDI2Listening(address: String)
    /// A MIDI input that could not be opened while another plays on (no ALSA sequencer beside network MIDI).
    case unavailable(input: String, reason: String)
}
