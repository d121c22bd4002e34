import AulosCore
import AulosMIDI
import AulosRig
import AulosTestSupport
import AulosUnits
import Synchronization
import Testing

@testable import AulosALSA
@testable import AulosPlayback

/// Live MIDI's one way in: `LiveMIDIPath` with a rig's router behind one lock, feeding the live input.
@Suite struct LiveMIDIPathTests {

    /// A rig rendered offline with a live input (lowest latency: no clock needed) behind a path.
    static func livePath(_ yaml: String = TestData.splitRig, capacity: Int = 4096) throws -> (
        PlaybackRig, LiveMIDIInput, LiveMIDIPath
    ) {
        let playback = try PlaybackRig(Rig(yaml: yaml), fileSample: .float32)
        let router = RigRouter(rig: playback)
        let live = LiveMIDIInput(
            destinations: playback.instruments.map(\.midiInput), sampleRate: 48_000, periodFrames: 256,
            placement: .lowestLatency, capacity: capacity, router: router.kernel)
        try playback.graph.addRenderNotify(live.renderNotify)
        let path = LiveMIDIPath()
        path.attach(playback, router: router, input: live)
        return (playback, live, path)
    }

    /// The path's two producers, the MIDI thread and the control thread (MIDI sent through the control
    /// socket, MIDI-learn, rig switches), with a render thread consuming — run under ThreadSanitizer by
    /// `make tsan`. Whatever the interleaving, nothing is dropped and every note ends.
    @Test func midiAndControlThreadsShareThePathWhileRendering() throws {
        let (playback, live, path) = try Self.livePath(capacity: 65_536)
        defer { playback.close() }
        let finished = Atomic<Int>(0)
        let keyboard = MIDISource(rawValue: 20 << 8)
        let midi = TestThread {
            for index in 0..<4_000 {
                let note = UInt8(30 + index % 70)
                path.receive(.noteOn(channel: 0, note: note, velocity: 90), from: keyboard, arrivalNanos: 0)
                path.receive(
                    .controlChange(channel: 0, controller: 1, value: UInt8(index % 128)), from: keyboard,
                    arrivalNanos: 0)  // mapped: cutoff
                path.receive(.noteOff(channel: 0, note: note), from: keyboard, arrivalNanos: 0)
            }
            finished.add(1, ordering: .releasing)
        }
        let control = TestThread {
            for index in 0..<2_000 {
                path.receive(
                    .noteOn(channel: 1, note: UInt8(40 + index % 40), velocity: 70), from: .controlSocket,
                    arrivalNanos: 0)
                path.receive(.noteOff(channel: 1, note: UInt8(40 + index % 40)), from: .controlSocket, arrivalNanos: 0)
                if index % 100 == 0, let target = try? playback.target("Lead.resonance") {
                    path.learn(target)
                }
                if index % 100 == 50 { path.cancelLearning() }
                _ = path.router?.mappings
                _ = path.takePendingActions()
            }
            finished.add(1, ordering: .releasing)
        }
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat)
        while finished.load(ordering: .acquiring) < 2 { harness.renderSlice(256) }
        midi.join()
        control.join()
        for _ in 0..<(48_000 * 3 / 256) { harness.renderSlice(256) }  // everything delivered, releases over
        #expect(live.droppedCount == 0)
        #expect(live.deliveredCount >= 4_000 * 2 + 2_000 * 2, "every note-on and note-off reached its part")
        #expect(playback.activeVoices == 0, "no note left sounding: \(playback.instruments.map(\.voiceBudget.active))")
    }

    /// End to end without a kernel: a chord played live into the synth through the sequencer's own
    /// bookkeeping, the keyboard unplugged mid-chord with the pedal down, and the rig goes silent with no
    /// voice left — no stuck note; another keyboard's note sounds on.
    @Test func noStuckNoteAfterUnplugMidChord() throws {
        var rig = Rig(name: "live", parts: [Rig.Part(name: "synth", instrument: .synth, channels: Array(1...16))])
        rig.slice = 256
        let playback = try PlaybackRig(rig, fileSample: .float32)
        defer { playback.close() }
        let synth = playback.instruments[0] as! OscillatorSynthUnit
        try synth.setParameter(OscillatorSynthUnit.Parameter.ampRelease.id, value: 0.05)
        let router = RigRouter(rig: playback)
        let input = LiveMIDIInput(
            destinations: playback.instruments.map(\.midiInput), sampleRate: 48_000, periodFrames: 256,
            router: router.kernel)
        try playback.graph.addRenderNotify(input.renderNotify)
        let path = LiveMIDIPath()
        path.attach(playback, router: router, input: input)
        let keystation = SequencerPort(
            address: SequencerAddress(client: 20, port: 0), clientName: "Keystation 49",
            portName: "Keystation 49 MIDI 1",
            isReadable: true, isWritable: true, isKernelClient: true, isMIDI: true)
        let other = SequencerAddress(client: 129, port: 0)
        var connections = LiveConnections(
            manager: ConnectionManager(ownClient: 128, autoconnect: true, requests: []), connect: { _ in 0 },
            release: { source in path.sourceEnded(source.midiSource, arrivalNanos: 0) })
        #expect(connections.start(with: [keystation]).notices == [.connected(keystation)])
        for message in [
            ChannelMessage.noteOn(channel: 0, note: 60, velocity: 100), .noteOn(channel: 0, note: 64, velocity: 100),
            .noteOn(channel: 0, note: 67, velocity: 100), .controlChange(channel: 0, controller: 64, value: 127),
        ] {
            connections.played(from: keystation.address)
            path.receive(message, from: keystation.address.midiSource, arrivalNanos: 0)
        }
        connections.played(from: other)
        path.receive(.noteOn(channel: 1, note: 48, velocity: 100), from: other.midiSource, arrivalNanos: 0)
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat)
        func render(_ frames: Int) -> [Float] {  // interleaved stereo
            (0..<(frames / 256)).flatMap { _ in
                harness.renderSlice(256)
                return harness.interleaved(frames: 256)
            }
        }
        let held = render(24_000)
        #expect(synth.activeVoiceCount == 4)
        #expect(held.suffix(2000).contains { abs($0) > 0.01 })
        #expect(connections.clientExited(20).notices == [.disconnected(keystation, releasedNotes: 3)])
        _ = render(48_000)
        #expect(synth.activeVoiceCount == 1, "the other keyboard's note still sounds")
        #expect(connections.unsubscribed(other).notices.isEmpty, "a program that played into aulos is released quietly")
        let after = render(48_000)
        #expect(synth.activeVoiceCount == 0)
        #expect(after.suffix(48_000).allSatisfy { $0 == 0 })
        #expect(input.deliveredCount == 10 && input.lateCount == 0)
    }
}
