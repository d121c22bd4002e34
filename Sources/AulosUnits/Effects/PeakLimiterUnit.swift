import AulosCore
import AulosDSP
import Foundation
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
    /// How far under the ceiling the limiter aims (dB): its 32-tap detector read true peaks up to 0.15 dB low
    /// on dense synth songs (18 openmsx renders at -0.99 to -0.85 dBTP against a 16x long-filter reference),
    /// so samples are held at -1.2 dBFS to keep the true peak at or below -1 dBTP.
    public static let detectorMargin = 0.2

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

    /// The counters the kernel publishes (since the unit was initialized): samples turned down, the lowest
    /// gain applied (Float bits), samples that left at or past full scale, the highest sample (Float bits), and
    /// the highest since `takeRecentPeak` last read it (Float bits).
    private let counters = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 5)

    public init() {
        for index in 0..<5 { (counters + index).initialize(to: Atomic(0)) }
        super.init(
            description: Self.componentDescription, name: "Aulos: Peak Limiter", parameters: Self.definitions,
            presets: [])
    }

    deinit {
        counters.deinitialize(count: 5)
        counters.deallocate()
    }

    /// Seconds of delay: the look-ahead and the peak detector's reach, or none when not limiting.
    public override var latency: Double {
        guard limiting else { return 0 }
        let rate = inputFormat(0).sampleRate
        return Double(TruePeakLimiter.latencyFrames(sampleRate: rate, lookaheadSeconds: Self.lookaheadSeconds)) / rate
    }

    /// The latency in whole frames at the unit's rate.
    public var latencyFrames: Int { limiting ? Self.latencyFrames(sampleRate: inputFormat(0).sampleRate) : 0 }

    /// The latency of a limiting output stage at `sampleRate`, in frames (64 at 48 kHz).
    public static func latencyFrames(sampleRate: Double) -> Int {
        TruePeakLimiter.latencyFrames(sampleRate: sampleRate, lookaheadSeconds: lookaheadSeconds)
    }

    /// What the output stage did since it was initialized. Control side; the kernel's counters are read
    /// atomically.
    public struct Activity: Equatable, Sendable {
        /// Samples (per channel pair) the limiter turned down, and its deepest reduction in dB (0: none).
        public var limitedSamples: Int
        public var deepestReduction: Float
        /// Samples (each channel's counted) that left at or past full scale: clipped in an integer file or
        /// on the device; kept as they are in a float file. None while the limiter is on.
        public var fullScaleSamples: Int
        /// The highest sample that left, in dBFS (−120 for silence).
        public var peak: Float

        /// "peak −1.0 dBFS, the limiter turned 0.42 % of it down (at most 4.1 dB)", for a run of `frames`
        /// frames: the line the render and play summaries share.
        public func summary(limiting: Bool, frames: Int64) -> String {
            var text = "peak \(peak <= -120 ? "silence" : String(format: "%.1f dBFS", peak))"
            guard limiting else { return text + ", no limiter" }
            guard limitedSamples > 0 else { return text + ", the limiter never acted" }
            let share = 100 * Double(limitedSamples) / Double(max(1, frames))
            text += ", the limiter turned \(String(format: share < 0.01 ? "%.4f" : "%.2f", share)) % of it down "
            return text + "(at most \(String(format: "%.1f", deepestReduction)) dB)"
        }
    }

    public var activity: Activity {
        func float(_ index: Int) -> Float {
            Float(bitPattern: UInt32(truncatingIfNeeded: counters[index].load(ordering: .relaxed)))
        }
        let lowest = float(1)
        let peak = float(3)
        return Activity(
            limitedSamples: Int(counters[0].load(ordering: .relaxed)),
            deepestReduction: lowest < 1 && lowest > 0 ? -20 * log10(lowest) : 0,
            fullScaleSamples: Int(counters[2].load(ordering: .relaxed)),
            peak: peak > 1e-6 ? 20 * log10(peak) : -120)
    }

    /// The highest sample that left since the last call (linear; 0 for silence): how an offline render
    /// knows its tail has died away.
    public func takeRecentPeak() -> Float {
        Float(bitPattern: UInt32(truncatingIfNeeded: counters[4].exchange(0, ordering: .relaxed)))
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let input = try checkedStereoFormat()
        for index in 0..<5 { counters[index].store(0, ordering: .relaxed) }
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
        if var limiter {
            let decibels = Double(parameters.value(Int(P.ceiling.rawValue))) - PeakLimiterUnit.detectorMargin
            let ceiling = Float(FastMath.exp2(decibels / 6.020_599_913_279_624))
            let release = parameters.value(Int(P.release.rawValue)) / 1000
            limiter.process(
                left: left, right: right, frames: frameCount, gain: 1, ceiling: ceiling, releaseSeconds: release)
            if limiter.limitedSamples > 0 {
                counters[0].add(UInt64(limiter.limitedSamples), ordering: .relaxed)
                if limiter.lowestGain < float(1) {
                    counters[1].store(UInt64(limiter.lowestGain.bitPattern), ordering: .relaxed)
                }
                limiter.limitedSamples = 0
                limiter.lowestGain = 1
            }
            self.limiter = limiter
        }
        // What leaves: its peak, and how much of it is at or past full scale.
        var peak: Float = 0
        var overs = 0
        for frame in 0..<frameCount {
            let larger = max(abs(left[frame]), abs(right[frame]))
            peak = max(peak, larger)
            if larger >= 1 { overs += (abs(left[frame]) >= 1 ? 1 : 0) + (abs(right[frame]) >= 1 ? 1 : 0) }
        }
        if overs > 0 { counters[2].add(UInt64(overs), ordering: .relaxed) }
        if peak > float(3) { counters[3].store(UInt64(peak.bitPattern), ordering: .relaxed) }
        // (A plain store after a load: the control side only ever exchanges it for 0, and a peak lost to that
        // race is one slice's, read again at the next.)
        if peak > float(4) { counters[4].store(UInt64(peak.bitPattern), ordering: .relaxed) }
        return 0
    }

    /// Counter `index` as the Float whose bits it holds (the render thread is its only writer).
    @inline(__always) @_noAllocation @_noLocks
    func float(_ index: Int) -> Float {
        Float(bitPattern: UInt32(truncatingIfNeeded: counters[index].load(ordering: .relaxed)))
    }
}
