import ArgumentParser
import AulosALSA
import AulosCore
import AulosHost

#if canImport(Glibc)
import Glibc
#endif

extension Aulos {
    struct Devices: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List ALSA PCM devices (outputs and inputs), as 'aplay -L' names them.")

        func run() throws {
            let devices = PCMDeviceList.all()
            let soundCard = access("/dev/snd", F_OK) == 0
            print("PCM devices (use the name with --device):")
            for device in devices {
                let direction = device.playback && device.capture ? "out+in" : device.playback ? "out" : "in"
                print("  \(device.name) [\(direction)]" + (device.description.isEmpty ? "" : ": \(device.description)"))
            }
            if devices.isEmpty { print("  none") }
            if !soundCard { print("no sound card: this machine has no /dev/snd; only software PCMs (null, file, jack) can play") }
            print("MIDI ports (ALSA sequencer; use the name or client:port with --connect):")
            do {
                let ports = try SequencerPort.all().filter { $0.address.client != SequencerAddress.systemClient }
                for port in ports {
                    let direction = port.isReadable && port.isWritable ? "in+out" : port.isReadable ? "in" : port.isWritable ? "out" : "-"
                    print("  \(port.address) \(port.clientName): \(port.portName) [\(direction)\(port.isKernelClient ? ", device" : "")]")
                }
                if ports.isEmpty { print("  none") }
            } catch {
                print("  none: \(error.detail)")
            }
        }
    }

    struct Play: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Play live from MIDI keyboards, or play a MIDI file or score, in real time through an ALSA device.",
            discussion: """
                With no file, aulos is a live instrument: the ALSA sequencer client 'Aulos' (input port 0, echo \
                port 1) connects to every MIDI keyboard present and to those plugged in later, releases the notes \
                of one unplugged, and plays until Ctrl-C or SIGTERM. Every event sounds the same time after it arrives \
                (the device buffer: no jitter); --lowest-latency plays them at the next slice instead.
                The device's period is the render slice; the graph runs at the rate the device grants. On a \
                terminal a status line shows time, voices, DSP load and xruns. Ctrl-C stops cleanly.
                """)

        @Argument(help: "A .mid file or a score; omit to play live from MIDI keyboards and other ALSA sequencer clients.")
        var file: String?

        @Flag(help: "Play the built-in demo piece.")
        var demo = false

        @Option(name: .customLong("connect"), help: ArgumentHelp(
            "Also listen to this sequencer port: a name (part of the client or port name) or client:port. Remembered by name across re-plugs. Repeatable.",
            valueName: "port"))
        var connections: [String] = []

        @Flag(name: .customLong("no-autoconnect"), help: "Do not connect to MIDI keyboards by themselves (only --connect ports and programs that connect to aulos).")
        var noAutoconnect = false

        @Flag(name: .customLong("send-clock"), help: "Send MIDI clock (24 a beat) with Start/Stop/Continue on port 1, timed to the audio: aulos as the clock master (tempo from --tempo).")
        var sendClock = false

                @Option(name: .customLong("midi-headroom"), help: ArgumentHelp(
            "Extra constant latency for live MIDI, in ms, on a machine where the MIDI thread can be held up longer than a period (late events in the summary say so).",
            valueName: "ms"))
        var midiHeadroom: Double = 0

                @Flag(name: .customLong("lowest-latency"), help: "Play live MIDI at the next slice start rather than a constant latency after arrival (less latency, up to a period of jitter).")
        var lowestLatency = false

        @Option(help: "ALSA PCM name: default, hw:1,0, plughw:1,0, or any PCM the configuration defines.")
        var device: String = "default"

        @Option(name: .customLong("control-socket"), help: ArgumentHelp(
            "Serve aulos status / set / learn on this Unix socket (mode 0660: this user and group only). Live play only.",
            valueName: "path"))
        var controlSocket: String?

        @Flag(help: "Run unattended (the systemd unit uses this): wait for a missing sound device or MIDI sequencer instead of failing, serve the control socket (default path unless --control-socket), plain log lines.")
        var service = false

        @Option(name: .customLong("alsa-config"), help: "Look --device up in this ALSA configuration file instead of the system's.")
        var alsaConfig: String?

        @OptionGroup var rig: RigOptions

        @Option(help: "Also play what this ALSA capture PCM hears, mixed with the instruments (I/O pass-through).")
        var input: String? = nil

        @Option(help: "Periods in the device buffer (2 = lowest latency).")
        var periods: UInt32 = 3

        @OptionGroup var playback: PlaybackOptions

        @Option(help: "Stop after this many seconds (default: the end of the input plus its tail).")
        var duration: Double?

        func validate() throws {
            guard (2...16).contains(periods) else { throw ValidationError("--periods must be between 2 and 16, not \(periods)") }
            if let duration, !(duration > 0 && duration <= 86_400) {
                throw ValidationError("--duration must be between 0 and 86400 seconds, not \(duration)")
            }
            if demo && file != nil { throw ValidationError("give a file or --demo, not both") }
            if isLive == false && (!connections.isEmpty || noAutoconnect || lowestLatency || midiHeadroom != 0 || sendClock || controlSocket != nil || service) {
                throw ValidationError("--connect, --no-autoconnect, --lowest-latency, --midi-headroom, --send-clock, --control-socket and --service are for live play (no file)")
            }
            guard (0...1000).contains(midiHeadroom) else { throw ValidationError("--midi-headroom must be between 0 and 1000 ms, not \(midiHeadroom)") }
            if lowestLatency && midiHeadroom != 0 { throw ValidationError("--midi-headroom adds to the constant latency; --lowest-latency has none") }
        }

        var isLive: Bool { file == nil && !demo }

        func run() throws {
            let options = try playback.renderOptions(output: "", input: file, rig: rig)
            let session = AudioSession(device: device)
            try session.setPreferredPeriods(periods)
            session.inputDevice = input
            if let alsaConfig {
                guard let text = try? String(contentsOfFile: alsaConfig, encoding: .utf8) else {
                    throw AudioUnitError(.invalidFile, "cannot read ALSA configuration '\(alsaConfig)'")
                }
                session.configuration = text
            }
            session.addRouteChangeListener { change in
                guard case .cardsChanged(let added, let removed) = change else { return }
                for card in added { printError("\raulos: sound card plugged in: \(card)") }
                for card in removed { printError("\raulos: sound card gone: \(card)") }
            }
            let terminal = isatty(2) == 1 && !service
            if isLive {
                try runLive(options, session: session, terminal: terminal)
                return
            }
            var lastLine = ""
            let final = try LivePlayback.run(options, session: session, duration: duration, status: { status in
                guard terminal else { return }
                let line = Self.statusLine(status)
                if line != lastLine { printError("\r" + line + "   ", newline: false) }
                lastLine = line
            }, warn: { printError("aulos: warning: " + $0) }, event: Self.reportDeviceEvent)
            if terminal { printError("") }
            let grant = final.grant
            print("played \(Self.clock(final.seconds)) on \(grant.device): \(Int(grant.sampleRate)) Hz, \(grant.format), "
                + "\(grant.period)-frame periods × \(grant.periods) (\(String(format: "%.1f", grant.outputLatency * 1000)) ms buffer), "
                + "\(final.statistics.xruns) xruns, \(final.statistics.lateSlices) late slices, "
                + "DSP load \(String(format: "%.1f", final.statistics.dspLoad * 100))% (peak \(String(format: "%.1f", final.statistics.peakLoad * 100))%)")
        }

        func runLive(_ options: RenderOptions, session: AudioSession, terminal: Bool) throws {
            var lastLine = ""
            var input = LiveInputOptions(autoconnect: !noAutoconnect, requests: connections.map(ConnectionRequest.init(parsing:)),
                                         placement: lowestLatency ? .lowestLatency : .constantLatency, headroom: midiHeadroom / 1000,
                                         sendClock: sendClock)
            input.waitForDevices = service
            input.controlSocket = controlSocket ?? (service ? ControlSocket.defaultPath : nil)
            input.rigPath = playback.rigFile
            let report = try LiveInstrument.run(options, input: input, session: session, duration: duration, status: { status in
                guard terminal else { return }
                let line = Self.statusLine(status) + "  late MIDI \(status.midiLate)"
                if line != lastLine { printError("\r" + line + "   ", newline: false) }
                lastLine = line
            }, warn: { printError((terminal ? "\r" : "") + "aulos: warning: " + $0) }, info: { printError((terminal ? "\r" : "") + "aulos: " + $0) }, notice: { notice in
                let prefix = terminal ? "\r" : ""
                switch notice {
                case .listening(let address, let connected):
                    printError(prefix + "aulos: MIDI: listening as \(address) (Aulos MIDI In)"
                        + (connected == 0 ? "; no keyboard yet: plug one in, or play into it (aplaymidi -p \(address) FILE.mid)" : ""))
                case .connected(let port): printError(prefix + "aulos: MIDI: connected \(port)")
                case .connectFailed(let port, let reason): printError(prefix + "aulos: MIDI: cannot connect \(port): \(reason)")
                case .disconnected(let port, let notes):
                    printError(prefix + "aulos: MIDI: \(port) gone; released \(notes) note\(notes == 1 ? "" : "s")")
                case .subscribed(let address, let name): printError(prefix + "aulos: MIDI: \(address) \(name) plays into aulos")
                case .inputOverflow: printError(prefix + "aulos: MIDI: input overflowed, events lost")
                }
            }, event: Self.reportDeviceEvent)
            if terminal { printError("") }
            let final = report.status
            let grant = final.grant
            let latency = report.latencyFrames > 0
                ? String(format: "constant %.1f ms (%d frames) after arrival", Double(report.latencyFrames) / grant.sampleRate * 1000, report.latencyFrames)
                : "at the next slice"
            print("played live \(Self.clock(final.seconds)) on \(grant.device): \(Int(grant.sampleRate)) Hz, \(grant.format), "
                + "\(grant.period)-frame periods × \(grant.periods), \(final.statistics.xruns) xruns; "
                + "MIDI: \(report.midiDelivered) events placed \(latency), \(report.midiLate) late"
                + (report.midiLate > 0 ? String(format: " (by up to %.1f ms)", report.worstLateness) : "")
                + ", \(report.midiDropped) dropped" + (report.midiStale > 0 ? ", \(report.midiStale) stale note-ons skipped" : "")
                + "; MIDI thread read delay max \(String(format: "%.1f", report.worstReadDelay)) ms"
                + (report.latencyFrames > 0 ? String(format: "; clock margin %.2f ms, %d restarts", report.clockMargin, report.clockResets) : "")
                + (final.voicesShed > 0 ? "; \(final.voicesShed) voices shed under overload" : "")
                + (report.reloads > 0 ? "; rig reloaded \(report.reloads) time\(report.reloads == 1 ? "" : "s")" : ""))
        }

        /// Device lost and back, on stderr (xruns are counted in the status line instead).
        static func reportDeviceEvent(_ event: IOEvent) {
            switch event {
            case .interruptionBegan(let error): printError("\raulos: device lost (\(String(cString: strerror(-error)))); waiting for it to come back")
            case .interruptionEnded: printError("\raulos: device back; playing on")
            case .underrun, .overrun, .suspendedAndResumed: break
            }
        }

        static func clock(_ seconds: Double) -> String {
            let whole = Int(seconds)
            return "\(whole / 60):" + String(format: "%04.1f", seconds - Double(whole / 60 * 60))
        }

        static func statusLine(_ status: LiveStatus) -> String {
            "\(clock(status.seconds))  voices \(status.voices)  DSP \(String(format: "%.1f", status.statistics.dspLoad * 100))% "
                + "(peak \(String(format: "%.1f", status.statistics.peakLoad * 100))%)  xruns \(status.statistics.xruns)"
                + (status.voicesShed > 0 ? "  shed \(status.voicesShed)" : "")
                + (status.statistics.isInterrupted ? "  DEVICE LOST" : "")
        }
    }
}
