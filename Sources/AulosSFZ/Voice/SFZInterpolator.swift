import Foundation

/// The voices' resampler: a windowed sinc, 24 taps (12 zero crossings each side) under a Kaiser window
/// (β = 8.6), read from a table of 256 points per zero crossing with linear interpolation between points.
///
/// Played at or below its own rate (step ≤ 1) the kernel is the plain windowed sinc: its cutoff is the
/// output's Nyquist frequency, with the transition band straddling it (about ±0.1 of the rate), so the
/// passband reaches 0.4 × the rate (19 kHz at 48 kHz) and whatever folds back lands above it; the
/// stopband is below −80 dB. Played faster (step s > 1, a transposition up) the kernel is stretched by s —
/// its cutoff lowered to the output's Nyquist frequency measured in the sample's frames — and reads 24·s taps,
/// so a sample transposed up an octave sheds what would alias instead of folding it back (linear or
/// 4-point interpolation does not: played an octave up they only drop every other frame). The step is
/// capped at `maximumStep` (three octaves up), which bounds the taps (`maximumReach`).
///
/// Measured (Tests/AulosSFZTests/VoiceInterpolationTests, 64k-point FFT, Blackman–Harris window): a 10 kHz sine
/// at 48 kHz transposed up 11, 12 and 13 semitones shows no component above −112 dB beside the tone (linear
/// interpolation: −24 dB); a 15 kHz sine an octave up (30 kHz, past Nyquist) leaves −89 dB (linear and
/// 4-point: 0 dB, folded to 18 kHz). Cost: 24 multiply-adds a channel per frame at or below the sample's rate,
/// 24·s above it, against FluidSynth's default 4 (its 4-point cubic, which does not stretch).
///
/// Threads: the table is built on the control thread and only read after (render thread).
public struct SFZInterpolator: @unchecked Sendable {
    /// Zero crossings each side of the kernel's centre.
    public static var halfWidth: Int { @inline(__always) @_noAllocation @_noLocks get { 12 } }
    /// Table points per zero crossing.
    public static var resolution: Int { @inline(__always) @_noAllocation @_noLocks get { 256 } }
    public static var maximumStep: Double { @inline(__always) @_noAllocation @_noLocks get { 8 } }
    /// Frames either side of a position the widest kernel reads.
    public static var maximumReach: Int { @inline(__always) @_noAllocation @_noLocks get { 12 * 8 + 2 } }
    static var beta: Double { 8.6 }

    /// The kernel at t = (point − 12·resolution) / resolution zero crossings, plus two zero points past the end.
    public let table: UnsafeMutablePointer<Float>

    public init() {
        let count = 2 * Self.halfWidth * Self.resolution
        table = .allocate(capacity: count + 2)
        let half = Double(Self.halfWidth)
        let norm = Self.besselI0(Self.beta)
        for point in 0...count {
            let t = Double(point - Self.halfWidth * Self.resolution) / Double(Self.resolution)
            let sinc = t == 0 ? 1 : sin(Double.pi * t) / (Double.pi * t)
            let x = t / half
            let window = abs(x) >= 1 ? 0 : Self.besselI0(Self.beta * (1 - x * x).squareRoot()) / norm
            table[point] = Float(sinc * window)
        }
        table[count + 1] = 0
    }

    /// Frees the table; once, from the owner, after no voice reads it.
    public func deallocate() { table.deallocate() }

    /// The modified Bessel function of the first kind, order 0 (its power series; control side).
    static func besselI0(_ x: Double) -> Double {
        var sum = 1.0
        var term = 1.0
        var k = 1.0
        while term > 1e-12 * sum {
            term *= (x / (2 * k)) * (x / (2 * k))
            sum += term
            k += 1
        }
        return sum
    }

    /// The 24 weights for a position `fraction` (0 ≤ fraction < 1) past a frame i, for frames i − 11 … i + 12
    /// (step ≤ 1).
    @inline(__always) @_noAllocation @_noLocks
    public func weights(fraction: Double, into weights: UnsafeMutablePointer<Float>) {
        let resolution = Self.resolution
        let scaled = Float(fraction) * Float(resolution)
        let point = min(resolution - 1, Int(scaled))
        let between = scaled - Float(point)
        // Frame i − 11 + j sits t = fraction + 11 − j crossings from the position: point (23 − j)·256 + …
        var index = (2 * Self.halfWidth - 1) * resolution + point
        for j in 0..<(2 * Self.halfWidth) {
            let a = table[index]
            weights[j] = a + (table[index + 1] - a) * between
            index &-= resolution
        }
    }

    /// The weights of the stretched kernel (step `scale` > 1) for frames `first` ..< `first` + `count` around
    /// `position`.
    @inline(__always) @_noAllocation @_noLocks
    public func weights(
        position: Double, first: Int, count: Int, scale: Double, into weights: UnsafeMutablePointer<Float>
    ) {
        let resolution = Double(Self.resolution)
        let limit = Double(2 * Self.halfWidth * Self.resolution)
        let inverse = 1 / scale
        let gain = Float(inverse)
        let origin = Double(Self.halfWidth) * resolution
        for j in 0..<count {
            let u = origin + (position - Double(first + j)) * inverse * resolution
            if u < 0 || u >= limit {
                weights[j] = 0
                continue
            }
            let point = Int(u)
            let between = Float(u - Double(point))
            let a = table[point]
            weights[j] = (a + (table[point + 1] - a) * between) * gain
        }
    }
}
