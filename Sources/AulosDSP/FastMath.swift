/// Math for the render thread. libm calls are C functions the real-time checker cannot see into, and the
/// render path needs only a few functions at control rate, so they are written here, with their accuracy
/// stated and tested (Tests/AulosDSPTests).
public enum FastMath {
    /// 2^x to about 2e-8 relative error (0.00004 cent as a pitch): exact powers of two scaled by a
    /// polynomial for 2^f, f in [0, 1).
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public static func exp2(_ x: Double) -> Double {
        let clamped = max(-1000, min(1000, x))
        var whole = Double(Int(clamped))  // truncates toward zero…
        if whole > clamped { whole -= 1 }  // …so step down for negative non-integers: floor
        let f = clamped - whole
        // Taylor series of e^(f ln2) to degree 9: |error| < 1.5e-9 on [0, 1).
        let y = f * 0.693_147_180_559_945_3
        let p =
            1 + y
            * (1 + y
                * (0.5 + y
                    * (1.0 / 6 + y
                        * (1.0 / 24 + y
                            * (1.0 / 120 + y
                                * (1.0 / 720
                                    + y * (1.0 / 5040 + y * (1.0 / 40320 + y * (1.0 / 362_880)))))))))
        // 2^whole straight from its bit pattern (the exponent field): the standard library's
        // Double(sign:exponent:significand:) is a generic call, a quarter of this function's cost.
        return p * Double(bitPattern: UInt64(1023 + Int(whole)) << 52)
    }

    /// √x. One hardware instruction; the stdlib reaches it through a shim the real-time checker cannot see
    /// into, hence the explicit escape.
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public static func squareRoot(_ x: Double) -> Double {
        _unsafePerformance { x.squareRoot() }
    }

    /// A soft clip shaped like tanh: x·(27 + x²)/(27 + 9x²) (the Padé approximant, within 0.024 of tanh
    /// and exact in slope at 0), held at ±1 beyond ±3 where it reaches 1. Drives and filter stages use it.
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public static func saturate(_ x: Float) -> Float {
        let clamped = max(-3, min(3, x))
        let x2 = clamped * clamped
        return clamped * (27 + x2) / (27 + 9 * x2)
    }

    /// e^x.
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public static func exp(_ x: Double) -> Double { exp2(x * 1.442_695_040_888_963_4) }

    /// tan(x) for 0 ≤ x < π/2 via the sine and cosine polynomials (relative error < 1e-7 up to 1.5).
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public static func tan(_ x: Double) -> Double {
        let turns = x / (2 * Double.pi)
        return sine(turns) / sine(turns + 0.25)
    }

    /// sin(2π·phase) for any phase, to within 1e-9: fold into a quarter wave, odd Taylor polynomial.
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public static func sine(_ phase: Double) -> Double {
        var x = phase - Double(Int(phase))
        if x < 0 { x += 1 }
        if x > 0.75 { x -= 1 } else if x > 0.25 { x = 0.5 - x }
        let t = x * 2 * Double.pi
        let t2 = t * t
        return t
            * (1 + t2
                * (-1.0 / 6 + t2
                    * (1.0 / 120 + t2
                        * (-1.0 / 5040 + t2
                            * (1.0 / 362_880
                                + t2 * (-1.0 / 39_916_800 + t2 * (1.0 / 6_227_020_800)))))))
    }

    /// log2(x) for x > 0, by octave reduction and Newton steps on `exp2` (control side: building tables and
    /// analysing responses; about 40 exp2 evaluations).
    public static func log2(_ x: Double) -> Double {
        guard x > 0 else { return -.infinity }
        var octaves = 0.0
        var value = x
        while value >= 2 {
            value /= 2
            octaves += 1
        }
        while value < 1 {
            value *= 2
            octaves -= 1
        }
        var fraction = 0.5
        for _ in 0..<40 { fraction -= (exp2(fraction) - value) / (exp2(fraction) * 0.693_147_180_559_945_3) }
        return octaves + fraction
    }

    /// Frequency of a (fractional) MIDI note, A4 = note 69 = 440 Hz, equal temperament.
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public static func frequency(ofNote note: Double) -> Double { 440 * exp2((note - 69) / 12) }
}

/// A 32-bit xorshift generator for noise: deterministic (same seed, same noise), no allocation.
public struct NoiseGenerator: BitwiseCopyable, Sendable {
    public var state: UInt32
    @inlinable @_noAllocation @_noLocks
    public init(seed: UInt32) { state = seed == 0 ? 0x9E37_79B9 : seed }

    /// Uniform white noise in [-1, 1).
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public mutating func next() -> Float {
        state ^= state << 13
        state ^= state >> 17
        state ^= state << 5
        return Float(Int32(bitPattern: state)) * (1 / 2_147_483_648)
    }
}
