import AulosDSP
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The limiter's promises: the output is the input (delayed) below the ceiling, never past the ceiling
/// between samples above it, and its gain moves without a jump.
@Suite struct TruePeakLimiterTests {
    static let rate = 48_000.0

    /// Runs `left`/`right` through a limiter in slices of `slice` frames, with `latency` frames of silence
    /// after so the whole signal comes out; returns the output aligned with the input.
    static func limited(_ left: [Float], _ right: [Float], ceiling: Float, slice: Int = 64) -> (
        left: [Float], right: [Float], limited: Int, lowest: Float
    ) {
        var limiter = TruePeakLimiter.allocate(sampleRate: rate)
        defer { limiter.deallocate() }
        let latency = limiter.latency
        var l = left + [Float](repeating: 0, count: latency)
        var r = right + [Float](repeating: 0, count: latency)
        var start = 0
        while start < l.count {
            let count = min(slice, l.count - start)
            l.withUnsafeMutableBufferPointer { lb in
                r.withUnsafeMutableBufferPointer { rb in
                    limiter.process(
                        left: lb.baseAddress! + start, right: rb.baseAddress! + start, frames: count, gain: 1,
                        ceiling: ceiling, releaseSeconds: 0.15)
                }
            }
            start += count
        }
        return (Array(l[latency...]), Array(r[latency...]), limiter.limitedSamples, limiter.lowestGain)
    }

    /// The highest point between samples, rebuilt with a long (64-tap a side) windowed sinc at 16×: a
    /// reference independent of the limiter's own 16-tap detector.
    static func truePeak(_ x: [Float]) -> Float {
        var peak: Float = 0
        let half = 64
        for n in 0..<x.count {
            peak = max(peak, abs(x[n]))
            for step in 1..<16 {
                let t = Double(step) / 16
                var value = 0.0
                for k in max(0, n - half + 1)...min(x.count - 1, n + half) {
                    let d = Double(k - n) - t
                    let window = 0.5 + 0.5 * cos(Double.pi * d / Double(half + 1))
                    value += Double(x[k]) * sin(Double.pi * d) / (Double.pi * d) * window
                }
                peak = max(peak, Float(abs(value)))
            }
        }
        return peak
    }

    /// A deterministic "music": a few sines and a decaying noise burst per beat.
    static func music(seconds: Double, level: Float) -> ([Float], [Float]) {
        let count = Int(seconds * rate)
        var seed: UInt32 = 12_345
        var left = [Float](repeating: 0, count: count)
        var right = [Float](repeating: 0, count: count)
        for n in 0..<count {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            let noise = Float(Int32(bitPattern: seed)) / Float(Int32.max)
            let t = Double(n) / rate
            let beat = t.truncatingRemainder(dividingBy: 0.5)
            let hit = Float(exp(-beat * 30))
            let tone = Float(
                0.4 * sin(2 * .pi * 110 * t) + 0.3 * sin(2 * .pi * 440 * t + 1) + 0.2 * sin(2 * .pi * 3520 * t))
            left[n] = level * (tone + 0.6 * hit * noise)
            right[n] = level * (0.8 * tone - 0.6 * hit * noise)
        }
        return (left, right)
    }

    @Test func belowTheCeilingTheOutputIsTheInputBitForBit() {
        let (left, right) = Self.music(seconds: 0.5, level: 0.45)  // peaks about −3 dBFS
        let ceiling: Float = 0.891  // −1 dBTP
        #expect(Self.truePeak(Array(left.prefix(4800))) < ceiling)
        let out = Self.limited(left, right, ceiling: ceiling)
        #expect(out.limited == 0)
        #expect(out.left == left)
        #expect(out.right == right)
    }

    @Test func aboveTheCeilingNothingPassesItEvenBetweenSamples() {
        let (left, right) = Self.music(seconds: 1, level: 2.5)  // peaks about +5 dBFS
        let ceiling: Float = 0.891
        let out = Self.limited(left, right, ceiling: ceiling)
        #expect(out.limited > 0)
        let samplePeak = max(out.left.map(abs).max()!, out.right.map(abs).max()!)
        #expect(samplePeak <= ceiling)
        // Between samples: within 0.2 dB of the ceiling (the detector's 32 taps against the 129-tap reference, on
        // full-band noise; 16 taps let it pass by 0.4 dB).
        let excerpt = 24_000..<28_800
        let truePeak = max(Self.truePeak(Array(out.left[excerpt])), Self.truePeak(Array(out.right[excerpt])))
        #expect(20 * log10(truePeak / ceiling) < 0.2, "true peak \(20 * log10(truePeak)) dBFS")
    }

    @Test func anInterSamplePeakIsCaught() {
        // A sine at a quarter of the rate, 45° off its samples: every sample at 0.707 of a true peak of 1.0.
        let count = 4800
        let wave = (0..<count).map { Float(sin(Double.pi / 2 * Double($0) + Double.pi / 4)) }
        let ceiling: Float = 0.891
        #expect(wave.map(abs).max()! < ceiling)  // the samples alone pass
        let out = Self.limited(wave, wave, ceiling: ceiling)
        #expect(out.limited > 0)
        let steady = Array(out.left[2400..<4000])
        #expect(Self.truePeak(steady) <= ceiling * 1.012, "true peak \(20 * log10(Self.truePeak(steady))) dBFS")
        #expect(abs(20 * log10(out.lowest) - 20 * log10(ceiling)) < 0.2)
    }

    @Test func theGainRampsWithoutAJump() {
        // A quiet tone, then a sudden loud one: the gain goes down over the look-ahead, not in one sample.
        let count = 9600
        let tone = (0..<count).map { n in
            Float(sin(2 * Double.pi * 1000 * Double(n) / Self.rate)) * (n < 4800 ? 0.2 : 4)
        }
        let out = Self.limited(tone, tone, ceiling: 0.5)
        // The gain the limiter applied, where the input is far enough from zero to read it.
        var worstStep: Float = 0
        var previous: Float?
        for n in 4700..<5000 where abs(tone[n]) > 0.05 {
            let gain = out.left[n] / tone[n]
            if let previous { worstStep = max(worstStep, abs(gain - previous)) }
            previous = gain
        }
        #expect(worstStep < 0.1, "the gain moved \(worstStep) between samples")
        #expect(out.left[4700..<5200].map(abs).max()! <= 0.5)
    }

    @Test func theSliceSizeChangesNothing() {
        let (left, right) = Self.music(seconds: 0.5, level: 3)
        let a = Self.limited(left, right, ceiling: 0.891, slice: 64)
        let b = Self.limited(left, right, ceiling: 0.891, slice: 37)
        #expect(a.left == b.left && a.right == b.right)
    }
}
