import AulosALSA
import AulosCore
import AulosIO
import AulosPlayback
import Glibc

#if canImport(Glibc)
#endif

/// What `aulos play` shows: a status line on a terminal while it plays, notices about keyboards and the
/// device as they happen, and one summary line at the end.
///
/// Threads: the control thread (the observer's closures run there).
final class PlayReport {
    let onTerminal: Bool
    private var lastLine = ""

    init(onTerminal: Bool) { self.onTerminal = onTerminal }

    /// The observer a live run reports to.
    func observer(live: Bool) -> PlaybackObserver {
        let prefix = onTerminal ? "\r" : ""
        var observer = PlaybackObserver()
        observer.status = { [self] status in
            guard onTerminal else { return }
            let line = Self.statusLine(status) + (live ? "  late MIDI \(status.midiLate)" : "")
            if line != lastLine { printError("\r" + line + "   ", newline: false) }
            lastLine = line
        }
        observer.warning = { printError(prefix + "aulos: warning: " + $0) }
        observer.info = { printError(prefix + "aulos: " + $0) }
        observer.sequencerNotice = { printError(prefix + "aulos: MIDI: " + Self.describe($0)) }
        observer.deviceEvent = Self.reportDeviceEvent
        return observer
    }

    /// Ends the status line.
    func finish() { if onTerminal { printError("") } }

    static func describe(_ notice: MIDIInputNotice) -> String {
        switch notice {
        case .listening(let address, let connected):
            "listening as \(address) (Aulos MIDI In)"
                + (connected == 0
                    ? "; no keyboard yet: plug one in, or play into it (aplaymidi -p \(address) FILE.mid)" : "")
        case .connected(let port): "connected \(name(port))"
        case .connectFailed(let port, let reason):
            // A network peer is refused (the allow rule), not connected to.
            port.isNetwork ? "refused \(name(port)): \(reason)" : "cannot connect \(port): \(reason)"
        case .disconnected(let port, let notes):
            // A network session's name already says how it ended ("… said goodbye after 3 packets, 0 lost").
            (port.isNetwork ? name(port) : "\(port) gone") + "; released \(notes) note\(notes == 1 ? "" : "s")"
        case .subscribed(let port): "\(port.address) \(port.clientName) plays into aulos"
        case .inputOverflow: "input overflowed, events lost"
        case .networkListening(let address): "network MIDI (AppleMIDI) on \(address)"
        case .networkInvitation(let peer, let event): "\(peer) \(event)"
        case .networkMIDI2Listening(let address): "Network MIDI 2.0 on \(address)"
        case .unavailable(let input, let reason):
            (reason.lowercased().contains(input.lowercased()) ? reason : "\(input): \(reason)")
                + "; playing network MIDI only"
        }
    }

    /// A sequencer port as `client:port client: port`; a network session as `peer: AppleMIDI address`.
    static func name(_ port: MIDIPortName) -> String {
        port.isNetwork ? "\(port.clientName): \(port.portName)" : "\(port)"
    }

    /// Device lost and back, on stderr (xruns are counted in the status line instead).
    static func reportDeviceEvent(_ event: IOEvent) {
        switch event {
        case .interruptionBegan(let error):
            printError("\raulos: device lost (\(String(cString: strerror(-error)))); waiting for it to come back")
        case .interruptionEnded: printError("\raulos: device back; playing on")
        case .bufferSizeChanged(let frames):
            printError("\raulos: the JACK buffer size is now \(frames) frames; playing on")
        case .sampleRateChanged(let hertz):
            printError("\raulos: the JACK server's sample rate changed to \(hertz) Hz")
        case .underrun, .overrun, .suspendedAndResumed: break
        }
    }

    /// m:ss.s
    static func clock(_ seconds: Double) -> String {
        let minutes = Int(seconds) / 60
        let rest = (seconds - Double(minutes * 60)).fixed(1)
        return "\(minutes):" + String(repeating: "0", count: max(0, 4 - rest.count)) + rest
    }

    /// " (unpaced, played by the clock)" for a device that takes audio faster than real time.
    static func pacing(_ status: LiveStatus) -> String {
        status.statistics.isPacedByClock ? " (takes audio faster than real time: paced by the clock)" : ""
    }

    static func percent(_ fraction: Double) -> String { (fraction * 100).fixed(1) + "%" }

    static func statusLine(_ status: LiveStatus) -> String {
        "\(clock(status.seconds))  voices \(status.voices)  DSP \(percent(status.statistics.dspLoad)) "
            + "(peak \(percent(status.statistics.peakLoad)))  xruns \(status.statistics.xruns)"
            + (status.voicesShed > 0 ? "  shed \(status.voicesShed)" : "")
            + (status.statistics.isInterrupted ? "  DEVICE LOST" : "")
    }

    /// The line after playing a file.
    func summary(of final: LiveStatus) -> String {
        let grant = final.grant
        return "played \(Self.clock(final.seconds)) on \(grant.device)\(Self.pacing(final)): "
            + "\(Int(grant.sampleRate)) Hz, \(grant.format), "
            + "\(grant.period)-frame periods × \(grant.periods) (\((grant.outputLatency * 1000).fixed(1)) ms buffer), "
            + "\(final.statistics.xruns) xruns, \(final.statistics.lateSlices) late slices, "
            + "DSP load \(Self.percent(final.statistics.dspLoad)) (peak \(Self.percent(final.statistics.peakLoad)) "
            + "at \(Self.clock(Double(final.statistics.peakLoadFrame) / grant.sampleRate))\(Self.stalls(final))), "
            + "mean \(Self.percent(final.statistics.meanLoad))" + Self.outputStage(final)
            + (final.sampleStreaming.map { "; " + $0.summary } ?? "")
    }

    /// "; peak −3.2 dBFS, the limiter never acted (1.3 ms look-ahead)": the output stage's part.
    static func outputStage(_ status: LiveStatus) -> String {
        guard let stage = status.outputStage else { return "" }
        let frames = Int64(status.statistics.framesPlayed)
        let lookahead =
            status.outputStageLatency > 0
            ? " (\((Double(status.outputStageLatency) / status.grant.sampleRate * 1000).fixed(1)) ms look-ahead)" : ""
        return "; " + stage.summary(limiting: status.limiting, frames: frames) + lookahead
    }

    /// ", render CPU 16 %; 3 slices stalled outside the render": how much of the peak period the render
    /// itself ran, and the periods that lost a quarter or more to the thread not running (preempted, or its
    /// virtual CPU stolen by the host) — so a stall is not taken for the instrument's own load.
    static func stalls(_ status: LiveStatus) -> String {
        let statistics = status.statistics
        let stalled = statistics.stalledSlices
        return ", render CPU \(percent(statistics.peakLoadCPU))"
            + (stalled > 0 ? "; \(stalled) slice\(stalled == 1 ? "" : "s") stalled outside the render" : "")
    }

    /// The line after playing live.
    func summary(of report: KeyboardPlayback.Report) -> String {
        let final = report.status
        let grant = final.grant
        let latency =
            report.latencyFrames > 0 && !report.clockRan
            ? "at the next slice (the device gave its slices no clock to place them by)"
            : report.latencyFrames > 0
                ? "constant \((Double(report.latencyFrames) / grant.sampleRate * 1000).fixed(1)) ms "
                    + "(\(report.latencyFrames) frames) after arrival"
                : "at the next slice"
        return
            "played live \(Self.clock(final.seconds)) on \(grant.device)\(Self.pacing(final)): "
            + "\(Int(grant.sampleRate)) Hz, "
            + "\(grant.format), "
            + "\(grant.period)-frame periods × \(grant.periods), \(final.statistics.xruns) xruns, "
            + "DSP load peak \(Self.percent(final.statistics.peakLoad)) at "
            + "\(Self.clock(Double(final.statistics.peakLoadFrame) / grant.sampleRate))\(Self.stalls(final)); "
            + "MIDI: \(report.midiDelivered) event\(report.midiDelivered == 1 ? "" : "s") placed \(latency), "
            + "\(report.midiLate) late"
            + (report.midiLate > 0 ? " (by up to \(report.worstLateness.fixed(1)) ms)" : "")
            + ", \(report.midiDropped) dropped"
            + (report.midiStale > 0 ? ", \(report.midiStale) stale note-ons skipped" : "")
            + (report.jackMIDIEvents.map { "; \($0) from JACK MIDI, each one cycle after its frame" } ?? "")
            + "; MIDI thread read delay max \(report.worstReadDelay.fixed(1)) ms"
            + (report.latencyFrames > 0 && report.clockRan
                ? "; clock margin \(report.clockMargin.fixed(2)) ms, \(report.clockResets) restarts" : "")
            + (final.voicesShed > 0 ? "; \(final.voicesShed) voices shed under overload" : "")
            + Self.outputStage(final) + (final.sampleStreaming.map { "; " + $0.summary } ?? "")
            + (report.reloads > 0 ? "; rig reloaded \(report.reloads) time\(report.reloads == 1 ? "" : "s")" : "")
            + (report.failedReloads > 0
                ? "; \(report.failedReloads) reload\(report.failedReloads == 1 ? "" : "s") failed (rig kept)" : "")
    }
}
