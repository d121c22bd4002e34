import AulosCore
import AulosIO
import AulosMIDI
import AulosRealtime
import AulosRig
import Glibc

/// One rig playing on a sound device, and the control loop that watches it: every 20 ms the loop relays
/// the device's events (interruptions, route changes) and the transport's changes, lets the overload
/// governor adjust the voice limits, refreshes the status, and notices the stop and reload signals. File
/// playback and keyboard play are thin drivers on it: each adds what its own tick does.
///
/// Threads: the control thread owns it; audio runs on the I/O unit's render thread (the ALSA unit's I/O
/// thread, or JACK's process thread).
final class LiveSession {
    /// How a run ended.
    enum Ending: Equatable {
        /// The driver's tick said it is over (the end of a file, the duration).
        case finished
        /// SIGINT or SIGTERM.
        case stopRequested
        /// SIGHUP (only when the run takes reloads).
        case reloadRequested
        /// The I/O unit cannot go on by itself (the JACK server went away or changed its rate).
        case ioRestart(IORestart)
    }

    static let tick: useconds_t = 20_000

    let rig: PlaybackRig
    let io: any LiveIOUnit
    let grant: PCMGrant
    let observer: PlaybackObserver
    private(set) var status: LiveStatus
    private var governor: OverloadGovernor
    /// Each part's CPU load, the shared units' and the notifications', and each rig's peak (for the rig-switch
    /// warning), from the render thread's per-unit counters; updated with the status every tick.
    let cpu: RigCPUMeter
    /// Where the master output is recorded (`--record`), and the recording once started.
    private let recordPath: String?
    /// `--force`: `--record` may replace a file that exists.
    private let replacesRecording: Bool
    private var recording: Recording?

    /// Recordings stopped while the device plays, each kept until the I/O unit has played past `frame`: only
    /// then has the render thread surely left the cycle that fed them.
    private var retiring: [(recording: Recording, frame: Int64)] = []

    /// `rig` must have been built on a session (its head is a live I/O unit: ALSA or JACK).
    init(
        rig: PlaybackRig, observer: PlaybackObserver, shedsVoices: Bool, recordingTo recordPath: String? = nil,
        replacing: Bool = false
    ) {
        self.rig = rig
        self.recordPath = recordPath
        replacesRecording = replacing
        self.observer = observer
        governor = OverloadGovernor(enabled: shedsVoices)
        io = rig.graph.outputUnit as! any LiveIOUnit
        grant = io.grant!
        // JACK's transport drives the rig's host transport (the unit publishes it as master too).
        io.transport?.hostTransport = rig.transport
        status = LiveStatus(seconds: 0, voices: 0, statistics: io.statistics, grant: grant)
        cpu = RigCPUMeter(rig: rig, period: Int(grant.period))
        Self.injectRigPeak(into: cpu)
    }

    /// Fault injection for tests: AULOS_INJECT_RIG_PEAK=RIG:LOAD (RIG from 1, LOAD a fraction of the period)
    /// makes the meter remember that peak for that rig as if it had played so, so the rig-switch warning can be
    /// seen without a rig that really overloads the machine. The prediction and the warning are the real ones.
    private static func injectRigPeak(into cpu: RigCPUMeter) {
        guard let text = getenv("AULOS_INJECT_RIG_PEAK").map({ String(cString: $0) }) else { return }
        let fields = text.split(separator: ":")
        guard fields.count == 2, let rig = Int(fields[0]), let load = Double(fields[1]) else { return }
        cpu.injectPeak(load, ofRig: rig - 1)
    }

    /// Starts the device; with `frames`, the I/O thread renders no more than that (the run ends on its
    /// frame however late the control loop looks).
    func start(stoppingAfter frames: Int64?) throws {
        io.addListener(observer.deviceEvent)  // the session relays the same events as interruptions and route changes
        if let frames { io.stopRendering(after: frames) }
        if let recordPath {
            recording = try Recording(
                to: recordPath, rig: rig, sampleRate: grant.sampleRate, replacing: replacesRecording,
                advice: "choose another name, or pass --force to replace it")
            for line in recording!.recoveries { observer.warning(line) }
        }
        try rig.graph.start()
        if let summary = io.startSummary { observer.info(summary) }
        for warning in io.warnings + rig.warnings { observer.warning(warning) }
    }

    /// Where the recording started while playing began (graph frame).
    private var recordingStart: Int64 = 0

    /// A graph frame the render thread has surely not reached yet, nor will before a render plan published
    /// now is in use: past what is played by two buffers and a period (rendering runs at most a buffer and a
    /// period ahead of playing).
    private var frameAheadOfRender: Int64 {
        io.statistics.framesPlayed + 2 * Int64(grant.bufferFrames) + Int64(grant.period)
    }

    /// The file being recorded now (the master's), if any.
    var recordingPath: String? { recording?.master.path }

    /// Starts recording to `path` while playing (the panel's record button): the master output, and each
    /// part beside it when the rig taps them. Control thread.
    func startRecording(to path: String) throws(RigError) {
        guard recording == nil else { throw RigError("already recording \(recording!.master.path); stop that first") }
        recordingStart = frameAheadOfRender
        recording = try Recording(
            to: path, rig: rig, sampleRate: grant.sampleRate, replacing: false,
            advice: "recordings never replace a file: choose another name", firstFrame: recordingStart)
        status.recordingFailure = nil
        for line in recording!.recoveries { observer.warning(line) }
    }

    /// Stops the recording started while playing: the recorders leave the rig, the files are finished and
    /// renamed into place. Returns what `--record` reports at the end, the master's first. Control thread.
    func stopRecording() throws(RigError) -> [RecordingOutcome] {
        guard let recording else { throw RigError("not recording") }
        self.recording = nil
        // Every file ends on one frame ahead of the render thread; once it is rendered (it takes about two
        // buffers; a device that stopped rendering is waited for two seconds at most) the recorders leave.
        let end = frameAheadOfRender
        recording.end(at: end, firstFrame: recordingStart)
        let deadline = monotonicNanoseconds() + 2_000_000_000
        while io.statistics.framesPlayed < end && monotonicNanoseconds() < deadline { usleep(2_000) }
        recording.detach(from: rig)
        // A cycle still under way may push once more into a ring; the rings outlive it (see `retiring`).
        retiring.append((recording, io.statistics.framesPlayed + 2 * Int64(grant.bufferFrames)))
        let done = try recording.finish()
        reportFailures(of: recording, done)
        return done
    }

    /// A disk failure as it happens (from the control tick) or found at the end (finishing a FLAC on a full
    /// disk): a warning line, once each, and the status says it until the next recording starts.
    private func reportFailures(of recording: Recording, _ done: [RecordingOutcome] = []) {
        for failure in recording.newFailures(finished: done) {
            observer.warning(failure)
            status.recordingFailure = failure
        }
    }

    /// Runs the control loop until `tick` returns false or a signal ends the run. `tick` runs on every
    /// pass after the status is refreshed and before it is reported, so a driver can add to it.
    func run(takingReloads: Bool, _ tick: (LiveSession) throws -> Bool) rethrows -> Ending {
        if takingReloads { StopSignals.reloadRequested = 0 }
        while StopSignals.stopRequested == 0 {
            usleep(Self.tick)
            rig.session?.dispatchEvents()
            if let restart = io.restartNeeded { return .ioRestart(restart) }
            rig.transport.dispatchChanges()
            refreshStatus()
            let goOn = try tick(self)
            observer.status(status)
            if !goOn { return .finished }
            if takingReloads && StopSignals.reloadRequested != 0 { return .reloadRequested }
        }
        return .stopRequested
    }

    /// Adds what a driver knows to the status (live MIDI lateness).
    func note(midiLate: Int) { status.midiLate = midiLate }

    /// Stops the device. With `silencing` (stopping while notes may sound), All Notes Off goes to every
    /// channel of every part first and two buffers' time passes for it to be rendered and heard, so nothing
    /// hangs on the next start.
    func stop(silencing: Bool) throws {
        if silencing { silenceBeforeStopping() }
        try rig.graph.stop()
        rig.session?.dispatchEvents()
        refreshStatus()
        if let recording {
            // The device has stopped: nothing feeds the recorders any more.
            self.recording = nil
            let done = try recording.finish()
            reportFailures(of: recording, done)
            status.recording = done[0]
            for outcome in done {
                let (path, frames, dropped) = (outcome.path, outcome.frames, outcome.dropped)
                let seconds = Double(frames) / grant.sampleRate
                observer.info("recorded \(path): \(frames) frames (\(String(format: "%.1f", seconds)) s)")
                if dropped > 0 { observer.warning("the disk fell behind: \(dropped) frames were dropped from \(path)") }
            }
        }
        for silent in rig.silentSamplers { observer.warning(silent) }
    }

    private func silenceBeforeStopping() {
        for instrument in rig.instruments {
            for channel in UInt8(0)..<16 {
                try? instrument.send(.controlChange(channel: channel, controller: 123, value: 0))
            }
        }
        guard !io.hasReachedFrameLimit else { return }
        usleep(UInt32(2 * Double(grant.bufferFrames) / grant.sampleRate * 1e6) + Self.tick)
    }

    private func refreshStatus() {
        status.statistics = io.statistics
        if let current = io.grant { status.grant = current }  // JACK's buffer size can change while playing
        cpu.update(framesPlayed: status.statistics.framesPlayed, dspLoad: status.statistics.dspLoad)
        governor.update(load: status.statistics.dspLoad, instruments: rig.instruments)
        rig.applyPluginProgramChanges()
        status.seconds = Double(status.statistics.framesPlayed) / grant.sampleRate
        status.voices = rig.activeVoices
        status.voicesShed = rig.voicesShed
        status.sfzStreaming = rig.sfzStreaming
        status.outputStage = rig.outputStage.activity
        (status.limiting, status.outputStageLatency) = (rig.outputStage.limiting, rig.outputStage.latencyFrames)
        retiring.removeAll { $0.frame < status.statistics.framesPlayed }
        if let recording { reportFailures(of: recording) }
    }
}
