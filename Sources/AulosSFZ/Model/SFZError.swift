import AulosCore

/// Anything wrong with an SFZ library, as one line a person can act on: `file:line: problem; what to do`.
///
/// Threads: a value, thrown on the control thread that loads the library.
public struct SFZError: ReportableError, Equatable, Sendable {
    public let message: String
    /// A sample or `#include` outside the root folder: loading with a wider root may succeed
    /// (`SFZLibrary.load(findingRootOf:)`).
    public var leavesRoot = false

    public init(_ message: String, leavesRoot: Bool = false) {
        self.message = message
        self.leavesRoot = leavesRoot
    }
}
