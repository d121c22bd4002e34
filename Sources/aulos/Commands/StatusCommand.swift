import ArgumentParser
import AulosCore
import AulosPlayback
import Foundation

/// `aulos status`: the running aulos (the service, or any live `aulos play`) as its control socket reports it.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract:
            "Report on the running aulos (the service, or a live aulos play): rig, device, voices, load, xruns, "
            + "keyboards, network MIDI sessions."
    )

    @Flag(help: "Print the status as JSON (one object) for scripts; an error is an {\"error\": …} object too.")
    var json = false

    @OptionGroup var socket: SocketOption

    func run() throws {
        guard json else { return try report() }
        // Scripts read stdout: an error is a JSON object there too (and the exit status is still 1).
        do {
            try report()
        } catch let error as ReportableError {
            print(#"{"error":"\#(error.message.escapedForDoubleQuotes)"}"#)
            throw ExitCode(1)
        }
    }

    func report() throws {
        // An {"error":…} reply (still waiting for a device) is an error line either way.
        let reply = try socket.parsedReply("status").text
        if json {
            print(reply)
            return
        }
        // The socket may answer with anything (another program on that path): numbers are checked before
        // they are formatted.
        guard let status = try? JSONDecoder().decode(ServiceStatus.self, from: Data(reply.utf8)),
            (0...1e9).contains(status.seconds), (0...1e6).contains(status.sampleRate),
            (0..<10_000).contains(status.activeRig)
        else {
            throw ControlSocketError("unreadable status from aulos at \(socket.resolved)")
        }
        // Names come from rig files anyone may have written: a terminal escape, a bidi override or a newline in
        // one would act on the terminal (recolour it, reverse text, forge a line), so each line is shown with
        // such characters escaped.
        func say(_ line: String) { print(Self.shown(line)) }
        let minutes = Int(status.seconds) / 60
        say(
            "aulos \(status.pid): playing rig \(status.activeRig + 1) '\(status.rig)'"
                + (status.rigs.count > 1 ? " of \(status.rigs.count) in '\(status.rigSet)'" : "")
                + " for \(minutes / 60)h \(minutes % 60)m")
        say(
            "audio: \(status.device), \(Int(status.sampleRate)) Hz, "
                + "\(status.period)-frame periods × \(status.periods) "
                + String(format: "(%.1f ms buffer)", status.bufferMs)
                + (status.deviceLost ? ", DEVICE LOST (waiting for it)" : ""))
        say(
            String(
                format: "load: DSP %.1f%% (peak %.1f%%), %d xruns, %d late slices; voices %d, %d shed under overload",
                status.dspLoad * 100, status.peakLoad * 100, status.xruns, status.lateSlices, status.voices,
                status.voicesShed))
        for line in Self.cpuLines(status) { say(line) }
        for part in status.sampleStreaming ?? [] { say("\(part.part): \(part.voices) voices, " + part.summary) }
        say(
            "MIDI: \(status.midiDelivered) event\(status.midiDelivered == 1 ? "" : "s"), \(status.midiLate) late, "
                + "\(status.midiDropped) dropped, \(status.midiStale) stale"
        )
        if let keyboards = status.keyboards {
            say("keyboards: " + (keyboards.isEmpty ? "none connected" : keyboards.joined(separator: "; ")))
        } else {
            say("keyboards: no ALSA sequencer yet")
        }
        if let sessions = status.networkSessions {
            say(
                "network MIDI: "
                    + (sessions.isEmpty
                        ? "no sessions" : sessions.prefix(64).map(Self.networkSessionText).joined(separator: "; ")))
        }
        if !status.controls.isEmpty {
            say(
                "controls: "
                    + status.controls.map { "cc \($0.cc)\($0.channel.map { " ch \($0)" } ?? "") → \($0.target)" }
                    .joined(separator: ", "))
        }
        if let limiter = status.limiter {
            say(
                limiter.on
                    ? String(
                        format:
                            "limiter: on (−1 dBTP, %.1f ms), %d samples turned down (at most %.1f dB), "
                            + "peak %.1f dBFS",
                        limiter.latencyMs, limiter.limitedSamples, limiter.deepestReductionDb, limiter.peakDb)
                    : String(
                        format: "limiter: off, %d samples at full scale, peak %.1f dBFS", limiter.fullScaleSamples,
                        limiter.peakDb))
        }
        if let player = status.player {
            func clock(_ seconds: Double) -> String { String(format: "%d:%02d", Int(seconds) / 60, Int(seconds) % 60) }
            say(
                "player: \(player.file) \(player.state) at \(clock(player.position)) of \(clock(player.duration))"
                    + (player.loop ? ", looping (\(player.passes) passes)" : "")
                    + (player.song.flatMap { song in player.playlist.map { ", song \(song) of \($0.count)" } } ?? ""))
        }
        if let snapshot = status.snapshot { say("snapshot: \(snapshot)") }
        if let programs = status.programs, !programs.isEmpty {
            // What each channel plays, part by part: "GM ch 1 0:4, ch 10 128:0".
            var lines: [String] = []
            let parts = programs.map(\.part).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            for part in parts {
                let channels = programs.filter { $0.part == part }.map { "ch \($0.channel) \($0.bank):\($0.program)" }
                lines.append("\(part) " + channels.joined(separator: ", "))
            }
            say("programs: " + lines.joined(separator: "; "))
        }
        if let learning = status.learning { say("learning: move a controller to map it to \(learning)") }
        if status.reloads > 0 || status.rigSwitches > 0 {
            say("rig switches \(status.rigSwitches), reloads \(status.reloads)")
        }
        if let failure = status.reloadFailure { say("last reload failed, rig unchanged: \(failure)") }
        if let fallback = status.fallback { say("warning: \(fallback)") }
        if let stuck = status.stuckUnit { say("error: \(stuck)") }
        for warning in (status.warnings ?? []).prefix(20) { say("warning: \(warning)") }
        if let meters = status.meters, !meters.isEmpty {
            // Peak dBFS after each fader (silence: −inf); the numbers were checked as floats, any value prints.
            let levels = meters.prefix(200).map { meter in
                let peak = meter.peak.isFinite && meter.peak > -120 ? String(format: "%.1f", meter.peak) : "-inf"
                return "\(meter.name) \(peak)"
            }
            say("levels (dBFS peak): " + levels.joined(separator: ", "))
        }
    }

    /// Per-part CPU (the playing rig's parts; the set's other rigs' together, while they ring out) and, in a set,
    /// each rig's last measured peak and whether a switch to it is predicted to fit. Nothing from an aulos that
    /// does not measure it.
    static func cpuLines(_ status: ServiceStatus) -> [String] {
        var lines: [String] = []
        func percent(_ load: Double) -> String {
            load.isFinite ? String(format: "%.1f %%", min(max(load, 0), 1e4) * 100) : "?"
        }
        if let cpu = status.cpu {
            let own = cpu.parts.filter { $0.rig == status.activeRig }.prefix(64).map { "\($0.part) \(percent($0.cpu))" }
            let others = cpu.parts.filter { $0.rig != status.activeRig }.reduce(0) { $0 + $1.cpu }
            lines.append(
                "cpu: " + (own.isEmpty ? "" : own.joined(separator: ", ") + "; ")
                    + (status.rigs.count > 1 ? "other rigs \(percent(others)); " : "")
                    + "shared \(percent(cpu.shared)); meters and recorders \(percent(cpu.meters))")
        }
        if let loads = status.rigLoads, loads.count > 1 {
            let rigs = loads.prefix(128).enumerated().map { index, load in
                var text = "\(index + 1) '\(load.name)' "
                guard let peak = load.peak else { return text + "not yet measured" }
                text += "peak \(percent(peak))"
                if index == status.activeRig { return text + " (playing)" }
                if load.fits == false, let predicted = load.predicted {
                    text += ", may not fit (\(percent(predicted)) predicted)"
                }
                return text
            }
            lines.append("rigs (parts' peak CPU when last played): " + rigs.joined(separator: "; "))
        }
        return lines
    }

    /// `iPad (AppleMIDI 192.168.1.5:5004): 1200 packets, 3 lost, 3 repaired, latency 2.1 ms, clock round trip
    /// 0.4 ms`; the times are left out while not known (no clock exchange yet, events placed by arrival).
    static func networkSessionText(_ session: ServiceStatus.NetworkSession) -> String {
        func milliseconds(_ value: Double?) -> String? {
            guard let value, value.isFinite, abs(value) < 1e9 else { return nil }
            return String(format: "%.1f ms", value)
        }
        var text =
            "\(session.peer) (\(session.kind) \(session.address)): \(session.packets) "
            + "packet\(session.packets == 1 ? "" : "s"), \(session.lost) lost, \(session.repaired) repaired"
        if let latency = milliseconds(session.latencyMs) { text += ", latency \(latency)" }
        if let roundTrip = milliseconds(session.clockRoundTripMs) { text += ", clock round trip \(roundTrip)" }
        return text
    }

    /// `text` with every character a terminal would act on or not show written as `\u{HEX}`: controls
    /// (C0, DEL, C1), format characters (bidi overrides and isolates, zero-width ones), line and paragraph
    /// separators, and unassigned code points.
    static func shown(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .privateUse, .surrogate:
                shown += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default:
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }
}
