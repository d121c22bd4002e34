import AulosDSP
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The BS.1770 meter against known figures: EBU Tech 3341's test signals (a stereo 1 kHz sine at −23 dBFS
/// reads −23.0 LUFS; its gating cases), the same sine at any sample rate, and a peak between samples.
@Suite struct LoudnessMeterTests {
    /// `seconds` of a sine at `hertz` with peak level `dBFS`, starting at `phase` (radians).
    func sine(_ hertz: Double, dBFS: Double, seconds: Double, rate: Double, phase: Double = 0) -> [Float] {
        let amplitude = pow(10, dBFS / 20)
        return (0..<Int(seconds * rate)).map {
            Float(amplitude * sin(2 * Double.pi * hertz * Double($0) / rate + phase))
        }
    }

    /// A sine in one channel reads its RMS level plus BS.1770's offset: −20 dBFS peak is −23.0 LUFS (as the
    /// standard's 997 Hz reference defines); full scale is −3.01 LUFS in one channel, 0.0 in both.
    @Test func aSineReadsItsLevel() {
        let rate = 48_000.0
        let tone = sine(997, dBFS: -20, seconds: 3, rate: rate)
        let silence = [Float](repeating: 0, count: tone.count)
        #expect(abs(LoudnessMeter.integratedLoudness(left: tone, right: silence, sampleRate: rate) + 23.01) < 0.03)
        let full = sine(997, dBFS: 0, seconds: 3, rate: rate)
        #expect(abs(LoudnessMeter.integratedLoudness(left: full, right: silence, sampleRate: rate) + 3.01) < 0.03)
        #expect(abs(LoudnessMeter.integratedLoudness(left: full, right: full, sampleRate: rate)) < 0.03)
        // EBU Tech 3341 case 1: a stereo 1 kHz sine at −23 dBFS is −23.0 ± 0.1 LUFS.
        let ebu = sine(1000, dBFS: -23, seconds: 3, rate: rate)
        #expect(abs(LoudnessMeter.integratedLoudness(left: ebu, right: ebu, sampleRate: rate) + 23) < 0.1)
    }

    /// The K-weighting is computed for the rate: the same tone reads the same at 16 to 96 kHz, and a low
    /// tone reads lower than a mid one (the high-pass), a high one higher (the shelf).
    @Test func theWeightingFollowsTheSampleRate() {
        for rate in [16_000.0, 24_000, 44_100, 48_000, 96_000] {
            let tone = sine(997, dBFS: -20, seconds: 2, rate: rate)
            let reading = LoudnessMeter.integratedLoudness(left: tone, right: tone, sampleRate: rate)
            #expect(abs(reading + 20) < 0.05, "\(rate) Hz: \(reading)")
        }
        let low = sine(40, dBFS: -20, seconds: 2, rate: 48_000)
        let high = sine(5000, dBFS: -20, seconds: 2, rate: 48_000)
        #expect(LoudnessMeter.integratedLoudness(left: low, right: low, sampleRate: 48_000) < -22)
        #expect(LoudnessMeter.integratedLoudness(left: high, right: high, sampleRate: 48_000) > -17)
    }

    /// EBU Tech 3341 cases 3 and 5 (at 16 kHz, to keep the test short) read −23.0 ± 0.1 LUFS: the relative
    /// gate drops passages 13 LU down, keeps those 6 LU down. The absolute gate: 60 s at −72 dBFS (below
    /// −70 LUFS) then 10 s at −60 reads −60.0; without it the quiet minute would pass the relative gate
    /// (the mean of everything is −67.1, its gate −77.1) and it would read −67.1.
    @Test func theGatesFollowEBUTech3341() {
        let rate = 16_000.0
        func passage(_ parts: [(dBFS: Double, seconds: Double)]) -> Double {
            let samples = parts.flatMap { sine(1000, dBFS: $0.dBFS, seconds: $0.seconds, rate: rate) }
            return LoudnessMeter.integratedLoudness(left: samples, right: samples, sampleRate: rate)
        }
        let case3 = passage([(-36, 10), (-23, 60), (-36, 10)])
        let case5 = passage([(-26, 20), (-20, 20.1), (-26, 20)])
        for (name, reading) in [("3", case3), ("5", case5)] {
            #expect(abs(reading + 23) < 0.1, "case \(name): \(reading)")
        }
        let nearSilence = passage([(-72, 60), (-60, 10)])
        #expect(abs(nearSilence + 60) < 0.1, "\(nearSilence)")
        #expect(LoudnessMeter.integratedLoudness(left: [0, 0], right: [0, 0], sampleRate: rate) == -.infinity)
        let silence = [Float](repeating: 0, count: 48_000)
        #expect(LoudnessMeter.integratedLoudness(left: silence, right: silence, sampleRate: rate) == -.infinity)
    }

    /// A sine at a quarter of the rate sampled 45° off its crests peaks at −3.01 dBFS in the samples but
    /// 0 dBTP between them; a slow sine's true peak is its sample peak.
    @Test func truePeakFindsPeaksBetweenSamples() {
        let rate = 48_000.0
        let quarter = sine(rate / 4, dBFS: 0, seconds: 0.1, rate: rate, phase: Double.pi / 4)
        #expect(abs(20 * log10(Double(quarter.map(abs).max()!)) + 3.01) < 0.01)
        let peak = LoudnessMeter.truePeak(left: quarter, right: quarter)
        #expect(abs(peak) < 0.2, "\(peak) dBTP")
        let slow = sine(997, dBFS: -6, seconds: 0.1, rate: rate)
        #expect(abs(LoudnessMeter.truePeak(slow) + 6) < 0.05)
        #expect(LoudnessMeter.truePeak([0, 0, 0]) == -.infinity)
    }
}
