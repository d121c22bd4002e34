import AulosCore
import Testing

/// The render path returns raw status codes (it must not build an error's message); they are Core Audio's.
@Suite struct RenderStatusTests {
    @Test func renderStatusConstantsMatchTheErrorCodes() {
        #expect(RenderStatus.invalidElement == AudioUnitError.Code.invalidElement.rawValue)
        #expect(RenderStatus.noConnection == AudioUnitError.Code.noConnection.rawValue)
        #expect(RenderStatus.tooManyFramesToProcess == AudioUnitError.Code.tooManyFramesToProcess.rawValue)
        #expect(RenderStatus.uninitialized == AudioUnitError.Code.uninitialized.rawValue)
    }
}
