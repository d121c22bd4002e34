import Synchronization

/// Band-limited single-cycle waveforms, one table per half octave of fundamental frequency, each holding
/// only the harmonics that stay below Nyquist for every pitch that uses it. Aliasing is therefore absent by
/// construction (what remains is linear-interpolation error, far below −90 dB at high pitches where
/// aliasing matters). Tables are built once per sample rate on the control thread by inverse FFT.
///
/// Threads: built on the control thread; `Wavetable` views are read by the render thread.
public final class WavetableSet: @unchecked Sendable {
    public static var length: Int { WavetableLayout.length }
    public static var bandCount: Int { WavetableLayout.bandCount }

    public enum Shape: Sendable { case saw, triangle }

    public let sampleRate: Double
    public let saw: Wavetable
    public let triangle: Wavetable
    private let memory: UnsafeMutablePointer<Float>

    public init(sampleRate: Double) {
        self.sampleRate = sampleRate
        let stride = Self.length + 1
        memory = .allocate(capacity: 2 * Self.bandCount * stride)
        saw = Wavetable(samples: memory, stride: stride)
        triangle = Wavetable(samples: memory + Self.bandCount * stride, stride: stride)
        let twiddles = FFT.Twiddles(count: Self.length)
        for band in 0..<Self.bandCount {
            let harmonics = WavetableLayout.harmonics(band: band, sampleRate: sampleRate)
            Self.fill(memory + band * stride, shape: .saw, harmonics: harmonics, twiddles: twiddles)
            Self.fill(
                memory + (Self.bandCount + band) * stride, shape: .triangle, harmonics: harmonics, twiddles: twiddles)
        }
    }

    deinit { memory.deallocate() }

    /// The tables for `sampleRate`, shared: the set last built is kept and handed out again while the rate is
    /// the same (a process runs at one rate, so in practice they are built once). They depend on nothing
    /// else and are never written once built; building them is the largest part of a synth's start-up (16 M
    /// instructions), and a rig with four synth parts, tried in full before it replaces the one playing,
    /// built them eight times. Control side (the kernels only read them).
    public static func shared(sampleRate: Double) -> WavetableSet {
        last.withLock { last in
            if let set = last, set.sampleRate == sampleRate { return set }
            let set = WavetableSet(sampleRate: sampleRate)
            last = set
            return set
        }
    }

    private static let last = Mutex<WavetableSet?>(nil)

    /// One period of the shape from its harmonics (inverse DFT by FFT), plus the wrap-around guard sample.
    private static func fill(
        _ table: UnsafeMutablePointer<Float>, shape: Shape, harmonics: Int, twiddles: FFT.Twiddles
    ) {
        var real = [Double](repeating: 0, count: length)
        var imaginary = [Double](repeating: 0, count: length)
        for k in 1...harmonics {
            let amplitude: Double
            switch shape {
            case .saw:
                // Rising saw 2φ−1 = −(2/π) Σ sin(2πkφ)/k.
                amplitude = -2 / (Double.pi * Double(k))
            case .triangle:
                // (8/π²) Σ over odd k of (−1)^((k−1)/2) sin(2πkφ)/k².
                amplitude = k % 2 == 0 ? 0 : (8 / (Double.pi * Double.pi)) * ((k / 2) % 2 == 0 ? 1 : -1) / Double(k * k)
            }
            // A·sin(2πkn/N) = (A/2i)(e^{iθ} − e^{−iθ}): −i·A·N/2 at +k and +i·A·N/2 at −k, since the
            // inverse transform divides by N.
            imaginary[k] = -amplitude * Double(length) / 2
            imaginary[length - k] = amplitude * Double(length) / 2
        }
        FFT.inverse(real: &real, imaginary: &imaginary, twiddles: twiddles)
        for n in 0..<length { table[n] = Float(real[n]) }
        table[length] = table[0]
    }
}

/// The tables' dimensions, where the render thread can read them (a class's statics would need metadata).
public enum WavetableLayout {
    /// Samples per period (plus one guard sample for interpolation).
    @inlinable public static var length: Int { 2048 }
    /// Half-octave bands from 8 Hz up: band b serves fundamentals up to 8·2^((b+1)/2) Hz.
    @inlinable public static var bandCount: Int { 24 }

    /// The harmonics band `band` holds: those that stay below Nyquist for the highest fundamental it serves
    /// (at least one, at most what a table of `length` samples can hold). Control side.
    public static func harmonics(band: Int, sampleRate: Double) -> Int {
        let top = 8 * FastMath.exp2(Double(band + 1) / 2)
        return max(1, min(length / 2 - 1, Int((sampleRate / 2) / top)))
    }
}

/// A render-side view of one mip-mapped waveform.
public struct Wavetable: @unchecked Sendable {
    public let samples: UnsafeMutablePointer<Float>
    public let stride: Int

    @inlinable @_noAllocation @_noLocks
    public init(samples: UnsafeMutablePointer<Float>, stride: Int) {
        self.samples = samples
        self.stride = stride
    }

    /// The band for a fundamental given as a MIDI note number (fractional allowed).
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public static func band(forNote note: Double) -> Int {
        // log2(f/8) = (note − 69)/12 + log2(440/8); two bands per octave.
        let position = 2 * ((note - 69) / 12 + 5.781_359_713_524_660)
        let band = position <= 0 ? 0 : Int(position)
        return min(WavetableLayout.bandCount - 1, band)
    }

    /// The sample at a 32-bit fixed-point phase (2^32 = one period), linearly interpolated. No
    /// floating-point to integer conversion: the index is the top 11 bits, the fraction the rest.
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public func sample(band: Int, phase: UInt32) -> Float {
        let index = Int(phase >> 21)
        let fraction = Float(phase & 0x1F_FFFF) * (1 / 2_097_152)
        let table = samples + band &* stride
        let a = table[index]
        return a + (table[index &+ 1] - a) * fraction
    }

    /// The fixed-point phase increment for a frequency (cycles per sample × 2^32).
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public static func phaseIncrement(_ cyclesPerSample: Double) -> UInt32 {
        UInt32(truncatingIfNeeded: Int64(max(0, min(0.5, cyclesPerSample)) * 4_294_967_296))
    }

    /// The sample at `phase` in [0, 1), linearly interpolated.
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public func sample(band: Int, phase: Double) -> Float {
        let position = phase * Double(WavetableLayout.length)
        let index = Int(position)
        let fraction = Float(position - Double(index))
        let table = samples + band * stride
        let a = table[index]
        return a + (table[index + 1] - a) * fraction
    }
}

/// A radix-2 complex FFT for building tables and for analysis in tests and tools (control side; not
/// real-time).
public enum FFT {
    /// In-place forward transform (unscaled). The count must be a power of two.
    public static func forward(real: inout [Double], imaginary: inout [Double]) {
        forward(real: &real, imaginary: &imaginary, twiddles: Twiddles(count: real.count))
    }

    /// The same with the twiddle factors of this size made beforehand.
    public static func forward(real: inout [Double], imaginary: inout [Double], twiddles: Twiddles) {
        for i in imaginary.indices { imaginary[i] = -imaginary[i] }
        inverse(real: &real, imaginary: &imaginary, twiddles: twiddles)
        let n = Double(real.count)
        for i in real.indices {
            real[i] *= n
            imaginary[i] = -imaginary[i] * n
        }
    }

    /// The twiddle factors of an n-point transform (cosine and sine of 2πk/n for k < n/2, interleaved), made
    /// once and reused by every transform of that size: computing them per butterfly (two sines each) was
    /// most of a synth render's start-up, and per transform still half of building the synth's 48 tables.
    public final class Twiddles {
        public let count: Int
        let factors: UnsafeMutablePointer<Double>
        /// The bit-reversal permutation's swaps (i < j), in the order the transform makes them.
        let swaps: [(Int, Int)]

        public init(count n: Int) {
            precondition(n > 0 && n & (n - 1) == 0, "FFT size must be a power of two")
            count = n
            factors = .allocate(capacity: max(2, n))
            for k in 0..<(n / 2) {
                factors[2 * k] = FastMath.sine(Double(k) / Double(n) + 0.25)
                factors[2 * k + 1] = FastMath.sine(Double(k) / Double(n))
            }
            var swaps: [(Int, Int)] = []
            var j = 0
            for i in 1..<max(2, n) where n > 1 {
                var bit = n >> 1
                while j & bit != 0 {
                    j ^= bit
                    bit >>= 1
                }
                j |= bit
                if i < j { swaps.append((i, j)) }
            }
            self.swaps = swaps
        }

        deinit { factors.deallocate() }
    }

    /// In-place inverse transform, scaled by 1/N. The count must be a power of two.
    public static func inverse(real: inout [Double], imaginary: inout [Double]) {
        inverse(real: &real, imaginary: &imaginary, twiddles: Twiddles(count: real.count))
    }

    /// The same with the twiddle factors of this size made beforehand (a stage of `size` uses every
    /// n/size-th: k/size and k·(n/size)/n are the same power-of-two fraction, so the same value).
    public static func inverse(real: inout [Double], imaginary: inout [Double], twiddles table: Twiddles) {
        let n = real.count
        precondition(table.count == n && imaginary.count == n, "FFT: the parts and the twiddles differ in size")
        let twiddles = table.factors
        real.withUnsafeMutableBufferPointer { real in
            imaginary.withUnsafeMutableBufferPointer { imaginary in
                let (re, im) = (real.baseAddress!, imaginary.baseAddress!)
                for (i, j) in table.swaps {
                    (re[i], re[j]) = (re[j], re[i])
                    (im[i], im[j]) = (im[j], im[i])
                }
                // Wrapping index arithmetic and plain loops: indices stay below n, and checked arithmetic with a
                // stride iterator cost about 45 instructions per butterfly.
                var size = 2
                while size <= n {
                    let step = n / size
                    let halfSize = size / 2
                    var start = 0
                    while start < n {
                        var k = 0
                        while k < halfSize {
                            let w = twiddles + 2 &* k &* step
                            let (wr, wi) = (w[0], w[1])
                            let a = start &+ k
                            let b = a &+ halfSize
                            let tr = re[b] * wr - im[b] * wi
                            let ti = re[b] * wi + im[b] * wr
                            re[b] = re[a] - tr
                            im[b] = im[a] - ti
                            re[a] += tr
                            im[a] += ti
                            k &+= 1
                        }
                        start &+= size
                    }
                    size <<= 1
                }
                let scale = 1 / Double(n)
                for i in 0..<n {
                    re[i] *= scale
                    im[i] *= scale
                }
            }
        }
        withExtendedLifetime(table) {}
    }
}
