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

/// Routes what the sequencer delivers: channel messages to the rig's instruments through the live input's
/// queue (stamped, never touching a unit), transport messages to the host transport, clock ticks to its
/// follower with their arrival on the sample clock.
///
/// Threads: `receive` on the MIDI thread only (it is the single producer of the live input queue and of
/// the transport's command queue while the live instrument runs).
final class LiveMIDIRouter: @unchecked Sendable {
    let rig: PlaybackRig
    let input: LiveMIDIInput
    let sampleRate: Double

    init(rig: PlaybackRig, input: LiveMIDIInput, sampleRate: Double) {
        self.rig = rig
        self.input = input
        self.sampleRate = sampleRate
    }

    func receive(_ message: MIDIMessage, arrivalNanos: Int64) {
        if let (status, data1, data2) = message.normalized.channelBytes {
            for destination in rig.destinations(of: message) {
                input.send(LiveMIDIEvent(arrivalNanos: arrivalNanos, destination: destination, status: status, data1: data1, data2: data2))
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
}

/// `aulos play` with no file: the ALSA sequencer in, the rig, the ALSA I/O unit out, until SIGINT/SIGTERM
/// (or `duration`). Keyboards are connected as they appear and their notes released when they vanish.
///
/// Threads: the calling (control) thread reports status and connection notices; MIDI arrives on the
/// sequencer's MIDI thread; audio runs on the I/O thread.
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
    }

    public static func run(_ options: RenderOptions, input inputOptions: LiveInputOptions, session: AudioSession, duration: Double?,
                           status: (LiveStatus) -> Void = { _ in }, warn: (String) -> Void = { _ in },
                           notice: (SequencerInput.Notice) -> Void = { _ in },
                           event: @escaping (IOEvent) -> Void = { _ in }) throws -> Report {
        // The sequencer first: without one there is nothing to play, and the error should say so, not
        // something about the audio device. The handler forwards to a router made once the rig exists;
        // the MIDI thread only starts after that.
        let routerBox = RouterBox()
        let sequencer = try SequencerInput(
            options: .init(clientName: inputOptions.clientName, autoconnect: inputOptions.autoconnect, requests: inputOptions.requests)
        ) { message, arrival, _ in
            routerBox.router?.receive(message, arrivalNanos: arrival)
        }
        let rigDescription = options.effectiveRig
        try session.setPreferredSampleRate(rigDescription.sampleRate)
        try session.setPreferredIOBufferFrames(rigDescription.slice)
        let rig = try PlaybackRig(rigDescription, tempoMap: [(beat: 0, bpm: options.tempo ?? 120)], arpeggio: options.arpeggio, session: session)
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
        routerBox.router = LiveMIDIRouter(rig: rig, input: live, sampleRate: grant.sampleRate)
        // Clock out reads the transport's snapshot, so its notification goes after the transport's.
        let clockOutput = inputOptions.sendClock
            ? MIDIClockOutput(host: rig.transport.callbacks, sampleRate: grant.sampleRate, periodFrames: Int(grant.period)) : nil
        if let clockOutput {
            try rig.graph.addRenderNotify(clockOutput.renderNotify)
            sequencer.sendClock(from: clockOutput)
        }
        for (message, destinations) in ScriptedRender.route([], through: rig).0 {
            for destination in destinations { rig.scheduler.schedule(message.message, at: message.sampleTime, destination: destination) }
        }
        io.addListener(event)
        LivePlayback.catchStopSignals()
        defer { LivePlayback.releaseStopSignals() }
        if let duration { io.stopRendering(after: Int64(duration * grant.sampleRate)) }
        try rig.graph.start()
        for warning in io.warnings { warn(warning) }
        try sequencer.start()
        var current = LiveStatus(seconds: 0, voices: 0, statistics: io.statistics, grant: grant)
        while LivePlayback.stopRequested == 0 {
            usleep(20_000)
            session.dispatchEvents()
            rig.transport.dispatchChanges()
            for item in sequencer.takeNotices() { notice(item) }
            current.statistics = io.statistics
            current.seconds = Double(current.statistics.framesPlayed) / grant.sampleRate
            current.voices = rig.activeVoices
            current.midiLate = live.lateCount
            status(current)
            if io.hasReachedFrameLimit { break }
        }
        // Stop listening (releasing whatever keyboards still hold), then silence everything before the
        // device stops, so nothing hangs on the next start.
        sequencer.stop()
        for item in sequencer.takeNotices() { notice(item) }
        rig.silenceBeforeStopping(io)
        try rig.graph.stop()
        routerBox.router = nil
        session.dispatchEvents()
        current.statistics = io.statistics
        return Report(status: current, midiDelivered: live.deliveredCount, midiLate: live.lateCount, midiDropped: live.droppedCount, midiStale: live.staleCount,
                      latencyFrames: live.placement == .constantLatency ? live.latencyFrames : 0,
                      worstReadDelay: Double(sequencer.worstReadDelayNanos) / 1e6,
                      worstLateness: Double(live.worstLateFrames) / grant.sampleRate * 1000,
                      clockResets: live.clockResets, clockMargin: Double(live.clockMarginNanos) / 1e6)
    }
}

/// Hands the router to the sequencer's handler once it exists. Written on the control thread before the
/// MIDI thread starts and after it stops; read on the MIDI thread in between (pthread_create/join order it).
final class RouterBox: @unchecked Sendable {
    var router: LiveMIDIRouter?
}
