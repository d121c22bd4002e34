import AulosCore
import Testing

/// Expects `body` to throw an AudioUnitError with `code` and a message that says something.
public func expectError(
    _ code: AudioUnitError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) {
    do {
        try body()
        Issue.record("expected \(code.name), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as AudioUnitError {
        #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
        #expect(!error.detail.isEmpty, sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code.name), got \(error)", sourceLocation: sourceLocation)
    }
}
