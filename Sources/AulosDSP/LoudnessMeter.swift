#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How loud a recording is, as ITU-R BS.1770-4 measures it: the integrated loudness (K-weighted, gated) in
/// LUFS and the true peak (4× oversampled) in dBTP. What the tests compare instruments by, and what a
/// render reports; the same figures `ffmpeg -af ebur128` or libebur128 give.
///
/// Threads: any thread but the render thread (it allocates).
public enum LoudnessMeter {
    /// The integrated loudness of a stereo recording in LUFS: each channel K-weighted (the filters computed
    /// for `sampleRate`), mean squares over 400 ms blocks every 100 ms, blocks below −70 LUFS dropped, then
    /// blocks more than 10 LU below the loudness of the rest. −∞ for a recording shorter than one block or
    /// gated away entirely.
    public static func integratedLoudness(left: [Float], right: [Float], sampleRate: Double) -> Double {
        integratedLoudness(channels: [left, right], sampleRate: sampleRate)
    }

    /// The integrated loudness of any number of channels (each weighted 1: left, right, centre), in LUFS.
    public static func integratedLoudness(channels: [[Float]], sampleRate: Double) -> Double {
        let blocks = blockPowers(channels: channels, sampleRate: sampleRate)
        let absolute = blocks.filter { loudness(ofPower: $0) > -70 }
        guard !absolute.isEmpty else { return -.infinity }
        let threshold = loudness(ofPower: absolute.reduce(0, +) / Double(absolute.count)) - 10
        let relative = absolute.filter { loudness(ofPower: $0) > threshold }
        guard !relative.isEmpty else { return -.infinity }
        return loudness(ofPower: relative.reduce(0, +) / Double(relative.count))
    }

    /// The true peak of a recording in dBTP: the largest magnitude of any channel after 4× oversampling
    /// (BS.1770-4 Annex 2), so a peak between samples counts. −∞ for silence.
    public static func truePeak(left: [Float], right: [Float]) -> Double {
        max(truePeak(left), truePeak(right))
    }

    /// The true peak of one channel in dBTP.
    public static func truePeak(_ samples: [Float]) -> Double {
        let taps = interpolator
        let reach = taps.count / 6
        var peak = 0.0
        samples.withUnsafeBufferPointer { x in
            for sample in x { peak = max(peak, Double(abs(sample))) }
            // The three points between each sample and the next, from `reach` neighbours on either side.
            for index in 0..<x.count {
                for phase in 1..<4 {
                    var sum = 0.0
                    for k in (1 - reach)...reach {
                        let at = index + k
                        guard at >= 0 && at < x.count else { continue }
                        sum += Double(x[at]) * taps[(phase - 1) * 2 * reach + k + reach - 1]
                    }
                    peak = max(peak, abs(sum))
                }
            }
        }
        return 20 * log10(peak)
    }

    /// BS.1770's loudness of a (weighted, summed) mean square: −0.691 + 10 log10, the offset that makes a
    /// 997 Hz sine read its RMS level.
    static func loudness(ofPower power: Double) -> Double { -0.691 + 10 * log10(power) }

    /// The sum over channels of the K-weighted mean square of each gating block (400 ms, 75 % overlap).
    static func blockPowers(channels: [[Float]], sampleRate: Double) -> [Double] {
        let frames = channels.map(\.count).min() ?? 0
        let step = Int((sampleRate * 0.1).rounded())
        let blockSteps = 4
        guard step > 0, frames >= step * blockSteps else { return [] }
        // The K-weighted energy of each 100 ms step; a block is four consecutive steps.
        var steps = [Double](repeating: 0, count: frames / step)
        for channel in channels {
            var shelf = KWeighting.shelf(sampleRate: sampleRate)
            var highPass = KWeighting.highPass(sampleRate: sampleRate)
            channel.withUnsafeBufferPointer { x in
                for index in steps.indices {
                    var energy = 0.0
                    for at in (index * step)..<((index + 1) * step) {
                        let y = highPass.process(shelf.process(Double(x[at])))
                        energy += y * y
                    }
                    steps[index] += energy
                }
            }
        }
        let length = Double(step * blockSteps)
        return (0...(steps.count - blockSteps)).map { start in
            steps[start..<(start + blockSteps)].reduce(0, +) / length
        }
    }

    /// A 4× polyphase interpolator: for the points a quarter, half and three quarters of the way to the next
    /// sample, the weights of the 12 samples around them (a Hann-windowed sinc; tap `(phase − 1) · 12 + k +
    /// 5` weighs sample `index + k`, k = −5…6). Cheap, and within a few hundredths of a dB of the Annex's
    /// 48-tap filter on programme material.
    static let interpolator: [Double] = {
        let reach = 6
        var taps: [Double] = []
        for phase in 1..<4 {
            for k in (1 - reach)...reach {
                let t = Double(phase) / 4 - Double(k)
                let sinc = sin(Double.pi * t) / (Double.pi * t)
                let window = 0.5 + 0.5 * cos(Double.pi * t / Double(reach))
                taps.append(sinc * window)
            }
        }
        return taps
    }()
}

/// BS.1770's K-weighting: a high shelf (+4 dB above ~1.7 kHz, the head's effect) and a high-pass (the RLB
/// curve), as biquads derived for any sample rate (the standard lists them only for 48 kHz; these give its
/// figures there). Plain values; the thread that measures.
struct KWeighting {
    var b0 = 1.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0
    var s1 = 0.0, s2 = 0.0

    static func shelf(sampleRate: Double) -> KWeighting {
        let k = tan(Double.pi * 1681.974450955533 / sampleRate)
        let q = 0.7071752369554196
        let vh = pow(10, 3.999843853973347 / 20)
        let vb = pow(vh, 0.4996667741545416)
        let a0 = 1 + k / q + k * k
        return KWeighting(
            b0: (vh + vb * k / q + k * k) / a0, b1: 2 * (k * k - vh) / a0, b2: (vh - vb * k / q + k * k) / a0,
            a1: 2 * (k * k - 1) / a0, a2: (1 - k / q + k * k) / a0)
    }

    static func highPass(sampleRate: Double) -> KWeighting {
        let k = tan(Double.pi * 38.13547087602444 / sampleRate)
        let q = 0.5003270373238773
        let a0 = 1 + k / q + k * k
        return KWeighting(b0: 1, b1: -2, b2: 1, a1: 2 * (k * k - 1) / a0, a2: (1 - k / q + k * k) / a0)
    }

    @inline(__always)
    mutating func process(_ x: Double) -> Double {
        let y = b0 * x + s1
        s1 = b1 * x - a1 * y + s2
        s2 = b2 * x - a2 * y
        return y
    }
}
