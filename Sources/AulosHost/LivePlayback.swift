import AulosALSA
import AulosCore
import AulosMIDI
import AulosFluid
import AulosUnits
import Glibc
import Synchronization

/// What `LivePlayback` reports while it plays (for the CLI's status line) and at the end.
public struct LiveStatus: Sendable {
    public var seconds: Double
    public var voices: Int
    public var statistics: IOStatistics
    public var grant: PCMGrant
    /// Live MIDI events that arrived after their frame (live instrument only).
    public var midiLate = 0
    /// Voices ended early under overload.
    public var voicesShed = 0
}

/// Real-time playback: a MIDI file or score → the rig → the ALSA I/O unit. The control thread feeds the
/// MIDI scheduler a little ahead of the device (never the whole file: the queue is bounded; `lookahead`
/// seconds beyond the device buffer, which must cover the control loop's 20 ms tick), reports
/// status, and relays the I/O unit's interruption events.
///
/// Threads: the calling (control) thread; audio runs on the ALSA unit's I/O thread.
public enum LivePlayback {
    /// Set by SIGINT/SIGTERM: stop at the next status tick, with every note released.
    nonisolated(unsafe) static var stopRequested: sig_atomic_t = 0

    /// Set by SIGHUP: rebuild the live instrument's rig from its file.
    nonisolated(unsafe) static var reloadRequested: sig_atomic_t = 0

    /// SIGINT and SIGTERM set `stopRequested` (cleared now) instead of killing the process, so a run can
    /// release its notes and close the device; SIGHUP sets `reloadRequested` (ignored by file playback).
    static func catchStopSignals() {
        stopRequested = 0
        reloadRequested = 0
        signal(SIGINT) { _ in LivePlayback.stopRequested = 1 }
        signal(SIGTERM) { _ in LivePlayback.stopRequested = 1 }
        signal(SIGHUP) { _ in LivePlayback.reloadRequested = 1 }
    }

    static func releaseStopSignals() {
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
        signal(SIGHUP, SIG_DFL)
    }

    public static func run(_ options: RenderOptions, session: AudioSession, duration: Double?,
                           status: (LiveStatus) -> Void = { _ in }, warn: (String) -> Void = { _ in },
                           event: @escaping (IOEvent) -> Void = { _ in }, lookahead lookaheadSeconds: Double = 0.25) throws -> LiveStatus {
        var set = options.effectiveRigSet
        if options.rig == nil && options.rigSet == nil && options.instrument == .synth { set.entries[0].rig.parts[0].channels.removeAll { $0 == 10 } }
        try session.setPreferredSampleRate(set.entries[0].rig.sampleRate)
        try session.setPreferredIOBufferFrames(set.entries[0].rig.slice)
        let preview = try load(options, sampleRate: session.preferredSampleRate)
        let tempoMap = options.tempo.map { [(beat: 0.0, bpm: $0)] } ?? preview.tempoMap
        let rig = try PlaybackRig(set: set, tempoMap: tempoMap, arpeggio: options.arpeggio, session: session)
        defer { rig.close() }
        let io = rig.graph.outputUnit as! ALSAOutputUnit
        let grant = io.grant!
        // The device may have granted another rate: event times are frames at the granted rate.
        let loaded = grant.sampleRate == session.preferredSampleRate ? preview : try load(options, sampleRate: grant.sampleRate)
        var timeline = ScriptedRender.route(loaded.messages, through: rig)
        let tail = Int64((options.tail * grant.sampleRate).rounded())
        let end = duration.map { Int64($0 * grant.sampleRate) } ?? (max(loaded.end, timeline.events.last?.sampleTime ?? 0) + tail)
        let lookahead = Int64(grant.bufferFrames) + Int64(lookaheadSeconds * grant.sampleRate)
        // Events go to the scheduler `lookahead` ahead (a full queue: again next tick, the horizon is only
        // a quarter second ahead); controller mappings and rig switches apply as their time is rendered.
        func feed(until horizon: Int64) {
            _ = timeline.feed(rig, before: horizon, actionsBefore: horizon - lookahead + Int64(grant.bufferFrames))
        }
        feed(until: lookahead)
        io.addListener(event)  // the session relays the same events as interruptions and route changes
        LivePlayback.catchStopSignals()
        defer { LivePlayback.releaseStopSignals() }
        io.stopRendering(after: end)  // the run ends on its frame, however late the control loop looks
        try rig.graph.start()
        for warning in io.warnings { warn(warning) }
        // Fault injection for `make realtime-test`: AULOS_INJECT_OVERRUN=SECONDS makes the renders that
        // start one second in sleep for that long, a real overrun the paced device answers with -EPIPE.
        let overrun = getenv("AULOS_INJECT_OVERRUN").flatMap { Double(String(cString: $0)) }
        var overrunState = 0  // 0 pending, 1 injecting, 2 done
        var current = LiveStatus(seconds: 0, voices: 0, statistics: io.statistics, grant: grant)
        var governor = OverloadGovernor()
        while stopRequested == 0 {
            usleep(20_000)
            session.dispatchEvents()
            current.statistics = io.statistics
            governor.update(load: current.statistics.dspLoad, instruments: rig.instruments)
            current.voicesShed = rig.voicesShed
            let played = current.statistics.framesPlayed
            current.seconds = Double(played) / grant.sampleRate
            current.voices = rig.activeVoices
            status(current)
            // Played to the end, or rendered to it while the device failed to take it (a lost device
            // whose writes never land): either way the timed run is over.
            if played >= end || io.hasReachedFrameLimit { break }
            if let overrun, overrunState < 2, current.seconds >= 1 {
                if overrunState == 0 {
                    io.injectRenderDelay(microseconds: Int(overrun * 1e6))
                    overrunState = 1
                } else {
                    io.injectRenderDelay(microseconds: 0)
                    overrunState = 2
                }
            }
            feed(until: played + lookahead)
        }
        if stopRequested != 0 { rig.silenceBeforeStopping(io) }
        try rig.graph.stop()
        session.dispatchEvents()
        current.statistics = io.statistics
        return current
    }

    static func load(_ options: RenderOptions, sampleRate: Double) throws -> LoadedInput {
        try options.input.map { path throws(AudioUnitError) in try ScriptedRender.load(path, sampleRate: sampleRate) }
            ?? LoadedInput(score: try Score(text: DemoPiece.score, name: "demo"), sampleRate: sampleRate)
    }
}

extension PlaybackRig {
    /// All Sound Off on every channel, then — while the device still plays — two buffers' time for it to
    /// be rendered and heard, so nothing hangs on the next start. Control thread, before `graph.stop()`.
    func silenceBeforeStopping(_ io: ALSAOutputUnit) {
        for destination in instruments.indices {
            for channel in 0..<16 {
                _ = scheduler.schedule(.controlChange(channel: UInt8(channel), controller: 123, value: 0), at: 0, destination: UInt16(destination))
            }
        }
        guard !io.hasReachedFrameLimit, let grant = io.grant else { return }
        usleep(UInt32(2 * Double(grant.bufferFrames) / grant.sampleRate * 1e6) + 20_000)
    }

    /// Voices sounding across every instrument part.
    public var activeVoices: Int { instruments.reduce(0) { $0 + $1.voiceBudget.active } }
}
