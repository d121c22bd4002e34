import AulosCore
import AulosMIDI
import AulosRig
import AulosTestSupport
import AulosUnits
import Testing

/// The synth's arpeggiator and tempo-synced LFO in a rig, driven by the rig's host transport: on the beat
/// grid to the frame, whatever the slice size, and allocation-free.
@Suite struct ArpeggioTests {
    /// 1/16 at 150 BPM is one step every 4,800 frames at 48 kHz: every arpeggio note starts exactly there,
    /// whatever the slice size.
    @Test(arguments: [64, 256, 1000])
    func arpeggioNotesLandOnTheBeatGrid(slice: Int) throws {
        var rig = Rig(name: "arp", parts: [Rig.Part(name: "synth", instrument: .synth, channels: Array(1...16))])
        rig.slice = UInt32(slice)
        let playback = try PlaybackRig(
            rig, fileSample: .float32, tempoMap: [(0, 150)], arpeggio: Arpeggio(parsing: "up:1/16"))
        defer { playback.close() }
        let synth = playback.instruments[0] as! OscillatorSynthUnit
        // A plain sine that starts and stops at once, so every step's onset is visible after silence.
        for (parameter, value) in [
            (OscillatorSynthUnit.Parameter.osc1Waveform, Float(3)), (.oscMix, 0), (.cutoff, 20_000),
            (.ampAttack, 0), (.ampRelease, 0.001), (.velocitySensitivity, 0),
        ] {
            try synth.setParameter(parameter.id, value: value)
        }
        for note in [60, 64, 67] {
            playback.scheduler.schedule(.noteOn(channel: 0, note: UInt8(note), velocity: 100), at: 0)
        }
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat)
        var left: [Float] = []
        for start in stride(from: 0, to: 60_000, by: slice) {
            let frames = min(slice, 60_000 - start)
            harness.renderSlice(UInt32(frames))
            let samples = harness.interleaved(frames: frames)
            for frame in 0..<frames { left.append(samples[2 * frame]) }
        }
        var onsets: [Int] = left[0] != 0 ? [0] : []
        for frame in 2..<left.count where left[frame] != 0 && left[frame - 1] == 0 && left[frame - 2] == 0 {
            onsets.append(frame)
        }
        // On the grid, behind the output stage's look-ahead (the graph pulled as it is: 64 frames at 48 kHz).
        let latency = playback.outputStage.latencyFrames
        #expect(latency == 64)
        #expect(Array(onsets.prefix(12)) == (0..<12).map { $0 * 4800 + latency }, "slice \(slice)")
        // Up: C4, E4, G4, C4…; the gate (0.5) closes each step halfway.
        #expect(left[latency + 2400 + 200] == 0 && left[latency + 100] != 0)
    }

    /// A tempo-synced LFO (vibrato locked to 1/8 notes) under an arpeggio renders the same bytes at any slice.
    @Test func syncedLFOAndArpeggioAreSliceIndependent() throws {
        func render(_ slice: UInt32) throws -> [Float] {
            var rig = Rig(name: "sync", parts: [Rig.Part(name: "synth", instrument: .synth, channels: [1])])
            rig.slice = slice
            let playback = try PlaybackRig(
                rig, fileSample: .float32, tempoMap: [(0, 133)], arpeggio: Arpeggio(parsing: "random:1/8t"))
            defer { playback.close() }
            let synth = playback.instruments[0] as! OscillatorSynthUnit
            try synth.setParameter(OscillatorSynthUnit.Parameter.lfoSync.id, value: 1)
            try synth.setParameter(
                OscillatorSynthUnit.Parameter.lfoSyncRate.id, value: Float(OscillatorSynthUnit.NoteRate.eighth.rawValue)
            )
            try synth.setParameter(OscillatorSynthUnit.Parameter.lfoToPitch.id, value: 80)
            try synth.setParameter(OscillatorSynthUnit.Parameter.arpOctaves.id, value: 2)
            playback.scheduler.schedule(.controlChange(channel: 0, controller: 1, value: 127), at: 0)
            for note in [57, 60, 64] {
                playback.scheduler.schedule(.noteOn(channel: 0, note: UInt8(note), velocity: 90), at: 100)
            }
            let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat)
            var samples: [Float] = []
            for start in stride(from: 0, to: 50_000, by: Int(slice)) {
                let frames = min(Int(slice), 50_000 - start)
                harness.renderSlice(UInt32(frames))
                samples += harness.interleaved(frames: frames)
            }
            return samples
        }
        let reference = try render(256)
        #expect(reference.contains { $0 != 0 })
        for slice in [UInt32(16), 100, 1000] { #expect(try render(slice) == reference, "slice \(slice)") }
    }

    @Test func transportAndArpeggiatorAllocateNothing() throws {
        let score = try Score(text: "0f note C4 10s\n0f note E4 10s\n0f note G4 10s\n")
        var rig = Rig(name: "arp", parts: [Rig.Part(name: "synth", instrument: .synth, channels: Array(1...16))])
        rig.slice = 64
        let playback = try PlaybackRig(rig, tempoMap: [(0, 150)], arpeggio: Arpeggio(parsing: "updown:1/32t"))
        defer { playback.close() }
        try playback.graph.start()
        for message in score.scheduledMessages(sampleRate: 48_000).messages {
            playback.scheduler.schedule(message.message, at: message.sampleTime)
        }
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat, maximumFrames: 64)
        for _ in 0..<5000 { harness.renderSlice(64, counting: true) }
        try expectNoAllocations(harness.allocations)
    }
}
