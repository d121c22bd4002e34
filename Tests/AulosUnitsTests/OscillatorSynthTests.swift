import AulosCore
import AulosDSP
import AulosMIDI
import AulosTestSupport
import AulosUnits
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct OscillatorSynthTests {
    typealias P = OscillatorSynthUnit.Parameter
    let synth = OscillatorSynthUnit.componentDescription

    @Test(arguments: [
        (16, [0, 1, 15, 16, 17]), (64, [5, 63, 64, 100]), (412, [411, 412, 413]), (1024, [412, 1023, 1024]),
        (4096, [0, 3000, 4095]),
    ])
    func noteAtOffsetKStartsAtFrameK(slice: Int, onsets: [Int]) throws {
        for onset in onsets {
            let rig = try InstrumentRig(synth, maximumFrames: UInt32(slice)) { try setSynth($0, pureSine) }
            rig.scheduler.schedule(.noteOn(channel: 0, note: 60, velocity: 100), at: Int64(onset))
            let (left, right) = rig.render(onset + 2 * slice + 10, slice: slice)
            #expect(left[..<onset].allSatisfy { $0 == 0 }, "slice \(slice), onset \(onset)")
            #expect(left[onset] != 0 && right[onset] != 0, "slice \(slice), onset \(onset)")
        }
    }

    /// A busy score (chords, bends, CC sweeps, sustain, program changes, mono and poly) renders the same
    /// bits whatever the slice size.
    @Test(arguments: [16, 17, 64, 256, 1000, 4096])
    func outputIsBitIdenticalForEverySliceSize(slice: Int) throws {
        let text = """
            0f program 4
            0f note C4 0.5s vel=90
            0f note E4 0.5s vel=70
            0f note G4 0.5s vel=110
            1000f cc 1 100
            3000f bend 3000
            5000f cc 7 60
            7777f cc 10 20
            12000f cc 64 127
            12000f note A4 100ms
            20000f cc 64 0
            20000f program 38
            20001f note C3 2000f
            20500f note D3 2000f
            24000f program 81
            24000f note E5 0.2s vel=127
            30000f cc 123 0
            """
        let messages = try Score(text: text).scheduledMessages(sampleRate: 48_000).messages
        func render(_ slice: Int) throws -> ([Float], [Float]) {
            let rig = try InstrumentRig(synth, maximumFrames: 4096)
            rig.schedule(messages)
            return rig.render(40_000, slice: slice)
        }
        let reference = try render(256)
        let sliced = try render(slice)
        #expect(reference.0.contains { $0 != 0 })
        #expect(sliced.0 == reference.0)
        #expect(sliced.1 == reference.1)
    }

    @Test(arguments: [69, 60, 81, 33, 100])
    func tuningIsWithinATenthOfACent(note: Int) throws {
        let rig = try InstrumentRig(synth) { try setSynth($0, pureSine) }
        rig.scheduler.schedule(.noteOn(channel: 0, note: UInt8(note), velocity: 100), at: 0)
        let (left, _) = rig.render(96_000, slice: 512)
        let expected = 440 * pow(2, (Double(note) - 69) / 12)
        #expect(abs(cents(measuredFrequency(left[4800...], sampleRate: 48_000), expected)) < 0.1)
    }

    @Test func pitchBendFollowsTheRPNRange() throws {
        let rig = try InstrumentRig(synth) { try setSynth($0, pureSine) }
        let messages: [MIDIMessage] = [
            .controlChange(channel: 0, controller: 101, value: 0),
            .controlChange(channel: 0, controller: 100, value: 0),
            .controlChange(channel: 0, controller: 6, value: 12), .controlChange(channel: 0, controller: 38, value: 0),
            .noteOn(channel: 0, note: 57, velocity: 100), .pitchBend(channel: 0, value: 16383),
        ]
        for message in messages { rig.scheduler.schedule(message, at: 0) }
        rig.scheduler.schedule(.pitchBend(channel: 0, value: 8192 - 4096), at: 48_000)
        let (left, _) = rig.render(96_000, slice: 256)
        // +8191/8192 of 12 semitones above A3, then −half of 12 = 6 semitones down.
        let up = 220 * pow(2, 12 * 8191 / 8192 / 12.0)
        #expect(abs(cents(measuredFrequency(left[2400..<47_000], sampleRate: 48_000), up)) < 0.1)
        let down = 220 * pow(2, -6 / 12.0)
        #expect(abs(cents(measuredFrequency(left[50_000...], sampleRate: 48_000), down)) < 0.1)
    }

    @Test func defaultBendRangeIsTwoSemitones() throws {
        let rig = try InstrumentRig(synth) { try setSynth($0, pureSine) }
        rig.scheduler.schedule(.noteOn(channel: 0, note: 69, velocity: 100), at: 0)
        rig.scheduler.schedule(.pitchBend(channel: 0, value: 0), at: 0)
        let (left, _) = rig.render(48_000, slice: 256)
        #expect(abs(cents(measuredFrequency(left[2400...], sampleRate: 48_000), 440 * pow(2, -2 / 12.0))) < 0.1)
    }

    @Test func sustainHoldsReleasedNotesUntilThePedalLifts() throws {
        let rig = try InstrumentRig(synth) { try setSynth($0, pureSine) }
        rig.scheduler.schedule(.controlChange(channel: 0, controller: 64, value: 127), at: 0)
        rig.scheduler.schedule(.noteOn(channel: 0, note: 60, velocity: 100), at: 0)
        rig.scheduler.schedule(.noteOff(channel: 0, note: 60, velocity: 0), at: 4800)
        rig.scheduler.schedule(.controlChange(channel: 0, controller: 64, value: 0), at: 48_000)
        let (left, _) = rig.render(72_000, slice: 256)
        let peak = { (range: Range<Int>) in left[range].map(abs).max()! }
        #expect(peak(40_000..<47_000) > 0.4)  // still sounding long after the key was released
        #expect(peak(60_000..<72_000) == 0)  // released 50 ms after the pedal lifted
        let synth = rig.instrument as! OscillatorSynthUnit
        #expect(synth.activeVoiceCount == 0)
    }

    /// Five notes into four voices: the oldest is stolen, faded over 128 frames, never cut.
    @Test func stealingTakesTheOldestAndNeverClicks() throws {
        let rig = try InstrumentRig(synth) { unit in
            try unit.setProperty(OscillatorSynthUnit.polyphonyProperty, scope: .global, element: 0, value: UInt32(4))
            try setSynth(unit, pureSine)
            try unit.setParameter(P.volume.id, value: -12)
        }
        for (index, note) in [60, 64, 67, 71, 74].enumerated() {
            rig.scheduler.schedule(.noteOn(channel: 0, note: UInt8(note), velocity: 100), at: Int64(index * 4800))
        }
        let (left, _) = rig.render(4 * 4800 + 3000, slice: 256)
        let steps = zip(left.dropFirst(), left).map { abs($0 - $1) }
        // The largest step anywhere stays within what five sines of this pitch and level can do.
        let bound = 5 * 0.25 * 2 * Float.pi * Float(440 * pow(2, 5.0 / 12)) / 48_000 * 1.05
        #expect(steps.max()! < bound)
        let synth = rig.instrument as! OscillatorSynthUnit
        #expect(synth.activeVoiceCount == 4)
        // The stolen voice was the first note: C4 disappears (Hann-windowed level before vs. after the steal),
        // while the newest note, D5, sounds.
        func level(_ frequency: Double, from start: Int) -> Double {
            var re = 0.0
            var im = 0.0
            for n in 0..<2048 {
                let window = 0.5 - 0.5 * cos(2 * .pi * Double(n) / 2048)
                let x = Double(left[start + n]) * window
                re += x * cos(2 * .pi * frequency * Double(n) / 48_000)
                im += x * sin(2 * .pi * frequency * Double(n) / 48_000)
            }
            return (re * re + im * im).squareRoot() / 1024
        }
        let before = level(261.6, from: 4 * 4800 - 2100)
        let after = level(261.6, from: 4 * 4800 + 600)
        #expect(before > 0.05)
        #expect(after < 0.05 * before)
        #expect(level(587.3, from: 4 * 4800 + 600) > 0.5 * before)
    }

    @Test func gmSystemOnSilencesEveryChannel() throws {
        let rig = try InstrumentRig(synth) { try setSynth($0, pureSine) }
        let synth = rig.instrument as! OscillatorSynthUnit
        rig.scheduler.schedule(.noteOn(channel: 3, note: 60, velocity: 100), at: 0)
        _ = rig.render(2048, slice: 256)
        #expect(synth.activeVoiceCount == 1)
        try synth.sysEx([0x7E, 0x7F, 0x09, 0x01])
        try synth.sysEx([0x7E, 0x7F, 0x06, 0x01])  // an identity request: ignored
        let (left, _) = rig.render(2048, slice: 256)
        #expect(left[512...].allSatisfy { $0 == 0 })
        #expect(synth.activeVoiceCount == 0)
        expectError(.invalidPropertyValue) { try synth.midiEvent(status: 0xF8, data1: 0, data2: 0) }
    }

    @Test func polyphonyIsAPropertyUpTo4096() throws {
        let unit = OscillatorSynthUnit()
        #expect(
            try unit.getProperty(OscillatorSynthUnit.polyphonyProperty, scope: .global, element: 0) as? UInt32 == 32)
        try unit.setProperty(OscillatorSynthUnit.polyphonyProperty, scope: .global, element: 0, value: UInt32(1024))
        #expect(unit.polyphony == 1024)
        expectError(.invalidPropertyValue) {
            try unit.setProperty(OscillatorSynthUnit.polyphonyProperty, scope: .global, element: 0, value: UInt32(0))
        }
        try unit.initialize()
        expectError(.initialized) {
            try unit.setProperty(OscillatorSynthUnit.polyphonyProperty, scope: .global, element: 0, value: UInt32(8))
        }
    }

    @Test func legatoGlidesWithoutRetriggeringButMonoRetriggers() throws {
        for (mode, retriggers) in [(Float(2), false), (Float(1), true)] {
            let rig = try InstrumentRig(synth) { unit in
                try setSynth(unit, pureSine)
                try setSynth(unit, [.voiceMode: mode, .ampAttack: 0.05, .ampSustain: 0.5, .ampDecay: 0.01])
            }
            rig.scheduler.schedule(.noteOn(channel: 0, note: 60, velocity: 100), at: 0)
            rig.scheduler.schedule(.noteOn(channel: 0, note: 67, velocity: 100), at: 9600)
            let (left, _) = rig.render(12_000, slice: 128)
            let before = left[8000..<9600].map(abs).max()!
            let after = left[9700..<10_300].map(abs).max()!
            if retriggers {
                #expect(after > before * 1.3, "mono re-attacks towards full level")
            } else {
                #expect(abs(after - before) < 0.05, "legato keeps the envelope where it was")
            }
            #expect((rig.instrument as! OscillatorSynthUnit).activeVoiceCount == 1)
        }
    }

    /// A 5 kHz saw at 48 kHz: everything that is not a harmonic is at least 60 dB below the fundamental.
    @Test func sawAliasingIsSixtyDecibelsDown() throws {
        let rig = try InstrumentRig(synth) { unit in
            try setSynth(unit, pureSine)
            try setSynth(unit, [.osc1Waveform: 0])
        }
        rig.scheduler.schedule(.noteOn(channel: 0, note: 111, velocity: 100), at: 0)  // 4978.0 Hz
        let (left, _) = rig.render(4800 + 16_384, slice: 512)
        let n = 16_384
        var real = (0..<n).map { i -> Double in
            // Blackman–Harris window: sidelobes below −92 dB.
            let x = 2 * Double.pi * Double(i) / Double(n)
            let w = 0.35875 - 0.48829 * cos(x) + 0.14128 * cos(2 * x) - 0.01168 * cos(3 * x)
            return Double(left[4800 + i]) * w
        }
        var imaginary = [Double](repeating: 0, count: n)
        FFT.forward(real: &real, imaginary: &imaginary)
        let magnitude = (0..<(n / 2)).map { (real[$0] * real[$0] + imaginary[$0] * imaginary[$0]).squareRoot() }
        let f0 = 440 * pow(2, 42.0 / 12)
        let binWidth = 48_000.0 / Double(n)
        let fundamental = magnitude[Int((f0 / binWidth).rounded())]
        var worst = 0.0
        for bin in 20..<(n / 2) {
            let frequency = Double(bin) * binWidth
            let harmonic = (frequency / f0).rounded()
            if harmonic >= 1 && abs(frequency - harmonic * f0) < 8 * binWidth { continue }  // a harmonic and its window
            worst = max(worst, magnitude[bin])
        }
        #expect(20 * log10(worst / fundamental) < -60)
    }

    @Test func programChangeLoadsAPresetOnTheRenderThread() throws {
        let registry = BuiltInUnits.registry()
        let factory = try SynthPresetLibrary.load(from: TestFiles.presets + "/synth")
        registry.register(Component(synth, name: "Aulos: Oscillator Synth") { OscillatorSynthUnit(presets: factory) })
        let rig = try InstrumentRig(synth, registry: registry)
        let synth = rig.instrument as! OscillatorSynthUnit
        let bell = try #require(synth.presets.first { $0.name == "Glass Bell" })
        rig.scheduler.schedule(.programChange(channel: 0, program: UInt8(bell.program)), at: 100)
        _ = rig.render(512, slice: 256)
        #expect(try synth.getParameter(P.osc2Coarse.id) == 19)
        #expect(try synth.getParameter(P.ampSustain.id) == 0)
    }

    @Test func factoryPresetsLoadFromFilesAndSelectByName() throws {
        let synth = OscillatorSynthUnit(presets: try SynthPresetLibrary.load(from: TestFiles.presets + "/synth"))
        #expect(synth.presets.count >= 8)
        #expect(Set(synth.presets.map(\.program)).count == synth.presets.count)
        try synth.selectPreset("round bass")
        #expect(try synth.getParameter(P.voiceMode.id) == 1)
        #expect(try synth.get(.presentPreset).name == "Round Bass")
        try synth.selectPreset("14")
        #expect(try synth.get(.presentPreset).name == "Glass Bell")
        expectError(.invalidPropertyValue) { try synth.selectPreset("Kazoo") }
        #expect(OscillatorSynthUnit.Parameter.allCases.count == 92)  // the kernel's literal parameter count
    }

    @Test func brokenPresetFilesNameTheFileAndKey() throws {
        let folder = "/tmp/aulos-presets-\(getpid())"
        mkdir(folder, 0o755)
        defer { system("rm -rf \(folder)") }
        let cases = [
            ("{\"name\": \"X\", \"program\": 1, \"parameters\": {\"cutof\": 100}}", "unknown parameter \"cutof\""),
            ("{\"name\": \"X\", \"program\": 1, \"parameters\": {\"cutoff\": 1}}", "\"cutoff\" = 1.0 is outside"),
            (
                "{\"name\": \"X\", \"program\": 1, \"parameters\": {\"osc1Waveform\": \"square\"}}",
                "expected one of saw, pulse"
            ),
            ("{\"name\": \"X\", \"program\": 200, \"parameters\": {}}", "\"program\" must be 0…127"),
            ("not json", "not a JSON preset object"),
            ("{\"name\": \"X\", \"parameters\": {}}", "missing \"program\""),
        ]
        for (text, expected) in cases {
            let path = folder + "/bad.json"
            TestFiles.write(text, to: path)
            do {
                _ = try SynthPreset(file: path)
                Issue.record("expected an error for \(text)")
            } catch {
                #expect(error.detail.contains(path) && error.detail.contains(expected), "\(error.detail)")
            }
        }
    }

    @Test func rendersWithoutAllocating() throws {
        let rig = try InstrumentRig(synth, maximumFrames: 64) { unit in
            try unit.setProperty(OscillatorSynthUnit.polyphonyProperty, scope: .global, element: 0, value: UInt32(8))
        }
        for cycle in 0..<10_000 {
            if cycle % 8 == 0 {
                let at = Int64(cycle * 64 + 17)
                rig.scheduler.schedule(
                    .noteOn(channel: UInt8(cycle % 3), note: UInt8(40 + cycle % 40), velocity: 100), at: at)
                rig.scheduler.schedule(
                    .noteOff(channel: UInt8(cycle % 3), note: UInt8(40 + cycle % 40), velocity: 0), at: at + 300)
                rig.scheduler.schedule(.controlChange(channel: 0, controller: 1, value: UInt8(cycle % 128)), at: at)
                rig.scheduler.schedule(.pitchBend(channel: 0, value: UInt16(cycle % 16_384)), at: at + 5)
                if cycle % 800 == 0 {
                    rig.scheduler.schedule(
                        .programChange(
                            channel: 0, program: UInt8([0, 14, 16, 24, 38, 48, 61, 81, 89][cycle / 800 % 9])), at: at)
                }
            }
            rig.harness.renderSlice(64, counting: true)
        }
        #expect(rig.scheduler.lateCount == 0)
        try expectNoAllocations(rig.harness.allocations)
    }

    /// Rich voices four at a time in SIMD lanes (an eight-note chord on a seven-copy unison stack, struck
    /// again and again) render without allocating either.
    @Test func richVoicesInLanesRenderWithoutAllocating() throws {
        let rig = try InstrumentRig(synth, maximumFrames: 64) { unit in
            try unit.setParameter(OscillatorSynthUnit.Parameter.osc1Unison.id, value: 7)
        }
        for cycle in 0..<4_000 {
            if cycle % 200 == 0 {
                let at = Int64(cycle * 64 + 17)
                for (index, note) in [48, 52, 55, 59, 62, 65, 69, 72].enumerated() {
                    rig.scheduler.schedule(.noteOn(channel: 0, note: UInt8(note), velocity: 100), at: at + Int64(index))
                    rig.scheduler.schedule(.noteOff(channel: 0, note: UInt8(note), velocity: 0), at: at + 9_000)
                }
            }
            rig.harness.renderSlice(64, counting: true)
        }
        #expect(rig.scheduler.lateCount == 0)
        try expectNoAllocations(rig.harness.allocations)
    }
}

/// Voices of one patch render four at a time in SIMD lanes: a chord of eight sounds like its eight notes
/// rendered alone and added (within float rounding: the lanes are summed in another order). Plain voices,
/// and rich ones (a five-copy unison stack in stereo, whose lanes are `renderRichVoiceGroup`'s).
@Suite struct SynthVoiceLaneTests {
    @Test(arguments: [0, 1], [1, 5])
    func aChordInLanesEqualsItsNotesAlone(filterMode: Float, unison: Float) throws {
        let synth = OscillatorSynthUnit.componentDescription
        let notes: [UInt8] = [36, 43, 48, 52, 55, 60, 64, 71]
        // A rich voice's unison copies start at phases drawn from its age (the count of notes and drum hits
        // before it), so a note rendered alone is first given the age it has in the chord: as many drum
        // hits before it, on channel 10 turned down to silence.
        func render(_ chord: [UInt8], silentHitsBefore: Int = 0) throws -> [Float] {
            let rig = try InstrumentRig(synth) { unit in
                try unit.setParameter(OscillatorSynthUnit.Parameter.filterMode.id, value: filterMode)
                try unit.setParameter(OscillatorSynthUnit.Parameter.resonance.id, value: 0.6)
                try unit.setParameter(OscillatorSynthUnit.Parameter.osc1Unison.id, value: unison)
                try unit.setParameter(OscillatorSynthUnit.Parameter.osc1Width.id, value: 0.8)
            }
            rig.scheduler.schedule(.controlChange(channel: 9, controller: 7, value: 0), at: 0)
            for _ in 0..<silentHitsBefore {
                rig.scheduler.schedule(.noteOn(channel: 9, note: 36, velocity: 100), at: 0)
            }
            for note in chord {
                let position = notes.firstIndex(of: note)!
                let at = Int64(position * 37)
                rig.scheduler.schedule(.noteOn(channel: 0, note: note, velocity: 60 + UInt8(position) * 8), at: at)
                rig.scheduler.schedule(.noteOff(channel: 0, note: note, velocity: 0), at: at + 9000)
            }
            let (left, right) = rig.render(30_000, slice: 256)
            return left + right
        }
        let together = try render(notes)
        var apart = [Float](repeating: 0, count: together.count)
        for (position, note) in notes.enumerated() {
            for (index, sample) in try render([note], silentHitsBefore: position).enumerated() {
                apart[index] += sample
            }
        }
        let worst = zip(together, apart).map { abs($0 - $1) }.max()!
        #expect(together.map(abs).max()! > 0.1)
        #expect(worst < 1e-5, "largest difference \(worst)")
    }
}
