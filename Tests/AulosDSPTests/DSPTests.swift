import AulosDSP
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct FastMathTests {
    @Test func exp2MatchesLibm() {
        var worst = 0.0
        for i in -4000...4000 {
            let x = Double(i) / 137.0
            worst = max(worst, abs(FastMath.exp2(x) / Glibc.exp2(x) - 1))
        }
        #expect(worst < 5e-9)
        #expect(FastMath.exp2(0) == 1)
        #expect(FastMath.exp2(-3) == 0.125)
        #expect(FastMath.exp2(10) == 1024)
    }

    @Test func equalTemperamentIsExactToAHundredthOfACent() {
        var worstCents = 0.0
        for note in 0...127 {
            let reference = 440 * Glibc.pow(2, (Double(note) - 69) / 12)
            worstCents = max(worstCents, abs(1200 * Glibc.log2(FastMath.frequency(ofNote: Double(note)) / reference)))
        }
        #expect(worstCents < 0.01)
        #expect(FastMath.frequency(ofNote: 69) == 440)
    }

    @Test func sineAndTanMatchLibm() {
        var worstSine = 0.0
        var worstTan = 0.0
        for i in 0..<10_000 {
            let phase = Double(i) / 10_000 * 3 - 1
            worstSine = max(worstSine, abs(FastMath.sine(phase) - Glibc.sin(2 * .pi * phase)))
            let x = Double(i) / 10_000 * 1.45
            worstTan = max(worstTan, abs(FastMath.tan(x) / Glibc.tan(x) - 1))
        }
        #expect(worstSine < 1e-8)
        #expect(worstTan < 1e-6)
    }

    @Test func noiseIsDeterministicAndBounded() {
        var a = NoiseGenerator(seed: 42)
        var b = NoiseGenerator(seed: 42)
        var sum: Float = 0
        for _ in 0..<10_000 {
            let x = a.next()
            #expect(x == b.next())
            #expect(x >= -1 && x < 1)
            sum += x
        }
        #expect(abs(sum / 10_000) < 0.05)
    }
}

@Suite struct WavetableTests {
    let tables = WavetableSet(sampleRate: 48_000)

    @Test func lowBandSawApproachesTheIdealRamp() {
        // Away from the jump, the 1023-harmonic saw is within a few percent of 2φ − 1.
        var worst: Float = 0
        for i in 100..<1900 {
            let phase = Double(i) / 2048
            worst = max(worst, abs(tables.saw.sample(band: 0, phase: phase) - Float(2 * phase - 1)))
        }
        #expect(worst < 0.02)
    }

    @Test func highBandsHoldOnlyHarmonicsBelowNyquist() {
        // Band for 5 kHz: every harmonic k with k·(band top) ≥ 24 kHz must be absent.
        let band = Wavetable.band(forNote: 111.1)  // ≈ 5 kHz
        let top = 8 * FastMath.exp2(Double(band + 1) / 2)
        #expect(top >= 5_000)
        let allowed = Int(24_000 / top)
        for k in 1...12 {
            var re = 0.0
            var im = 0.0
            for n in 0..<2048 {
                let value = Double(tables.saw.sample(band: band, phase: Double(n) / 2048))
                re += value * Glibc.cos(2 * .pi * Double(k * n) / 2048)
                im += value * Glibc.sin(2 * .pi * Double(k * n) / 2048)
            }
            let magnitude = (re * re + im * im).squareRoot() / 1024
            if k <= allowed {
                #expect(abs(magnitude - 2 / (.pi * Double(k))) < 1e-4, "harmonic \(k)")
            } else {
                #expect(magnitude < 1e-6, "harmonic \(k) should be absent")
            }
        }
    }

    @Test func bandsRiseWithPitch() {
        #expect(Wavetable.band(forNote: 0) == 0)
        #expect(Wavetable.band(forNote: 127) == WavetableSet.bandCount - 3)
        var previous = 0
        for note in 0...127 {
            let band = Wavetable.band(forNote: Double(note))
            #expect(band >= previous)
            previous = band
        }
    }
}

@Suite struct FilterAndEnvelopeTests {
    /// Gain of the filter on a sine at `frequency`, after settling.
    func gain(_ mode: Int, cutoff: Double, at frequency: Double, resonance: Float = 0) -> Double {
        var filter = StateVariableFilter()
        filter.setCoefficients(cutoff: cutoff, resonance: resonance, sampleRate: 48_000)
        var peak: Float = 0
        for n in 0..<48_000 {
            let y = filter.process(Float(FastMath.sine(frequency * Double(n) / 48_000)), mode: mode)
            if n > 24_000 { peak = max(peak, abs(y)) }
        }
        return 20 * Glibc.log10(Double(peak))
    }

    @Test func lowPassFallsTwelveDecibelsPerOctave() {
        #expect(abs(gain(0, cutoff: 1000, at: 100)) < 0.1)
        #expect(abs(gain(0, cutoff: 1000, at: 1000) - (-6.02)) < 0.3)  // Q = 0.5 at zero resonance
        #expect(gain(0, cutoff: 1000, at: 8000) < -34)
        #expect(gain(1, cutoff: 1000, at: 100) < -38)
        #expect(gain(0, cutoff: 1000, at: 1000, resonance: 0.9) > 10)
    }

    @Test func envelopeStagesAndTimes() {
        var envelope = Envelope()
        let shape = EnvelopeShape(attack: 0, decay: 0.1, sustain: 0.5, release: 0.1, sampleRate: 48_000)
        envelope.start()
        #expect(envelope.next(shape) == 1)  // zero attack: full level on the first sample
        for _ in 0..<4800 { _ = envelope.next(shape) }
        #expect(abs(envelope.level - 0.5) < 0.5 * 0.01 + 1e-4)
        envelope.release()
        var samples = 0
        while envelope.isActive && samples < 100_000 {
            _ = envelope.next(shape)
            samples += 1
        }
        // 40 dB in 100 ms from 0.5: reaching 1e-5 (−94 dB re 0.5) takes ≈ 94/40 × 4800 frames.
        #expect(abs(Double(samples) - 94.0 / 40 * 4800) < 300)
    }

    @Test func linearAttack() {
        var envelope = Envelope()
        let shape = EnvelopeShape(attack: 0.01, decay: 1, sustain: 1, release: 1, sampleRate: 48_000)
        envelope.start()
        let first = envelope.next(shape)
        for _ in 0..<238 { _ = envelope.next(shape) }
        #expect(abs(first - 1 / 480) < 1e-6)
        #expect(abs(envelope.level - 0.5) < 0.01)
    }
}
