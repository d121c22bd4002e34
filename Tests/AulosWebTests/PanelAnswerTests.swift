import AulosPlayback
import FlyingFox
import Testing

@testable import AulosWeb

/// The panel's HTTP answer to a control reply: its status code from the reply's kind, never from its text.
struct PanelAnswerTests {
    @Test func statusCodesComeFromTheReplysKind() {
        var done = ControlReply.Done()
        done.rig = "Grand Piano"
        #expect(PanelAPI.answer(.done(done)).statusCode == .ok)
        #expect(PanelAPI.answer(.failure(ControlFailure("no rig 'x'"))).statusCode == .badRequest)
        #expect(
            PanelAPI.answer(.failure(ControlFailure("waiting for the audio device", reason: .unavailable))).statusCode
                == .serviceUnavailable)
    }
}
