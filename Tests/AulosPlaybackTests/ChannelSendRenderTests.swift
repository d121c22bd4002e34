import AulosAudioFile
import AulosCore
import AulosMIDI
import AulosPlayback
import AulosRig
import AulosTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// CC 91 per MIDI channel through a rig's returns: one channel's controller sends that channel alone, a
/// channel at 0 renders like no returns at all, and the whole path allocates nothing while controllers move.
@Suite struct ChannelSendRenderTests {
    /// Channel 1 plays with CC 91 = `first`; channel 2 holds CC 91 = `second` and plays nothing.
    static func score(first: Int, second: Int) -> String {
        "0b tempo 120\n0b cc 91 \(first) ch=1\n0b cc 91 \(second) ch=2\n0b cc 93 0 ch=1\n"
            + "0.1b note C4 0.5b vel=110 ch=1\n0.6b note G4 0.5b vel=110 ch=1\n1.1b end\n"
    }

    /// Float samples of `score` on one synth part playing every channel, 3 s long.
    static func render(_ score: String, dry: Bool) throws -> [Float] {
        var options = PlaybackOptions()
        options.dry = dry
        options.tail = 2.5
        return try renderedSamples(Array(score.utf8), named: "channels.score", options)
    }

    @Test func aChannelIsSentByItsOwnCC91() throws {
        let dry = try Self.render(Self.score(first: 0, second: 127), dry: true)
        // Channel 1 at CC 91 = 0 (channel 2's 127 sends nothing: it does not play): exactly the dry render —
        // one channel summed alone, the returns silent, the master mixer at unity.
        let unsent = try Self.render(Self.score(first: 0, second: 127), dry: false)
        #expect(unsent.count == dry.count)
        let difference = zip(unsent, dry).reduce(Float(0)) { max($0, abs($1.0 - $1.1)) }
        // (The master mixer's unity-gain balance at centre is 0.99999994: rounding, nothing audible.)
        #expect(difference < 1e-6, "largest difference \(difference)")
        // Channel 1 at 127: the reverb, about 15 dB under the dry signal (General MIDI returns' calibration).
        let sent = try Self.render(Self.score(first: 127, second: 0), dry: false)
        let wet = zip(sent, dry).reduce(0.0) { $0 + Double($1.0 - $1.1) * Double($1.0 - $1.1) }
        let dryEnergy = dry.reduce(0.0) { $0 + Double($1) * Double($1) }
        let ratio = 10 * log10(wet / dryEnergy)
        #expect(ratio > -25 && ratio < -5, "wet/dry \(ratio) dB")
    }

    /// A GM reset in a file puts CC 91 back to 40: a file that sets CC 91 to 0 and then resets renders as
    /// one that never set it.
    @Test func aGMResetInAFileRestoresTheSends() throws {
        func render(_ events: [(tick: Int, event: StandardMIDIFile.Event)]) throws -> [Float] {
            var options = PlaybackOptions()
            options.tail = 2
            return try renderedSamples(
                StandardMIDIFile.encode(tracks: [events], ticksPerQuarterNote: 480), named: "reset.mid", options)
        }
        let notes: [(tick: Int, event: StandardMIDIFile.Event)] = [
            (480, .midi(.noteOn(channel: 0, note: 60, velocity: 100))),
            (960, .midi(.noteOff(channel: 0, note: 60, velocity: 0))),
        ]
        let plain = try render(notes)
        let reset = try render(
            [
                (0, .midi(.controlChange(channel: 0, controller: 91, value: 0))),
                (10, .midi(.systemExclusive([0x7E, 0x7F, 0x09, 0x01]))),
            ] + notes)
        let unreset = try render([(0, .midi(.controlChange(channel: 0, controller: 91, value: 0)))] + notes)
        #expect(reset == plain)
        #expect(unreset != plain, "CC 91 = 0 without the reset renders dry")
    }

    @Test func everyEffectWithControllersMovingAllocatesNothing() throws {
        var rig = Rig(
            name: "all",
            parts: [
                Rig.Part(name: "synth", instrument: .synth, channels: Array(1...8)),
                Rig.Part(name: "sampler", instrument: .sampler, channels: Array(9...16)),
            ])
        rig.slice = 64
        rig.returns = ReturnBus.generalMIDI
        rig.masterEffects = [EffectSpec(kind: .delay, preset: "Slapback")]
        let playback = try PlaybackRig(rig)
        defer { playback.close() }
        try playback.graph.start()
        var time: Int64 = 0
        for step in 0..<400 {
            let channel = UInt8(step % 16)
            playback.scheduler.schedule(
                .controlChange(channel: channel, controller: 91, value: UInt8(step * 7 % 128)), at: time)
            playback.scheduler.schedule(
                .controlChange(channel: channel, controller: 93, value: UInt8(step * 11 % 128)), at: time)
            playback.scheduler.schedule(.noteOn(channel: channel, note: UInt8(48 + step % 24), velocity: 100), at: time)
            playback.scheduler.schedule(
                .noteOff(channel: channel, note: UInt8(48 + step % 24), velocity: 0), at: time + 4000)
            if step % 50 == 49 {
                playback.scheduler.schedule(.controlChange(channel: channel, controller: 121, value: 0), at: time)
            }
            time += 1600
        }
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat, maximumFrames: 64)
        // Warm-up outside the count: FluidSynth's first notes, as in the sampler's own allocation test.
        for _ in 0..<200 { harness.renderSlice(64) }
        for _ in 0..<10_000 { harness.renderSlice(64, counting: true) }
        #expect(playback.scheduler.droppedCount == 0)
        try expectNoAllocations(harness.allocations)
    }
}
