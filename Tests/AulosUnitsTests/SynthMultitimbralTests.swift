import AulosCore
import AulosDSP
import AulosMIDI
import AulosTestSupport
import AulosUnits
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Sixteen channels, sixteen patches: program changes (with bank select) per channel, the base channel that
/// keeps the unit's parameters, and General MIDI's families.
@Suite struct SynthMultitimbralTests {
    typealias P = OscillatorSynthUnit.Parameter
    let synth = OscillatorSynthUnit.componentDescription

    /// A rig whose synth has `presets` (the factory ones unless given).
    func rig(presets: [SynthPreset]? = nil, slice: UInt32 = 4096) throws -> InstrumentRig {
        let registry = BuiltInUnits.registry()
        let loaded = try presets ?? SynthPresetLibrary.load(from: TestFiles.presets + "/synth")
        registry.register(Component(synth, name: "Aulos: Oscillator Synth") { OscillatorSynthUnit(presets: loaded) })
        return try InstrumentRig(synth, maximumFrames: slice, registry: registry)
    }

    /// Energy in 16 half-octave bands from 65 Hz, summed to 1: a coarse fingerprint of a timbre.
    func bands(_ samples: ArraySlice<Float>) -> [Double] {
        let power = powerSpectrum(samples)
        let binWidth = 48_000.0 / 8192
        let energy = (0..<16).map { band -> Double in
            let low = 65 * pow(2, Double(band) / 2)
            let high = low * pow(2, 0.5)
            return (min(4096, Int(low / binWidth))..<min(4096, Int(high / binWidth))).map { power[$0] }.reduce(0, +)
        }
        let total = energy.reduce(0, +)
        return energy.map { $0 / total }
    }

    /// The power spectrum of 8192 samples under a Hann window.
    func powerSpectrum(_ samples: ArraySlice<Float>) -> [Double] {
        let n = 8192
        var real = (0..<n).map { i -> Double in
            let x = 2 * Double.pi * Double(i) / Double(n)
            return Double(samples[samples.startIndex + i]) * (0.5 - 0.5 * cos(x))
        }
        var imaginary = [Double](repeating: 0, count: n)
        FFT.forward(real: &real, imaginary: &imaginary)
        return (0..<(n / 2)).map { real[$0] * real[$0] + imaginary[$0] * imaginary[$0] }
    }

    /// Harmonics 2…12 of a note at `f0`, in dB against its fundamental (floored at −80 dB): its timbre.
    func harmonicProfile(_ samples: ArraySlice<Float>, f0: Double) -> [Double] {
        let power = powerSpectrum(samples)
        let binWidth = 48_000.0 / 8192
        func level(_ harmonic: Int) -> Double {
            let centre = Int((Double(harmonic) * f0 / binWidth).rounded())
            return ((centre - 2)...(centre + 2)).map { power[$0] }.max()!
        }
        let fundamental = level(1)
        return (2...12).map { max(-80, 10 * log10(level($0) / fundamental)) }
    }

    /// Mean difference in dB between two harmonic profiles.
    func timbreDistance(_ a: [Double], _ b: [Double]) -> Double {
        zip(a, b).map { abs($0 - $1) }.reduce(0, +) / Double(a.count)
    }

    func distance(_ a: [Double], _ b: [Double]) -> Double { zip(a, b).map { abs($0 - $1) }.reduce(0, +) }

    /// Channels 1–4 choose four programs at the start; the same note on each, one after another, has four
    /// different spectra; channel 6, which chose nothing, plays the base channel's patch exactly.
    @Test func fourChannelsWithFourProgramsSoundFourWays() throws {
        let rig = try rig()
        let programs: [UInt8] = [0, 38, 81, 89]  // Soft Keys, Round Bass, Bright Lead, Warm Pad
        for (channel, program) in programs.enumerated() {
            rig.scheduler.schedule(.programChange(channel: UInt8(channel), program: program), at: 0)
        }
        let window = 24_000
        for (index, channel) in [0, 1, 2, 3, 5].enumerated() {
            let at = Int64(index * window)
            rig.scheduler.schedule(.noteOn(channel: UInt8(channel), note: 60, velocity: 100), at: at + 100)
            rig.scheduler.schedule(.noteOff(channel: UInt8(channel), note: 60, velocity: 0), at: at + 10_000)
            rig.scheduler.schedule(.controlChange(channel: UInt8(channel), controller: 120, value: 0), at: at + 20_000)
        }
        let (left, _) = rig.render(5 * window, slice: 256)
        let profiles = (0..<5).map { harmonicProfile(left[($0 * window + 1000)...], f0: 261.625_565) }
        for a in 0..<4 {
            for b in (a + 1)..<4 {
                let distance = timbreDistance(profiles[a], profiles[b])
                #expect(distance > 3, "programs \(programs[a]) and \(programs[b]): \(distance) dB apart")
            }
        }
        // Channel 1 is the base channel: its program change loaded the unit's parameters (Soft Keys), which
        // channel 6 plays, sample for sample.
        let unit = rig.instrument as! OscillatorSynthUnit
        #expect(try unit.getParameter(P.osc1Waveform.id) == 0)  // Soft Keys' saw
        #expect(left[100..<window] == left[(4 * window + 100)..<(5 * window)])
    }

    /// A program change on a channel other than the base channel leaves the unit's parameters alone; a
    /// channel's patch survives Reset All Controllers; a program no preset (and no family) answers changes
    /// nothing.
    @Test func ownPatchesLeaveTheUnitsParametersAlone() throws {
        let rig = try rig()
        let unit = rig.instrument as! OscillatorSynthUnit
        let before = try unit.getParameter(P.cutoff.id)
        rig.scheduler.schedule(.programChange(channel: 4, program: 38), at: 10)
        rig.scheduler.schedule(.controlChange(channel: 4, controller: 121, value: 0), at: 20)
        rig.scheduler.schedule(.noteOn(channel: 4, note: 36, velocity: 100), at: 30)
        let (left, _) = rig.render(4096, slice: 512)
        #expect(try unit.getParameter(P.cutoff.id) == before)
        // Round Bass is mono with a low cutoff: compare with a bass on the base channel.
        let reference = try self.rig()
        reference.scheduler.schedule(.programChange(channel: 0, program: 38), at: 10)
        reference.scheduler.schedule(.noteOn(channel: 0, note: 36, velocity: 100), at: 30)
        let (expected, _) = reference.render(4096, slice: 512)
        #expect(left == expected)
    }

    /// Bank select MSB picks a preset bank; a bank without the program falls back to bank 0's.
    @Test func bankSelectPicksAPresetBank() throws {
        let sine: [ParameterID: Float] = [P.osc1Waveform.id: 3, P.oscMix.id: 0, P.cutoff.id: 20_000]
        let saw: [ParameterID: Float] = [P.osc1Waveform.id: 0, P.oscMix.id: 0, P.cutoff.id: 20_000]
        let presets = [
            SynthPreset(name: "Sine", program: 5, values: sine),
            SynthPreset(name: "Saw", program: 5, bank: 1, values: saw),
        ]
        func spectrum(bank: UInt8) throws -> [Double] {
            let rig = try rig(presets: presets)
            rig.scheduler.schedule(.controlChange(channel: 2, controller: 0, value: bank), at: 0)
            rig.scheduler.schedule(.programChange(channel: 2, program: 5), at: 0)
            rig.scheduler.schedule(.noteOn(channel: 2, note: 57, velocity: 100), at: 0)
            let (left, _) = rig.render(12_000, slice: 512)
            return bands(left[2000...])
        }
        let bank0 = try spectrum(bank: 0)
        let bank1 = try spectrum(bank: 1)
        let bank9 = try spectrum(bank: 9)
        #expect(distance(bank0, bank1) > 0.2)
        #expect(distance(bank0, bank9) < 1e-9)
        let unit = OscillatorSynthUnit(presets: presets)
        #expect(unit.factoryPresets.map(\.number) == [5, 133])
    }

    /// In bank 0 a program without a preset takes the nearest preset below it in its General MIDI family,
    /// else the family's first.
    @Test func programsFallBackToTheirGeneralMIDIFamily() throws {
        let presets = try SynthPresetLibrary.load(from: TestFiles.presets + "/synth")
        let table = SynthPreset.programTable(presets)
        func name(_ program: Int) -> String? { table[program] < 0 ? nil : presets[Int(table[program])].name }
        #expect(name(0) == "Soft Keys")
        #expect(name(2) == "FM Piano")  // Electric Grand: the piano below it
        #expect(name(4) == "Electric Piano")
        #expect(name(8) == "FM Bell")  // Celesta: no preset below it in its family, so the family's first
        #expect(name(30) == "Overdrive Guitar")  // Distortion Guitar
        #expect(name(35) == "Sub Bass")  // Fretless
        #expect(name(51) == "PWM Strings")  // Synth Strings 2
        #expect(name(91) == "Expressive Pad")  // Pad 4 (choir)
        #expect(table[128 + 38] == -1)  // bank 1 has nothing: the kernel falls back to bank 0
        // Every General MIDI family has a preset of its own.
        let covered = Set(presets.filter { $0.bank == 0 }.map { $0.program / 8 })
        #expect(covered == Set(0..<16), "\(covered.sorted())")
    }

    /// Sixteen channels with their own programs, drums on channel 10, bends, controllers and tuning-free
    /// keys: the same bits whatever the slice size.
    @Test(arguments: [16, 17, 64, 1000, 4096])
    func sixteenChannelsAreSliceIndependent(slice: Int) throws {
        var messages: [ScheduledMessage] = []
        for channel in 0..<16 {
            let at = Int64(channel * 700)
            messages.append(
                ScheduledMessage(
                    sampleTime: at, message: .programChange(channel: UInt8(channel), program: UInt8(channel * 8 + 1))))
            let note = UInt8(channel == 9 ? 36 + channel % 12 : 48 + channel)
            messages.append(
                ScheduledMessage(
                    sampleTime: at + 3, message: .noteOn(channel: UInt8(channel), note: note, velocity: 90)))
            messages.append(
                ScheduledMessage(
                    sampleTime: at + 9000, message: .noteOff(channel: UInt8(channel), note: note, velocity: 0)))
            messages.append(
                ScheduledMessage(
                    sampleTime: at + 4000,
                    message: .controlChange(channel: UInt8(channel), controller: 10, value: UInt8(channel * 8))))
            messages.append(
                ScheduledMessage(sampleTime: at + 5000, message: .pitchBend(channel: UInt8(channel), value: 9000)))
        }
        for (index, key) in [36, 38, 42, 46, 42, 49, 51, 56, 39, 37].enumerated() {
            messages.append(
                ScheduledMessage(
                    sampleTime: Int64(index * 2345 + 11), message: .noteOn(channel: 9, note: UInt8(key), velocity: 110))
            )
        }
        messages.sort { $0.sampleTime < $1.sampleTime }
        func render(_ slice: Int) throws -> [Float] {
            let rig = try rig()
            rig.schedule(messages)
            return rig.render(30_000, slice: slice).0
        }
        let reference = try render(256)
        #expect(reference.contains { $0 != 0 })
        #expect(try render(slice) == reference)
    }

    /// All sixteen channels with their own programs, drum hits and controller traffic for 10,000 slices of 64
    /// frames: nothing is allocated on the render thread.
    @Test func sixteenChannelsAndDrumsRenderWithoutAllocating() throws {
        let rig = try rig(slice: 64)
        for cycle in 0..<10_000 {
            let at = Int64(cycle * 64 + 9)
            let channel = UInt8(cycle % 16)
            if cycle % 4 == 0 {
                let note = UInt8(channel == 9 ? 35 + cycle % 23 : 40 + cycle % 40)
                rig.scheduler.schedule(.noteOn(channel: channel, note: note, velocity: 100), at: at)
                rig.scheduler.schedule(.noteOff(channel: channel, note: note, velocity: 0), at: at + 900)
                rig.scheduler.schedule(
                    .controlChange(channel: channel, controller: 7, value: UInt8(cycle % 128)), at: at)
            }
            if cycle % 50 == 0 {
                rig.scheduler.schedule(.controlChange(channel: channel, controller: 0, value: UInt8(cycle % 2)), at: at)
                rig.scheduler.schedule(.programChange(channel: channel, program: UInt8(cycle % 128)), at: at)
            }
            rig.harness.renderSlice(64, counting: true)
        }
        #expect(rig.scheduler.lateCount == 0)
        try expectNoAllocations(rig.harness.allocations)
    }
}

/// Every factory preset, played as a chord: audible, finite, not clipping, and unlike every other.
@Suite struct SynthFactoryPresetTests {
    @Test func everyFactoryPresetSoundsWithoutClipping() throws {
        let presets = try SynthPresetLibrary.load(from: TestFiles.presets + "/synth")
        #expect(presets.count >= 32)
        let registry = BuiltInUnits.registry()
        let synth = OscillatorSynthUnit.componentDescription
        registry.register(Component(synth, name: "Aulos: Oscillator Synth") { OscillatorSynthUnit(presets: presets) })
        for preset in presets {
            let rig = try InstrumentRig(synth, maximumFrames: 1024, registry: registry)
            rig.scheduler.schedule(.programChange(channel: 0, program: UInt8(preset.program)), at: 0)
            for note: UInt8 in [48, 52, 55, 60] {
                rig.scheduler.schedule(.noteOn(channel: 0, note: note, velocity: 100), at: 10)
                rig.scheduler.schedule(.noteOff(channel: 0, note: note, velocity: 64), at: 48_000)
            }
            let (left, right) = rig.render(72_000, slice: 1024)
            let peak = zip(left, right).map { max(abs($0), abs($1)) }.max()!
            #expect(left.allSatisfy(\.isFinite) && right.allSatisfy(\.isFinite), "\(preset.name)")
            #expect(peak > 0.02 && peak < 1, "\(preset.name) peaks at \(peak)")
        }
    }
}
