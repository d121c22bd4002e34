import AulosDSP

/// A voice's left and right output gains, gliding to new targets over one control tick so that volume,
/// expression and pan move without zipper noise. Plain value inside a voice; render thread.
struct GlidingGain: BitwiseCopyable {
    var left: Float = 0
    var right: Float = 0
    var leftStep: Float = 0
    var rightStep: Float = 0

    @_noAllocation @_noLocks
    init() {}

    /// Aims at `gain` placed at `position` (0 left … 1 right) with a constant-power pan law: gliding there
    /// over `frames` with `interpolate`, else at once (a new note).
    @inline(__always) @_noAllocation @_noLocks
    mutating func aim(gain: Float, position: Double, frames: Int, interpolate: Bool) {
        let (newLeft, newRight) = Self.targets(gain: gain, position: position)
        aim(left: newLeft, right: newRight, frames: frames, interpolate: interpolate)
    }

    /// The left and right gains of `gain` placed at `position` (0 left … 1 right), constant-power.
    @inline(__always) @_noAllocation @_noLocks
    static func targets(gain: Float, position: Double) -> (left: Float, right: Float) {
        // θ from 0 (left) to π/2 (right), as a quarter of a sine period.
        let angle = max(0, min(1, position)) / 4
        return (gain * Float(FastMath.sine(angle + 0.25)), gain * Float(FastMath.sine(angle)))
    }

    /// Aims at the gains `newLeft` and `newRight`: gliding there over `frames` with `interpolate`, else at once.
    @inline(__always) @_noAllocation @_noLocks
    mutating func aim(left newLeft: Float, right newRight: Float, frames: Int, interpolate: Bool) {
        if interpolate {
            leftStep = (newLeft - left) / Float(frames)
            rightStep = (newRight - right) / Float(frames)
        } else {
            (left, right, leftStep, rightStep) = (newLeft, newRight, 0, 0)
        }
    }

    /// Where MIDI pan (CC 10, on the 0…127 scale, fractional from MIDI 2.0) puts a sound: 0 and 1 hard left, 64
    /// the centre, 127 hard right.
    @inline(__always) @_noAllocation @_noLocks
    static func position(pan: Double) -> Double { max(0, pan - 1) / 126 }
}
