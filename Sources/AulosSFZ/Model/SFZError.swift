import AulosCore

/// Anything wrong with an SFZ library, as one line a person can act on: `file:line: problem; what to do`.
///
/// Threads: a value, thrown on the control thread that loads the library.
public struct SFZError: ReportableError, Equatable, Sendable {
    public let message: String

    public init(_ message: String) { self.message = message }
}
