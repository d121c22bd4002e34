import AulosCore
import AulosIO
import AulosRealtime
import CALSA
import Glibc
import Synchronization

/// The ALSA I/O unit (`auou/alsa/Auls`, Core Audio's Remote I/O on Linux): the head of a live graph. It
/// opens an ALSA PCM by name, negotiates format, rate, period (the slice) and period count, converts the
/// graph's canonical audio into the granted format, and drives the graph from its own I/O thread, one
/// period per wake-up, paced by the device.
///
/// Element 0 is the output, enabled by default. Element 1 is the input (capture), off by default: with
/// EnableIO on it, `start()` opens `request.inputDevice` (or the output's name) for capture at the output's
/// rate and period, and `inputCallback` serves each slice's captured audio to whichever node input it is
/// installed on — Core Audio's I/O pass-through (capture → mixer → playback).
///
/// Threads: control thread for everything public; the I/O thread owns `IOThreadState` between `start()`
/// and `stop()`; statistics and events cross by atomics and an SPSC ring.
public final class ALSAOutputUnit: IOUnit, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(type: .output, subtype: "alsa", manufacturer: .aulos)

    /// What to ask the device for. Set while uninitialized (the audio session does it).
    public var request: PCMRequest {
        didSet { if request != oldValue { closeDevice() } }
    }
    /// What the device granted, once opened (by `openDevice()` or initialize).
    public var grant: PCMGrant? { device?.grant }
    /// SCHED_FIFO priority the I/O thread asks for.
    public var realtimePriority: Int32 = 70
    /// One-line warnings from the last start (real-time priority or memory locking refused), each naming the fix.
    public private(set) var warnings: [String] = []

    private var device: PCMDevice?
    /// The grant the running kernel was built for (kept when the device is lost).
    private var lastGrant: PCMGrant?
    private var ioState: UnsafeMutablePointer<IOThreadState>?
    private var thread: RealtimeThread?
    private let counters: UnsafeMutablePointer<IOCounters>
    private let events = SPSCRing<IOEvent>(minimumCapacity: 256)
    private let capture: UnsafeMutablePointer<CaptureBuffer>
    private var captureStorage:
        (device: AudioBufferListStorage, canonical: AudioBufferListStorage, scratch: AudioBufferListStorage)?
    private var capturePCM: OpaquePointer?
    /// What the capture side granted while running with input enabled.
    public private(set) var inputGrant: PCMGrant?
    private var listeners: [(IOEvent) -> Void] = []
    private var deviceBuffer: AudioBufferListStorage?
    private var reopenStrings: (name: UnsafeMutablePointer<CChar>, configuration: UnsafeMutablePointer<CChar>?)?

    public init(request: PCMRequest = PCMRequest()) {
        self.request = request
        counters = .allocate(capacity: 1)
        counters.initialize(to: IOCounters())
        capture = .allocate(capacity: 1)
        capture.initialize(to: CaptureBuffer())
        super.init(description: Self.componentDescription, name: "Aulos: ALSA I/O", hasInputElement: true)
    }

    deinit {
        closeDevice()
        events.deallocate()
        capture.deinitialize(count: 1)
        capture.deallocate()
        counters.deinitialize(count: 1)
        counters.deallocate()
    }

    /// Opens and negotiates now, so the host can size everything (maximumFramesPerSlice, formats) before
    /// initializing the graph. Initialize does it too if the host did not.
    @discardableResult
    public func openDevice() throws(DeviceError) -> PCMGrant {
        if let device { return device.grant }
        guard !isRunning else {
            throw DeviceError(.busy, "\(name) is running: stop it before opening its device again")
        }
        let opened = try PCMDevice.open(request)
        device = opened
        return opened.grant
    }

    public func closeDevice() {
        guard !isRunning else { return }
        device = nil
    }

    /// The output scope takes the device's granted format; the kernel converts (and resamples, if the graph
    /// runs at another rate) from the graph's canonical format into it.
    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let grant: PCMGrant
        do { grant = try openDevice() } catch { throw error.unitError }
        if grant.channels != inputFormat(0).channelsPerFrame {
            throw AudioUnitError(
                .formatNotSupported,
                "ALSA device '\(grant.device)' granted \(grant.channels) channels; the graph has "
                    + "\(inputFormat(0).channelsPerFrame)"
            )
        }
        try set(.streamFormat, grant.streamFormat, scope: .output)
        return try ConvertingPullKernel.make(for: self)
    }

    // MARK: Running

    public override func startIO() throws(AudioUnitError) {
        if device == nil, let previous = grant ?? lastGrant {
            // Lost while running and not back by stop(): it must come back as the same route.
            let reopened: PCMDevice
            do { reopened = try PCMDevice.open(request) } catch { throw error.unitError }
            guard reopened.grant.format == previous.format, reopened.grant.sampleRate == previous.sampleRate,
                reopened.grant.channels == previous.channels
            else {
                throw AudioUnitError(
                    .formatNotSupported,
                    "ALSA device '\(request.device)' came back with another format; uninitialize and initialize again")
            }
            device = reopened
        }
        guard let device, let entry = renderEntry else {
            throw AudioUnitError(.uninitialized, "\(name) must head an initialized graph before it starts")
        }
        warnings = RealtimeThread.lockMemory()
        let grant = device.grant
        lastGrant = grant
        let buffer = AudioBufferListStorage(format: grant.streamFormat, maximumFrames: grant.period)
        deviceBuffer = buffer
        let name = strdup(grant.device)!
        let configuration = request.configuration.map { strdup($0)! }
        reopenStrings = (name, configuration)
        try openCapture(matching: grant)
        let state = UnsafeMutablePointer<IOThreadState>.allocate(capacity: 1)
        state.initialize(
            to: IOThreadState(
                pcm: device.handle, entry: entry, counters: counters, events: events, buffers: buffer.list,
                bytes: buffer.list.pointee.buffers[0].data!, bytesPerFrame: Int(grant.streamFormat.bytesPerFrame),
                period: Int(grant.period), bufferFrames: Int(grant.bufferFrames),
                sliceLimit: Int(maximumFramesPerSlice), sampleRate: grant.sampleRate,
                reopenName: UnsafePointer(name), reopenConfiguration: configuration.map { UnsafePointer($0) },
                reopenRequest: AulosPCMConfig(
                    format: PCMDevice.alsaFormat(grant.format), channels: grant.channels,
                    rate: UInt32(grant.sampleRate), period: snd_pcm_uframes_t(grant.period),
                    periods: grant.periods, buffer: 0),
                capturePCM: capturePCM, captureList: captureStorage?.device.list,
                captureBytesPerFrame: Int(inputGrant?.streamFormat.bytesPerFrame ?? 0),
                captureConversion: try inputGrant.map { input throws(AudioUnitError) in
                    try FormatConversion(
                        from: input.streamFormat, to: .canonical(channels: 2, sampleRate: grant.sampleRate))
                },
                captureCanonical: captureStorage?.canonical.list,
                captureScratch: captureStorage?.scratch.list.pointee.floatChannel(0),
                capture: capture, pacing: ClockPacing(enabled: request.pacesUnpacedDevices)))
        self.ioState = state
        counters.pointee.xruns.store(0, ordering: .relaxed)
        counters.pointee.meter.reset()
        counters.pointee.framesPlayed.store(0, ordering: .relaxed)
        counters.pointee.unpacedDevice.store(false, ordering: .relaxed)
        counters.pointee.running.store(true, ordering: .releasing)
        snd_pcm_prepare(device.handle)
        if let capturePCM {
            snd_pcm_prepare(capturePCM)
            snd_pcm_start(capturePCM)
        }
        // SCHED_FIFO (refused: normal priority and a warning naming the fix), FTZ/DAZ on the thread.
        do {
            let started = try RealtimeThread.start(priority: realtimePriority, IOThread.entry, argument: state)
            if started.priority == .normal {
                warnings.insert(RealtimeThread.priorityRefusedWarning("the I/O thread"), at: 0)
            }
            thread = started
        } catch {
            counters.pointee.running.store(false, ordering: .releasing)
            freeState()
            throw AudioUnitError(.cannotDoInCurrentContext, "cannot start the I/O thread: \(error.message)")
        }
    }

    public override func stopIO() throws(AudioUnitError) {
        // The thread never blocks for more than 50 ms (non-blocking PCM, snd_pcm_wait with a timeout), so it
        // sees the flag and returns on its own. Touching its state (say, to drop the PCM) before the join
        // would race with it: ThreadSanitizer caught exactly that.
        counters.pointee.running.store(false, ordering: .releasing)
        thread?.join()
        thread = nil
        // The thread may have reopened the device (a new handle) or lost it: adopt what it ended with.
        if let state = ioState, state.pointee.pcm != device?.handle {
            // The thread lost the original handle (closed it) and may hold a reopened one.
            device?.abandonHandle()
            if let pcm = state.pointee.pcm, let grant = device?.grant {
                snd_pcm_drop(pcm)
                device = PCMDevice.adopting(pcm, grant: grant)
            } else {
                device = nil  // still gone: the next start tries to open it again
            }
        } else if let pcm = device?.handle {
            snd_pcm_drop(pcm)
        }
        freeState()
    }

    /// Opens the capture side when the input element is enabled: same rate and period as the output
    /// (one clock), any channel count the converter handles (mono or stereo).
    private func openCapture(matching output: PCMGrant) throws(AudioUnitError) {
        capture.pointee = CaptureBuffer()
        guard isInputEnabled else { return }
        var input = request
        input.device = request.inputDevice ?? request.device
        input.sampleRate = output.sampleRate
        input.period = output.period
        input.periods = max(output.periods, 2)
        input.format = output.format
        aulos_alsa_capture_errors()
        aulos_alsa_clear_error()
        var pcm: OpaquePointer?
        let status =
            input.configuration.map {
                aulos_alsa_open(&pcm, input.device, $0, SND_PCM_STREAM_CAPTURE, PCMDevice.openMode)
            }
            ?? aulos_alsa_open(&pcm, input.device, nil, SND_PCM_STREAM_CAPTURE, PCMDevice.openMode)
        guard status >= 0, let pcm else { throw DeviceError.opening(input.device, status, capture: true).unitError }
        var config = AulosPCMConfig(
            format: PCMDevice.alsaFormat(input.format), channels: input.channels, rate: UInt32(output.sampleRate),
            period: snd_pcm_uframes_t(output.period), periods: input.periods, buffer: 0)
        var stage: UnsafePointer<CChar>?
        let configured = aulos_alsa_configure(pcm, &config, &stage)
        guard configured >= 0, let format = PCMDevice.sampleFormat(config.format),
            config.rate == UInt32(output.sampleRate),
            config.period == snd_pcm_uframes_t(output.period), (1...2).contains(config.channels)
        else {
            snd_pcm_close(pcm)
            throw AudioUnitError(
                .formatNotSupported,
                "ALSA capture device '\(input.device)' cannot run at the output's \(Int(output.sampleRate)) Hz with "
                    + "\(output.period)-frame periods in mono or stereo"
            )
        }
        let grant = PCMGrant(
            device: input.device, sampleRate: Double(config.rate), period: UInt32(config.period),
            periods: config.periods,
            bufferFrames: UInt32(config.buffer), format: format, channels: config.channels)
        let canonical = AudioBufferListStorage(
            format: .canonical(channels: 2, sampleRate: grant.sampleRate), maximumFrames: grant.period)
        captureStorage = (
            AudioBufferListStorage(format: grant.streamFormat, maximumFrames: grant.period), canonical,
            AudioBufferListStorage(
                format: .canonical(channels: 1, sampleRate: grant.sampleRate), maximumFrames: 2 * grant.period)
        )
        capture.pointee.channels = (canonical.list.pointee.floatChannel(0), canonical.list.pointee.floatChannel(1))
        capturePCM = pcm
        inputGrant = grant
    }

    /// The input element's audio as a render callback: install it with `AudioGraph.setNodeInputCallback`
    /// on the input that should hear the capture (a mixer bus, or this unit's own input 0 for a straight
    /// pass-through). Silence while input is off or not running.
    public var inputCallback: RenderCallbackStruct {
        RenderCallbackStruct(IOThread.inputCallback, refCon: UnsafeMutableRawPointer(capture))
    }

    private func freeState() {
        // The thread may have closed a failing capture itself (it sets its copy to nil).
        if let pcm = capturePCM, ioState?.pointee.capturePCM != nil { snd_pcm_close(pcm) }
        capturePCM = nil
        captureStorage = nil
        inputGrant = nil
        capture.pointee = CaptureBuffer()
        ioState?.deinitialize(count: 1)
        ioState?.deallocate()
        ioState = nil
        if let strings = reopenStrings {
            free(strings.name)
            free(strings.configuration)
        }
        reopenStrings = nil
        deviceBuffer = nil
    }

    // MARK: Statistics and events

    public var statistics: IOStatistics {
        counters.pointee.meter.statistics(
            xruns: counters.pointee.xruns.load(ordering: .relaxed),
            framesPlayed: counters.pointee.framesPlayed.load(ordering: .relaxed), sampleRate: grant?.sampleRate,
            isInterrupted: counters.pointee.interrupted.load(ordering: .acquiring),
            isPacedByClock: counters.pointee.unpacedDevice.load(ordering: .relaxed))
    }

    public func addListener(_ listener: @escaping (IOEvent) -> Void) { listeners.append(listener) }

    /// Delivers the I/O thread's events to the listeners; call from the control thread's loop.
    public func dispatchEvents() {
        while let event = events.pop() { for listener in listeners { listener(event) } }
    }

    /// Renders no more than `frames` frames from the next start (rounded up to a whole period); 0 lifts
    /// the limit. The played-frames counter then stops there too.
    public func stopRendering(after frames: Int64) {
        counters.pointee.frameLimit.store(max(0, frames), ordering: .relaxed)
        counters.pointee.reachedFrameLimit.store(false, ordering: .relaxed)
    }

    /// Whether the I/O thread has rendered up to the limit (even if the device did not take it all).
    public var hasReachedFrameLimit: Bool { counters.pointee.reachedFrameLimit.load(ordering: .acquiring) }

    // MARK: Fault injection (tests and `make realtime-test`)

    /// Makes the next write report `error` (a negative errno: -EPIPE, -ESTRPIPE, -ENODEV) as if the device had.
    public func injectDeviceError(_ error: Int32) { counters.pointee.injectedError.store(error, ordering: .relaxed) }
    /// Makes the next capture read report `error` (-EPIPE, -ESTRPIPE, …) as if the capture device had.
    public func injectCaptureError(_ error: Int32) {
        counters.pointee.injectedCaptureError.store(error, ordering: .relaxed)
    }
    /// Makes every render sleep this long (0 to stop): a real overrun on a paced device.
    public func injectRenderDelay(microseconds: Int) {
        counters.pointee.injectedDelayMicroseconds.store(microseconds, ordering: .relaxed)
    }
}
