import AulosCore

/// A MIDI message at an absolute sample time: what a MIDI file or a score becomes once its tempo map is
/// applied at a sample rate, and what the offline renderer feeds the scheduler.
public struct ScheduledMessage: Equatable, Sendable {
    public var sampleTime: Int64
    public var message: MIDIMessage

    public init(sampleTime: Int64, message: MIDIMessage) {
        self.sampleTime = sampleTime
        self.message = message
    }
}

/// A parse error in a MIDI file or score, with where it happened, as one line for a person.
public struct MIDIFileError: ReportableError, Equatable, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
}
