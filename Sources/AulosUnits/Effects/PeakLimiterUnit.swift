import AulosCore
import AulosDSP
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The output stage at the end of every rig's master chain (`aufx/lmtr/Auls`, after Core Audio's
/// AUPeakLimiter): a gain (`--gain`, smoothed) and a true-peak limiter that keeps what reaches the device or
/// the file at or below the ceiling (−1 dBTP by default), transparent below it (the output is the input,
/// delayed, bit for bit). Its look-ahead is its latency: 1 ms plus 16 frames (64 frames at 48 kHz), reported
/// by the `latency` property, added to the latency a live rig reports and taken out of offline renders, so
/// a file's notes stay on their frames.
///
/// With `limiting` off (`--no-limiter`, `limiter: off`) the unit is the gain alone: no delay, nothing held
/// back, values past full scale carried as they are (a float file keeps them).
///
/// What it did is counted (`activity`): the samples it turned down and its deepest reduction, for the
/// render summary, `aulos status` and the panel.
///
/// Threads: control side as for every unit; `PeakLimiterKernel` runs on the render thread and publishes its
/// counters through atomics the control side reads.
public final class PeakLimiterUnit: StereoEffectUnit, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(type: .effect, subtype: "lmtr", manufacturer: .aulos)
    /// The look-ahead: long enough to ramp a peak down without a click, short enough to play through.
    public static let lookaheadSeconds = 0.001

    public enum Parameter: UInt32, CaseIterable, Sendable {
        case gain = 0
        case ceiling, release

        public var id: ParameterID { ParameterID(rawValue) }
    }

    static let definitions: [ParameterInfo] = [
        ParameterInfo(id: Parameter.gain.id, name: "Gain", unit: .decibels, range: -40...24, defaultValue: 0),
        ParameterInfo(id: Parameter.ceiling.id, name: "Ceiling", unit: .decibels, range: -24...0, defaultValue: -1),
        ParameterInfo(
            id: Parameter.release.id, name: "Release", unit: .milliseconds, range: 10...2000, defaultValue: 150),
    ]

    /// Whether the unit limits (true) or only applies its gain. Set before the unit is initialized: the
    /// look-ahead is latency, and latency does not change while a rig plays.
    public var limiting = true {
        didSet { precondition(!isInitialized || limiting == oldValue, "set limiting before initializing") }
    }

    /// The counters the kernel publishes: samples turned down (since the unit was initialized) and the
    /// lowest gain applied, as Float bits.
    private let counters = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 2)

    public init() {
        counters.initialize(to: Atomic(0))
        (counters + 1).initialize(to: Atomic(UInt64(Float(1).bitPattern)))
        super.init(
            description: Self.componentDescription, name: "Aulos: Peak Limiter", parameters: Self.definitions,
            presets: [])
    }

    deinit {
        counters.deinitialize(count: 2)
        counters.deallocate()
    }

    /// Seconds of delay: the look-ahead and the peak detector's reach, or none when not limiting.
    public override var latency: Double {
        guard limiting else { return 0 }
        let rate = inputFormat(0).sampleRate
        return Double(TruePeakLimiter.latencyFrames(sampleRate: rate, lookaheadSeconds: Self.lookaheadSeconds)) / rate
    }

    /// The latency in whole frames at the unit's rate.
    public var latencyFrames: Int {
        limiting
            ? TruePeakLimiter.latencyFrames(
                sampleRate: inputFormat(0).sampleRate, lookaheadSeconds: Self.lookaheadSeconds)
            : 0
    }

    /// What the limiter did since it was initialized: samples turned down and the deepest reduction in dB
    /// (0 when it never acted). Control side; the kernel's counters are read atomically.
    public var activity: (limitedSamples: Int, deepestReduction: Float) {
        let limited = Int(counters[0].load(ordering: .relaxed))
        let lowest = Float(bitPattern: UInt32(truncatingIfNeeded: counters[1].load(ordering: .relaxed)))
        return (limited, lowest < 1 && lowest > 0 ? -20 * log10(lowest) : 0)
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let input = try checkedStereoFormat()
        counters[0].store(0, ordering: .relaxed)
        counters[1].store(UInt64(Float(1).bitPattern), ordering: .relaxed)
        let limiter =
            limiting
            ? TruePeakLimiter.allocate(sampleRate: input.sampleRate, lookaheadSeconds: Self.lookaheadSeconds) : nil
        let kernel = PeakLimiterKernel(parameters: renderParameters, limiter: limiter, counters: counters)
        return UnitKernel.make(kernel, render: PeakLimiterKernel.render) { kernel in kernel.limiter?.deallocate() }
    }
}

/// Render side of the peak limiter.
///
/// Threads: render thread only.
struct PeakLimiterKernel {
    typealias P = PeakLimiterUnit.Parameter
    let parameters: ParameterKernel
    var limiter: TruePeakLimiter?
    let counters: UnsafeMutablePointer<Atomic<UInt64>>
    /// The gain as a factor, and the dB value it was computed from (recomputed only when that changes).
    var factor: Float = 1
    var factorDecibels: Float = 0

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, _, frameCount, io in
        state.assumingMemoryBound(to: PeakLimiterKernel.self).pointee
            .render(inputs: inputs, flags: flags, timeStamp: timeStamp, frameCount: Int(frameCount), io: io)
    }

    @inline(__always) @_noAllocation @_noLocks
    mutating func gainFactor(_ decibels: Float) -> Float {
        if decibels != factorDecibels {
            factorDecibels = decibels
            factor = Float(FastMath.exp2(Double(decibels) / 6.020_599_913_279_624))
        }
        return factor
    }

    @_noAllocation @_noLocks
    mutating func render(
        inputs: UnsafeRawPointer, flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>, frameCount: Int, io: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        let status = RenderInputs.pullInPlace(
            inputs, flags: flags, timeStamp: timeStamp, frameCount: frameCount, into: io)
        if status != 0 { return status }
        parameters.beginSlice()
        let left = io.pointee.floatChannel(0)
        let right = io.pointee.floatChannel(1)
        // The gain, sample by sample while it glides; untouched (bit for bit) at 0 dB.
        for frame in 0..<frameCount {
            parameters.applyEvents(dueAt: frame)
            let gain = gainFactor(parameters.next(Int(P.gain.rawValue)))
            _ = parameters.next(Int(P.ceiling.rawValue))
            _ = parameters.next(Int(P.release.rawValue))
            if gain != 1 {
                left[frame] *= gain
                right[frame] *= gain
            }
        }
        guard var limiter else { return 0 }
        let ceiling = Float(FastMath.exp2(Double(parameters.value(Int(P.ceiling.rawValue))) / 6.020_599_913_279_624))
        let release = parameters.value(Int(P.release.rawValue)) / 1000
        limiter.process(
            left: left, right: right, frames: frameCount, gain: 1, ceiling: ceiling, releaseSeconds: release)
        if limiter.limitedSamples > 0 {
            counters[0].add(UInt64(limiter.limitedSamples), ordering: .relaxed)
            let lowest = Float(bitPattern: UInt32(truncatingIfNeeded: counters[1].load(ordering: .relaxed)))
            if limiter.lowestGain < lowest {
                counters[1].store(UInt64(limiter.lowestGain.bitPattern), ordering: .relaxed)
            }
            limiter.limitedSamples = 0
            limiter.lowestGain = 1
        }
        self.limiter = limiter
        return 0
    }
}
