import AulosALSA
import AulosCore
import AulosJACK
import AulosMIDI
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
    /// Where the master output is recorded (`--record`), and the recorder once started.
    private let recordPath: String?
    private var recorder: Recorder?

    /// Recorders stopped while the device plays, each kept until the I/O unit has played past `frame`: only
    /// then has the render thread surely left the plan whose notification fed it.
    private var retiring: [(recorder: Recorder, frame: Int64)] = []

    /// `rig` must have been built on a session (its head is a live I/O unit: ALSA or JACK).
    init(rig: PlaybackRig, observer: PlaybackObserver, shedsVoices: Bool, recordingTo recordPath: String? = nil) {
        self.rig = rig
        self.recordPath = recordPath
        self.observer = observer
        governor = OverloadGovernor(enabled: shedsVoices)
        io = rig.graph.outputUnit as! any LiveIOUnit
        grant = io.grant!
        // JACK's transport drives the rig's host transport (the unit publishes it as master too).
        (io as? JACKOutputUnit)?.hostTransport = rig.transport
        status = LiveStatus(seconds: 0, voices: 0, statistics: io.statistics, grant: grant)
    }

    /// Starts the device; with `frames`, the I/O thread renders no more than that (the run ends on its
    /// frame however late the control loop looks).
    func start(stoppingAfter frames: Int64?) throws {
        io.addListener(observer.deviceEvent)  // the session relays the same events as interruptions and route changes
        if let frames { io.stopRendering(after: frames) }
        if let recordPath {
            let recorder: Recorder
            do { recorder = try Recorder(path: recordPath, sampleRate: grant.sampleRate) } catch {
                throw RigError("cannot record: \(error.message)")
            }
            try rig.graph.addRenderNotify(recorder.renderNotify)
            self.recorder = recorder
        }
        try rig.graph.start()
        if let jack = io as? JACKOutputUnit { observer.info(jack.startSummary) }
        for warning in io.warnings + rig.warnings { observer.warning(warning) }
    }

    /// The file being recorded now, if any.
    var recordingPath: String? { recorder?.path }

    /// Starts recording the master output to `path` while playing (the panel's record button). Control thread.
    func startRecording(to path: String) throws(RigError) {
        guard recorder == nil else { throw RigError("already recording \(recorder!.path); stop that first") }
        let recorder: Recorder
        do { recorder = try Recorder(path: path, sampleRate: grant.sampleRate) } catch {
            throw RigError("cannot record: \(error.message)")
        }
        do { try rig.graph.addRenderNotify(recorder.renderNotify) } catch {
            throw RigError("cannot record: \(error.detail)")
        }
        self.recorder = recorder
    }

    /// Stops the recording started while playing: the notification leaves the render plan, the file is
    /// finished and renamed into place. Returns what `--record` reports at the end. Control thread.
    func stopRecording() throws(RigError) -> (path: String, frames: Int64, dropped: Int) {
        guard let recorder else { throw RigError("not recording") }
        self.recorder = nil
        try? rig.graph.removeRenderNotify(refCon: UnsafeMutableRawPointer(recorder.tap))
        // A cycle still under way may push once more into the ring; the tap outlives it (see `retiring`).
        retiring.append((recorder, io.statistics.framesPlayed + 2 * Int64(grant.bufferFrames)))
        let frames: Int64
        do { frames = try recorder.finish() } catch { throw RigError("recording failed: \(error.message)") }
        return (recorder.path, frames, recorder.droppedFrames)
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
        if let recorder {
            self.recorder = nil
            let frames: Int64
            do { frames = try recorder.finish() } catch { throw RigError("recording failed: \(error.message)") }
            status.recording = (recorder.path, frames, recorder.droppedFrames)
            let seconds = Double(frames) / grant.sampleRate
            observer.info("recorded \(recorder.path): \(frames) frames (\(String(format: "%.1f", seconds)) s)")
            if recorder.droppedFrames > 0 {
                observer.warning(
                    "the disk fell behind: \(recorder.droppedFrames) frames were dropped from \(recorder.path)")
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
        governor.update(load: status.statistics.dspLoad, instruments: rig.instruments)
        rig.applyPluginProgramChanges()
        status.seconds = Double(status.statistics.framesPlayed) / grant.sampleRate
        status.voices = rig.activeVoices
        status.voicesShed = rig.voicesShed
        retiring.removeAll { $0.frame < status.statistics.framesPlayed }
    }
}
