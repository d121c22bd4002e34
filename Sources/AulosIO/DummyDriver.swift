import AulosCore
import AulosRealtime

/// A driver with no device and no thread, for tests: `DummyIOUnit` heads a live graph like the ALSA or JACK
/// unit — the audio session opens it, sizes the graph by its grant, relays its events — but the test pulls
/// each period itself (`pull()`), and time is the test's own clock. So a session's behaviour over time
/// (card polling, events, statistics) is tested without sleeping.
///
/// Threads: a test's, for everything.
public enum DummyDriver {
    /// An `AudioDriver` whose I/O unit is a `DummyIOUnit` and whose cards are whatever `cards` returns.
    public static func driver(cards: @escaping () -> [String] = { [] }, inputAvailable: Bool = false)
        -> AudioDriver
    {
        AudioDriver(
            name: "dummy", outputComponent: DummyIOUnit.component, listCards: cards,
            isInputAvailable: { _, _ in inputAvailable })
    }
}

/// The dummy driver's I/O unit (`auou/dumy/Auls`): grants what is asked (float32, the requested rate,
/// period and periods), renders one period per `pull()` at the injected clock's host time, counts what it
/// played, and reports the events a test injects (`post`).
public final class DummyIOUnit: IOUnit, LiveIOUnit, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(type: .output, subtype: "dumy", manufacturer: .aulos)
    public static var component: Component {
        Component(componentDescription, name: "Aulos: Dummy I/O") { DummyIOUnit() }
    }

    public var request = PCMRequest()
    public private(set) var grant: PCMGrant?
    public let warnings: [String] = []
    public var restartNeeded: IORestart?
    /// CLOCK_MONOTONIC nanoseconds for the slices' host times; tests inject their own.
    public var clock: () -> Int64 = monotonicNanoseconds
    /// What `openDevice` throws instead of granting (a device that is missing, busy or refuses).
    public var openError: DeviceError?

    private var buffer: AudioBufferListStorage?
    private var listeners: [(IOEvent) -> Void] = []
    private var pending: [IOEvent] = []
    private var sampleTime: Int64 = 0
    private var frameLimit: Int64 = 0
    private var xruns = 0
    private var interrupted = false
    private let meter = RenderLoadMeter()
    private var smoothedLoad = 0.0

    public init() {
        super.init(description: Self.componentDescription, name: "Aulos: Dummy I/O", hasInputElement: true)
    }

    @discardableResult
    public func openDevice() throws(DeviceError) -> PCMGrant {
        if let grant { return grant }
        if let openError { throw openError }
        let granted = PCMGrant(
            device: request.device, sampleRate: request.sampleRate, period: request.period, periods: request.periods,
            bufferFrames: request.period * request.periods, format: .float32, channels: request.channels)
        grant = granted
        return granted
    }

    public func closeDevice() {
        guard !isRunning else { return }
        grant = nil
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let granted: PCMGrant
        do { granted = try openDevice() } catch { throw error.unitError }
        try set(.streamFormat, granted.streamFormat, scope: .output)
        buffer = AudioBufferListStorage(format: granted.streamFormat, maximumFrames: granted.period)
        return try ConvertingPullKernel.make(for: self)
    }

    public override func startIO() throws(AudioUnitError) {
        guard renderEntry != nil, grant != nil else {
            throw AudioUnitError(.uninitialized, "\(name) must head an initialized graph before it starts")
        }
        sampleTime = 0
        xruns = 0
        meter.reset()
    }

    /// Renders the next period, as a device's thread would, at the clock's time; returns its interleaved
    /// samples (empty when not running or past the frame limit).
    @discardableResult
    public func pull() -> [Float] {
        guard isRunning, let grant, let buffer, let entry = renderEntry else { return [] }
        guard frameLimit == 0 || sampleTime < frameLimit else { return [] }
        let frames = Int(grant.period)
        var done = 0
        var samples: [Float] = []
        samples.reserveCapacity(frames * Int(grant.channels))
        let started = clock()
        while done < frames {
            let slice = min(Int(maximumFramesPerSlice), frames - done)
            buffer.list.pointee.setFrameCount(UInt32(slice), bytesPerFrame: grant.streamFormat.bytesPerFrame)
            var flags = RenderActionFlags(rawValue: 0)
            var stamp = AudioTimeStamp()
            stamp.sampleTime = sampleTime
            stamp.hostTime = UInt64(max(0, started)) &+ UInt64(Double(done) * 1e9 / grant.sampleRate)
            stamp.flags = AulosTimeStampFlags.sampleTimeValid.union(.hostTimeValid)
            if entry.render(flags: &flags, timeStamp: &stamp, frameCount: UInt32(slice), ioData: buffer.list)
                != RenderStatus.noErr
            {
                buffer.list.pointee.zeroFill()
            }
            let data = buffer.list.pointee.buffers[0].data!.assumingMemoryBound(to: Float.self)
            samples.append(contentsOf: UnsafeBufferPointer(start: data, count: slice * Int(grant.channels)))
            sampleTime += Int64(slice)
            done += slice
        }
        meter.record(
            frames: frames, sampleRate: grant.sampleRate, wallNanos: clock() - started, cpuNanos: 0,
            framesPlayed: sampleTime, smoothed: &smoothedLoad)
        return samples
    }

    /// Reports `event` at the next `dispatchEvents()`, as a device's thread would (an underrun counts as an
    /// xrun; an interruption marks the unit interrupted until it ends).
    public func post(_ event: IOEvent) {
        switch event {
        case .underrun, .overrun: xruns += 1
        case .interruptionBegan: interrupted = true
        case .interruptionEnded: interrupted = false
        default: break
        }
        pending.append(event)
    }

    public var statistics: IOStatistics {
        meter.statistics(
            xruns: xruns, framesPlayed: sampleTime, sampleRate: grant?.sampleRate, isInterrupted: interrupted)
    }

    public func addListener(_ listener: @escaping (IOEvent) -> Void) { listeners.append(listener) }

    public func dispatchEvents() {
        let events = pending
        pending = []
        for event in events { for listener in listeners { listener(event) } }
    }

    public func stopRendering(after frames: Int64) { frameLimit = max(0, frames) }
    public var hasReachedFrameLimit: Bool { frameLimit > 0 && sampleTime >= frameLimit }
    /// No capture: the input element is silence.
    public var inputCallback: RenderCallbackStruct { RenderCallbackStruct(Self.silence, refCon: nil) }
    public func partOutput(named name: String) -> RenderCallbackStruct? { nil }

    static let silence: RenderCallback = { _, _, _, _, _, ioData in
        ioData.pointee.zeroFill()
        return RenderStatus.noErr
    }
}
