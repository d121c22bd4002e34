/// A topology-preserving-transform state-variable filter (Zavalishin): stable under fast modulation,
/// resonant, with low-, high-, band-pass and notch outputs from one structure.
///
/// Threads: render thread (a plain value inside a voice). Coefficients are set at control rate.
public struct StateVariableFilter: BitwiseCopyable, Sendable {
    public enum Mode: Int, Sendable {
        case lowPass = 0
        case highPass, bandPass, notch
    }

    @usableFromInline var g: Float = 0
    @usableFromInline var k: Float = 2
    @usableFromInline var a1: Float = 1
    @usableFromInline var a2: Float = 0
    @usableFromInline var a3: Float = 0
    @usableFromInline var ic1: Float = 0
    @usableFromInline var ic2: Float = 0

    @inlinable @_noAllocation @_noLocks
    public init() {}

    /// `cutoff` in Hz (clamped to 10 Hz…0.45·rate), `resonance` 0…1 (1 is close to self-oscillation).
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public mutating func setCoefficients(cutoff: Double, resonance: Float, sampleRate: Double) {
        let clamped = max(10, min(0.45 * sampleRate, cutoff))
        g = Float(FastMath.tan(Double.pi * clamped / sampleRate))
        k = 2 - 1.96 * max(0, min(1, resonance))
        a1 = 1 / (1 + g * (g + k))
        a2 = g * a1
        a3 = g * a2
    }

    /// Takes another filter's coefficients (the right channel of a stereo voice follows the left).
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public mutating func copyCoefficients(from other: StateVariableFilter) {
        (g, k, a1, a2, a3) = (other.g, other.k, other.a1, other.a2, other.a3)
    }

    @inlinable @inline(__always) @_noAllocation @_noLocks
    public mutating func process(_ input: Float, mode: Int) -> Float {
        let v3 = input - ic2
        let v1 = a1 * ic1 + a2 * v3
        let v2 = ic2 + a2 * ic1 + a3 * v3
        ic1 = 2 * v1 - ic1
        ic2 = 2 * v2 - ic2
        switch mode {
        case 1: return input - k * v1 - v2
        case 2: return v1
        case 3: return input - k * v1
        default: return v2
        }
    }

    @inlinable @inline(__always) @_noAllocation @_noLocks
    public mutating func reset() {
        ic1 = 0
        ic2 = 0
    }
}

/// The timing of an ADSR envelope as per-sample coefficients: computed once (it needs `exp`) and shared by
/// every voice that uses it. Linear attack; exponential decay and release, with times meaning "to within
/// −40 dB of the target".
public struct EnvelopeShape: BitwiseCopyable, Sendable, Equatable {
    public var attackStep: Float
    public var decayCoefficient: Float
    public var releaseCoefficient: Float
    public var sustainLevel: Float

    /// Times in seconds; a zero attack reaches full level on the first sample.
    @inlinable @_noAllocation @_noLocks
    public init(attack: Double, decay: Double, sustain: Float, release: Double, sampleRate: Double) {
        attackStep = attack <= 0 ? 1 : Float(1 / (attack * sampleRate))
        decayCoefficient = Self.coefficient(decay, sampleRate)
        releaseCoefficient = Self.coefficient(release, sampleRate)
        sustainLevel = max(0, min(1, sustain))
    }

    /// Per-sample multiplier that falls by 40 dB over `seconds`.
    @usableFromInline @inline(__always) @_noAllocation @_noLocks
    static func coefficient(_ seconds: Double, _ sampleRate: Double) -> Float {
        seconds <= 0 ? 0 : Float(FastMath.exp(-4.605_170_185_988_091 / (seconds * sampleRate)))
    }
}

/// One voice's ADSR state, advanced per sample with a shared `EnvelopeShape`. A restart begins the attack
/// from the current level, so a retriggered note never clicks.
///
/// Threads: render thread (a plain value inside a voice).
public struct Envelope: BitwiseCopyable, Sendable {
    public enum Stage: UInt8, Sendable, BitwiseCopyable { case idle, attack, decay, sustain, release }

    public var stage: Stage = .idle
    public var level: Float = 0

    @inlinable @_noAllocation @_noLocks
    public init() {}

    @inlinable
    public var isActive: Bool {
        if case .idle = stage { return false }
        return true
    }

    @inlinable @inline(__always) @_noAllocation @_noLocks
    public mutating func start() { stage = .attack }

    @inlinable @inline(__always) @_noAllocation @_noLocks
    public mutating func release() { if stage != .idle { stage = .release } }

    @inlinable @inline(__always) @_noAllocation @_noLocks
    public mutating func reset() {
        stage = .idle
        level = 0
    }

    /// Sets the state directly (from `EnvelopeLanes`).
    @usableFromInline @inline(__always) @_noAllocation @_noLocks
    mutating func set(stage raw: UInt8, level: Float) {
        stage = Stage(rawValue: raw) ?? .idle
        self.level = level
    }

    @inlinable @inline(__always) @_noAllocation @_noLocks
    public mutating func next(_ shape: EnvelopeShape) -> Float {
        switch stage {
        case .idle:
            return 0
        case .attack:
            level += shape.attackStep
            if level >= 1 {
                level = 1
                stage = .decay
            }
        case .decay:
            level = shape.sustainLevel + (level - shape.sustainLevel) * shape.decayCoefficient
            if level - shape.sustainLevel < 1e-4 {
                level = shape.sustainLevel
                stage = .sustain
            }
        case .sustain:
            level = shape.sustainLevel
        case .release:
            level *= shape.releaseCoefficient
            if level < 1e-5 {
                level = 0
                stage = .idle
            }
        }
        return level
    }
}

/// A four-pole (24 dB/octave) low-pass ladder in zero-delay-feedback form (Zavalishin, "The Art of VA
/// Filter Design", ch. 5): four one-pole stages with the fourth's output fed back to the input. The
/// feedback is solved exactly for the linear filter, then the stage input is saturated, which bounds
/// self-oscillation (resonance 1 and up) without a per-sample iteration. Bilinear prewarping puts the
/// resonant peak, and the self-oscillation, at the cutoff.
///
/// Threads: render thread (a plain value inside a voice). Coefficients are set at control rate.
public struct LadderFilter: BitwiseCopyable, Sendable {
    @usableFromInline var g: Float = 0
    /// G = g / (1 + g), the one-pole gain; the feedback amount k (0…4.85); 1 / (1 + k G⁴).
    @usableFromInline var big: Float = 0
    @usableFromInline var k: Float = 0
    @usableFromInline var normalize: Float = 1
    @usableFromInline var s1: Float = 0
    @usableFromInline var s2: Float = 0
    @usableFromInline var s3: Float = 0
    @usableFromInline var s4: Float = 0

    @inlinable @_noAllocation @_noLocks
    public init() {}

    /// `cutoff` in Hz (10 Hz…0.45·rate), `resonance` 0…1 (1: just past self-oscillation).
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public mutating func setCoefficients(cutoff: Double, resonance: Float, sampleRate: Double) {
        let clamped = max(10, min(0.45 * sampleRate, cutoff))
        g = Float(FastMath.tan(Double.pi * clamped / sampleRate))
        big = g / (1 + g)
        // 4 is the edge of self-oscillation; a little past it the saturator holds the tone at a level where
        // it barely bends its pitch.
        k = 4.04 * max(0, min(1.2, resonance))
        let g4 = big * big * big * big
        normalize = 1 / (1 + k * g4)
    }

    @inlinable @inline(__always) @_noAllocation @_noLocks
    public mutating func process(_ input: Float) -> Float {
        // Each stage: v = (x − s)·G, y = v + s, s = y + v. The cascade's output is G⁴u + S, with S
        // collecting the stages' states; u = x − k·y4 solves to (x − k·S)/(1 + k·G⁴).
        let gOver = 1 / (1 + g)
        let sum = big * big * big * s1 * gOver + big * big * s2 * gOver + big * s3 * gOver + s4 * gOver
        let u = FastMath.saturate((input - k * sum) * normalize)
        var v = (u - s1) * big
        let y1 = v + s1
        s1 = y1 + v
        v = (y1 - s2) * big
        let y2 = v + s2
        s2 = y2 + v
        v = (y2 - s3) * big
        let y3 = v + s3
        s3 = y3 + v
        v = (y3 - s4) * big
        let y4 = v + s4
        s4 = y4 + v
        return y4
    }

    @inlinable @inline(__always) @_noAllocation @_noLocks
    public mutating func reset() { (s1, s2, s3, s4) = (0, 0, 0, 0) }
}

/// Four state-variable filters side by side in SIMD lanes (four voices of one patch): the same arithmetic
/// as `StateVariableFilter`, lane by lane, so a voice sounds the same in a lane as alone.
///
/// Threads: render thread (a plain value, made from four voices' filters and stored back into them).
public struct StateVariableFilterLanes: Sendable {
    @usableFromInline var g: SIMD4<Float>
    @usableFromInline var k: SIMD4<Float>
    @usableFromInline var a1: SIMD4<Float>
    @usableFromInline var a2: SIMD4<Float>
    @usableFromInline var a3: SIMD4<Float>
    @usableFromInline var ic1: SIMD4<Float>
    @usableFromInline var ic2: SIMD4<Float>

    @inlinable @inline(__always) @_noAllocation @_noLocks
    public init(
        _ f0: StateVariableFilter, _ f1: StateVariableFilter, _ f2: StateVariableFilter, _ f3: StateVariableFilter
    ) {
        g = SIMD4(f0.g, f1.g, f2.g, f3.g)
        k = SIMD4(f0.k, f1.k, f2.k, f3.k)
        a1 = SIMD4(f0.a1, f1.a1, f2.a1, f3.a1)
        a2 = SIMD4(f0.a2, f1.a2, f2.a2, f3.a2)
        a3 = SIMD4(f0.a3, f1.a3, f2.a3, f3.a3)
        ic1 = SIMD4(f0.ic1, f1.ic1, f2.ic1, f3.ic1)
        ic2 = SIMD4(f0.ic2, f1.ic2, f2.ic2, f3.ic2)
    }

    /// Lane `lane`'s state written back into its voice's filter.
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public func store(lane: Int, into filter: inout StateVariableFilter) {
        filter.ic1 = ic1[lane]
        filter.ic2 = ic2[lane]
    }

    @inlinable @inline(__always) @_noAllocation @_noLocks
    public mutating func process(_ input: SIMD4<Float>, mode: Int) -> SIMD4<Float> {
        let v3 = input - ic2
        let v1 = a1 * ic1 + a2 * v3
        let v2 = ic2 + a2 * ic1 + a3 * v3
        ic1 = 2 * v1 - ic1
        ic2 = 2 * v2 - ic2
        switch mode {
        case 1: return input - k * v1 - v2
        case 2: return v1
        case 3: return input - k * v1
        default: return v2
        }
    }
}

/// Four ADSR envelopes in SIMD lanes with one shape: each lane follows `Envelope.next` exactly.
///
/// Threads: render thread (made from four voices' envelopes and stored back into them).
public struct EnvelopeLanes: Sendable {
    /// `Envelope.Stage` raw values.
    @usableFromInline var stage: SIMD4<Int32>
    public var level: SIMD4<Float>

    @inlinable @inline(__always) @_noAllocation @_noLocks
    public init(_ e0: Envelope, _ e1: Envelope, _ e2: Envelope, _ e3: Envelope) {
        stage = SIMD4(
            Int32(e0.stage.rawValue), Int32(e1.stage.rawValue), Int32(e2.stage.rawValue), Int32(e3.stage.rawValue))
        level = SIMD4(e0.level, e1.level, e2.level, e3.level)
    }

    /// All four lanes hold their sustain level: every step until a note-off returns the shape's sustain level,
    /// so a block can take it once instead of stepping (what `next` would return, to the bit).
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public func isSustaining() -> Bool { stage == SIMD4(repeating: 3) }

    /// Lane `lane` written back into its voice's envelope.
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public func store(lane: Int, into envelope: inout Envelope) {
        envelope.set(stage: UInt8(truncatingIfNeeded: stage[lane]), level: level[lane])
    }

    @inlinable @inline(__always) @_noAllocation @_noLocks
    public mutating func next(_ shape: EnvelopeShape) -> SIMD4<Float> {
        // Mostly all four lanes are in one stage: one vector step, and lane fixes only where one moves on.
        let first = stage[0]
        guard stage[1] == first && stage[2] == first && stage[3] == first else { return nextLaneByLane(shape) }
        switch first {
        case 1:  // attack
            level += shape.attackStep
            if Swift.max(Swift.max(level[0], level[1]), Swift.max(level[2], level[3])) >= 1 {
                for lane in 0..<4 where level[lane] >= 1 {
                    level[lane] = 1
                    stage[lane] = 2
                }
            }
        case 2:  // decay
            let sustain = SIMD4<Float>(repeating: shape.sustainLevel)
            level = sustain + (level - sustain) * shape.decayCoefficient
            let above = level - sustain
            if Swift.min(Swift.min(above[0], above[1]), Swift.min(above[2], above[3])) < 1e-4 {
                for lane in 0..<4 where level[lane] - shape.sustainLevel < 1e-4 {
                    level[lane] = shape.sustainLevel
                    stage[lane] = 3
                }
            }
        case 3:  // sustain
            level = SIMD4(repeating: shape.sustainLevel)
        case 4:  // release
            level *= shape.releaseCoefficient
            if Swift.min(Swift.min(level[0], level[1]), Swift.min(level[2], level[3])) < 1e-5 {
                for lane in 0..<4 where level[lane] < 1e-5 {
                    level[lane] = 0
                    stage[lane] = 0
                }
            }
        default:
            level = SIMD4(repeating: 0)
        }
        return level
    }

    /// Lanes in different stages: each through `Envelope.next`.
    @usableFromInline @_noAllocation @_noLocks
    mutating func nextLaneByLane(_ shape: EnvelopeShape) -> SIMD4<Float> {
        for lane in 0..<4 {
            var envelope = Envelope()
            envelope.set(stage: UInt8(truncatingIfNeeded: stage[lane]), level: level[lane])
            level[lane] = envelope.next(shape)
            stage[lane] = Int32(envelope.stage.rawValue)
        }
        return level
    }
}
