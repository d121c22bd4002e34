import AulosCore
@testable import AulosHost
import AulosMIDI
import AulosTestSupport
import AulosUnits
import Synchronization
import Testing

/// The live router's two producers: the MIDI thread and the control thread (MIDI sent through the
/// control socket, MIDI-learn, rig switches), with a render thread consuming — run under ThreadSanitizer
/// by `make tsan`. Whatever the interleaving, nothing is dropped and every note ends.
@Suite struct RouterThreadingTests {
    @Test func midiAndControlThreadsShareTheRouterWhileRendering() throws {
        let playback = try PlaybackRig(Rig(yaml: RigRecallTests.split), fileSample: .float32)
        defer { playback.close() }
        let live = LiveMIDIInput(destinations: playback.instruments.map(\.midiInput), sampleRate: 48_000, periodFrames: 256,
                                 placement: .lowestLatency, capacity: 65_536)
        try playback.graph.addRenderNotify(live.renderNotify)
        let box = RouterBox()
        box.set(LiveMIDIRouter(rig: playback, input: live, sampleRate: 48_000))
        let finished = Atomic<Int>(0)
        let midi = TestThread {
            for index in 0..<4_000 {
                let note = UInt8(30 + index % 70)
                box.receive(.noteOn(channel: 0, note: note, velocity: 90), arrivalNanos: 0)
                box.receive(.controlChange(channel: 0, controller: 1, value: UInt8(index % 128)), arrivalNanos: 0)  // mapped: cutoff
                box.receive(.noteOff(channel: 0, note: note, velocity: 0), arrivalNanos: 0)
            }
            finished.add(1, ordering: .releasing)
        }
        let control = TestThread {
            for index in 0..<2_000 {
                box.receive(.noteOn(channel: 1, note: UInt8(40 + index % 40), velocity: 70), arrivalNanos: 0)
                box.receive(.noteOff(channel: 1, note: UInt8(40 + index % 40), velocity: 0), arrivalNanos: 0)
                if index % 100 == 0, let target = try? playback.target("Lead.resonance") { playback.router.learn(target) }
                if index % 100 == 50 { playback.router.cancelLearning() }
                _ = playback.router.mappings
                _ = box.takeActions()
            }
            finished.add(1, ordering: .releasing)
        }
        let renderer = try OfflineRenderer(graph: playback.graph, sliceFrames: 256)
        while finished.load(ordering: .acquiring) < 2 { try renderer.render(frameCount: 256) { _, _ in } }
        midi.join()
        control.join()
        try renderer.render(frameCount: 48_000 * 3) { _, _ in }  // everything delivered, releases over
        #expect(live.droppedCount == 0)
        #expect(live.deliveredCount >= 4_000 * 2 + 2_000 * 2, "every note-on and note-off reached its part")
        #expect(playback.activeVoices == 0, "no note left sounding: \(playback.instruments.map(\.voiceBudget.active))")
    }
}
