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
/// at 48 kHz transposed up 11, 12 and 13 semitones shows no component above −112 dB beside the tone, and
/// transposed down 1, 7 and 12.5 semitones (the polyphase path) none above −101 dB (linear
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
    /// The same kernel as polyphase rows for step ≤ 1: row p (0…256) holds the 24 weights of frames i − 11 …
    /// i + 12 for a position p/256 past frame i, so a frame's weights are two rows mixed (vector work); and
    /// each weight twice over (48 a row) for interleaved stereo frames.
    public let monoRows: UnsafeMutablePointer<Float>
    public let stereoRows: UnsafeMutablePointer<Float>

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
        let taps = 2 * Self.halfWidth
        monoRows = .allocate(capacity: (Self.resolution + 1) * taps)
        stereoRows = .allocate(capacity: (Self.resolution + 1) * taps * 2)
        for row in 0...Self.resolution {
            for j in 0..<taps {
                // Frame i − 11 + j sits t = row/256 + 11 − j crossings from the position.
                let weight = table[(taps - 1 - j) * Self.resolution + row]
                monoRows[row * taps + j] = weight
                stereoRows[(row * taps + j) * 2] = weight
                stereoRows[(row * taps + j) * 2 + 1] = weight
            }
        }
    }

    /// Frees the tables; once, from the owner, after no voice reads them.
    public func deallocate() {
        table.deallocate()
        monoRows.deallocate()
        stereoRows.deallocate()
    }

    /// The interpolated value of mono frames `source[0 ..< 24]` (frames i − 11 … i + 12) at `fraction` past
    /// frame i (step ≤ 1). Four-lane vectors: what every x86-64 and ARM64 core has (wider ones split into them
    /// and cost more here).
    @inline(__always) @_noAllocation @_noLocks
    public func mono(fraction: Double, _ source: UnsafePointer<Float>) -> Float {
        let scaled = Float(fraction) * Float(Self.resolution)
        let row = min(Self.resolution &- 1, Int(scaled))
        let between = SIMD4<Float>(repeating: scaled - Float(row))
        let a = UnsafeRawPointer(monoRows + row &* 24)
        let x = UnsafeRawPointer(source)
        var even = SIMD4<Float>()
        var odd = SIMD4<Float>()
        var offset = 0
        while offset < 96 {
            let wa = a.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self)
            let wb = a.loadUnaligned(fromByteOffset: offset &+ 96, as: SIMD4<Float>.self)
            even += (wa + (wb - wa) * between) * x.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self)
            let wc = a.loadUnaligned(fromByteOffset: offset &+ 16, as: SIMD4<Float>.self)
            let wd = a.loadUnaligned(fromByteOffset: offset &+ 112, as: SIMD4<Float>.self)
            odd += (wc + (wd - wc) * between) * x.loadUnaligned(fromByteOffset: offset &+ 16, as: SIMD4<Float>.self)
            offset &+= 32
        }
        let total = even + odd
        return (total[0] + total[1]) + (total[2] + total[3])
    }

    /// The same for interleaved stereo frames `source[0 ..< 48]` (weights doubled: lanes L R L R).
    @inline(__always) @_noAllocation @_noLocks
    public func stereo(fraction: Double, _ source: UnsafePointer<Float>) -> (Float, Float) {
        let scaled = Float(fraction) * Float(Self.resolution)
        let row = min(Self.resolution &- 1, Int(scaled))
        let between = SIMD4<Float>(repeating: scaled - Float(row))
        let a = UnsafeRawPointer(stereoRows + row &* 48)
        let x = UnsafeRawPointer(source)
        var even = SIMD4<Float>()
        var odd = SIMD4<Float>()
        var offset = 0
        while offset < 192 {
            let wa = a.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self)
            let wb = a.loadUnaligned(fromByteOffset: offset &+ 192, as: SIMD4<Float>.self)
            even += (wa + (wb - wa) * between) * x.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self)
            let wc = a.loadUnaligned(fromByteOffset: offset &+ 16, as: SIMD4<Float>.self)
            let wd = a.loadUnaligned(fromByteOffset: offset &+ 208, as: SIMD4<Float>.self)
            odd += (wc + (wd - wc) * between) * x.loadUnaligned(fromByteOffset: offset &+ 16, as: SIMD4<Float>.self)
            offset &+= 32
        }
        let total = even + odd
        return (total[0] + total[2], total[1] + total[3])
    }

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
        // The table point falls by the same amount from one frame to the next.
        var u = origin + (position - Double(first)) * inverse * resolution
        let delta = inverse * resolution
        for j in 0..<count {
            if u < 0 || u >= limit {
                weights[j] = 0
            } else {
                let point = Int(u)
                let between = Float(u - Double(point))
                let a = table[point]
                weights[j] = (a + (table[point &+ 1] - a) * between) * gain
            }
            u -= delta
        }
    }
}
