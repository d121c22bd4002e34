/// An error whose `message` is one line a person can act on: what went wrong, where, and what to do.
///
/// Every error kind a user can meet conforms — input files, devices, the sequencer, rigs, the control
/// socket, installing, and the unit API itself (`AudioUnitError`, whose Core Audio status code stays out
/// of the message) — and the command line prints `message` as it is.
///
/// Threads: values, thrown on control threads.
public protocol ReportableError: Error, CustomStringConvertible {
    var message: String { get }
}

extension ReportableError {
    public var description: String { message }
}

extension AudioUnitError: ReportableError {
    /// The detail alone: a person acts on what went wrong, not on Core Audio's code for it.
    public var message: String { detail }
}
