/// What a driver's render side tells the control thread (Core Audio's interruption and route-change notices,
/// plus xrun reports). Delivered by the I/O unit's `dispatchEvents()`.
public enum IOEvent: BitwiseCopyable, Sendable, Equatable {
    /// An underrun (the device ran dry): recovered with snd_pcm_prepare and counted.
    case underrun
    /// A capture overrun (input arrived faster than it was read): recovered and counted as an xrun.
    case overrun
    /// The system suspended the device; it was resumed (or re-prepared).
    case suspendedAndResumed
    /// The device went away (USB DAC unplugged: ENODEV and friends). Audio stops; the thread parks and
    /// tries to reopen it. `errno` is alsa-lib's negative error.
    case interruptionBegan(errno: Int32)
    /// The device came back and audio resumed; MIDI, unit state and the timeline were kept.
    case interruptionEnded
    /// The server (JACK) changed its buffer size: the slice is now `frames` (the graph plays on).
    case bufferSizeChanged(frames: UInt32)
    /// The server (JACK) changed its sample rate: the graph is silent until it is rebuilt at `hertz`.
    case sampleRateChanged(hertz: UInt32)
}

/// Live statistics, readable from any thread while the unit runs.
public struct IOStatistics: Sendable, Equatable {
    public var xruns: Int
    /// Slices whose render took longer than their own duration (each one risks an underrun).
    public var lateSlices: Int
    /// Render time ÷ slice time, smoothed (0.0–1.0+), and the peak since start.
    public var dspLoad: Double
    public var peakLoad: Double
    /// Frames played when the peak load happened: where in a run to look for what made one period slow.
    public var peakLoadFrame: Int64 = 0
    /// The render thread's CPU time in the peak period ÷ slice time: the render's own work. Far below
    /// `peakLoad`, the period's wall time went to something else — the thread preempted, or (on a virtual
    /// machine) its CPU stolen by the host.
    public var peakLoadCPU: Double = 0
    /// Slices that lost more than a quarter of their time to not running (wall time − thread CPU time).
    public var stalledSlices = 0
    public var framesPlayed: Int64
    public var isInterrupted: Bool
    /// The device takes audio faster than real time and is paced by the clock (`ClockPacing`).
    public var isPacedByClock = false
    /// Render time ÷ time played, over the whole run: the load a run's average is compared by.
    public var meanLoad: Double = 0

    public init(
        xruns: Int, lateSlices: Int, dspLoad: Double, peakLoad: Double, peakLoadFrame: Int64 = 0,
        peakLoadCPU: Double = 0, stalledSlices: Int = 0, framesPlayed: Int64, isInterrupted: Bool,
        isPacedByClock: Bool = false, meanLoad: Double = 0
    ) {
        self.xruns = xruns
        self.lateSlices = lateSlices
        self.dspLoad = dspLoad
        self.peakLoad = peakLoad
        self.peakLoadFrame = peakLoadFrame
        self.peakLoadCPU = peakLoadCPU
        self.stalledSlices = stalledSlices
        self.framesPlayed = framesPlayed
        self.isInterrupted = isInterrupted
        self.isPacedByClock = isPacedByClock
        self.meanLoad = meanLoad
    }
}
