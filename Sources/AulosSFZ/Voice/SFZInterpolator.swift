import Foundation

/// How carefully the voices resample: SFZ players' "sample quality" setting.
///
/// Threads: a value.
public enum SFZInterpolationQuality: UInt8, Sendable, BitwiseCopyable {
    /// Live play: an 8-tap Kaiser-windowed sinc (β = 6, cutoff 0.9 of the Nyquist frequency), stretched above
    /// the sample's rate. Under half of `.high`'s instructions over ±16 semitones (341 against 792 a stereo
    /// note-frame); images and aliases of a 10 kHz tone measured at −72 to −75 dB (FluidSynth's 4-point cubic
    /// leaves about −30 to −40 dB), a 15 kHz tone an octave up folded back at −31 dB, and the top of the band
    /// rolled off (−1 dB at 16 kHz, −6 dB at 21.6 kHz at 48 kHz).
    case live
    /// Offline renders and whoever has the cores: a 24-tap Kaiser-windowed sinc (β = 8.6, cutoff at the
    /// Nyquist frequency), everything folded back below −89 dB.
    case high
}

/// The voices' resampler: a Kaiser-windowed sinc (`SFZInterpolationQuality` says how wide), read from a table
/// of 256 points per zero crossing with linear interpolation between points.
///
/// Played at or below its own rate (step ≤ 1) the kernel is the plain windowed sinc read from polyphase
/// rows: its cutoff is the output's Nyquist frequency (× `cutoff`), with the transition band straddling it,
/// so whatever folds back lands above the passband. Played faster (step s > 1, a transposition up) the
/// kernel is stretched by s — its cutoff lowered to the output's Nyquist frequency measured in the sample's
/// frames — and reads taps·s frames, so a sample transposed up an octave sheds what would alias instead of
/// folding it back (linear or 4-point interpolation does not: played an octave up they only drop every other
/// frame). The step is capped at `maximumStep` (three octaves up), which bounds the taps (`maximumReach`).
///
/// Measured (Tests/AulosSFZTests/VoiceInterpolationTests, 64k-point FFT, Blackman–Harris window), `.high`:
/// a 10 kHz sine at 48 kHz transposed up 11, 12 and 13 semitones shows no component above −112 dB beside the
/// tone, and transposed down 1, 7 and 12.5 semitones (the polyphase path) none above −101 dB (linear
/// interpolation: −24 dB); a 15 kHz sine an octave up (30 kHz, past Nyquist) leaves −89 dB (linear and
/// 4-point: 0 dB, folded to 18 kHz). `.live`: see the tests' printed figures and docs/performance.md.
/// Cost: taps multiply-adds a channel per frame at or below the sample's rate, taps·s above it, against
/// FluidSynth's default 4 (its 4-point cubic, which does not stretch).
///
/// Threads: the tables are built on the control thread and only read after (render thread).
public struct SFZInterpolator: @unchecked Sendable {
    /// Zero crossings each side of the widest (`.high`) kernel's centre.
    public static var halfWidth: Int { @inline(__always) @_noAllocation @_noLocks get { 12 } }
    /// Table points per zero crossing.
    public static var resolution: Int { @inline(__always) @_noAllocation @_noLocks get { 256 } }
    public static var maximumStep: Double { @inline(__always) @_noAllocation @_noLocks get { 8 } }
    /// Frames either side of a position the widest kernel reads.
    public static var maximumReach: Int { @inline(__always) @_noAllocation @_noLocks get { 12 * 8 + 2 } }
    /// Zero crossings of zeros padded each side of `pairs`, so a stretched kernel's taps (which reach up to
    /// one crossing past the kernel) need no bounds test.
    static var padding: Int { @inline(__always) @_noAllocation @_noLocks get { 2 } }

    public let quality: SFZInterpolationQuality
    /// Zero crossings each side of this kernel's centre (taps = 2 × this).
    public let kernelHalfWidth: Int
    /// The kernel at t = (point − halfWidth·resolution) / resolution zero crossings, plus two zero points.
    public let table: UnsafeMutablePointer<Float>
    /// The same kernel as polyphase rows for step ≤ 1: row p (0…256) holds the weights of frames
    /// i − (halfWidth − 1) … i + halfWidth for a position p/256 past frame i, so a frame's weights are two rows
    /// mixed (vector work); and each weight twice over for interleaved stereo frames.
    public let monoRows: UnsafeMutablePointer<Float>
    public let stereoRows: UnsafeMutablePointer<Float>
    /// For stretched kernels: (value, slope to the next point) at every point from −(halfWidth + padding) to
    /// halfWidth + padding crossings, one 8-byte load a tap.
    let pairs: UnsafeMutablePointer<SIMD2<Float>>

    /// The `.high` kernel.
    public init() { self.init(quality: .high) }

    public init(quality: SFZInterpolationQuality) {
        self.quality = quality
        let half: Int
        let beta: Double
        let cutoff: Double
        switch quality {
        case .live: (half, beta, cutoff) = (4, 6, 0.9)
        case .high: (half, beta, cutoff) = (12, 8.6, 1)
        }
        kernelHalfWidth = half
        let resolution = Self.resolution
        let count = 2 * half * resolution
        func kernel(_ t: Double) -> Double {
            let x = t / Double(half)
            if abs(x) >= 1 { return 0 }
            let c = cutoff * t
            let sinc = c == 0 ? 1 : sin(Double.pi * c) / (Double.pi * c)
            return cutoff * sinc * Self.besselI0(beta * (1 - x * x).squareRoot()) / Self.besselI0(beta)
        }
        table = .allocate(capacity: count + 2)
        for point in 0...count { table[point] = Float(kernel(Double(point - half * resolution) / Double(resolution))) }
        table[count + 1] = 0
        let taps = 2 * half
        monoRows = .allocate(capacity: (resolution + 1) * taps)
        stereoRows = .allocate(capacity: (resolution + 1) * taps * 2)
        for row in 0...resolution {
            // `.live`'s short kernel cut below Nyquist sums to 1 ± 0.5 % depending on the phase, a gain that
            // would wobble with the position: each row scaled to sum to 1. (`.high`'s rows sum to 1 within
            // 10⁻⁵ and stay as they were measured.)
            var sum: Float = 0
            for j in 0..<taps { sum += table[(taps - 1 - j) * resolution + row] }
            let scale = cutoff < 1 ? 1 / sum : 1
            for j in 0..<taps {
                // Frame i − (half − 1) + j sits t = row/256 + half − 1 − j crossings from the position.
                let weight = table[(taps - 1 - j) * resolution + row] * scale
                monoRows[row * taps + j] = weight
                stereoRows[(row * taps + j) * 2] = weight
                stereoRows[(row * taps + j) * 2 + 1] = weight
            }
        }
        let padded = (half + Self.padding) * resolution
        pairs = .allocate(capacity: 2 * padded + 2)
        for point in 0...(2 * padded + 1) {
            let t = Double(point - padded) / Double(resolution)
            let value = Float(kernel(t))
            let next = Float(kernel(t + 1 / Double(resolution)))
            pairs[point] = SIMD2(value, next - value)
        }
    }

    /// Frees the tables; once, from the owner, after no voice reads them.
    public func deallocate() {
        table.deallocate()
        monoRows.deallocate()
        stereoRows.deallocate()
        pairs.deallocate()
    }

    /// Frames either side of a position the kernel reads at `step` (at most `maximumReach`).
    @inline(__always) @_noAllocation @_noLocks
    public func reach(step: Double) -> Int {
        step <= 1 ? kernelHalfWidth : Int(Double(kernelHalfWidth) * step) &+ 1
    }

    /// The interpolated value of mono frames `source[0 ..< taps]` (frames i − (taps/2 − 1) … i + taps/2) at
    /// `fraction` past frame i (step ≤ 1), `taps` this kernel's (a constant where it is inlined, so the loop
    /// unrolls). Four-lane vectors: what every x86-64 and ARM64 core has (wider ones split into them and cost
    /// more here).
    @inline(__always) @_noAllocation @_noLocks
    func mono(taps: Int, fraction: Double, _ source: UnsafePointer<Float>) -> Float {
        let scaled = Float(fraction) * Float(Self.resolution)
        let row = min(Self.resolution &- 1, Int(scaled))
        let between = SIMD4<Float>(repeating: scaled - Float(row))
        let stride = taps &* 4
        let a = UnsafeRawPointer(monoRows + row &* taps)
        let x = UnsafeRawPointer(source)
        var even = SIMD4<Float>()
        var odd = SIMD4<Float>()
        var offset = 0
        while offset < stride {
            let wa = a.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self)
            let wb = a.loadUnaligned(fromByteOffset: offset &+ stride, as: SIMD4<Float>.self)
            even += (wa + (wb - wa) * between) * x.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self)
            let wc = a.loadUnaligned(fromByteOffset: offset &+ 16, as: SIMD4<Float>.self)
            let wd = a.loadUnaligned(fromByteOffset: offset &+ stride &+ 16, as: SIMD4<Float>.self)
            odd += (wc + (wd - wc) * between) * x.loadUnaligned(fromByteOffset: offset &+ 16, as: SIMD4<Float>.self)
            offset &+= 32
        }
        let total = even + odd
        return (total[0] + total[1]) + (total[2] + total[3])
    }

    /// The same for interleaved stereo frames `source[0 ..< 2 · taps]` (weights doubled: lanes L R L R).
    @inline(__always) @_noAllocation @_noLocks
    func stereo(taps: Int, fraction: Double, _ source: UnsafePointer<Float>) -> (Float, Float) {
        let scaled = Float(fraction) * Float(Self.resolution)
        let row = min(Self.resolution &- 1, Int(scaled))
        let between = SIMD4<Float>(repeating: scaled - Float(row))
        let stride = taps &* 8
        let a = UnsafeRawPointer(stereoRows + row &* taps &* 2)
        let x = UnsafeRawPointer(source)
        var even = SIMD4<Float>()
        var odd = SIMD4<Float>()
        var offset = 0
        while offset < stride {
            let wa = a.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self)
            let wb = a.loadUnaligned(fromByteOffset: offset &+ stride, as: SIMD4<Float>.self)
            even += (wa + (wb - wa) * between) * x.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self)
            let wc = a.loadUnaligned(fromByteOffset: offset &+ 16, as: SIMD4<Float>.self)
            let wd = a.loadUnaligned(fromByteOffset: offset &+ stride &+ 16, as: SIMD4<Float>.self)
            odd += (wc + (wd - wc) * between) * x.loadUnaligned(fromByteOffset: offset &+ 16, as: SIMD4<Float>.self)
            offset &+= 32
        }
        let total = even + odd
        return (total[0] + total[2], total[1] + total[3])
    }

    /// The stretched kernel (step `scale` > 1) over `count` frames of `source` (`channels` interleaved, frame
    /// `first` at index 0) around `position`: each tap's weight from one (value, slope) pair, the 1/scale
    /// gain applied once to the sums. The tap's point is computed from its index, not accumulated, so a long
    /// kernel does not drift.
    @inline(__always) @_noAllocation @_noLocks
    func stretched(
        position: Double, first: Int, count: Int, scale: Double, channels: Int, _ source: UnsafePointer<Float>
    ) -> (Float, Float) {
        let resolution = Double(Self.resolution)
        let inverse = 1 / scale
        let origin = Double(kernelHalfWidth &+ Self.padding) * resolution
        let start = Float(origin + (position - Double(first)) * inverse * resolution)
        let delta = Float(inverse * resolution)
        var sumLeft: Float = 0
        var sumRight: Float = 0
        var tap: Float = 0
        if channels == 2 {
            for j in 0..<count {
                let u = start - delta * tap
                tap += 1
                let point = Int(u)
                let pair = pairs[point]
                let weight = pair.x + pair.y * (u - Float(point))
                sumLeft += weight * source[2 &* j]
                sumRight += weight * source[2 &* j &+ 1]
            }
            let gain = Float(inverse)
            return (sumLeft * gain, sumRight * gain)
        }
        for j in 0..<count {
            let u = start - delta * tap
            tap += 1
            let point = Int(u)
            let pair = pairs[point]
            sumLeft += (pair.x + pair.y * (u - Float(point))) * source[j]
        }
        let value = sumLeft * Float(inverse)
        return (value, value)
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
}
