/// A biquad section in transposed direct form II: few operations, well-behaved when coefficients change
/// between samples (what the EQs do while gliding).
///
/// Threads: render thread (a plain value per channel and band).
public struct Biquad: BitwiseCopyable, Sendable {
    public var b0: Float = 1
    public var b1: Float = 0
    public var b2: Float = 0
    public var a1: Float = 0
    public var a2: Float = 0
    var s1: Float = 0
    var s2: Float = 0

    @_noAllocation @_noLocks
    public init() {}

    @inline(__always) @_noAllocation @_noLocks
    public mutating func process(_ x: Float) -> Float {
        let y = b0 * x + s1
        s1 = b1 * x - a1 * y + s2
        s2 = b2 * x - a2 * y
        return y
    }

    @inline(__always) @_noAllocation @_noLocks
    public mutating func setCoefficients(_ c: BiquadCoefficients) {
        b0 = c.b0
        b1 = c.b1
        b2 = c.b2
        a1 = c.a1
        a2 = c.a2
    }

    @inline(__always) @_noAllocation @_noLocks
    public mutating func reset() {
        s1 = 0
        s2 = 0
    }
}

/// A cascade of biquads over a run of samples, in place: what both EQs do per channel.
public enum BiquadBank {
    @inline(__always) @_noAllocation @_noLocks
    public static func process(
        _ filters: UnsafeMutablePointer<Biquad>, count: Int, samples: UnsafeMutablePointer<Float>,
        from: Int, to: Int
    ) {
        for index in from..<to {
            var x = samples[index]
            for band in 0..<count { x = filters[band].process(x) }
            samples[index] = x
        }
    }
}

/// Normalized biquad coefficients (a0 = 1).
public struct BiquadCoefficients: BitwiseCopyable, Sendable, Equatable {
    public var b0: Float
    public var b1: Float
    public var b2: Float
    public var a1: Float
    public var a2: Float

    public static let identity = BiquadCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)

    @_noAllocation @_noLocks
    public init(b0: Float, b1: Float, b2: Float, a1: Float, a2: Float) {
        self.b0 = b0
        self.b1 = b1
        self.b2 = b2
        self.a1 = a1
        self.a2 = a2
    }

    /// The filter kinds of Robert Bristow-Johnson's Audio EQ Cookbook used by the EQs.
    public enum Kind: Int, Sendable, CaseIterable {
        case bell = 0
        case lowShelf, highShelf, lowPass, highPass
    }

    /// Cookbook design. `gain` in dB (bell and shelves), `q` the quality factor (shelves: slope S = q).
    @_noAllocation @_noLocks
    public static func design(_ kind: Kind, frequency: Double, gain: Double, q: Double, sampleRate: Double)
        -> BiquadCoefficients
    {
        let f = max(1, min(0.49 * sampleRate, frequency))
        let w = f / sampleRate  // ω0 / 2π
        let cosw = FastMath.sine(w + 0.25)
        let sinw = FastMath.sine(w)
        let a = FastMath.exp2(gain / 40 * 3.321_928_094_887_362)  // 10^(gain/40)
        var b0 = 1.0
        var b1 = 0.0
        var b2 = 0.0
        var a0 = 1.0
        var a1 = 0.0
        var a2 = 0.0
        switch kind {
        case .bell:
            let alpha = sinw / (2 * max(0.05, q))
            b0 = 1 + alpha * a
            b1 = -2 * cosw
            b2 = 1 - alpha * a
            a0 = 1 + alpha / a
            a1 = -2 * cosw
            a2 = 1 - alpha / a
        case .lowShelf, .highShelf:
            let slope = max(0.1, min(1, q))
            let alpha = sinw / 2 * FastMath.squareRoot((a + 1 / a) * (1 / slope - 1) + 2)
            let root = 2 * FastMath.squareRoot(a) * alpha
            let sign: Double = kind == .lowShelf ? 1 : -1
            b0 = a * ((a + 1) - sign * (a - 1) * cosw + root)
            b1 = sign * 2 * a * ((a - 1) - sign * (a + 1) * cosw)
            b2 = a * ((a + 1) - sign * (a - 1) * cosw - root)
            a0 = (a + 1) + sign * (a - 1) * cosw + root
            a1 = -sign * 2 * ((a - 1) + sign * (a + 1) * cosw)
            a2 = (a + 1) + sign * (a - 1) * cosw - root
        case .lowPass, .highPass:
            let alpha = sinw / (2 * max(0.05, q))
            let sign: Double = kind == .lowPass ? 1 : -1
            b0 = (1 - sign * cosw) / 2
            b1 = sign * (1 - sign * cosw)
            b2 = (1 - sign * cosw) / 2
            a0 = 1 + alpha
            a1 = -2 * cosw
            a2 = 1 - alpha
        }
        return BiquadCoefficients(
            b0: Float(b0 / a0), b1: Float(b1 / a0), b2: Float(b2 / a0), a1: Float(a1 / a0), a2: Float(a2 / a0))
    }

    /// |H| in dB at `frequency` (control side: analysis and preset fitting).
    public func magnitude(at frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        func complex(_ c0: Double, _ c1: Double, _ c2: Double) -> (Double, Double) {
            (
                c0 + c1 * FastMath.sine(w / (2 * .pi) + 0.25) + c2 * FastMath.sine(2 * w / (2 * .pi) + 0.25),
                -(c1 * FastMath.sine(w / (2 * .pi)) + c2 * FastMath.sine(2 * w / (2 * .pi)))
            )
        }
        let (nr, ni) = complex(Double(b0), Double(b1), Double(b2))
        let (dr, di) = complex(1, Double(a1), Double(a2))
        let ratio = (nr * nr + ni * ni) / (dr * dr + di * di)
        return ratio > 0 ? 10 * FastMath.log2(ratio) * 0.301_029_995_663_981_2 : -400
    }

}
