import AulosCore

/// A command that could not do its job for a reason of its own (a file it cannot write, a folder it cannot
/// find), as one line; printed like every other error, exit status 1.
struct CommandError: ReportableError {
    let message: String

    init(_ message: String) { self.message = message }
}
