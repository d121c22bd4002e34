import AulosCore
import AulosRealtime
import AulosUnits
import CALSA
import Glibc
import Synchronization

/// The ALSA I/O unit (`auou/alsa/Auls`, Core Audio's Remote I/O on Linux): the head of a live graph. It
/// opens an ALSA PCM by name, negotiates format, rate, period (the slice) and period count, converts the
/// graph's canonical audio into the granted format, and drives the graph from its own I/O thread, one
/// period per wake-up, paced by the device.
///
/// Element 0 is the output, enabled by default. Capture (element 1) is not built yet: the unit reports no
/// input element, so EnableIO on it fails with InvalidElement rather than silently doing nothing.
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
    private var thread = pthread_t()
    private let counters: UnsafeMutablePointer<IOCounters>
    private let events = SPSCRing<IOEvent>(minimumCapacity: 256)
    private var listeners: [(IOEvent) -> Void] = []
    private var deviceBuffer: AudioBufferListStorage?
    private var reopenStrings: (name: UnsafeMutablePointer<CChar>, configuration: UnsafeMutablePointer<CChar>?)?

    public init(request: PCMRequest = PCMRequest()) {
        self.request = request
        counters = .allocate(capacity: 1)
        counters.initialize(to: IOCounters())
        super.init(description: Self.componentDescription, name: "Aulos: ALSA I/O", hasInputElement: false)
    }

    deinit {
        closeDevice()
        events.deallocate()
        counters.deinitialize(count: 1)
        counters.deallocate()
    }

    /// Opens and negotiates now, so the host can size everything (maximumFramesPerSlice, formats) before
    /// initializing the graph. Initialize does it too if the host did not.
    @discardableResult
    public func openDevice() throws(AudioUnitError) -> PCMGrant {
        if let device { return device.grant }
        guard !isRunning else { throw AudioUnitError(.cannotDoInCurrentContext, "\(name) is running") }
        let opened = try PCMDevice.open(request)
        device = opened
        return opened.grant
    }

    public func closeDevice() {
        guard !isRunning else { return }
        device = nil
    }

    public override func validateFormat(_ format: StreamFormat, scope: Scope, element: Element) throws(AudioUnitError) {
        if scope == .output { try format.validate() } else { try super.validateFormat(format, scope: scope, element: element) }
    }

    /// The output scope takes the device's granted format; the kernel converts (and resamples, if the graph
    /// runs at another rate) from the graph's canonical format into it.
    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let grant = try openDevice()
        if grant.channels != inputFormat(0).channelsPerFrame {
            throw AudioUnitError(.formatNotSupported, "ALSA device '\(grant.device)' granted \(grant.channels) channels; the graph has \(inputFormat(0).channelsPerFrame)")
        }
        try set(.streamFormat, grant.streamFormat, scope: .output)
        return try ConvertingPullKernel.make(for: self)
    }

    // MARK: Running

    public override func startIO() throws(AudioUnitError) {
        if device == nil, let previous = grant ?? lastGrant {
            // Lost while running and not back by stop(): it must come back as the same route.
            let reopened = try PCMDevice.open(request)
            guard reopened.grant.format == previous.format, reopened.grant.sampleRate == previous.sampleRate,
                  reopened.grant.channels == previous.channels else {
                throw AudioUnitError(.formatNotSupported, "ALSA device '\(request.device)' came back with another format; uninitialize and initialize again")
            }
            device = reopened
        }
        guard let device, let entry = renderEntry else {
            throw AudioUnitError(.uninitialized, "\(name) must head an initialized graph before it starts")
        }
        warnings = lockMemoryIfAllowed()
        let grant = device.grant
        lastGrant = grant
        let buffer = AudioBufferListStorage(format: grant.streamFormat, maximumFrames: grant.period)
        deviceBuffer = buffer
        let name = strdup(grant.device)!
        let configuration = request.configuration.map { strdup($0)! }
        reopenStrings = (name, configuration)
        let state = UnsafeMutablePointer<IOThreadState>.allocate(capacity: 1)
        state.initialize(to: IOThreadState(
            pcm: device.handle, entry: entry, counters: counters, events: events, buffers: buffer.list,
            bytes: buffer.list.pointee.buffers[0].data!, bytesPerFrame: Int(grant.streamFormat.bytesPerFrame),
            period: Int(grant.period), sliceLimit: Int(maximumFramesPerSlice), sampleRate: grant.sampleRate,
            reopenName: UnsafePointer(name), reopenConfiguration: configuration.map { UnsafePointer($0) },
            reopenRequest: AulosPCMConfig(format: PCMDevice.alsaFormat(grant.format), channels: grant.channels,
                                          rate: UInt32(grant.sampleRate), period: snd_pcm_uframes_t(grant.period),
                                          periods: grant.periods, buffer: 0),
            realtimePriority: realtimePriority))
        self.ioState = state
        counters.pointee.xruns.store(0, ordering: .relaxed)
        counters.pointee.lateSlices.store(0, ordering: .relaxed)
        counters.pointee.loadPPM.store(0, ordering: .relaxed)
        counters.pointee.peakPPM.store(0, ordering: .relaxed)
        counters.pointee.framesPlayed.store(0, ordering: .relaxed)
        counters.pointee.running.store(true, ordering: .releasing)
        snd_pcm_prepare(device.handle)
        let created = pthread_create(&thread, nil, { raw in
            let state = raw!.assumingMemoryBound(to: IOThreadState.self)
            // The refusal is read back by the control thread after start; the thread runs either way.
            if IOThread.requestRealtime(priority: state.pointee.realtimePriority) != nil {
                state.pointee.counters.pointee.realtimeRefused.store(true, ordering: .releasing)
            }
            IOThread.run(state)
            return nil
        }, state)
        guard created == 0 else {
            counters.pointee.running.store(false, ordering: .releasing)
            freeState()
            throw AudioUnitError(.cannotDoInCurrentContext, "cannot start the I/O thread: \(String(cString: strerror(created)))")
        }
    }

    public override func stopIO() throws(AudioUnitError) {
        counters.pointee.running.store(false, ordering: .releasing)
        if let pcm = ioState?.pointee.pcm { snd_pcm_drop(pcm) }  // wakes a blocked write
        pthread_join(thread, nil)
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

    private func freeState() {
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

    /// Real-time refusal as a one-line warning with the fix (call after `start()`; the thread reports it
    /// within its first instructions).
    public var realtimeWarning: String? {
        counters.pointee.realtimeRefused.load(ordering: .acquiring)
            ? "real-time priority refused: the I/O thread runs at normal priority and may glitch under load; allow it with an rtprio limit (e.g. '@audio - rtprio 95' in /etc/security/limits.d/, or LimitRTPRIO=95 in the systemd unit)"
            : nil
    }

    /// Locks the process's pages (no page faults on the I/O thread) when the memlock limit allows it.
    /// With a small limit, MCL_FUTURE would make later allocations fail, so then it only warns.
    private func lockMemoryIfAllowed() -> [String] {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(8), &limit)  // RLIMIT_MEMLOCK (the macro is not imported)
        if limit.rlim_cur == rlim_t.max, mlockall(MCL_CURRENT | MCL_FUTURE) == 0 { return [] }
        return ["memory not locked (memlock limit \(limit.rlim_cur == rlim_t.max ? "unlimited but mlockall failed" : "\(limit.rlim_cur / 1024) KiB")): "
            + "page faults can glitch the audio; allow it with '@audio - memlock unlimited' in /etc/security/limits.d/ or LimitMEMLOCK=infinity"]
    }

    // MARK: Statistics and events

    public var statistics: IOStatistics {
        IOStatistics(xruns: counters.pointee.xruns.load(ordering: .relaxed),
                     lateSlices: counters.pointee.lateSlices.load(ordering: .relaxed),
                     dspLoad: Double(counters.pointee.loadPPM.load(ordering: .relaxed)) / 1e6,
                     peakLoad: Double(counters.pointee.peakPPM.load(ordering: .relaxed)) / 1e6,
                     framesPlayed: counters.pointee.framesPlayed.load(ordering: .relaxed),
                     isInterrupted: counters.pointee.interrupted.load(ordering: .acquiring))
    }

    public func addListener(_ listener: @escaping (IOEvent) -> Void) { listeners.append(listener) }

    /// Delivers the I/O thread's events to the listeners; call from the control thread's loop.
    public func dispatchEvents() {
        while let event = events.pop() { for listener in listeners { listener(event) } }
    }

    // MARK: Fault injection (tests and `make realtime-test`)

    /// Makes the next write report `error` (a negative errno: -EPIPE, -ESTRPIPE, -ENODEV) as if the device had.
    public func injectDeviceError(_ error: Int32) { counters.pointee.injectedError.store(error, ordering: .relaxed) }
    /// Makes every render sleep this long (0 to stop): a real overrun on a paced device.
    public func injectRenderDelay(microseconds: Int) {
        counters.pointee.injectedDelayMicroseconds.store(microseconds, ordering: .relaxed)
    }
}
