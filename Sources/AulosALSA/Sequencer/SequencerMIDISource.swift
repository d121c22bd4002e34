import AulosIO
import AulosMIDI

/// The ALSA sequencer as the live instrument's MIDI input (`LiveMIDISource`): a `SequencerInput` whose
/// notices are told in the driver-neutral words the playback layer knows.
///
/// Threads: the control thread (the input's own MIDI thread calls the receiver).
public final class SequencerMIDISource: LiveMIDISource {
    public let input: SequencerInput

    public init(_ input: SequencerInput) { self.input = input }

    /// How to open the sequencer with `options` (the command line hands this to the live instrument).
    public static func opener(_ options: SequencerInput.Options) -> LiveMIDISourceOpener {
        { receiver in SequencerMIDISource(try SequencerInput(options: options, receiver: receiver)) }
    }

    public var isStarted: Bool { input.isStarted }
    public func start() throws { try input.start() }
    public func stop() { input.stop() }
    public func sendClock(from clockOutput: MIDIClockOutput) { input.sendClock(from: clockOutput) }
    public var worstReadDelayNanos: Int64 { input.worstReadDelayNanos }
    public func takeNotices() -> [MIDIInputNotice] { input.takeNotices().map(Self.notice) }

    /// A sequencer notice in the playback layer's words.
    public static func notice(_ notice: SequencerInput.Notice) -> MIDIInputNotice {
        switch notice {
        case .listening(let address, let connected): .listening(address: "\(address)", connected: connected)
        case .connected(let port): .connected(name(port))
        case .connectFailed(let port, let reason): .connectFailed(name(port), reason: reason)
        case .disconnected(let port, let notes): .disconnected(name(port), releasedNotes: notes)
        case .subscribed(let address, let name):
            .subscribed(MIDIPortName(client: address.client, port: address.port, clientName: name, portName: ""))
        case .inputOverflow: .inputOverflow
        }
    }

    static func name(_ port: SequencerPort) -> MIDIPortName {
        MIDIPortName(
            client: port.address.client, port: port.address.port, clientName: port.clientName, portName: port.portName)
    }
}
