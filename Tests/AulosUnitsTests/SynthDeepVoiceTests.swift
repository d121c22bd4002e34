import AulosCore
import AulosDSP
import AulosMIDI
import AulosTestSupport
import AulosUnits
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The deeper voice: unison stacks, hard sync and FM (their aliasing measured), ring modulation, the
/// sub-oscillator, the ladder filter, glide, LFO 2 and envelope 3 through the matrix.
@Suite struct SynthDeepVoiceTests {
    typealias P = OscillatorSynthUnit.Parameter
    let synth = OscillatorSynthUnit.componentDescription

    /// The sine patch changed by `values`, playing `note` from frame 0; `frames` of the left channel.
    func play(
        _ values: [P: Float], note: UInt8 = 69, frames: Int = 48_000, events: [(Int64, MIDIMessage)] = []
    ) throws -> [Float] {
        let rig = try InstrumentRig(synth) { unit in
            try setSynth(unit, pureSine)
            try setSynth(unit, values)
        }
        rig.scheduler.schedule(.noteOn(channel: 0, note: note, velocity: 100), at: 0)
        for (at, message) in events { rig.scheduler.schedule(message, at: at) }
        return rig.render(frames, slice: 256).0
    }

    /// Magnitudes of 16,384 samples from `start` under a Blackman–Harris window (sidelobes below −92 dB).
    func spectrum(_ samples: [Float], from start: Int) -> [Double] {
        let n = 16_384
        var real = (0..<n).map { i -> Double in
            let x = 2 * Double.pi * Double(i) / Double(n)
            let w = 0.35875 - 0.48829 * cos(x) + 0.14128 * cos(2 * x) - 0.01168 * cos(3 * x)
            return Double(samples[start + i]) * w
        }
        var imaginary = [Double](repeating: 0, count: n)
        FFT.forward(real: &real, imaginary: &imaginary)
        return (0..<(n / 2)).map { (real[$0] * real[$0] + imaginary[$0] * imaginary[$0]).squareRoot() }
    }

    /// The loudest bin that is not within 6 bins of a multiple of one of `fundamentals`, in dB against the
    /// loudest bin of all: what aliasing (or any inharmonic product) adds.
    func inharmonicLevel(_ magnitude: [Double], fundamentals: [Double]) -> Double {
        let binWidth = 48_000.0 / 16_384
        let loudest = magnitude.max()!
        var worst = 0.0
        for bin in 8..<magnitude.count {
            let frequency = Double(bin) * binWidth
            let nearHarmonic = fundamentals.contains { f0 in
                let harmonic = (frequency / f0).rounded()
                return harmonic >= 1 && abs(frequency - harmonic * f0) < 6 * binWidth
            }
            if !nearHarmonic { worst = max(worst, magnitude[bin]) }
        }
        return 20 * log10(worst / loudest)
    }

    func frequency(ofNote note: Double) -> Double { 440 * pow(2, (note - 69) / 12) }

    /// Seven detuned band-limited saws at 2.6 kHz: every partial of every copy stays below Nyquist, so
    /// nothing else rises above −60 dB.
    @Test func aSevenVoiceSupersawDoesNotAlias() throws {
        let detune: Float = 30
        let samples = try play(
            [.osc1Waveform: 0, .osc1Unison: 7, .osc1Detune: detune, .osc1Width: 0], note: 100, frames: 4800 + 16_384)
        let centre = frequency(ofNote: 100)
        let copies = (0..<7).map { centre * pow(2, (Double($0) / 6 - 0.5) * Double(detune) / 1200) }
        let level = inharmonicLevel(spectrum(samples, from: 4800), fundamentals: copies)
        #expect(level < -60, "inharmonic peak \(level) dB")
    }

    /// Hard sync, osc 2 a fifth above osc 1 at about 1 kHz: the reset's jump is corrected by a polyBLEP
    /// residual; what is not a harmonic of the master stays below −50 dB.
    @Test func hardSyncAliasingIsFiftyDecibelsDown() throws {
        let samples = try play(
            [.osc2Waveform: 0, .oscMix: 1, .osc2Coarse: 7, .osc2Fine: 0, .oscSync: 1], note: 83,
            frames: 4800 + 16_384)
        let level = inharmonicLevel(spectrum(samples, from: 4800), fundamentals: [frequency(ofNote: 83)])
        print("measured: hard sync, 987.8 Hz master, saw a fifth above: inharmonic peak \(level) dB")
        #expect(level < -50, "inharmonic peak \(level) dB")
    }

    /// Through-zero FM at a 1:2 ratio and index 1 on a 1 kHz sine: the sidebands land on harmonics; anything
    /// else stays below −50 dB.
    @Test func fmAliasingIsFiftyDecibelsDown() throws {
        let samples = try play(
            [.osc2Waveform: 3, .osc2Coarse: 12, .osc2Fine: 0, .fmAmount: 1], note: 83, frames: 4800 + 16_384)
        let magnitude = spectrum(samples, from: 4800)
        let f0 = frequency(ofNote: 83)
        let level = inharmonicLevel(magnitude, fundamentals: [f0])
        print("measured: FM 1:2, index 1, 987.8 Hz carrier: inharmonic peak \(level) dB")
        #expect(level < -50, "inharmonic peak \(level) dB")
        // And it is FM: the third harmonic (carrier + modulator) is there.
        let binWidth = 48_000.0 / 16_384
        #expect(magnitude[Int((3 * f0 / binWidth).rounded())] > magnitude.max()! / 100)
    }

    /// Ring modulation of two sines a fifth apart leaves their sum and difference, not the carrier.
    @Test func ringModulationLeavesSumAndDifference() throws {
        let samples = try play([.osc2Waveform: 3, .osc2Coarse: 7, .osc2Fine: 0, .ringMod: 1], frames: 4800 + 16_384)
        let magnitude = spectrum(samples, from: 4800)
        let binWidth = 48_000.0 / 16_384
        func level(_ f: Double) -> Double { magnitude[Int((f / binWidth).rounded())] / magnitude.max()! }
        let fifth = 440 * pow(2, 7 / 12.0)
        #expect(level(fifth + 440) > 0.5)
        #expect(level(fifth - 440) > 0.5)
        #expect(level(440) < 0.001)
    }

    /// The sub-oscillator is a square an octave below osc 1.
    @Test func theSubOscillatorIsAnOctaveDown() throws {
        let samples = try play([.subLevel: 1], frames: 4800 + 16_384)
        let magnitude = spectrum(samples, from: 4800)
        let binWidth = 48_000.0 / 16_384
        func level(_ f: Double) -> Double { magnitude[Int((f / binWidth).rounded())] / magnitude.max()! }
        #expect(level(220) > 0.3)
        #expect(level(660) > 0.1)  // a square's third harmonic
        #expect(level(440) > 0.3)  // osc 1 itself
    }

    /// The ladder at full resonance rings on its own at its cutoff (within 1 %), fed only a whisper of noise.
    @Test(arguments: [500.0, 1000.0, 4000.0])
    func theLadderSelfOscillatesAtItsCutoff(cutoff: Double) throws {
        let samples = try play(
            // Noise through the state-variable filter at 20 Hz, so the ladder hears only a whisper.
            [
                .osc1Waveform: 4, .cutoff: 20, .filter2Routing: 1, .filter2Cutoff: Float(cutoff),
                .filter2Resonance: 1,
            ],
            frames: 24_000 + 16_384)
        let magnitude = spectrum(samples, from: 24_000)
        let binWidth = 48_000.0 / 16_384
        let peak = magnitude.indices.max { magnitude[$0] < magnitude[$1] }!
        // Interpolate the peak between bins (parabolic on log magnitudes).
        let (a, b, c) = (log(magnitude[peak - 1]), log(magnitude[peak]), log(magnitude[peak + 1]))
        let measured = (Double(peak) + 0.5 * (a - c) / (a - 2 * b + c)) * binWidth
        print("measured: ladder self-oscillation at cutoff \(cutoff) Hz: \(measured) Hz")
        #expect(abs(measured / cutoff - 1) < 0.01, "\(measured) Hz for a cutoff of \(cutoff) Hz")
        #expect(samples.allSatisfy { abs($0) < 2 }, "saturation bounds it")
    }

    /// Legato glide of 0.3 s in mono: the second key starts at the first's pitch and arrives at its own.
    @Test func legatoGlideSlidesBetweenKeys() throws {
        let samples = try play(
            [.voiceMode: 2, .glideTime: 0.3, .glideMode: 1], note: 57, frames: 72_000,
            events: [(12_000, .noteOn(channel: 0, note: 69, velocity: 100))])
        let early = measuredFrequency(samples[12_100..<12_600], sampleRate: 48_000)
        let arrived = measuredFrequency(samples[60_000..<70_000], sampleRate: 48_000)
        #expect(early < 240, "starts near A3: \(early) Hz")
        #expect(abs(cents(arrived, 440)) < 0.1, "arrives at A4: \(arrived) Hz")
    }

    /// Envelope 3 through the matrix bends the pitch down an octave over its decay; LFO 2 as a square
    /// alternates the pitch between two octaves.
    @Test func envelopeThreeAndLFOTwoReachTheMatrix() throws {
        let envelope = try play([
            .mod1Source: Float(ModulationSource.modEnvelope.rawValue), .mod1Destination: 1, .mod1Amount: 0.5,
            .env3Attack: 0, .env3Decay: 0.2, .env3Sustain: 0,
        ])
        #expect(measuredFrequency(envelope[200..<600], sampleRate: 48_000) > 700)
        #expect(abs(cents(measuredFrequency(envelope[30_000..<40_000], sampleRate: 48_000), 440)) < 1)
        let lfo = try play([
            .mod1Source: Float(ModulationSource.lfo2.rawValue), .mod1Destination: 1, .mod1Amount: 0.5,
            .lfo2Shape: 3, .lfo2Rate: 2, .lfo2Retrigger: 1,
        ])
        // A 2 Hz square: up an octave for the first quarter second, down for the next.
        #expect(abs(cents(measuredFrequency(lfo[2000..<10_000], sampleRate: 48_000), 880)) < 1)
        #expect(abs(cents(measuredFrequency(lfo[14_000..<22_000], sampleRate: 48_000), 220)) < 1)
    }

    /// A rich patch (stacks, sync, FM, ring, sub, ladder, drive, glide, a free-running LFO 2, envelope 3)
    /// renders the same bits whatever the slice size.
    @Test(arguments: [17, 64, 1000])
    func aRichPatchIsSliceIndependent(slice: Int) throws {
        func render(_ slice: Int) throws -> [Float] {
            let rig = try InstrumentRig(synth) { unit in
                try setSynth(
                    unit,
                    [
                        .osc1Unison: 5, .osc2Unison: 3, .oscSync: 1, .fmAmount: 0.3, .ringMod: 0.2, .subLevel: 0.4,
                        .filter2Routing: 2, .drive: 12, .glideTime: 0.05, .glideMode: 2,
                        .mod1Source: Float(ModulationSource.lfo2.rawValue), .mod1Destination: 14, .mod1Amount: 0.2,
                        .lfo2Shape: 4, .lfo2Retrigger: 0,
                        .mod2Source: Float(ModulationSource.modEnvelope.rawValue), .mod2Destination: 2,
                        .mod2Amount: 0.1,
                    ])
            }
            for (index, note) in [48, 55, 60, 67, 72].enumerated() {
                rig.scheduler.schedule(
                    .noteOn(channel: 0, note: UInt8(note), velocity: 100), at: Int64(index * 3001 + 7))
                rig.scheduler.schedule(
                    .noteOff(channel: 0, note: UInt8(note), velocity: 0), at: Int64(index * 3001 + 9000))
            }
            return rig.render(30_000, slice: slice).0
        }
        let reference = try render(256)
        #expect(reference.contains { $0 != 0 })
        #expect(try render(slice) == reference)
    }
}
