import Synchronization

/// How long an I/O unit's renders take against the time they last, as both live I/O units measure it (the
/// ALSA unit per period, the JACK unit per cycle): the smoothed and peak DSP load, the render's own CPU
/// time in the peak cycle, late and stalled cycles, and the run's mean. Written by the render thread after
/// each cycle, read by the control thread at any time (atomics only).
///
/// Threads: `record` on the render thread; everything else on the control thread.
public struct RenderLoadMeter: ~Copyable {
    @usableFromInline let lateSlices = Atomic<Int>(0)
    /// Loads in parts per million, so they fit an atomic integer.
    @usableFromInline let loadPPM = Atomic<Int>(0)
    @usableFromInline let peakPPM = Atomic<Int>(0)
    @usableFromInline let peakFrame = Atomic<Int64>(0)
    @usableFromInline let peakCPUPPM = Atomic<Int>(0)
    @usableFromInline let stalledSlices = Atomic<Int>(0)
    /// Wall time spent rendering (ns) and the frames rendered in it: the run's mean load.
    @usableFromInline let renderNanos = Atomic<Int64>(0)
    @usableFromInline let framesRendered = Atomic<Int64>(0)

    public init() {}

    /// One cycle of `frames` frames rendered in `wallNanos`, of which the thread ran `cpuNanos`, at
    /// `framesPlayed` into the run. `smoothed` is the render thread's own running average.
    @inlinable @_noAllocation @_noLocks
    public func record(
        frames: Int, sampleRate: Double, wallNanos: Int64, cpuNanos: Int64, framesPlayed: Int64,
        smoothed: inout Double
    ) {
        let nanosPerCycle = Double(frames) / sampleRate * 1e9
        let load = Double(wallNanos) / nanosPerCycle
        let cpuLoad = Double(cpuNanos) / nanosPerCycle
        renderNanos.add(wallNanos, ordering: .relaxed)
        framesRendered.add(Int64(frames), ordering: .relaxed)
        // A quarter of the cycle lost to not running: preempted, or the virtual CPU stolen by the host.
        if load - cpuLoad > 0.25 { stalledSlices.add(1, ordering: .relaxed) }
        smoothed += (load - smoothed) * 0.05
        loadPPM.store(Int(smoothed * 1e6), ordering: .relaxed)
        if Int(load * 1e6) > peakPPM.load(ordering: .relaxed) {
            peakPPM.store(Int(load * 1e6), ordering: .relaxed)
            peakCPUPPM.store(Int(cpuLoad * 1e6), ordering: .relaxed)
            peakFrame.store(framesPlayed, ordering: .relaxed)
        }
        if load > 1 { lateSlices.add(1, ordering: .relaxed) }
    }

    /// Back to nothing measured (a new start).
    public func reset() {
        lateSlices.store(0, ordering: .relaxed)
        loadPPM.store(0, ordering: .relaxed)
        peakPPM.store(0, ordering: .relaxed)
        peakCPUPPM.store(0, ordering: .relaxed)
        stalledSlices.store(0, ordering: .relaxed)
        peakFrame.store(0, ordering: .relaxed)
        renderNanos.store(0, ordering: .relaxed)
        framesRendered.store(0, ordering: .relaxed)
    }

    /// The statistics an I/O unit reports, with what only the unit knows.
    public func statistics(
        xruns: Int, framesPlayed: Int64, sampleRate: Double?, isInterrupted: Bool, isPacedByClock: Bool = false
    ) -> IOStatistics {
        let frames = framesRendered.load(ordering: .relaxed)
        let mean =
            sampleRate.map { rate in
                frames > 0 ? Double(renderNanos.load(ordering: .relaxed)) / (Double(frames) / rate * 1e9) : 0
            }
            ?? 0
        return IOStatistics(
            xruns: xruns, lateSlices: lateSlices.load(ordering: .relaxed),
            dspLoad: Double(loadPPM.load(ordering: .relaxed)) / 1e6,
            peakLoad: Double(peakPPM.load(ordering: .relaxed)) / 1e6,
            peakLoadFrame: peakFrame.load(ordering: .relaxed),
            peakLoadCPU: Double(peakCPUPPM.load(ordering: .relaxed)) / 1e6,
            stalledSlices: stalledSlices.load(ordering: .relaxed), framesPlayed: framesPlayed,
            isInterrupted: isInterrupted, isPacedByClock: isPacedByClock, meanLoad: mean)
    }
}
