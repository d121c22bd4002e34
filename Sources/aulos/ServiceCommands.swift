import ArgumentParser
import AulosCore
import AulosHost
import AulosUnits
import Foundation

/// The control socket's path option, shared by the commands that talk to a running aulos.
struct SocketOption: ParsableArguments {
    @Option(name: .customLong("socket"), help: ArgumentHelp("The running aulos's control socket (default: /run/aulos/control for the service, else $XDG_RUNTIME_DIR/aulos/control).", valueName: "path"))
    var path: String?

    var resolved: String { path ?? ControlSocket.defaultPath }

    /// Sends one request; a reply carrying "error" becomes a one-line error.
    func request(_ line: String) throws -> [String: Any] {
        try parsedReply(line).object
    }

    /// The reply as received and as parsed.
    func parsedReply(_ line: String) throws -> (text: String, object: [String: Any]) {
        let reply = try ControlSocket.request(line, at: resolved)
        guard let object = try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any] else {
            throw AudioUnitError(.cannotDoInCurrentContext, "unreadable reply from aulos: \(reply.prefix(80))")
        }
        if let error = object["error"] as? String { throw AudioUnitError(.cannotDoInCurrentContext, error) }
        return (reply, object)
    }
}

extension Aulos {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Report on the running aulos (the service, or aulos play --control-socket): rig, device, voices, load, xruns, keyboards.")

        @Flag(help: "Print the status as JSON (one object) for scripts.")
        var json = false

        @OptionGroup var socket: SocketOption

        func run() throws {
            // An {"error":…} reply (still waiting for a device) is an error line either way.
            let reply = try socket.parsedReply("status").text
            if json {
                print(reply)
                return
            }
            guard let status = try? JSONDecoder().decode(ServiceStatus.self, from: Data(reply.utf8)) else {
                throw AudioUnitError(.cannotDoInCurrentContext, "unreadable status from aulos")
            }
            let minutes = Int(status.seconds) / 60
            print("aulos \(status.pid): playing rig \(status.activeRig + 1) '\(status.rig)'"
                  + (status.rigs.count > 1 ? " of \(status.rigs.count) in '\(status.rigSet)'" : "")
                  + " for \(minutes / 60)h \(minutes % 60)m")
            print("audio: \(status.device), \(Int(status.sampleRate)) Hz, \(status.period)-frame periods × \(status.periods) "
                  + String(format: "(%.1f ms buffer)", status.bufferMs) + (status.deviceLost ? ", DEVICE LOST (waiting for it)" : ""))
            print(String(format: "load: DSP %.1f%% (peak %.1f%%), %d xruns, %d late slices; voices %d, %d shed under overload",
                         status.dspLoad * 100, status.peakLoad * 100, status.xruns, status.lateSlices, status.voices, status.voicesShed))
            print("MIDI: \(status.midiDelivered) events, \(status.midiLate) late, \(status.midiDropped) dropped, \(status.midiStale) stale")
            if let keyboards = status.keyboards {
                print("keyboards: " + (keyboards.isEmpty ? "none connected" : keyboards.joined(separator: "; ")))
            } else {
                print("keyboards: no ALSA sequencer yet")
            }
            if !status.controls.isEmpty {
                print("controls: " + status.controls.map { "cc \($0.cc)\($0.channel.map { " ch \($0)" } ?? "") → \($0.target)" }.joined(separator: ", "))
            }
            if let learning = status.learning { print("learning: move a controller to map it to \(learning)") }
            if status.reloads > 0 || status.rigSwitches > 0 { print("rig switches \(status.rigSwitches), reloads \(status.reloads)") }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a parameter of the running aulos: PART.PARAMETER (volume, pan, enabled, eq, or an instrument parameter), output.volume, output.eq.",
            discussion: "Examples: aulos set piano.volume 0.8; aulos set lead.cutoff 1200; aulos set output.eq Rock. Without VALUE, prints the current one.")

        @Argument(help: "What to change, as UNIT.PARAMETER.")
        var target: String

        @Argument(help: "The new value (an EQ preset by name or number for eq targets).")
        var value: [String] = []

        @OptionGroup var socket: SocketOption

        func run() throws {
            let reply = try socket.request(value.isEmpty ? "get \(target)" : "set \(target) \(value.joined(separator: " "))")
            print("\(reply["target"] ?? target) = \(reply["value"] ?? "?")")
        }
    }

    struct Learn: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "MIDI-learn: map the next controller moved on the keyboard to a parameter of the running aulos.",
            discussion: "Prints the mapping as a line for the rig file's controls: list, so it can be kept.")

        @Argument(help: "The parameter to map, as UNIT.PARAMETER.")
        var target: String

        @Option(help: "Seconds to wait for a controller.")
        var timeout: Double = 30

        @OptionGroup var socket: SocketOption

        func run() throws {
            let armed = try socket.request("learn \(target)")
            printError("aulos: move a controller to map it to \(armed["learning"] ?? target)…")
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                usleep(100_000)
                let reply = try socket.request("learned")
                if let learned = reply["learned"] as? [String: Any], let cc = learned["cc"], let channel = learned["channel"], let name = learned["target"] {
                    print("learned: cc \(cc) on channel \(channel) → \(name)")
                    print("rig file: controls: [{cc: \(cc), channel: \(channel), target: \"\(name)\"}]")
                    return
                }
            }
            throw AudioUnitError(.cannotDoInCurrentContext, "no controller moved within \(Int(timeout)) s")
        }
    }

    struct Service: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Install or remove aulos as a systemd service that plays at boot (headless, e.g. on a Raspberry Pi).",
            subcommands: [Install.self, Uninstall.self, Unit.self])

        struct Location: ParsableArguments {
            @Option(help: "Installation prefix.")
            var prefix = "/usr/local"

            @Option(help: "Install under this directory instead of / (for packaging); runs no system commands.")
            var root = ""

            func installer() -> ServiceInstaller {
                var installer = ServiceInstaller()
                installer.prefix = prefix
                installer.root = root
                return installer
            }
        }

        /// What the service plays and as whom: install and unit take the same.
        struct Playing: ParsableArguments {
            @Option(help: "The rig or rig set to play (default: the factory set presets/rigs/stage.yaml).")
            var rig: String?

            @Option(help: "ALSA PCM to play through (see aulos devices).")
            var device = "default"

            @Option(help: "The system user the service runs as (created in group audio if missing).")
            var user = "aulos"

            func configure(_ installer: inout ServiceInstaller) {
                installer.rig = rig
                installer.device = device
                installer.user = user
            }
        }

        struct Install: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Copy aulos, its presets, rigs and SoundFont under the prefix, write /etc/systemd/system/aulos.service, create the 'aulos' user and start it.")

            @OptionGroup var location: Location
            @OptionGroup var playing: Playing

            func run() throws {
                guard location.root != "" || geteuid() == 0 else {
                    throw AudioUnitError(.cannotDoInCurrentContext, "installing a system service needs root: sudo aulos service install")
                }
                var installer = location.installer()
                playing.configure(&installer)
                let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
                guard let presets = SynthPresetLibrary.searchPaths.first(where: { access($0 + "/rigs/stage.yaml", R_OK) == 0 }) else {
                    throw AudioUnitError(.invalidFile, "cannot find the presets folder to install (searched \(SynthPresetLibrary.searchPaths.joined(separator: ", ")))")
                }
                for line in try installer.install(executable: executable, presets: presets, soundFont: SoundFontLocator.defaultPath) { print(line) }
            }
        }

        struct Unit: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print the systemd unit install would write (packaging/systemd/aulos.service is this with the defaults).")

            @OptionGroup var location: Location
            @OptionGroup var playing: Playing

            func run() {
                var installer = location.installer()
                playing.configure(&installer)
                print(installer.unitText, terminator: "")
            }
        }

        struct Uninstall: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Stop and remove the service, the installed binary and its data (the user stays).")

            @OptionGroup var location: Location

            func run() throws {
                guard location.root != "" || geteuid() == 0 else {
                    throw AudioUnitError(.cannotDoInCurrentContext, "removing a system service needs root: sudo aulos service uninstall")
                }
                for line in try location.installer().uninstall() { print(line) }
            }
        }
    }
}
