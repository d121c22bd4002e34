import AulosCore
import AulosGraph
import Foundation

/// Per-part CPU load: the render thread's per-unit self times (`AudioUnit.renderNanos`, summed by
/// `RenderPlan.renderNode`) and the graph's notification time (`AudioGraph.notifyNanos`), turned into loads —
/// fractions of the time the frames last, as the DSP load is — for each part (its instrument, MIDI effects,
/// inserts, EQ and side outputs), the units every part shares (the mixers, the returns, the master EQ and
/// effects, the output stage and the I/O unit) and the render notifications (MIDI in, the players, the
/// transport, the meters, recorders and part taps). Each bucket is measured; none is "the total minus the
/// rest", so what the buckets leave out shows as the difference from the DSP load (the driver's own work
/// around the graph).
///
/// It also remembers, for each rig of a set, the peak of its parts' load while it was the rig playing, and
/// from that predicts what a switch to it would load the period with: the DSP load now, less the playing
/// rig's parts now, plus the target's parts at their peak the last time it played. A measurement of the
/// past, not a guarantee: the rig may be played harder than it was.
///
/// Threads: the control thread (the live session's tick). The counters it reads are atomics the render
/// thread writes.
public final class RigCPUMeter {
    /// Above this share of the period a switch is predicted not to fit: what is left is the margin for the
    /// device, the scheduler and a denser passage than the one measured.
    public static let fitLimit = 0.9

    /// What a switch to one rig is predicted to load the period with.
    ///
    /// Threads: a value, made on the control thread.
    public struct Prediction: Sendable, Equatable {
        /// The rig (0-based) and its name.
        public var rig: Int
        public var name: String
        /// The DSP load now, and the share of it the playing rig's parts take.
        public var total: Double
        public var leaving: Double
        /// The rig's parts at their peak the last time it played; nil: it has not played since the rig was
        /// built ("not yet measured"), and nothing is predicted.
        public var peak: Double?
        /// `total − leaving + peak`, and whether that is within `fitLimit`.
        public var predicted: Double? { peak.map { max(0, total - leaving) + $0 } }
        public var fits: Bool? { predicted.map { $0 <= RigCPUMeter.fitLimit } }

        /// The one-line warning for a switch predicted not to fit (nil when it fits or nothing is known).
        public var warning: String? {
            guard fits == false, let peak, let predicted else { return nil }
            return "rig \(rig + 1) '\(name)' may not fit the period: \(Self.percent(total)) now − "
                + "\(Self.percent(leaving)) for the parts it replaces + \(Self.percent(peak)) its parts took at their "
                + "peak when it last played = \(Self.percent(predicted)), over \(Self.percent(RigCPUMeter.fitLimit)) "
                + "(measured the last time it played, not a guarantee)"
        }

        static func percent(_ load: Double) -> String { String(format: "%.0f %%", load * 100) }
    }

    private let graph: AudioGraph
    private let partUnits: [[AudioUnit]]
    /// Which rig of the set each part belongs to, and the rigs' names.
    private let partRigs: [Int]
    private let rigNames: [String]
    private let partOwned: Set<ObjectIdentifier>
    private let sampleRate: Double
    /// The smoothing's time constant in frames: twenty periods, the DSP load's (it moves 5 % per period).
    private let smoothingFrames: Double

    /// The counters at the last update, and at the start (for the run's means).
    private var lastParts: [UInt64]
    private var lastShared: UInt64
    private var lastNotify: UInt64
    private var lastFrames: Int64 = 0
    private let startParts: [UInt64]
    private let startShared: UInt64
    private let startNotify: UInt64

    /// Each part's load (in part order: every rig's parts), the shared units' and the notifications', smoothed
    /// like the DSP load.
    public private(set) var parts: [Double]
    public private(set) var shared = 0.0
    public private(set) var meters = 0.0
    /// The same buckets averaged over every cycle since the meter started (accumulated time over the frames'
    /// time): what compares with the I/O unit's mean load over the same cycles.
    public private(set) var partMeans: [Double]
    public private(set) var sharedMean = 0.0
    public private(set) var metersMean = 0.0
    /// The DSP load at the last update.
    public private(set) var total = 0.0
    /// The rig the meter counts as playing (whose parts' peak it keeps), as the session tells it (`noteSwitch`).
    public private(set) var activeRig = 0
    /// Each rig's parts' peak load while it played; nil until it has.
    public private(set) var peaks: [Double?]

    /// Starts counting from the counters as they are now. `period` is the device's period in frames.
    public init(rig: PlaybackRig, period: Int) {
        graph = rig.graph
        partUnits = rig.parts.map(\.units)
        partRigs = rig.parts.map(\.rigIndex)
        rigNames = rig.set.entries.map(\.rig.name)
        let owned = Set(rig.parts.flatMap(\.units).map(ObjectIdentifier.init))
        partOwned = owned
        sampleRate = rig.rig.sampleRate
        smoothingFrames = 20 * Double(max(1, period))
        parts = Array(repeating: 0, count: rig.parts.count)
        partMeans = Array(repeating: 0, count: rig.parts.count)
        peaks = Array(repeating: nil, count: rig.set.entries.count)
        let counted = rig.parts.map { Self.nanos($0.units) }
        (lastParts, startParts) = (counted, counted)
        lastNotify = rig.graph.notifyNanos
        startNotify = rig.graph.notifyNanos
        lastShared = Self.sharedNanos(of: rig.graph, besides: owned)
        startShared = Self.sharedNanos(of: rig.graph, besides: owned)
    }

    private static func nanos(_ units: [AudioUnit]) -> UInt64 { units.reduce(0) { $0 &+ $1.renderNanos } }

    /// The units no part owns, as the graph has them now (the master EQ may join while playing).
    private static func sharedNanos(of graph: AudioGraph, besides owned: Set<ObjectIdentifier>) -> UInt64 {
        graph.units.reduce(0) { owned.contains(ObjectIdentifier($1)) ? $0 : $0 &+ $1.renderNanos }
    }

    /// One control tick: the counters read again, `framesPlayed` the device's count so far, `dspLoad` its DSP
    /// load now. Loads are the time spent since the last tick over the time its frames last; nothing moves
    /// while no frames were played.
    public func update(framesPlayed: Int64, dspLoad: Double) {
        total = dspLoad
        let frames = framesPlayed - lastFrames
        if frames < 0 {
            // The device counts from 0 again (a restart): count on from here.
            lastFrames = framesPlayed
            return
        }
        guard frames > 0 else { return }
        lastFrames = framesPlayed
        let seconds = Double(frames) / sampleRate
        let runSeconds = Double(framesPlayed) / sampleRate
        let weight = 1 - exp(-Double(frames) / smoothingFrames)
        func loadSince(_ nanos: UInt64) -> Double { Double(nanos) / 1e9 / seconds }
        func mean(_ nanos: UInt64) -> Double { Double(nanos) / 1e9 / runSeconds }
        for (index, units) in partUnits.enumerated() {
            let now = Self.nanos(units)
            parts[index] += (loadSince(now &- lastParts[index]) - parts[index]) * weight
            partMeans[index] = mean(now &- startParts[index])
            lastParts[index] = now
        }
        let sharedNow = Self.sharedNanos(of: graph, besides: partOwned)
        shared += (loadSince(sharedNow &- lastShared) - shared) * weight
        sharedMean = mean(sharedNow &- startShared)
        lastShared = sharedNow
        let notifyNow = graph.notifyNanos
        meters += (loadSince(notifyNow &- lastNotify) - meters) * weight
        metersMean = mean(notifyNow &- startNotify)
        lastNotify = notifyNow
        let playing = self.load(ofRig: activeRig)
        peaks[activeRig] = max(peaks[activeRig] ?? 0, playing)
    }

    /// The smoothed load of rig `index`'s parts now.
    public func load(ofRig index: Int) -> Double {
        zip(partRigs, parts).reduce(0) { $1.0 == index ? $0 + $1.1 : $0 }
    }

    /// What switching to rig `index` would load the period with, from the last update: see the type.
    public func prediction(switchingTo index: Int) -> Prediction {
        Prediction(
            rig: index, name: rigNames[index], total: total, leaving: load(ofRig: activeRig), peak: peaks[index])
    }

    /// Every rig's prediction, for the status (the rig playing: its own peak again on top of the rest).
    public var predictions: [Prediction] { rigNames.indices.map(prediction(switchingTo:)) }

    /// From now on rig `index`'s parts are the ones playing: after a switch was predicted and logged, and each
    /// tick with the router's rig (a reload recalls the rig that played without a switch).
    public func noteSwitch(to index: Int) {
        guard peaks.indices.contains(index) else { return }
        activeRig = index
    }

    /// Test seam (`AULOS_INJECT_RIG_PEAK`, and tests in this package): a peak as if rig `index` had played at
    /// `load`. The prediction and the warning are then the real ones.
    package func injectPeak(_ load: Double, ofRig index: Int) {
        guard peaks.indices.contains(index) else { return }
        peaks[index] = max(peaks[index] ?? 0, load)
    }
}
