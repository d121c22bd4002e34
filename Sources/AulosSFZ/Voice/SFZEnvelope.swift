import AulosDSP

/// SFZ's DAHDSR envelope, advanced one frame at a time, every segment a whole number of frames long (its time
/// × the rate, rounded), so each lands on the frame its time says.
///
/// Curves: the level holds `start` through the delay; the attack rises linearly from `start` to 1; the hold
/// stays at 1; the decay falls to `sustain` and the release to 0 along an exponential — the curve of a 60 dB
/// fall over the segment's time, lowered by its last thousandth so that it reaches its target exactly at
/// the segment's end instead of approaching it forever (level = target + (from − target)·((1 + ε)·cⁿ − ε),
/// ε = 0.001, cᴺ = ε / (1 + ε)). That is how samplers' decays sound (fast at first, a long tail) with an end
/// the voice can count on.
///
/// Threads: render thread (a plain value inside a voice).
public struct SFZEnvelope: BitwiseCopyable, Sendable {
    public enum Stage: UInt8, Sendable, BitwiseCopyable { case delay, attack, hold, decay, sustain, release, done }

    public private(set) var stage: Stage = .done
    public private(set) var level: Float = 0
    var remaining = 0
    var delayFrames = 0
    var attackFrames = 0
    var holdFrames = 0
    var decayFrames = 0
    var releaseFrames = 0
    var startLevel: Float = 0
    var sustainLevel: Float = 1
    // The running segment: a linear step (attack), or the exponential's state (decay, release).
    var step: Float = 0
    var from: Float = 0
    var target: Float = 0
    var curve: Double = 0
    var ratio: Double = 1

    static var epsilon: Double { @inline(__always) @_noAllocation @_noLocks get { 0.001 } }

    @_noAllocation @_noLocks
    public init() {}

    @_noAllocation @_noLocks
    public init(_ times: SFZEnvelopeTimes, sampleRate: Double) {
        @inline(__always) func frames(_ seconds: Double) -> Int {
            seconds > 0 ? Int(min(seconds, 3600) * sampleRate + 0.5) : 0
        }
        delayFrames = frames(times.delay)
        attackFrames = frames(times.attack)
        holdFrames = frames(times.hold)
        decayFrames = frames(times.decay)
        releaseFrames = frames(times.release)
        startLevel = max(0, min(1, times.start))
        sustainLevel = max(0, min(1, times.sustain))
    }

    /// Starts the envelope (from its delay).
    @_noAllocation @_noLocks
    public mutating func begin() {
        stage = .delay
        remaining = delayFrames
        level = startLevel
    }

    /// The note-off: the release from wherever the level is.
    @_noAllocation @_noLocks
    public mutating func release() {
        switch stage {
        case .done, .release: return
        default: break
        }
        stage = .release
        beginCurve(to: 0, frames: releaseFrames)
    }

    public var isDone: Bool {
        @inline(__always) @_noAllocation @_noLocks get {
            if case .done = stage { return true }
            return false
        }
    }

    /// Sustaining at zero: nothing more will sound until the note-off, which has nothing to release.
    public var isSilentSustain: Bool {
        @inline(__always) @_noAllocation @_noLocks get {
            if case .sustain = stage { return sustainLevel == 0 }
            return false
        }
    }

    @inline(__always) @_noAllocation @_noLocks
    mutating func beginCurve(to level: Float, frames: Int) {
        from = self.level
        target = level
        remaining = frames
        // cᴺ = ε / (1 + ε): computed once per segment (exp2 of a log), never per frame.
        let epsilon = Self.epsilon
        ratio = frames > 0 ? FastMath.exp2(-9.967_226_258_835_993 / Double(frames)) : 0  // log2(1001/0.001)
        curve = 1 + epsilon
    }

    /// This frame's level; then one frame on.
    @inline(__always) @_noAllocation @_noLocks
    public mutating func next() -> Float {
        while true {
            switch stage {
            case .delay:
                if remaining > 0 {
                    remaining &-= 1
                    return startLevel
                }
                stage = .attack
                remaining = attackFrames
                level = startLevel
                step = attackFrames > 0 ? (1 - startLevel) / Float(attackFrames) : 0
            case .attack:
                if remaining > 0 {
                    let value = level
                    remaining &-= 1
                    level = remaining == 0 ? 1 : level + step
                    return value
                }
                level = 1
                stage = .hold
                remaining = holdFrames
            case .hold:
                if remaining > 0 {
                    remaining &-= 1
                    return 1
                }
                stage = .decay
                beginCurve(to: sustainLevel, frames: decayFrames)
            case .decay, .release:
                if remaining > 0 {
                    level = target + (from - target) * Float(curve - Self.epsilon)
                    curve *= ratio
                    remaining &-= 1
                    return level
                }
                level = target
                if case .decay = stage { stage = .sustain } else { stage = .done }
            case .sustain:
                return sustainLevel
            case .done:
                level = 0
                return 0
            }
        }
    }

    /// Moves `frames` frames on (a control-rate envelope between its readings); the level after them.
    @inline(__always) @_noAllocation @_noLocks
    public mutating func advance(_ frames: Int) -> Float {
        // Sustaining or done, `next()` changes nothing (and returns the same value) frame after frame: the
        // control-rate envelopes of a held note cost nothing per frame.
        switch stage {
        case .sustain: return sustainLevel
        case .done:
            level = 0
            return 0
        default: break
        }
        var value = level
        for _ in 0..<frames { value = next() }
        return value
    }
}

/// A sine LFO read once per control block: silent through its delay, its depth rising over its fade.
///
/// Threads: render thread (a plain value inside a voice).
struct SFZLFOState: BitwiseCopyable {
    var phase: Double = 0
    var increment: Double = 0
    var depth: Float = 0
    var delayFrames = 0
    var fadeFrames = 0
    var elapsed = 0

    @_noAllocation @_noLocks
    init() {}

    @_noAllocation @_noLocks
    init(_ lfo: SFZLFO, sampleRate: Double) {
        increment = max(0, lfo.frequency) / sampleRate
        depth = lfo.depth
        delayFrames = Int(max(0, lfo.delay) * sampleRate)
        fadeFrames = Int(max(0, lfo.fade) * sampleRate)
    }

    /// The value now (in the depth's unit); then `frames` frames on.
    @inline(__always) @_noAllocation @_noLocks
    mutating func value(advancing frames: Int) -> Float {
        guard depth != 0 else { return 0 }
        var result: Float = 0
        if elapsed >= delayFrames {
            let fading = elapsed - delayFrames
            let fade: Float = fadeFrames > 0 && fading < fadeFrames ? Float(fading) / Float(fadeFrames) : 1
            result = depth * fade * Float(FastMath.sine(phase))
            phase += increment * Double(frames)
            phase -= Double(Int(phase))
        }
        elapsed &+= frames
        return result
    }
}

/// A one-pole low/high-pass in topology-preserving form (stable and cheap to retune each block).
///
/// Threads: render thread (a plain value inside a voice).
struct SFZOnePole: BitwiseCopyable {
    var gain: Float = 0
    var state: Float = 0

    @_noAllocation @_noLocks
    init() {}

    @inline(__always) @_noAllocation @_noLocks
    mutating func setCutoff(_ cutoff: Double, sampleRate: Double) {
        let g = FastMath.tan(Double.pi * max(5, min(0.45 * sampleRate, cutoff)) / sampleRate)
        gain = Float(g / (1 + g))
    }

    @inline(__always) @_noAllocation @_noLocks
    mutating func process(_ x: Float, highPass: Bool) -> Float {
        let v = (x - state) * gain
        let low = v + state
        state = low + v
        return highPass ? x - low : low
    }
}
