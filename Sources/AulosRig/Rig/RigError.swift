import AulosCore

/// A rig or rig set that cannot be read or built, as one line a person can act on: the file, line and key
/// (`stage.yaml:12: parts[1].keys: 'C4' must be LOW-HIGH notes, like C2-B4 or 36-71`), or the part and
/// what to give it (`no SoundFont found for part 'Piano'; give one with soundfont: …`).
///
/// Threads: a value.
public struct RigError: ReportableError, Equatable, Sendable {
    public let message: String

    public init(_ message: String) { self.message = message }

}
