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
        }
    }

    struct Play: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Play a MIDI file or score in real time through an ALSA device.",
            discussion: """
                The device's period is the render slice; the graph runs at the rate the device grants. On a \
                terminal a status line shows time, voices, DSP load and xruns. Ctrl-C stops cleanly.
                """)

        @Argument(help: "A .mid file or a score; omit for the built-in demo piece.")
        var file: String?

        @Option(help: "ALSA PCM name: default, hw:1,0, plughw:1,0, or any PCM the configuration defines.")
        var device: String = "default"

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
        }

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
            let terminal = isatty(2) == 1
            var lastLine = ""
            let final = try LivePlayback.run(options, session: session, duration: duration, status: { status in
                guard terminal else { return }
                let line = Self.statusLine(status)
                if line != lastLine { printError("\r" + line + "   ", newline: false) }
                lastLine = line
            }, warn: { printError("aulos: warning: " + $0) }, event: { event in
                switch event {
                case .interruptionBegan(let error): printError("\raulos: device lost (\(String(cString: strerror(-error)))); waiting for it to come back")
                case .interruptionEnded: printError("\raulos: device back; playing on")
                case .underrun, .overrun, .suspendedAndResumed: break
                }
            })
            if terminal { printError("") }
            let grant = final.grant
            print("played \(Self.clock(final.seconds)) on \(grant.device): \(Int(grant.sampleRate)) Hz, \(grant.format), "
                + "\(grant.period)-frame periods × \(grant.periods) (\(String(format: "%.1f", grant.outputLatency * 1000)) ms buffer), "
                + "\(final.statistics.xruns) xruns, \(final.statistics.lateSlices) late slices, "
                + "DSP load \(String(format: "%.1f", final.statistics.dspLoad * 100))% (peak \(String(format: "%.1f", final.statistics.peakLoad * 100))%)")
        }

        static func clock(_ seconds: Double) -> String {
            let whole = Int(seconds)
            return "\(whole / 60):" + String(format: "%04.1f", seconds - Double(whole / 60 * 60))
        }

        static func statusLine(_ status: LiveStatus) -> String {
            "\(clock(status.seconds))  voices \(status.voices)  DSP \(String(format: "%.1f", status.statistics.dspLoad * 100))% "
                + "(peak \(String(format: "%.1f", status.statistics.peakLoad * 100))%)  xruns \(status.statistics.xruns)"
                + (status.statistics.isInterrupted ? "  DEVICE LOST" : "")
        }
    }
}
