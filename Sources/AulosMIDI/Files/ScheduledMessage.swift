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
    /// What kind of refusal: a forgiving reader refuses only files that are not MIDI files at all and files
    /// whose events lie past `InputTimeLimit`; everything else it reads past.
    public enum Kind: Equatable, Sendable {
        /// Not a Standard MIDI File: no `MThd`, empty, truncated or broken inside the header.
        case notAMIDIFile
        /// A deviation from the Standard MIDI File specification inside the file (strict reading).
        case deviation
        /// An event placed further in than any input may go.
        case pastTheTimeLimit
    }

    public let message: String
    public let kind: Kind

    public init(_ message: String, kind: Kind = .deviation) {
        self.message = message
        self.kind = kind
    }
}
