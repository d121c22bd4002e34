import AulosCore
import AulosIO
import AulosMIDI
import AulosRealtime
import AulosRig
import Glibc

/// `aulos play` with no file: the ALSA sequencer (and JACK MIDI) in, the rig, the I/O unit out, until
/// SIGINT/SIGTERM (or the duration). Keyboards are connected as they appear and their notes released when they vanish.
/// Unattended (`waitForDevices`), a missing sound device or sequencer is waited for; SIGHUP rebuilds the
/// rig from its file (a broken file is reported and the old rig plays on, untouched); the control socket answers
/// `aulos status`/`set`/`learn`; systemd hears READY=1 once audio and MIDI are up.
///
/// Threads: the calling (control) thread runs the loop, the control socket and the notices; MIDI arrives
/// on the sequencer's MIDI thread (through `LiveMIDIPath`); audio runs on the I/O thread.
public final class KeyboardPlayback {
    /// How the live instrument listens: its MIDI input (the sequencer, opened as the host says), how events
    /// are placed in time, and how it runs unattended.
    public struct Options: Sendable {
        /// Opens the MIDI input (the ALSA sequencer, with the ports to connect); nil: none, only the audio
        /// driver's own MIDI port and the control socket.
        public var midiInput: LiveMIDISourceOpener?
        public var placement: LiveMIDIPlacement = .constantLatency
        /// Extra constant latency (seconds) on top of the device buffer, for machines where the MIDI thread
        /// can be held up for longer than a period: events then stay on time instead of playing late.
        public var headroom: Double = 0
        /// Send MIDI clock (and Start/Stop/Continue/Song Position) on the readable port: Aulos as master.
        public var sendClock = false
        /// Unattended (a service at boot): no sound device or no sequencer yet is not an error — wait for
        /// them, and play when they appear.
        public var waitForDevices = false
        /// Where to serve `aulos status`/`set`/`learn` (a Unix socket path), if anywhere.
        public var controlSocket: String?
        /// The control socket is the default one, not asked for: when it cannot be served (another aulos
        /// answers there), play on without one and say so, rather than refuse to start.
        public var controlSocketIsDefault = false
        /// Where to listen for Open Sound Control (`PORT` or `127.0.0.1:PORT`), if anywhere.
        public var osc: String?
        /// The rig file SIGHUP reloads (nil: SIGHUP rebuilds the same rig).
        public var rigPath: String?
        /// The folder `record start` (the panel's record button) writes in.
        public var recordFolder = "."
        /// Where a network server (the web panel) hands requests in and reads the status, if one runs.
        public var bridge: ControlBridge?
        /// How a new rig file is tried before it replaces the playing rig (SIGHUP, the panel's upload and
        /// *Load*): in a child process running this `aulos`, so a plugin that crashes costs only the child.
        /// Nil: built offline in this process (tests that run the instrument in their own process).
        public var rigTrial: RigTrial?
        /// Keep the last rig that started and played beside the rig file (unattended play): a rig that cannot
        /// be built at start, or whose last start never settled, is passed over for it (`LastKnownGoodRig`).
        public var keepsLastKnownGood = false
        /// Why the instrument starts on the last good rig rather than the configured one (its file could not be
        /// read), when the command line already knows.
        public var fallback: String?
        /// Load the input file (`PlaybackOptions.input`, or the demo piece) into the file player and play it
        /// from the start (`aulos play FILE --web …`); an input that is a folder is a playlist, whose first
        /// song is loaded, stopped (`aulos play FOLDER --web …`).
        public var playsFile = false
        /// 1…16: program changes on this channel choose the playlist's song (program 0: the first).
        public var songChannel: Int?

        public init(
            midiInput: LiveMIDISourceOpener?, placement: LiveMIDIPlacement = .constantLatency,
            headroom: Double = 0, sendClock: Bool = false
        ) {
            self.midiInput = midiInput
            self.placement = placement
            self.headroom = headroom
            self.sendClock = sendClock
        }
    }

    /// What a run did, for the summary line.
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
        /// SIGHUPs whose rig file could not be read (the rig played on).
        public var failedReloads: Int
        /// JACK MIDI events read from midi_in (nil: not playing through JACK), each played one cycle after
        /// its frame.
        public var jackMIDIEvents: Int? = nil
        /// Whether the device gave its slices host times, so that events could be placed by their arrival at
        /// all. ALSA's `null` PCM, opened with the buffer as its start threshold, never starts: its slices have
        /// none, and every event plays at the start of the next slice whatever the placement asked.
        public var clockRan = true
    }

    let playback: PlaybackOptions
    let options: Options
    private let session: AudioSession
    private let duration: Double?
    let observer: PlaybackObserver
    let midi = LiveMIDIPath()
    /// Answers the control socket, OSC and the panel through one executor.
    private let answers: LiveControl
    var server: ControlExecutor { answers.executor }
    private let control: ControlSocket?
    private let osc: OSCServer?
    private var sequencer: (any LiveMIDISource)?
    private var lastSequencerAttempt: Int64 = 0
    /// The rig file SIGHUP reloads: the one given, until the panel loads another from beside it.
    private var rigPath: String?
    /// READY=1 sent for the rig playing now.
    private var ready = false
    private var reloads = 0
    /// Sessions that have recorded `--record`: after a reload or a device restart the rig is new and the
    /// recording goes on in a file of its own (`take-2.wav`), never over the part already taken.
    private var recordedSessions = 0
    private var failedReloads = 0
    /// What the device said the last time it was not there (each new reason is reported once).
    private var waitingForDevice: String?
    /// The rate and slice the playing rig runs at: a new rig is tried at these.
    private var playingFormat: (sampleRate: Double, slice: UInt32)?
    /// What a reload replaced, put back if the new rig, though it came through its trial, cannot be built
    /// here after all (the device refused its rate): the rig file the panel loaded from, or the file an
    /// upload wrote over and its earlier text.
    private var replaced: (rigPath: String?, file: (path: String, text: String)?)?
    /// A rig file the panel has just had tried, so the reload it asks for need not try it again.
    private var alreadyTried: String?
    /// The rig file as last read (at start or by a reload), which a reload of the same file compares with to
    /// keep what a player set live where the file did not change it.
    private var lastRead: (path: String, set: RigSet)?
    /// The last rig that started and played (`Options.keepsLastKnownGood`).
    private let lastKnownGood: LastKnownGoodRig?
    /// Names a unit a render cycle is stuck in, for the status.
    private var watchdog: RenderWatchdog?
    /// The playing rig has played long enough to be the last good one.
    private var settled = false
    /// The file player (`Options.playsFile`), built with each rig; a rebuild keeps where it was.
    var player: FilePlayer?
    var playerResume: (position: Int64, playing: Bool, loops: Bool)?
    /// The player's file as read, and the rate its times are at (routed again when the rig switches; read
    /// again only for a rig at another rate).
    var playerInput: (sampleRate: Double, file: InputFile)?
    /// The session playing now: the player's requests are placed by its frames.
    var playing: LiveSession?
    /// The player's playlist (an input folder), and the song of it loaded (from 0) with its path.
    var playlist: Playlist?
    var song: (index: Int, path: String)?

    /// Plays until stopped; see the type's description.
    public static func run(
        _ playback: PlaybackOptions, options: Options, session: AudioSession, duration: Double?,
        observer: PlaybackObserver = PlaybackObserver()
    ) throws -> Report {
        try KeyboardPlayback(playback, options: options, session: session, duration: duration, observer: observer).run()
    }

    init(
        _ playback: PlaybackOptions, options: Options, session: AudioSession, duration: Double?,
        observer: PlaybackObserver
    ) throws {
        self.playback = playback
        self.options = options
        self.session = session
        self.duration = duration
        self.observer = observer
        // A folder given to play is a playlist: its first song waits in the player, stopped.
        if options.playsFile, let input = playback.input, FileContents.isFolder(input) {
            let list = try Playlist(folder: input)
            playlist = list
            song = (0, list.path(0))
            playerResume = (0, false, false)
        }
        if let path = options.controlSocket, options.controlSocketIsDefault {
            do {
                control = try ControlSocket(path: path)
            } catch {
                control = nil
                observer.warning(
                    "no control socket (\(error.message)): aulos status, set and learn do not reach this one; give "
                        + "--control-socket PATH")
            }
        } else {
            control = try options.controlSocket.map { path throws(ControlSocketError) in try ControlSocket(path: path) }
        }
        rigPath = options.rigPath
        lastKnownGood = options.keepsLastKnownGood ? options.rigPath.map(LastKnownGoodRig.init(beside:)) : nil
        osc = try options.osc.map { spec throws(OSCError) in try OSCServer(spec) }
        if let osc { observer.info("OSC on 127.0.0.1:\(osc.port)") }
        answers = LiveControl(socket: control, osc: osc, bridge: options.bridge)
        answers.rigSwitched = { [unowned self] in self.rigSwitched(to: $0, name: $1, chosen: $2) }
        answers.executor.recordFolder = options.recordFolder
        answers.rigFiles = { [unowned self] in self.answerRigFile($0) }
        answers.player = { [unowned self] in self.answerPlayer($0) }
    }

    /// The panel's rig-file requests: the file read, listed or copied, or another file (or new text) tried
    /// in full and reloaded as SIGHUP reloads it (the rig plays on until the new one is built). Errors go over
    /// the network: quoted lines of files other than the rig files are left out.
    private func answerRigFile(_ request: ControlBridge.Request) -> ControlReply {
        var sent: String?
        do {
            switch request {
            case .control: return .failure("not a rig-file request")
            case .rigFile: return .rigFile(try RigFileReplacement.text(of: rigPath))
            case .rigFiles:
                let listing = RigFileReplacement.Listing(beside: rigPath)
                return .rigFiles(playing: listing.playing, files: listing.files)
            case .saveRigFile(let name):
                return .saved(try RigFileReplacement.save(try answers.executor.liveSet(), playing: rigPath, as: name))
            case .loadRigFile(let name):
                let target = try RigFileReplacement.sibling(name, of: rigPath, checked: true)
                try tryRig(target)
                replaced = (rigPath, nil)
                rigPath = target
                alreadyTried = target
            case .replaceRigFile(let text):
                sent = text
                let earlier = try? RigFileReplacement.text(of: rigPath)
                try RigFileReplacement.replace(rigPath, with: text) { scratch throws(RigError) in
                    try tryRig(scratch)
                }
                replaced = (rigPath, rigPath.flatMap { path in earlier.map { (path, $0) } })
                alreadyTried = rigPath
            }
            StopSignals.reloadRequested = 1
            var done = ControlReply.Done()
            done.reloading = true
            return .done(done)
        } catch {
            let message = (error as? ReportableError)?.message ?? "\(error)"
            return .failure(RigFileReplacement.redacted(message, beside: rigPath, sent: sent))
        }
    }

    func run() throws -> Report {
        StopSignals.catchThem()
        defer { StopSignals.release() }
        let watchdog = RenderWatchdog()
        self.watchdog = watchdog
        defer { watchdog.stop() }
        // The sequencer first: without one there is nothing to play, and the error should say so, not
        // something about the audio device. Unattended, it is waited for instead (checked every 2 s).
        // Through JACK, its MIDI port is an input of its own: the sequencer is welcome, not required.
        do {
            sequencer = try openSequencer()
        } catch {
            // Without a sequencer there may be other sources: JACK's port, the file player, the roads asked for
            // (OSC, the panel, a control socket named; not the default socket every live play serves).
            let otherSources =
                options.playsFile || (control != nil && !options.controlSocketIsDefault) || osc != nil
                || options.bridge != nil
            guard options.waitForDevices || playsThroughJACK || otherSources else { throw error }
            lastSequencerAttempt = monotonicNanoseconds()
            let message = (error as? ReportableError)?.message ?? "\(error)"
            observer.warning(
                playsThroughJACK
                    ? "no ALSA sequencer (\(message)); MIDI through JACK's midi_in port"
                    : options.waitForDevices
                        ? "no MIDI input yet (\(message)); waiting for the ALSA sequencer"
                            + (control == nil ? "" : ", MIDI meanwhile only through the control socket")
                        : "no ALSA sequencer (\(message)); playing without keyboards")
        }
        defer {
            if let sequencer {
                sequencer.stop()
                for notice in sequencer.takeNotices() { observer.sequencerNotice(notice) }
            }
        }
        var set = playback.playedRigSet()
        lastRead = rigPath.map { ($0, set) }
        var activeRig = 0
        var report: Report?
        if let fallback = options.fallback { fallBack(because: fallback) }
        if let lastGood = lastKnownGood, options.fallback == nil, lastGood.crashedTrying(set),
            let good = lastGood.load()
        {
            fallBack(
                because: "the last start with this rig ended within \(Int(LastKnownGoodRig.settlingSeconds)) s "
                    + "(a crash, or a hang that was killed)")
            set = good
        }
        // The set that last played: a reload that cannot be built goes back to it.
        var played: RigSet?
        while StopSignals.stopRequested == 0 {
            let built: PlaybackRig?
            if let warning = lastKnownGood?.beginTrying(set) { observer.warning(warning) }
            do {
                built = try buildRig(set)
            } catch  where !(error is DeviceError) {
                if let played {
                    undoReload(error)
                    set = played
                } else if let good = fallingBack(from: set) {
                    // At start: the configured rig cannot be built; the last good one plays instead.
                    fallBack(because: "it cannot be built: \(error)")
                    set = good
                } else {
                    throw error
                }
                continue
            }
            PlaybackRig.releasePreloadedSampleLibraries()
            guard let rig = built else { continue }  // waiting for the device
            played = set
            replaced = nil
            let outcome = try play(rig, recalling: activeRig)
            report = outcome.report
            guard let reload = outcome.reload else { break }
            (set, activeRig) = reload
        }
        ServiceNotifier.notify("STOPPING=1")
        lastKnownGood?.stoppedCleanly()
        guard var report else { throw DeviceError(.missing, "stopped before the audio device appeared") }
        report.reloads = reloads
        report.failedReloads = failedReloads
        return report
    }

    /// The last good set to start instead of `set`, when one is kept and it is another set.
    private func fallingBack(from set: RigSet) -> RigSet? {
        guard let good = lastKnownGood?.load(),
            LastKnownGoodRig.fingerprint(good) != LastKnownGoodRig.fingerprint(set)
        else { return nil }
        return good
    }

    /// Says, in the journal and the status (and so the panel), that the last good rig plays instead of the
    /// configured one, and why.
    private func fallBack(because reason: String) {
        let folder = lastKnownGood?.folder ?? "the last good rig"
        let message =
            "the configured rig \(rigPath ?? "") is not played: \(reason); playing the last rig that "
            + "played (\(folder)) until it is fixed"
        observer.warning(message)
        server.fallback = RigFileReplacement.redacted(message, beside: rigPath)
    }

    /// Tries the rig or set file at `path` in full at the playing rate and slice (see `RigTrial`); the error
    /// says what stands in the way, and nothing has changed.
    private func tryRig(_ path: String) throws(RigError) {
        let format = playingFormat ?? (48_000, 256)
        if let trial = options.rigTrial {
            try trial.attempt(path, sampleRate: format.sampleRate, slice: format.slice)
            return
        }
        do {
            try RigTrial.tryOut(try RigSet.load(path), sampleRate: format.sampleRate, slice: format.slice)
        } catch let error as RigError {
            throw error
        } catch {
            throw RigError((error as? ReportableError)?.message ?? "\(error)")
        }
    }

    /// A new rig that came through its trial but cannot be built here: what the reload replaced is put back
    /// (the panel's loaded file, an uploaded file's earlier text), said once, and shown in the status.
    private func undoReload(_ error: any Error) {
        let message = (error as? ReportableError)?.message ?? "\(error)"
        failedReloads += 1
        reloads = max(0, reloads - 1)
        observer.warning("the new rig could not be built; playing on with the rig as it was: \(message)")
        server.reloadFailure = RigFileReplacement.redacted(message, beside: rigPath)
        guard let replaced else { return }
        rigPath = replaced.rigPath
        if let file = replaced.file { try? FileContents.replace(file.path, with: Array(file.text.utf8)) }
        self.replaced = nil
    }

    private var playsThroughJACK: Bool { session.outputHasMIDIInput }

    /// The MIDI input, opened as the host said (none given: as if there were no sequencer).
    private func openSequencer() throws -> any LiveMIDISource {
        guard let open = options.midiInput else { throw SequencerUnavailable() }
        return try open(midi)
    }

    /// No MIDI input was given to open.
    struct SequencerUnavailable: ReportableError {
        var message: String { "no MIDI input to open" }
    }

    /// The rig on the device; nil after waiting two seconds for a device that is not there yet (unattended).
    private func buildRig(_ set: RigSet) throws -> PlaybackRig? {
        do {
            let first = set.entries[0].rig
            try session.setPreferredSampleRate(first.sampleRate)
            try session.setPreferredIOBufferFrames(first.slice)
            // The file player's file sets the transport's tempo map, as it does for its offline render.
            let tempoMap =
                options.playsFile
                ? playback.tempoMap(of: try playerFile(at: first.sampleRate))
                : [(beat: 0, bpm: playback.tempo ?? first.tempo ?? 120)]
            let rig = try PlaybackRig(
                set: set, tempoMap: tempoMap,
                arpeggio: playback.arpeggio,
                session: session, tappingParts: playback.recordParts)
            if waitingForDevice != nil { observer.info("audio device ready") }
            waitingForDevice = nil
            return rig
        } catch let error as DeviceError where options.waitForDevices {
            if waitingForDevice != error.message { observer.warning("waiting for the audio device: \(error.message)") }
            waitingForDevice = error.message
            ServiceNotifier.notify("STATUS=waiting for the audio device: \(error.message)")
            for _ in 0..<100 where StopSignals.stopRequested == 0 {
                usleep(LiveSession.tick)
                answers.refuseAll(because: "waiting for the audio device: \(error.message)")
            }
            return nil
        }
    }

    /// SIGHUP: the rig file read again while the rig plays on. Nil when the file is broken: that is reported
    /// (and shown by `aulos status`), and the rig playing is never torn down for it.
    private func readReload(_ set: RigSet) -> RigSet? {
        ServiceNotifier.notify("RELOADING=1")
        ready = false  // systemd waits for READY=1 again, whichever way the reload goes
        guard let path = rigPath else {
            observer.info("SIGHUP: rebuilding the rig")
            return set
        }
        do {
            let reloaded = try RigSet.load(path)
            if alreadyTried != path { try tryRig(path) }
            alreadyTried = nil
            // The same file read again keeps what was set live where the file did not change it; another file
            // (the panel's Load) starts as it says.
            var kept = ""
            var playing = reloaded
            if let lastRead, lastRead.path == path, let live = try? answers.executor.liveSet() {
                playing = reloaded.keepingLiveState(live, was: lastRead.set)
                kept = "; what was set live is kept where the file did not change it"
            }
            lastRead = (path, reloaded)
            observer.info(
                "reloaded \(path): "
                    + "\(reloaded.entries.count == 1 ? "rig '\(reloaded.name)'" : "\(reloaded.entries.count) rigs")"
                    + kept)
            server.reloadFailure = nil
            return playing
        } catch {
            alreadyTried = nil
            failedReloads += 1
            observer.warning("reload failed, playing on with the rig as it was: \(error.message)")
            server.reloadFailure = RigFileReplacement.redacted(error.message, beside: rigPath)
            return nil
        }
    }

    /// One rig on the device until stop, the duration, or a SIGHUP whose rig file reads (then `reload` is
    /// the new set and the rig that was playing, for the rebuilt set to recall).
    private func play(_ rig: PlaybackRig, recalling activeRig: Int) throws
        -> (report: Report, reload: (set: RigSet, activeRig: Int)?)
    {
        defer { rig.close() }
        let recordPath = playback.record.map { recordedSessions == 0 ? $0 : RecordingTarget.continuation(of: $0) }
        let live = LiveSession(
            rig: rig, observer: observer, shedsVoices: playback.shedsVoicesUnderOverload,
            recordingTo: recordPath, replacing: playback.recordReplacing && recordedSessions == 0)
        if let recordPath, recordedSessions > 0 { observer.info("the recording goes on in \(recordPath)") }
        let grant = live.grant
        playingFormat = (grant.sampleRate, rig.rig.slice)
        settled = false
        // The slices' host time is when they will be heard, so the constant latency is the whole buffer:
        // an event arriving as a period begins rendering lands at the start of the period rendered next,
        // which is heard one buffer later (one period of placement plus the rest of the buffer queued).
        var router = RigRouter(rig: rig, songChannel: options.songChannel)
        // After a reload the rig that was playing plays on (by its place in the set, if still there).
        if activeRig > 0, rig.set.entries.indices.contains(activeRig) {
            _ = router.select(rig: activeRig)
            try? rig.applyOutputSettings(ofRig: activeRig)
            live.cpu.noteSwitch(to: activeRig)
        }
        // From the first render on, the router's kernel is the render thread's: it routes there.
        let input = LiveMIDIInput(
            destinations: rig.midiDestinations, sampleRate: grant.sampleRate,
            periodFrames: Int(grant.period),
            latencyFrames: Int(grant.bufferFrames) + Int((options.headroom * grant.sampleRate).rounded()),
            placement: options.placement, router: router.kernel)
        try rig.graph.addRenderNotify(input.renderNotify)
        midi.attach(rig, router: router, input: input)
        defer { midi.detach() }
        let clockOutput = try startClock(on: rig, grant: grant)
        rig.timelinePlayer.play(MIDITimeline(rig.prelude))
        playing = live
        defer { keepPlayerPlace(of: live) }
        try startPlayer(on: rig, activeRig: activeRig, sampleRate: grant.sampleRate)
        if let driverMIDI = live.io.midiInput {
            driverMIDI.framedMIDI = input.framedInput
            driverMIDI.midiReceiver = midi
        }
        // The status shows every part's, send's and return's level: metering from the first slice, as its
        // render notification added to a running graph would be a new render plan in mid-play.
        try rig.startMetering()
        try live.start(stoppingAfter: duration.map { Int64($0 * grant.sampleRate) })
        if recordPath != nil { recordedSessions += 1 }
        if let sequencer { try sequencer.start() }
        server.begin(rig: rig, midi: midi, live: input, session: live, reloads: reloads)
        defer { server.end() }
        var ending: LiveSession.Ending
        var reloaded: RigSet?
        repeat {
            ending = try live.run(takingReloads: true) { live in
                try tick(live, input: input, clockOutput: clockOutput)
                return !live.io.hasReachedFrameLimit
            }
            if ending == .reloadRequested {
                reloaded = readReload(rig.set)
                // The new rig's sample libraries load now, while this rig plays on: the silence between the
                // two is the graph's build, not a library's load.
                if let reloaded { PlaybackRig.preloadSampleLibraries(of: reloaded) }
            }
            if case .ioRestart(let restart) = ending {
                // A new rate is a new graph; a server that went away is waited for when unattended.
                guard options.waitForDevices || restart != .serverGone else {
                    try? live.stop(silencing: false)
                    throw DeviceError(
                        .missing,
                        "\(restart.message): start it again and run aulos play again (the service waits for it)")
                }
                observer.warning("\(restart.message); rebuilding the rig")
                reloaded = rig.set
            }
        } while ending == .reloadRequested && reloaded == nil
        if reloaded != nil && ending == .reloadRequested { reloads += 1 }
        // Stop listening (releasing whatever keyboards still hold) unless reloading, then silence
        // everything before the device stops, so nothing hangs on the next start.
        let rebuilding = reloaded != nil
        if !rebuilding, let sequencer {
            sequencer.stop()
            for notice in sequencer.takeNotices() { observer.sequencerNotice(notice) }
        }
        try live.stop(silencing: ending != .ioRestart(.serverGone))
        let report = Report(
            status: live.status, midiDelivered: input.deliveredCount, midiLate: input.lateCount,
            midiDropped: input.droppedCount,
            midiStale: input.staleCount, latencyFrames: input.placement == .constantLatency ? input.latencyFrames : 0,
            worstReadDelay: Double(sequencer?.worstReadDelayNanos ?? 0) / 1e6,
            worstLateness: Double(input.worstLateFrames) / grant.sampleRate * 1000,
            clockResets: input.clockResets, clockMargin: Double(input.clockMarginNanos) / 1e6, reloads: reloads,
            failedReloads: failedReloads, jackMIDIEvents: live.io.midiInput?.midiEventsRead,
            clockRan: input.hasClock)
        return (report, reloaded.map { ($0, midi.activeRig ?? 0) })
    }

    /// The one place a rig switch is logged, whatever road it came by (`chosen`: "by program change", "from
    /// the web panel", …): the line, and a warning when the rig's parts at their last measured peak would take
    /// the period past `RigCPUMeter.fitLimit` on top of what else plays now. The meter then counts the new rig's
    /// parts as the ones playing.
    private func rigSwitched(to index: Int, name: String, chosen: String) {
        observer.info("rig \(index + 1): \(name) (chosen \(chosen))")
        guard UnitTiming.isEnabled, let cpu = playing?.cpu else { return }
        if let warning = cpu.prediction(switchingTo: index).warning { observer.warning(warning) }
        cpu.noteSwitch(to: index)
    }

    /// MIDI clock out (`--send-clock`), read from the transport's snapshot, so its notification goes after
    /// the transport's.
    private func startClock(on rig: PlaybackRig, grant: PCMGrant) throws -> MIDIClockOutput? {
        guard options.sendClock else { return nil }
        let clockOutput = MIDIClockOutput(
            host: rig.transport.callbacks, sampleRate: grant.sampleRate, periodFrames: Int(grant.period))
        try rig.graph.addRenderNotify(clockOutput.renderNotify)
        if let sequencer, sequencer.isStarted {
            // A SIGHUP reload keeps the sequencer running, and its clock source is fixed while it runs.
            observer.warning("MIDI clock out stops after a reload; restart aulos to send clock again")
        } else {
            sequencer?.sendClock(from: clockOutput)
        }
        return clockOutput
    }

    /// One pass of the control loop while a rig plays: connection notices, a sequencer that appeared,
    /// rig switches and presets the MIDI thread left, the control socket, readiness.
    private func tick(_ live: LiveSession, input: LiveMIDIInput, clockOutput: MIDIClockOutput?) throws {
        let rig = live.rig
        if let sequencer {
            for notice in sequencer.takeNotices() {
                server.note(notice)
                observer.sequencerNotice(notice)
            }
        } else if options.waitForDevices, monotonicNanoseconds() - lastSequencerAttempt > 2_000_000_000 {
            lastSequencerAttempt = monotonicNanoseconds()
            if let opened = try? openSequencer() {
                if let clockOutput { opened.sendClock(from: clockOutput) }
                try opened.start()
                sequencer = opened
                observer.info("MIDI input ready")
            }
        }
        for action in midi.takePendingActions() {
            rig.apply(action)
            if case .rigSwitched(let index) = action {
                rigSwitched(to: index, name: rig.set.entries[index].rig.name, chosen: "by program change")
            }
            if case .songChosen(let program) = action { chooseSong(program, live) }
            if case .snapshotRecalled(let index, let snapshot) = action,
                let name = server.recalledByProgramChange(snapshot: snapshot, ofRig: index)
            {
                observer.info("snapshot \(name) of rig \(rig.set.entries[index].rig.name) (chosen by program change)")
            }
        }
        if !settled,
            live.status.statistics.framesPlayed
                >= Int64(LastKnownGoodRig.settlingSeconds * live.grant.sampleRate)
        {
            settled = true
            if let warning = lastKnownGood?.settled(rig.set) { observer.warning(warning) }
        }
        for message in midi.takeTransportMessages() { followTransport(message, live) }
        tickPlayer(live)
        server.stuckUnit = watchdog?.stuck?.message
        live.note(midiLate: input.lateCount)
        server.update(
            live.status, sequencerUp: sequencer?.listensToSequencer == true, networkSessions: sequencer?.networkSessions
        )
        answers.serve()
        if !ready && live.status.statistics.framesPlayed > 0 && (sequencer != nil || control != nil || playsThroughJACK)
        {
            ready = true
            ServiceNotifier.notify(
                "READY=1\nSTATUS=playing '\(rig.set.name)' on \(live.grant.device), \(Int(live.grant.sampleRate)) Hz, "
                    + "\(live.grant.period)-frame periods")
        }
    }
}
