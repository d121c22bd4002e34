import AulosMIDI
import AulosRig
import Testing

/// The router keeps the one record of held notes: per (channel, note), the parts it went to and the sources
/// holding it. When a source goes away (a keyboard unplugged, a program disconnected), its notes end on
/// the parts playing them and its sustain pedal is lifted; nothing of another source's is touched.
@Suite struct RouterReleaseTests {
    /// One synth part on every channel: deliveries are the messages themselves, on destination 0.
    static func router() throws -> (PlaybackRig, RigRouter) {
        let playback = try PlaybackRig(
            Rig(name: "all", parts: [Rig.Part(name: "Synth", instrument: .synth, channels: Array(1...16))]))
        return (playback, RigRouter(rig: playback))
    }

    @Test func releasingASourceEndsItsNotesAndPedalOnly() throws {
        let (playback, start) = try Self.router()
        defer { playback.close() }
        var router = start
        let one = MIDISource(rawValue: 1)
        let two = MIDISource(rawValue: 2)
        for note in [60, 64, 67] { _ = router.route(.noteOn(channel: 0, note: UInt8(note), velocity: 90), from: one) }
        _ = router.route(.noteOn(channel: 3, note: 127, velocity: 90), from: one)
        _ = router.route(.noteOn(channel: 0, note: 0, velocity: 90), from: one)
        _ = router.route(.noteOff(channel: 0, note: 64), from: one)
        _ = router.route(.noteOn(channel: 0, note: 67, velocity: 0), from: one)  // velocity 0 is a note-off
        _ = router.route(.controlChange(channel: 5, controller: 64, value: 127), from: one)
        _ = router.route(.noteOn(channel: 0, note: 72, velocity: 90), from: two)
        #expect(router.heldNoteCount == 4)
        let (released, notes) = router.release(one)
        #expect(notes == 3)
        #expect(
            released.map(\.message) == [
                .noteOff(channel: 0, note: 0), .noteOff(channel: 0, note: 60), .noteOff(channel: 3, note: 127),
                .controlChange(channel: 5, controller: 64, value: 0),
            ])
        #expect(released.allSatisfy { $0.destination == 0 })
        #expect(router.release(one).deliveries.isEmpty)
        #expect(router.heldNoteCount == 1, "the other source's note is still held")
        #expect(router.release(two).notes == 1)
    }

    @Test func allNotesOffForgetsTheChannel() throws {
        let (playback, start) = try Self.router()
        defer { playback.close() }
        var router = start
        let source = MIDISource(rawValue: 7)
        _ = router.route(.noteOn(channel: 2, note: 50, velocity: 90), from: source)
        _ = router.route(.controlChange(channel: 2, controller: 123, value: 0), from: source)
        #expect(router.heldNoteCount == 0)
        #expect(router.release(source).deliveries.isEmpty)
    }

    /// A pedal two keyboards hold stays down until the last of them goes.
    @Test func aSharedPedalLiftsWithItsLastSource() throws {
        let (playback, start) = try Self.router()
        defer { playback.close() }
        var router = start
        let one = MIDISource(rawValue: 1)
        let two = MIDISource(rawValue: 2)
        _ = router.route(.controlChange(channel: 0, controller: 64, value: 127), from: one)
        _ = router.route(.controlChange(channel: 0, controller: 64, value: 127), from: two)
        #expect(router.release(one).deliveries.isEmpty)
        #expect(router.release(two).deliveries.map(\.message) == [.controlChange(channel: 0, controller: 64, value: 0)])
    }

    /// A split: a released source's notes end on the part they went to, transposed as they were struck.
    @Test func releasesFollowSplitsAndTransposition() throws {
        var rig = Rig(
            name: "split",
            parts: [
                Rig.Part(name: "Bass", instrument: .synth, channels: [1]),
                Rig.Part(name: "Lead", instrument: .synth, channels: [1]),
            ])
        rig.parts[0].keys = 0...59
        rig.parts[0].transpose = -12
        rig.parts[1].keys = 60...127
        let playback = try PlaybackRig(rig)
        defer { playback.close() }
        var router = RigRouter(rig: playback)
        let keyboard = MIDISource(rawValue: 5)
        _ = router.route(.noteOn(channel: 0, note: 48, velocity: 90), from: keyboard)
        _ = router.route(.noteOn(channel: 0, note: 72, velocity: 90), from: keyboard)
        let released = router.release(keyboard).deliveries
        #expect(released.map(\.destination) == [0, 1])
        #expect(released.map(\.message) == [.noteOff(channel: 0, note: 36), .noteOff(channel: 0, note: 72)])
    }
}
