import AulosALSA
import AulosCore
import AulosMIDI
import Glibc
import Synchronization

/// How the live instrument listens: which sequencer ports, and how events are placed in time.
public struct LiveInputOptions: Sendable {
    public var autoconnect = true
    public var requests: [ConnectionRequest] = []
    public var placement: LiveMIDIPlacement = .constantLatency
    /// Extra constant latency (seconds) on top of the device buffer, for machines where the MIDI thread
    /// can be held up for longer than a period: events then stay on time instead of playing late.
    public var headroom: Double = 0
    /// Send MIDI clock (and Start/Stop/Continue/Song Position) on the readable port: Aulos as master.
    public var sendClock = false
    /// Sequencer client name (tests run several).
    public var clientName = "Aulos"
    /// Unattended (a service at boot): no sound device or no sequencer yet is not an error — wait for
    /// them, and play when they appear.
    public var waitForDevices = false
    /// Where to serve `aulos status`/`set`/`learn` (a Unix socket path), if anywhere.
    public var controlSocket: String?
    /// The rig file SIGHUP reloads (nil: SIGHUP rebuilds the same rig).
    public var rigPath: String?

    public init(autoconnect: Bool = true, requests: [ConnectionRequest] = [], placement: LiveMIDIPlacement = .constantLatency,
                headroom: Double = 0, sendClock: Bool = false, clientName: String = "Aulos") {
        self.sendClock = sendClock
        self.autoconnect = autoconnect
        self.requests = requests
        self.placement = placement
        self.headroom = headroom
        self.clientName = clientName
    }
}

/// Routes what the sequencer (or the control socket) delivers: channel messages through the rig's router
/// to the instruments via the live input's queue (stamped, never touching a unit), mapped controllers to
/// their parameters, transport messages to the host transport, clock ticks to its follower with their
/// arrival on the sample clock.
///
/// Threads: `receive` on the MIDI thread, and on the control thread for MIDI sent through the control
/// socket; `RouterBox`'s mutex serializes the two, so the live input's queue keeps a single producer at
/// a time.
final class LiveMIDIRouter: @unchecked Sendable {
    let rig: PlaybackRig
    let input: LiveMIDIInput
    let sampleRate: Double
    /// Rig switches and EQ-preset controls, for the control thread (property sets belong there).
    var pendingActions: [RigRouter.Action] = []

    init(rig: PlaybackRig, input: LiveMIDIInput, sampleRate: Double) {
        self.rig = rig
        self.input = input
        self.sampleRate = sampleRate
    }

    func receive(_ message: MIDIMessage, arrivalNanos: Int64) {
        if message.normalized.channelBytes != nil {
            var actions: [RigRouter.Action] = []
            send(rig.router.route(message, actions: &actions), arrivalNanos: arrivalNanos)
            for action in actions {
                // A parameter is one atomic store, safe here; presets and rig switches wait for the control thread.
                if case .control(let target, let value) = action, case .parameter = target.kind {
                    try? target.apply(value)
                } else {
                    pendingActions.append(action)
                }
            }
            return
        }
        switch message {
        case .timingClock, .start, .stop, .continue, .songPosition:
            if let frame = input.sampleTime(atNanos: arrivalNanos) { rig.transport.receiveClock(message, at: frame / sampleRate) }
            if case .timingClock = message { return }
            rig.transport.handle(message)
        case .systemExclusive:
            rig.transport.handle(message)  // MIDI Machine Control; other sysex is not played live yet
        default:
            return
        }
    }

    /// Queues what the router decided each part hears, stamped with the arrival time.
    func send(_ deliveries: [RigRouter.Delivery], arrivalNanos: Int64) {
        for delivery in deliveries {
            guard let (status, data1, data2) = delivery.message.channelBytes else { continue }
            input.send(LiveMIDIEvent(arrivalNanos: arrivalNanos, destination: delivery.destination, status: status, data1: data1, data2: data2))
        }
    }
}

/// Hands the current router to whoever delivers MIDI (the sequencer's MIDI thread, the control socket).
/// The router is swapped when the rig is rebuilt (SIGHUP), so every use holds the lock.
///
/// Threads: any; the lock is never taken on the render thread.
final class RouterBox: @unchecked Sendable {
    private let router = Locked<LiveMIDIRouter?>(nil)

    func set(_ value: LiveMIDIRouter?) { router.withLock { $0 = value } }

    func receive(_ message: MIDIMessage, arrivalNanos: Int64) {
        router.withLock { $0?.receive(message, arrivalNanos: arrivalNanos) }
    }

    /// A rig switch from the control socket, as a program change would make it.
    func select(rig index: Int) {
        router.withLock { router in
            guard let router else { return }
            router.send(router.rig.router.select(rig: index), arrivalNanos: monotonicNanoseconds())
        }
    }

    func takeActions() -> [RigRouter.Action] {
        router.withLock { router in
            defer { router?.pendingActions.removeAll() }
            return router?.pendingActions ?? []
        }
    }
}

/// `aulos play` with no file: the ALSA sequencer in, the rig, the ALSA I/O unit out, until SIGINT/SIGTERM
/// (or `duration`). Keyboards are connected as they appear and their notes released when they vanish.
/// Unattended (`waitForDevices`), a missing sound device or sequencer is waited for; SIGHUP rebuilds the
/// rig from its file (a broken file is reported and the old rig plays on); the control socket answers
/// `aulos status`/`set`/`learn`; systemd hears READY=1 once audio and MIDI are up.
///
/// Threads: the calling (control) thread runs the loop, the control socket and the notices; MIDI arrives
/// on the sequencer's MIDI thread; audio runs on the I/O thread.
public enum LiveInstrument {
    public struct Report: Sendable {
        public var status: LiveStatus
        public var midiDelivered: Int
        public var midiLate: Int
        public var midiDropped: Int
        /// Note-ons dropped for being more than half a second overdue.
        public var midiStale: Int
        public var latencyFrames: Int
        /// The longest an event waited for the MIDI thread after it arrived (ms).
        public var worstReadDelay: Double
        /// The latest a late event was (ms).
        public var worstLateness: Double
        /// The placement clock's restarts and jitter margin (ms).
        public var clockResets: Int
        public var clockMargin: Double
        /// Rig rebuilds on SIGHUP.
        public var reloads: Int
    }

    public static func run(_ options: RenderOptions, input inputOptions: LiveInputOptions, session: AudioSession, duration: Double?,
                           status: (LiveStatus) -> Void = { _ in }, warn: (String) -> Void = { _ in },
                           info: (String) -> Void = { _ in },
                           notice: (SequencerInput.Notice) -> Void = { _ in },
                           event: @escaping (IOEvent) -> Void = { _ in }) throws -> Report {
        LivePlayback.catchStopSignals()
        defer { LivePlayback.releaseStopSignals() }
        let routerBox = RouterBox()
        let control = try inputOptions.controlSocket.map { path throws(AudioUnitError) in try ControlSocket(path: path) }
        let sequencerOptions = SequencerInput.Options(clientName: inputOptions.clientName, autoconnect: inputOptions.autoconnect,
                                                      requests: inputOptions.requests)
        func openSequencer() throws(AudioUnitError) -> SequencerInput {
            try SequencerInput(options: sequencerOptions) { message, arrival, _ in routerBox.receive(message, arrivalNanos: arrival) }
        }
        // The sequencer first: without one there is nothing to play, and the error should say so, not
        // something about the audio device. Unattended, it is waited for instead (checked every 2 s).
        var sequencer: SequencerInput?
        do {
            sequencer = try openSequencer()
        } catch {
            guard inputOptions.waitForDevices else { throw error }
            warn("no MIDI input yet (\(error.detail)); waiting for the ALSA sequencer"
                 + (control == nil ? "" : ", MIDI meanwhile only through the control socket"))
        }
        var set = options.effectiveRigSet
        var reloads = 0
        var activeRig = 0
        var report: Report?
        var waitingForDevice: String?
        var ready = false
        let server = ControlServer()
        defer { if let sequencer { sequencer.stop(); for item in sequencer.takeNotices() { notice(item) } } }
        while LivePlayback.stopRequested == 0 {
            // Build the rig on the device; unattended, a missing device is waited for.
            let rig: PlaybackRig
            do {
                let first = set.entries[0].rig
                try session.setPreferredSampleRate(first.sampleRate)
                try session.setPreferredIOBufferFrames(first.slice)
                rig = try PlaybackRig(set: set, tempoMap: [(beat: 0, bpm: options.tempo ?? 120)], arpeggio: options.arpeggio, session: session)
            } catch let error as AudioUnitError where inputOptions.waitForDevices && error.code != .invalidFile {
                if waitingForDevice != error.detail { warn("waiting for the audio device: \(error.detail)") }
                waitingForDevice = error.detail
                ServiceNotifier.notify("STATUS=waiting for the audio device: \(error.detail)")
                for _ in 0..<100 where LivePlayback.stopRequested == 0 {
                    usleep(20_000)
                    control?.serve { _ in #"{"error":"waiting for the audio device: "# + ControlServer.escape(error.detail) + "\"}" }
                }
                continue
            }
            if waitingForDevice != nil { info("audio device ready"); waitingForDevice = nil }
            // After a reload the rig that was playing plays on (by its place in the set, if still there).
            if activeRig > 0, rig.set.entries.indices.contains(activeRig) {
                _ = rig.router.select(rig: activeRig)
                try? rig.applyOutputSettings(ofRig: activeRig)
            }
            let outcome = try play(rig, options: options, inputOptions: inputOptions, sequencer: &sequencer, openSequencer: openSequencer,
                                   routerBox: routerBox, control: control, server: server, duration: duration, reloads: reloads,
                                   ready: &ready, status: status, warn: warn, info: info, notice: notice, event: event)
            report = outcome.report
            guard outcome.reload else { break }
            activeRig = rig.router.activeRig
            // SIGHUP: read the rig file again; a broken file keeps the rig that was playing.
            ServiceNotifier.notify("RELOADING=1")
            reloads += 1
            if let path = inputOptions.rigPath {
                do {
                    set = try RigSet.load(path)
                    info("reloaded \(path): \(set.entries.count == 1 ? "rig '\(set.name)'" : "\(set.entries.count) rigs")")
                } catch {
                    warn("reload failed, playing on with the rig as it was: \(error.detail)")
                }
            } else {
                info("SIGHUP: rebuilding the rig")
            }
            ready = false
        }
        ServiceNotifier.notify("STOPPING=1")
        guard var report else {
            throw AudioUnitError(.cannotDoInCurrentContext, "stopped before the audio device appeared")
        }
        report.reloads = reloads
        return report
    }

    /// One rig on the device until stop, the duration, or SIGHUP (`reload`).
    private static func play(_ rig: PlaybackRig, options: RenderOptions, inputOptions: LiveInputOptions,
                             sequencer: inout SequencerInput?, openSequencer: () throws(AudioUnitError) -> SequencerInput,
                             routerBox: RouterBox, control: ControlSocket?, server: ControlServer, duration: Double?, reloads: Int,
                             ready: inout Bool, status: (LiveStatus) -> Void, warn: (String) -> Void, info: (String) -> Void,
                             notice: (SequencerInput.Notice) -> Void, event: @escaping (IOEvent) -> Void) throws -> (report: Report, reload: Bool) {
        defer { rig.close() }
        let io = rig.graph.outputUnit as! ALSAOutputUnit
        let grant = io.grant!
        // The slices' host time is when they will be heard, so the constant latency is the whole buffer:
        // an event arriving as a period begins rendering lands at the start of the period rendered next,
        // which is heard one buffer later (one period of placement plus the rest of the buffer queued).
        let live = LiveMIDIInput(destinations: rig.instruments.map(\.midiInput), sampleRate: grant.sampleRate,
                                 periodFrames: Int(grant.period),
                                 latencyFrames: Int(grant.bufferFrames) + Int((inputOptions.headroom * grant.sampleRate).rounded()),
                                 placement: inputOptions.placement)
        try rig.graph.addRenderNotify(live.renderNotify)
        let router = LiveMIDIRouter(rig: rig, input: live, sampleRate: grant.sampleRate)
        routerBox.set(router)
        defer { routerBox.set(nil) }
        // Clock out reads the transport's snapshot, so its notification goes after the transport's.
        let clockOutput = inputOptions.sendClock
            ? MIDIClockOutput(host: rig.transport.callbacks, sampleRate: grant.sampleRate, periodFrames: Int(grant.period)) : nil
        if let clockOutput {
            try rig.graph.addRenderNotify(clockOutput.renderNotify)
            if let sequencer, sequencer.isStarted {
                // A SIGHUP reload keeps the sequencer running, and its clock source is fixed while it runs.
                warn("MIDI clock out stops after a reload; restart aulos to send clock again")
            } else {
                sequencer?.sendClock(from: clockOutput)
            }
        }
        var timeline = ScriptedRender.route([], through: rig)
        _ = timeline.feed(rig, before: 1)
        io.addListener(event)
        if let duration { io.stopRendering(after: Int64(duration * grant.sampleRate)) }
        try rig.graph.start()
        for warning in io.warnings { warn(warning) }
        if let sequencer { try sequencer.start() }
        LivePlayback.reloadRequested = 0
        var current = LiveStatus(seconds: 0, voices: 0, statistics: io.statistics, grant: grant)
        var lastSequencerAttempt = monotonicNanoseconds()
        var reload = false
        var governor = OverloadGovernor()
        server.begin(rig: rig, router: router, live: live, io: io, reloads: reloads)
        while LivePlayback.stopRequested == 0 {
            usleep(20_000)
            rig.session?.dispatchEvents()
            rig.transport.dispatchChanges()
            if let sequencer {
                for item in sequencer.takeNotices() {
                    server.note(item)
                    notice(item)
                }
            } else if inputOptions.waitForDevices, monotonicNanoseconds() - lastSequencerAttempt > 2_000_000_000 {
                lastSequencerAttempt = monotonicNanoseconds()
                if let opened = try? openSequencer() {
                    if let clockOutput { opened.sendClock(from: clockOutput) }
                    try opened.start()
                    sequencer = opened
                    info("MIDI input ready")
                }
            }
            for action in routerBox.takeActions() {
                rig.apply(action)
                if case .rigSwitched(let index) = action { info("rig \(index + 1): \(rig.set.entries[index].rig.name)") }
            }
            current.statistics = io.statistics
            governor.update(load: current.statistics.dspLoad, instruments: rig.instruments)
            current.seconds = Double(current.statistics.framesPlayed) / grant.sampleRate
            current.voices = rig.activeVoices
            current.voicesShed = rig.voicesShed
            current.midiLate = live.lateCount
            status(current)
            server.update(current, sequencer: sequencer)
            control?.serve { line in server.handle(line, routerBox: routerBox) }
            if !ready && current.statistics.framesPlayed > 0 && (sequencer != nil || control != nil) {
                ready = true
                ServiceNotifier.notify("READY=1\nSTATUS=playing '\(rig.set.name)' on \(grant.device), \(Int(grant.sampleRate)) Hz, \(grant.period)-frame periods")
            }
            if io.hasReachedFrameLimit { break }
            if LivePlayback.reloadRequested != 0 { reload = true; break }
        }
        // Stop listening (releasing whatever keyboards still hold) unless reloading, then silence
        // everything before the device stops, so nothing hangs on the next start.
        if !reload, let sequencer {
            sequencer.stop()
            for item in sequencer.takeNotices() { notice(item) }
        }
        rig.silenceBeforeStopping(io)
        try rig.graph.stop()
        rig.session?.dispatchEvents()
        current.statistics = io.statistics
        server.end()
        let report = Report(status: current, midiDelivered: live.deliveredCount, midiLate: live.lateCount, midiDropped: live.droppedCount,
                            midiStale: live.staleCount, latencyFrames: live.placement == .constantLatency ? live.latencyFrames : 0,
                            worstReadDelay: Double(sequencer?.worstReadDelayNanos ?? 0) / 1e6,
                            worstLateness: Double(live.worstLateFrames) / grant.sampleRate * 1000,
                            clockResets: live.clockResets, clockMargin: Double(live.clockMarginNanos) / 1e6, reloads: reloads)
        return (report, reload)
    }
}
