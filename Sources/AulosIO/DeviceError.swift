import AulosCore

/// A sound device that cannot be used, as one line saying what to do: missing (no card, no driver, a name
/// no configuration defines), busy (another program has it), refused (permission, or none of the formats,
/// rates and periods offered).
///
/// Threads: a value.
public struct DeviceError: ReportableError, Equatable, Sendable {
    public enum Kind: Sendable, Equatable {
        /// Not there (yet): a service waits for it.
        case missing
        /// Held by another program.
        case busy
        /// There, but it will not play what was asked (format, rate, period) or will not let us.
        case refused
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The same failure where the audio-unit API reports it (initialize, start): Core Audio's code for the
    /// kind, the same message.
    public var unitError: AudioUnitError {
        AudioUnitError(kind == .refused ? .formatNotSupported : .noConnection, message)
    }
}
