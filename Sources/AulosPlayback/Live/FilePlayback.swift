import AulosCore
import AulosIO
import AulosMIDI
import AulosRig
import Glibc

/// `aulos play FILE`: a MIDI file or score through the rig to a sound device, in real time. The file is
/// routed before playback starts and its events published to the render thread as a timeline, which the
/// render thread reads by sample time — so the device hears exactly what an offline render writes, however
/// late the control loop runs. The control loop only reports, applies mapped controllers and rig switches
/// as their time is played, and ends the run when the device has played the file and its tail.
///
/// Threads: the calling (control) thread; audio runs on the I/O unit's render thread.
public enum FilePlayback {
    /// Plays `options.input` (the demo piece when nil) on `session`'s device until its end (or `duration`
    /// seconds), or until SIGINT/SIGTERM. Returns the last status.
    public static func run(
        _ options: PlaybackOptions, session: AudioSession, duration: Double?,
        observer: PlaybackObserver = PlaybackObserver()
    ) throws -> LiveStatus {
        let set = options.playedRigSet()
        try session.setPreferredSampleRate(set.entries[0].rig.sampleRate)
        try session.setPreferredIOBufferFrames(set.entries[0].rig.slice)
        let preview = try InputFile.load(
            orDemo: options.input, sampleRate: session.preferredSampleRate, reading: options.midiReading)
        if duration == nil {
            try options.checkPlayingTime(
                frames: preview.end + Int64((options.tail * session.preferredSampleRate).rounded()),
                sampleRate: session.preferredSampleRate)
        }
        let rig = try PlaybackRig(
            set: set, tempoMap: options.tempoMap(of: preview), arpeggio: options.arpeggio, session: session,
            tappingParts: options.recordParts)
        defer { rig.close() }
        let live = LiveSession(
            rig: rig, observer: observer, shedsVoices: options.shedsVoicesUnderOverload, recordingTo: options.record,
            replacing: options.recordReplacing)
        // The device may have granted another rate: event times are frames at the granted rate.
        let input =
            live.grant.sampleRate == session.preferredSampleRate
            ? preview
            : try InputFile.load(orDemo: options.input, sampleRate: live.grant.sampleRate, reading: options.midiReading)
        for warning in input.warnings { observer.warning(warning) }
        let routed = try RoutedInput(input, through: rig)
        rig.timelinePlayer.play(routed.timeline)
        var actions = RoutedActions(routed)
        let tail = Int64((options.tail * live.grant.sampleRate).rounded())
        // To the end of the tail as it leaves the output stage, whose look-ahead delays it.
        let end =
            duration.map { Int64($0 * live.grant.sampleRate) }
            ?? (max(input.end, routed.timeline.lastSampleTime) + tail + Int64(rig.outputStage.latencyFrames))
        let overrun = OverrunInjection()

        StopSignals.catchThem()
        defer { StopSignals.release() }
        try live.start(stoppingAfter: end)
        let ending = live.run(takingReloads: false) { live in
            let played = live.status.statistics.framesPlayed
            // Mapped controllers and rig switches apply as their time is played (they change unit state
            // from this thread, not the render thread's timeline).
            actions.applyParameters(to: rig, before: played + Int64(live.grant.bufferFrames))
            actions.applyBoundaries(to: rig, before: played + Int64(live.grant.bufferFrames))
            overrun.apply(to: live)
            // Played to the end, or rendered to it while the device failed to take it (a lost device
            // whose writes never land): either way the timed run is over.
            return played < end && !live.io.hasReachedFrameLimit
        }
        try live.stop(silencing: ending == .stopRequested)
        if case .ioRestart(let restart) = ending {
            throw DeviceError(.missing, "\(restart.message) after \(live.status.seconds.clean) s: play the file again")
        }
        return live.status
    }
}

/// Fault injection for `make realtime-test`: AULOS_INJECT_OVERRUN=SECONDS makes the renders that start one
/// second in sleep that long, a real overrun the paced device answers with -EPIPE.
///
/// Threads: the control thread.
final class OverrunInjection {
    private let seconds = getenv("AULOS_INJECT_OVERRUN").flatMap { Double(String(cString: $0)) }
    private var state = 0  // 0 pending, 1 injecting, 2 done

    func apply(to live: LiveSession) {
        guard let seconds, state < 2, live.status.seconds >= 1 else { return }
        live.io.injectRenderDelay(microseconds: state == 0 ? Int(seconds * 1e6) : 0)
        state += 1
    }
}
