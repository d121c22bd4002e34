import AulosCore
import AulosIO
import AulosMIDI
import Testing

/// A receiver that takes nothing. Threads: any.
private final class NoReceiver: MIDIReceiver, @unchecked Sendable {
    func receive(_ message: ChannelMessage, from source: MIDISource, arrivalNanos: Int64) {}
    func receive(system message: MIDIMessage, from source: MIDISource, arrivalNanos: Int64) {}
    func sourceEnded(_ source: MIDISource, arrivalNanos: Int64) -> Int { 0 }
}

/// A MIDI input that counts what it is asked and says what it is told to. Threads: the test's.
private final class FakeSource: LiveMIDISource, @unchecked Sendable {
    var isStarted = false
    var starts = 0
    var stops = 0
    var notices: [MIDIInputNotice]

    init(_ notices: [MIDIInputNotice]) { self.notices = notices }

    func start() throws {
        isStarted = true
        starts += 1
    }
    func stop() {
        isStarted = false
        stops += 1
    }
    func takeNotices() -> [MIDIInputNotice] {
        defer { notices = [] }
        return notices
    }
    func sendClock(from clockOutput: MIDIClockOutput) {}
    var worstReadDelayNanos: Int64 { 7 }
}

/// Why the fake sequencer cannot open. Threads: a value.
private struct Missing: ReportableError {
    var message: String { "no ALSA sequencer: /dev/snd/seq is missing" }
}

/// The live instrument's input made of the ALSA sequencer (optional) and network MIDI (required).
///
/// Threads: the test's.
@Suite struct CompositeMIDISourceTests {
    @Test func aMissingOptionalInputIsANoticeAndTheOthersPlay() throws {
        let network = FakeSource([.networkListening(address: "127.0.0.1:5004 (data 5005)")])
        let open = CompositeMIDISource.opener(
            optional: "ALSA sequencer", { _ in throw Missing() }, required: [{ _ in network }])
        let composite = try open(NoReceiver())
        try composite.start()
        #expect(composite.isStarted && network.isStarted)
        #expect(
            composite.takeNotices() == [
                .unavailable(input: "ALSA sequencer", reason: "no ALSA sequencer: /dev/snd/seq is missing"),
                .networkListening(address: "127.0.0.1:5004 (data 5005)"),
            ])
        // Said once, not on every tick.
        #expect(composite.takeNotices().isEmpty)
        try composite.start()  // a reload starts it again: nothing starts twice
        #expect(network.starts == 1)
        #expect(composite.worstReadDelayNanos == 7)
        // Status must say the sequencer is missing, not that no keyboard is connected to it.
        #expect(!composite.listensToSequencer)
        composite.stop()
        #expect(!composite.isStarted && network.stops == 1)
    }

    @Test func bothOpenAndAFailingRequiredInputFails() throws {
        let sequencer = FakeSource([.listening(address: "128:0", connected: 0)])
        let network = FakeSource([])
        let composite = try CompositeMIDISource.opener(
            optional: "ALSA sequencer", { _ in sequencer }, required: [{ _ in network }])(NoReceiver())
        try composite.start()
        #expect(sequencer.isStarted && network.isStarted)
        #expect(composite.listensToSequencer)
        #expect(composite.takeNotices() == [.listening(address: "128:0", connected: 0)])
        composite.stop()
        #expect(!sequencer.isStarted)
        #expect(throws: Missing.self) {
            _ = try CompositeMIDISource.opener(
                optional: "ALSA sequencer", { _ in sequencer }, required: [{ _ in throw Missing() }])(NoReceiver())
        }
    }
}
