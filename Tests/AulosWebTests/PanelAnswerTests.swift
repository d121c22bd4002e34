import AulosPlayback
import Testing

@testable import AulosWeb

/// The panel's HTTP answer to a control reply: its status code from the reply's kind, never from its text.
struct PanelAnswerTests {
    @Test func statusCodesComeFromTheReplysKind() {
        var done = ControlReply.Done()
        done.rig = "Grand Piano"
        #expect(PanelAPI.answer(.done(done)).status == 200)
        #expect(PanelAPI.answer(.failure(ControlFailure("no rig 'x'"))).status == 400)
        #expect(
            PanelAPI.answer(.failure(ControlFailure("waiting for the audio device", reason: .unavailable))).status
                == 503)
    }
}
