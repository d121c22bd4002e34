/// Follows an external MIDI clock (24 ticks per quarter note, Start/Stop/Continue, Song Position Pointer):
/// the tempo is the least-squares slope of the recent tick times, which smooths jitter, and the beat phase
/// comes from the same fitted line, so it stays locked to the clock rather than drifting.
///
/// The window is the last two seconds of ticks, but never fewer than 96 (four beats) nor more than 480.
/// Why time and not a tick count: the slope's error grows with jitter over the window's duration, so a
/// four-beat window is four seconds at 60 BPM but one second at 240 BPM — where ±1 ms of jitter alone
/// moves the estimate by about 0.1 BPM. Two seconds keeps fast clocks as steady as slow ones; a tempo
/// change is followed within that span.
///
/// Threads: the MIDI input thread (or whoever timestamps the clock). A value type.
public struct MIDIClockFollower: Sendable {
    /// Ticks always kept for the fit (four beats), and at most.
    public static let minimumWindow = 96
    public static let maximumWindow = 480
    /// Older ticks than this (seconds before the newest) leave the fit once the minimum is met.
    public static let windowDuration = 2.0

    /// A fitted clock: tick k arrives at `origin + k × secondsPerTick`; tick 0 is at beat `startBeat`.
    public struct Line: Sendable, Equatable, BitwiseCopyable {
        public var origin: Double
        public var secondsPerTick: Double
        public var startBeat: Double

        public init(origin: Double, secondsPerTick: Double, startBeat: Double) {
            self.origin = origin
            self.secondsPerTick = secondsPerTick
            self.startBeat = startBeat
        }

        public func beat(at seconds: Double) -> Double { startBeat + (seconds - origin) / secondsPerTick / 24 }
        public var tempo: Double { 60 / (24 * secondsPerTick) }
    }

    private var times: [Double] = []
    private var firstIndex = 0
    private var tickCount = 0
    private var startBeat = 0.0
    public private(set) var isRunning = false

    public init() { times.reserveCapacity(Self.maximumWindow + 1) }

    /// Feeds one message with its arrival time in seconds.
    public mutating func receive(_ message: MIDIMessage, at seconds: Double) {
        switch message {
        case .timingClock:
            guard isRunning else { return }
            times.append(seconds)
            tickCount += 1
            var drop = max(0, times.count - Self.maximumWindow)
            while times.count - drop > Self.minimumWindow && seconds - times[drop] > Self.windowDuration { drop += 1 }
            if drop > 0 {
                times.removeFirst(drop)
                firstIndex = tickCount - times.count
            }
        case .start:
            restart(at: 0)
        case .continue:
            restart(at: startBeat + Double(tickCount) / 24)
        case .stop:
            if isRunning { startBeat += Double(tickCount) / 24 }
            isRunning = false
            times.removeAll()
            tickCount = 0
            firstIndex = 0
        case .songPosition(let sixteenths):
            if !isRunning { startBeat = Double(sixteenths) / 4 }
        default:
            break
        }
    }

    private mutating func restart(at beat: Double) {
        startBeat = beat
        isRunning = true
        times.removeAll()
        tickCount = 0
        firstIndex = 0
    }

    /// The seconds a tick may take: 1 to 1000 BPM. A fit outside (ticks stamped at the same instant, a
    /// clock resumed after an hour) is no clock to follow, and the transport keeps what it had.
    public static let secondsPerTickRange = (60.0 / (24 * 1000))...(60.0 / 24)

    /// The fitted clock once at least two ticks have arrived, and a plausible one.
    public var line: Line? {
        guard isRunning, times.count >= 2 else { return nil }
        // Least squares of time against tick index (tick k = the k-th tick after Start/Continue, the first
        // tick marking the beat position itself).
        let n = Double(times.count)
        var sumK = 0.0
        var sumT = 0.0
        var sumKK = 0.0
        var sumKT = 0.0
        for (offset, time) in times.enumerated() {
            let k = Double(firstIndex + offset)
            sumK += k
            sumT += time
            sumKK += k * k
            sumKT += k * time
        }
        let slope = (n * sumKT - sumK * sumT) / (n * sumKK - sumK * sumK)
        guard Self.secondsPerTickRange.contains(slope) else { return nil }  // NaN is in no range
        let origin = (sumT - slope * sumK) / n
        return Line(origin: origin, secondsPerTick: slope, startBeat: startBeat)
    }

    public var tempo: Double? { line?.tempo }
}
