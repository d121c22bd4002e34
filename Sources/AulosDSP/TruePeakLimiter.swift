/// A stereo look-ahead limiter that keeps the true peak (the peak of the signal between its samples, as a
/// D/A converter or a resampler rebuilds it) at or below a ceiling, and is bit-transparent below it.
///
/// How: each sample's peak is estimated on a 4× oversampled copy (a 32-tap windowed-sinc interpolator per
/// phase: the same idea as ITU-R BS.1770's true-peak meter, with a longer filter, since 16 taps let full-band
/// noise pass the ceiling by 0.4 dB between samples), both channels linked. The gain a sample needs
/// (`ceiling / peak`, or 1) is held as a running minimum over the look-ahead window, released smoothly
/// (`release` seconds), then averaged over the window: the average of gains that are each at most the gain
/// the delayed sample needs is itself at most that gain, so the output cannot pass the ceiling, and the gain
/// ramps down over the whole look-ahead instead of jumping (no click). With nothing to limit in the window
/// the gain is exactly 1 and the output is the input, delayed by `latency` frames, bit for bit.
///
/// Memory is allocated once by `allocate` (control side) and freed by `deallocate`; `process` never
/// allocates.
///
/// Threads: made and freed on the control side; `process` on the render thread only.
public struct TruePeakLimiter: @unchecked Sendable {
    /// Taps per interpolation phase; the detector looks `tapsPerPhase / 2` samples ahead of the sample it
    /// measures.
    static let tapsPerPhase = 32
    static let oversampling = 4

    /// Frames of look-ahead: the gain ramps down over this many frames before a peak.
    public let lookahead: Int
    /// Frames from a sample going in to it coming out: the look-ahead plus the detector's own.
    public var latency: Int { lookahead + Self.tapsPerPhase / 2 }

    let sampleRate: Double
    /// The interpolation filter: `oversampling - 1` phases (1/4, 2/4, 3/4 between two samples) of
    /// `tapsPerPhase` taps, and for each phase the sum of its taps' magnitudes (the most it can amplify).
    let taps: UnsafeMutablePointer<Float>
    let phaseGain: Float
    /// The last `tapsPerPhase` input samples per channel (two copies side by side, so a window is contiguous).
    let history: UnsafeMutablePointer<Float>
    var historyIndex = 0
    /// The audio delay line: `latency` frames per channel, a ring (a slot is read, then written).
    let delayed: UnsafeMutablePointer<Float>
    let delayCapacity: Int
    var delayIndex = 0
    /// The running minimum of the needed gain over the last `lookahead + 1` samples: a monotonic queue of
    /// (sample number, gain) in a ring.
    let queueIndex: UnsafeMutablePointer<Int>
    let queueGain: UnsafeMutablePointer<Float>
    /// A power of two, so wrapping is a mask.
    let queueCapacity: Int
    var queueHead = 0
    var queueCount = 0
    /// The released gains of the last `lookahead` samples, their sum, and how many of them are below 1.
    let window: UnsafeMutablePointer<Float>
    var windowIndex = 0
    var windowSum: Double
    var windowBelowOne = 0
    var released: Float = 1
    var sampleNumber = 0
    /// The peak of the interval between the previous sample and the one being measured.
    var previousIntervalPeak: Float = 0
    /// How many more samples the detector's window holds one loud enough to be interpolated around (at or
    /// above `ceiling / phaseGain`: below that no point between samples can reach the ceiling).
    var loudFrames = 0

    /// What the limiter did since the counters were last read: samples it turned down by 0.1 dB or more, and
    /// its deepest gain.
    public var limitedSamples = 0
    public var lowestGain: Float = 1

    /// The latency of a limiter made by `allocate` with these settings, in frames.
    public static func latencyFrames(sampleRate: Double, lookaheadSeconds: Double) -> Int {
        max(1, Int((lookaheadSeconds * sampleRate).rounded())) + tapsPerPhase / 2
    }

    /// A limiter for `sampleRate` with `lookaheadSeconds` of look-ahead (1 ms: 48 frames at 48 kHz).
    public static func allocate(sampleRate: Double, lookaheadSeconds: Double = 0.001) -> TruePeakLimiter {
        TruePeakLimiter(sampleRate: sampleRate, lookahead: max(1, Int((lookaheadSeconds * sampleRate).rounded())))
    }

    private init(sampleRate: Double, lookahead: Int) {
        self.sampleRate = sampleRate
        self.lookahead = lookahead
        let phases = Self.oversampling - 1
        taps = .allocate(capacity: phases * Self.tapsPerPhase)
        var largest: Float = 0
        for phase in 1...phases {
            let fraction = Double(phase) / Double(Self.oversampling)
            var sum: Float = 0
            for tap in 0..<Self.tapsPerPhase {
                // Distance from this tap's sample to the point between the two middle samples of the window.
                let distance = Double(tap - (Self.tapsPerPhase / 2 - 1)) - fraction
                let value = Self.windowedSinc(distance, halfWidth: Double(Self.tapsPerPhase / 2))
                taps[(phase - 1) * Self.tapsPerPhase + tap] = Float(value)
                sum += abs(Float(value))
            }
            largest = max(largest, sum)
        }
        phaseGain = largest
        history = .allocate(capacity: 2 * 2 * Self.tapsPerPhase)
        history.initialize(repeating: 0, count: 2 * 2 * Self.tapsPerPhase)
        delayCapacity = lookahead + Self.tapsPerPhase / 2
        delayed = .allocate(capacity: 2 * delayCapacity)
        delayed.initialize(repeating: 0, count: 2 * delayCapacity)
        var capacity = 4
        while capacity < lookahead + 2 { capacity <<= 1 }
        queueCapacity = capacity
        queueIndex = .allocate(capacity: queueCapacity)
        queueIndex.initialize(repeating: 0, count: queueCapacity)
        queueGain = .allocate(capacity: queueCapacity)
        queueGain.initialize(repeating: 1, count: queueCapacity)
        window = .allocate(capacity: lookahead)
        window.initialize(repeating: 1, count: lookahead)
        windowSum = Double(lookahead)
    }

    /// sinc(x) under a Blackman window reaching zero at ±halfWidth. Pure arithmetic (FastMath), so every
    /// machine builds the same filter.
    static func windowedSinc(_ x: Double, halfWidth: Double) -> Double {
        guard abs(x) < halfWidth else { return 0 }
        let sinc = x == 0 ? 1 : FastMath.sine(x / 2) / (Double.pi * x)
        let position = (x + halfWidth) / (2 * halfWidth)
        let blackman = 0.42 - 0.5 * FastMath.sine(position + 0.25) + 0.08 * FastMath.sine(2 * position + 0.25)
        return sinc * blackman
    }

    /// Frees the memory; the limiter must not be used afterwards.
    public func deallocate() {
        taps.deallocate()
        history.deallocate()
        delayed.deallocate()
        queueIndex.deallocate()
        queueGain.deallocate()
        window.deallocate()
    }

    /// The highest of the three points between the two middle samples of channel `channel`'s window: each
    /// a 32-tap dot product, eight lanes at a time.
    @inline(__always) @_noAllocation @_noLocks
    func intervalPeak(channel: Int) -> Float {
        let samples = UnsafeRawPointer(history + channel * 2 * Self.tapsPerPhase + historyIndex)
        var peak: Float = 0
        for phase in 0..<(Self.oversampling - 1) {
            let filter = UnsafeRawPointer(taps + phase * Self.tapsPerPhase)
            var sum = SIMD8<Float>()
            for lane in stride(from: 0, to: Self.tapsPerPhase * 4, by: 32) {
                sum +=
                    filter.loadUnaligned(fromByteOffset: lane, as: SIMD8<Float>.self)
                    * samples.loadUnaligned(fromByteOffset: lane, as: SIMD8<Float>.self)
            }
            peak = max(peak, abs(sum.sum()))
        }
        return peak
    }

    /// Limits `frames` stereo frames in place, each scaled by `gain` first, to at most `ceiling` (linear).
    @_noAllocation @_noLocks
    public mutating func process(
        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int, gain: Float,
        ceiling: Float, releaseSeconds: Float
    ) {
        let taps = Self.tapsPerPhase
        let middle = taps / 2 - 1
        let releaseStep = Float(1 - FastMath.exp(-1 / (Double(releaseSeconds) * sampleRate)))
        // Below this level no point between samples can reach the ceiling: no interpolation needed.
        let quiet = ceiling / phaseGain
        for frame in 0..<frames {
            let inLeft = left[frame] * gain
            let inRight = right[frame] * gain
            // The detector's window: newest sample last, written twice so a window never wraps.
            history[historyIndex] = inLeft
            history[historyIndex + taps] = inLeft
            history[2 * taps + historyIndex] = inRight
            history[2 * taps + historyIndex + taps] = inRight
            historyIndex = historyIndex + 1 == taps ? 0 : historyIndex + 1
            // The sample measured now is `taps / 2` behind the newest; the interval after it is interpolated.
            let leftWindow = history + historyIndex
            let rightWindow = history + 2 * taps + historyIndex
            // A loud sample keeps the interpolation on while it is in the window (`taps` samples).
            loudFrames = max(abs(inLeft), abs(inRight)) >= quiet ? taps : max(0, loudFrames - 1)
            let samplePeak = max(abs(leftWindow[middle]), abs(rightWindow[middle]))
            let nextInterval =
                loudFrames <= 0 ? 0 : max(intervalPeak(channel: 0), intervalPeak(channel: 1))
            let peak = max(samplePeak, max(previousIntervalPeak, nextInterval))
            previousIntervalPeak = nextInterval
            let needed: Float = peak > ceiling ? ceiling / peak : 1

            // Running minimum over the last `lookahead + 1` needed gains.
            while queueCount > 0 && queueGain[(queueHead + queueCount - 1) & (queueCapacity - 1)] >= needed {
                queueCount -= 1
            }
            queueIndex[(queueHead + queueCount) & (queueCapacity - 1)] = sampleNumber
            queueGain[(queueHead + queueCount) & (queueCapacity - 1)] = needed
            queueCount += 1
            if queueIndex[queueHead] < sampleNumber - lookahead {
                queueHead = (queueHead + 1) & (queueCapacity - 1)
                queueCount -= 1
            }
            let held = queueGain[queueHead]
            sampleNumber += 1

            // Down at once, up with the release; exactly 1 once nothing needs turning down.
            if held < released {
                released = held
            } else if held == 1 && released > 0.9999 {  // 0.0009 dB from 1: the last step is inaudible
                released = 1
            } else {
                released += releaseStep * (held - released)
            }

            // Averaged over the look-ahead window: a ramp, and never above what the delayed sample needs.
            let leaving = window[windowIndex]
            if leaving < 1 { windowBelowOne -= 1 }
            if released < 1 { windowBelowOne += 1 }
            windowSum += Double(released) - Double(leaving)
            window[windowIndex] = released
            windowIndex = windowIndex + 1 == lookahead ? 0 : windowIndex + 1
            let applied: Float
            if windowBelowOne == 0 {
                applied = 1
                windowSum = Double(lookahead)  // no drift from the running sum
            } else {
                applied = min(1, Float(windowSum / Double(lookahead)))
            }

            // The delay: the sample measured `lookahead` samples ago leaves now.
            let readIndex = delayIndex
            let outLeft = delayed[readIndex]
            let outRight = delayed[delayCapacity + readIndex]
            delayed[readIndex] = inLeft
            delayed[delayCapacity + readIndex] = inRight
            delayIndex = delayIndex + 1 == delayCapacity ? 0 : delayIndex + 1
            left[frame] = outLeft * applied
            right[frame] = outRight * applied
            // Counted when turned down by 0.1 dB or more: a release's last hundredths of a dB are not "limiting".
            if applied < 0.988_553 {
                limitedSamples += 1
                lowestGain = min(lowestGain, applied)
            }
        }
    }
}
