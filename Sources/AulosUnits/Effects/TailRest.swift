import AulosCore

/// When a time-based effect may stop computing: once its input has been exactly zero for longer than the
/// time its output takes to fall 140 dB (its rest time), what it would still produce is below any sample
/// format's resolution, so it outputs silence and leaves its state as it is until a sample arrives — then
/// it carries on from there. A return whose send is silent (a chorus at CC 93 = 0, a reverb after the
/// song) then costs almost nothing.
///
/// Decided sample by sample from the input alone, so the output is the same whatever the slice size. The
/// effect's parameters keep moving while it rests (only the signal processing stops).
///
/// Threads: render thread (a value inside an effect's kernel).
struct TailRest {
    /// Consecutive input frames that were exactly zero on both channels (capped far above any rest time).
    var quietFrames = 0
    /// Frames of this slice that rested.
    var restedThisSlice = 0

    /// Starts a slice.
    @inline(__always) @_noAllocation @_noLocks
    mutating func beginSlice() { restedThisSlice = 0 }

    /// Counts one input frame; whether the effect rests for it (the frame is zero and so were the
    /// `restFrames` before it).
    @inline(__always) @_noAllocation @_noLocks
    mutating func rests(_ left: Float, _ right: Float, restFrames: Int) -> Bool {
        guard left == 0 && right == 0 else {
            quietFrames = 0
            return false
        }
        if quietFrames < Int(Int32.max) { quietFrames += 1 }
        guard quietFrames > restFrames else { return false }
        restedThisSlice += 1
        return true
    }

    /// Ends a slice: the output is flagged silent only when every frame rested (a tail ringing out from a
    /// silent input is not silence, whatever the input's flag said).
    @inline(__always) @_noAllocation @_noLocks
    func endSlice(frameCount: Int, flags: UnsafeMutablePointer<RenderActionFlags>) {
        if restedThisSlice == frameCount {
            flags.pointee.insert(.outputIsSilence)
        } else {
            flags.pointee.remove(.outputIsSilence)
        }
    }

    /// Frames for a decay of `rt60` seconds (the time to fall 60 dB) to fall 140 dB, plus `delay` seconds
    /// before it starts, at `sampleRate`; at most ten minutes.
    @inline(__always) @_noAllocation @_noLocks
    static func restFrames(rt60: Double, delay: Double, sampleRate: Double) -> Int {
        Int(min(600, max(0, delay) + max(0, rt60) * 140 / 60) * sampleRate) + 1
    }

    /// How many times a feedback loop of gain `feedback` (|f| < 1) goes round before falling 140 dB, rounded
    /// up generously without a logarithm: ln(1/f) ≥ 1 − f, so 16.2 / (1 − f) passes are always enough.
    @inline(__always) @_noAllocation @_noLocks
    static func repeatsToFall140dB(feedback: Double) -> Double {
        let gain = min(0.999, abs(feedback))
        return gain < 0.001 ? 1 : 1 + 16.2 / (1 - gain)
    }
}
