import AulosCore
import AulosPlayback
import AulosRig
import AulosTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// LV2 effects in rig chains: Dragonfly Plate on a return adds its tail; eg-amp (a mono gain) on the
/// master scales the mix exactly; rigs naming them are read back; plugins that cannot be effects are
/// one-line errors naming the line.
@Suite struct LV2EffectRenderTests {
    static let score = "0b tempo 120\n0b note C4 0.5b vel=110\n0.5b note G4 0.5b vel=110\n1b end\n"
    static let part = "parts:\n  - name: Lead\n    instrument: synth\n    channels: [1]\n"

    static func render(_ yaml: String) throws -> [Float] {
        var options = PlaybackOptions()
        options.rig = try Rig(yaml: "name: R\n" + yaml)
        options.tail = 2.5
        return try renderedSamples(Array(score.utf8), named: "song.score", options)
    }

    static func energy(_ samples: ArraySlice<Float>) -> Double {
        samples.reduce(0.0) { $0 + Double($1) * Double($1) }
    }

    @Test func dragonflyPlateOnAReturnAddsItsTail() throws {
        let dry = try Self.render(Self.part)
        let wet = try Self.render(
            Self.part + "    sends: {plate: 0.5}\nreturns:\n  - name: plate\n    effects:\n"
                + "      - unit: lv2:urn:dragonfly:plate\n"
                + "        parameters: {dry-level: 0, wet-level: 100, decay: 2}\n"
        )
        #expect(dry.count == wet.count)
        let tail = (2 * 96_000)..<(3 * 96_000)
        let (dryTail, wetTail) = (Self.energy(dry[tail]), Self.energy(wet[tail]))
        #expect(wetTail > 1e-4 && wetTail > 100 * max(dryTail, 1e-12), "tail energy dry \(dryTail), wet \(wetTail)")
    }

    /// eg-amp is mono: in a stereo chain it hears both channels mixed and feeds both.
    @Test func aMonoGainOnTheMasterScalesTheMix() throws {
        let dry = try Self.render(Self.part)
        let quieter = try Self.render(
            Self.part + "output:\n  effects:\n    - unit: lv2:http://lv2plug.in/plugins/eg-amp\n"
                + "      parameters: {gain: -6}\n")
        #expect(dry.count == quieter.count && dry.contains { $0 != 0 })
        let gain = Float(pow(10, -6.0 / 20))
        var largest: Float = 0
        for frame in 0..<(dry.count / 2) {
            let mixed = 0.5 * (dry[2 * frame] + dry[2 * frame + 1]) * gain
            largest = max(largest, abs(quieter[2 * frame] - mixed), abs(quieter[2 * frame + 1] - mixed))
        }
        #expect(largest < 1e-6, "largest difference \(largest)")
    }

    /// eg-metro clicks on every beat of the host's transport (time:Position): at 120 and at 90 BPM the
    /// clicks start exactly 24,000 and 32,000 frames apart, from frame 0.
    @Test(arguments: [(120.0, 24_000), (90, 32_000)])
    func aTempoSyncedPluginFollowsTheTransport(_ tempo: Double, _ spacing: Int) throws {
        var options = PlaybackOptions()
        options.rig = try Rig(
            yaml: "name: metro\ndry: true\nparts:\n  - instrument: lv2:http://lv2plug.in/plugins/eg-metro\n")
        options.tail = 0
        let samples = try renderedSamples(Array("0b tempo \(Int(tempo))\n4b end\n".utf8), named: "metro.score", options)
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        // A click starts where the output leaves a silence of at least 1,000 frames (its sine starts at 0).
        var onsets: [Int] = []
        var silent = 1000
        for (frame, value) in left.enumerated() {
            if value != 0 {
                if silent >= 1000 { onsets.append(frame - 1) }
                silent = 0
            } else {
                silent += 1
            }
        }
        #expect(onsets == Array(stride(from: 0, to: left.count, by: spacing)), "\(onsets)")
    }

    /// A rig gives eg-sampler its sample by property (a patch:Set message at its first run); rendering
    /// offline, the plugin's worker job is done inside that run, so the note a beat later plays the new
    /// sample, and two renders are the same file.
    @Test func aRigSetsAPluginPropertyAndTheRenderRepeats() throws {
        let wav = TestFiles.scratch("dc.wav")
        TestFiles.writeConstantWAV(wav, value: 16_384, frames: 4000)
        defer { TestFiles.remove(wav) }
        func render() throws -> [Float] {
            var options = PlaybackOptions()
            options.rig = try Rig(
                yaml: "name: s\ndry: true\nparts:\n  - instrument: lv2:http://lv2plug.in/plugins/eg-sampler\n"
                    + "    properties: {sample: \"\(wav)\"}\n")
            options.tail = 0
            return try renderedSamples(
                Array("0b tempo 120\n1b note C4 1b vel=127\n2b end\n".utf8), named: "s.score", options)
        }
        let first = try render()
        // The note at beat 1 (frame 24,000) plays the constant half-scale sample on both channels.
        let played = first[(2 * 24_100)..<(2 * 27_000)]
        #expect(played.allSatisfy { abs($0 - 0.5) < 0.01 }, "\(played.prefix(6))")
        #expect(try render() == first)
    }

    /// A part's own insert chain: eg-amp at −6 dB after the synth scales what the part plays (mono: both
    /// channels mixed); a built-in effect reads and writes back the same way; a dry rig leaves them out.
    @Test func aPartsInsertEffectScalesThatPart() throws {
        let plain = try Self.render(Self.part)
        let quieter = try Self.render(
            Self.part
                + "    effects:\n      - unit: lv2:http://lv2plug.in/plugins/eg-amp\n        parameters: {gain: -6}\n")
        let gain = Float(pow(10, -6.0 / 20))
        var largest: Float = 0
        for frame in 0..<(plain.count / 2) {
            let mixed = 0.5 * (plain[2 * frame] + plain[2 * frame + 1]) * gain
            largest = max(largest, abs(quieter[2 * frame] - mixed))
        }
        #expect(plain.contains { $0 != 0 } && largest < 1e-6, "largest difference \(largest)")
        let rig = try Rig(
            yaml: "name: R\n" + Self.part + "    effects:\n      - unit: reverb\n        preset: Hall\n")
        #expect(rig.parts[0].effects.map(\.kind) == [.reverb])
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
        #expect(rig.playedDry.parts[0].effects.isEmpty)
    }

    @Test func rigsWithLV2EffectsAreReadAndWrittenBack() throws {
        let rig = try Rig(
            yaml: Self.part + "returns:\n  - name: plate\n    effects:\n      - unit: lv2:urn:dragonfly:plate\n"
                + "        parameters: {decay: 2}\noutput:\n  effects:\n"
                + "    - unit: lv2:http://drobilla.net/plugins/mda/Ambience\n")
        #expect(rig.returns[0].effects[0].kind == .lv2("urn:dragonfly:plate"))
        #expect(rig.masterEffects.map(\.kind) == [.lv2("http://drobilla.net/plugins/mda/Ambience")])
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
    }

    @Test(arguments: [
        (
            "output:\n  effects:\n    - unit: lv2:http://example.org/none\n",
            "test.yaml:7: output.effects[0]: no LV2 plugin <http://example.org/none> installed"
        ),
        (
            "output:\n  effects:\n    - unit: lv2:http://drobilla.net/plugins/mda/JX10\n",
            "test.yaml:7: output.effects[0]: MDA JX10 takes no audio in, so it cannot be an effect"
        ),
        (
            "output:\n  effects:\n    - unit: lv2:urn:dragonfly:plate\n      parameters: {decay: 99}\n",
            "test.yaml:7: output.effects[0]: Dragonfly Plate Reverb decay must be 0.1…10, not 99"
        ),
    ])
    func effectsThatCannotBeAreOneLineErrors(_ yaml: String, _ expected: String) {
        do {
            _ = try Rig(yaml: Self.part + yaml, file: "test.yaml")
            Issue.record("expected an error")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
            #expect(!error.message.contains("\n"), "\(error.message)")
        }
    }

    /// A rig of an LV2 instrument (JX10) into an LV2 effect (Dragonfly Plate, which has a worker) on a
    /// return and mda Ambience on the master, with notes, program changes (presets) and parameter changes:
    /// 10,000 render cycles allocate nothing on the render thread.
    @Test func anLV2RigAllocatesNothing() throws {
        let rig = try Rig(
            yaml:
                "name: lv2\nslice: 64\nparts:\n  - name: jx\n    instrument: lv2:http://drobilla.net/plugins/mda/JX10\n"
                + "    channels: [1]\n    sends: {plate: 0.5}\nreturns:\n  - name: plate\n    effects:\n"
                + "      - unit: lv2:urn:dragonfly:plate\noutput:\n  effects:\n"
                + "    - unit: lv2:http://drobilla.net/plugins/mda/Ambience\n")
        let playback = try PlaybackRig(rig)
        defer { playback.close() }
        try playback.graph.start()
        let plate = playback.returns[0].units[0]
        var time: Int64 = 0
        for step in 0..<400 {
            playback.scheduler.schedule(.noteOn(channel: 0, note: UInt8(48 + step % 24), velocity: 100), at: time)
            playback.scheduler.schedule(.noteOff(channel: 0, note: UInt8(48 + step % 24), velocity: 0), at: time + 4000)
            if step % 40 == 39 {
                playback.scheduler.schedule(.programChange(channel: 0, program: UInt8(step % 7)), at: time)
            }
            time += 1600
        }
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat, maximumFrames: 64)
        for _ in 0..<200 { harness.renderSlice(64) }
        for cycle in 0..<10_000 {
            if cycle % 100 == 0 {
                // Off the render thread, as a knob or the web panel would: the plate's decay, and any
                // preset a program change asked for.
                try plate.setParameter(ParameterID(11), value: Float(1 + cycle % 5), bufferOffset: 17)
                playback.applyPluginProgramChanges()
            }
            harness.renderSlice(64, counting: true)
        }
        #expect(playback.scheduler.droppedCount == 0)
        try expectNoAllocations(harness.allocations)
    }
}
