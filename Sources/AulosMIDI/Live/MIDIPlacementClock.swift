import Glibc

/// Maps host time (CLOCK_MONOTONIC ns) to the audio device's sample time, smoothed by a second-order
/// delay-locked loop (F. Adriaensen, "Using a DLL to filter time", 2005), so live MIDI can be placed on
/// the frame that corresponds to its arrival.
///
/// The I/O thread wakes once per period and stamps the slice with the time it woke. Those stamps carry
/// scheduling jitter (tens of µs, more under load); the loop averages it away while following the
/// device's real rate (a 48 kHz crystal is never exactly 48 kHz). The result is a line
/// `frame = referenceFrame + (t − referenceNanos) / nanosPerFrame` that moves smoothly from slice to slice.
///
/// Threads: owned by the render thread (updated in the pre-render notification).
public struct MIDIPlacementClock: Sendable, BitwiseCopyable {
    public private(set) var referenceFrame: Int64 = 0
    public private(set) var referenceNanos: Double = 0
    public private(set) var nanosPerFrame: Double
    public private(set) var isLocked = false
    /// How much earlier than the line the I/O thread has woken, at most (see above).
    public private(set) var marginNanos: Double = 0
    /// Times the loop was reset because a stamp was too far off (an xrun, a reopened device).
    public private(set) var resets = 0

    let nominalNanosPerFrame: Double
    let periodSeconds: Double
    let bandwidth: Double
    let resetThresholdNanos: Double
    /// The loop starts wide (locks within a fraction of a second, learning the device's real rate) and
    /// narrows to `bandwidth` over about two seconds (averaging jitter away from then on).
    var currentBandwidth: Double = 0
    var hasSettled = false
    let narrowing: Double
    static let lockingBandwidth = 4.0

    /// `periodFrames`: the frames between updates (the I/O period). `bandwidth`: the loop's final bandwidth
    /// in Hz; lower averages more jitter away but follows rate changes more slowly.
    public init(sampleRate: Double, periodFrames: Int, bandwidth: Double = 0.05) {
        nominalNanosPerFrame = 1e9 / sampleRate
        nanosPerFrame = nominalNanosPerFrame
        periodSeconds = Double(periodFrames) / sampleRate
        self.bandwidth = bandwidth
        // From the locking bandwidth to the final one in two seconds of updates.
        narrowing = pow(bandwidth / Self.lockingBandwidth, periodSeconds / 2)
        // Beyond two periods (or 10 ms) the stamps are not jitter but a discontinuity: start over.
        resetThresholdNanos = max(10e6, 2 * Double(periodFrames) * nominalNanosPerFrame)
    }

    /// A slice starting at `frame` began rendering at `hostNanos`.
    @_noAllocation @_noLocks
    public mutating func update(frame: Int64, hostNanos: Int64) {
        let measured = Double(hostNanos)
        let elapsed = frame - referenceFrame
        guard isLocked, elapsed > 0 else {
            if !isLocked || elapsed < 0 { restart(frame: frame, hostNanos: measured) }
            return
        }
        let predicted = referenceNanos + Double(elapsed) * nanosPerFrame
        let error = measured - predicted
        if abs(error) > resetThresholdNanos {
            resets += 1
            restart(frame: frame, hostNanos: measured)
            return
        }
        let locking = currentBandwidth > bandwidth
        if locking {
            currentBandwidth = max(bandwidth, currentBandwidth * narrowing)
            // Locked for the first time: forget the margin the wide loop needed; it regrows to what the
            // narrow one needs. After a restart (an xrun) the machine's jitter is what it was: keep it,
            // or the events right after every xrun would play late.
            if currentBandwidth == bandwidth && !hasSettled {
                marginNanos = 0
                hasSettled = true
            }
        }
        let omega = 2 * Double.pi * currentBandwidth * periodSeconds
        let b = 1.4142135623730951 * omega  // √2 ω: critically damped (Adriaensen)
        let c = omega * omega
        referenceFrame = frame
        referenceNanos = predicted + b * error
        // The rate term integrates the error per frame; bounded to ±0.1 % so a burst of bad stamps
        // cannot run the clock away.
        nanosPerFrame += c * error / Double(elapsed)
        nanosPerFrame = min(max(nanosPerFrame, nominalNanosPerFrame * 0.999), nominalNanosPerFrame * 1.001)
        marginNanos = max(marginNanos, referenceNanos - measured)
    }

    /// The (fractional) sample time at `hostNanos`.
    @_noAllocation @_noLocks
    public func frame(atNanos hostNanos: Int64) -> Double {
        Double(referenceFrame) + (Double(hostNanos) - referenceNanos + marginNanos) / nanosPerFrame
    }

    /// The host time of sample time `frame` on the line itself (no margin): when that frame is heard, for
    /// host times that say so. The inverse of `frame(atNanos:)` without the margin.
    @_noAllocation @_noLocks
    public func nanos(atFrame frame: Int64) -> Double {
        referenceNanos + Double(frame - referenceFrame) * nanosPerFrame
    }

    @_noAllocation @_noLocks
    mutating func restart(frame: Int64, hostNanos: Double) {
        referenceFrame = frame
        referenceNanos = hostNanos
        nanosPerFrame = nominalNanosPerFrame
        currentBandwidth = Self.lockingBandwidth
        isLocked = true
    }
}
