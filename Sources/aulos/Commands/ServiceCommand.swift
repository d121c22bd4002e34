import ArgumentParser
import AulosCore
import AulosPlayback
import AulosRig
import AulosWeb
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `aulos service install|uninstall|unit`: aulos as a systemd service that plays at boot.
struct ServiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "service",
        abstract: "Install or remove aulos as a systemd service that plays at boot (headless, e.g. on a Raspberry Pi).",
        subcommands: [Install.self, Uninstall.self, Unit.self])

    struct Location: ParsableArguments {
        @Option(
            help: ArgumentHelp(
                "Where to copy an aulos from a build folder (default /usr/local); an installed aulos (a package, "
                    + "make install) is used where it is.",
                valueName: "prefix"))
        var prefix: String?

        @Option(help: "Install under this directory instead of / (for packaging); runs no system commands.")
        var root = ""

        /// The installer for this aulos: in place when it is installed and no other prefix is asked for.
        func installer() -> ServiceInstaller {
            var installer = ServiceInstaller()
            let installed = ServiceInstaller.installedPrefix(of: SearchPaths.executablePath)
            installer.prefix = prefix ?? installed ?? "/usr/local"
            installer.inPlace = installed != nil && installed == installer.prefix
            installer.panelFolder = SearchPaths.panelFolder
            // `--root /` is this system without its commands (packaging tests): paths as the system's.
            installer.root = root == "/" ? "" : root
            installer.runsSystemCommands = root.isEmpty
            return installer
        }
    }

    /// What the service plays and as whom: install and unit take the same.
    struct Playing: ParsableArguments {
        @Option(
            help: "The rig or rig set to play, a file or a factory one by name (default: the factory set stage).",
            transform: SearchPaths.rigFile)
        var rig: String?

        @Option(help: "ALSA PCM to play through (see aulos devices).")
        var device = "default"

        @Option(
            help: ArgumentHelp(
                "alsa (--device) or jack: a client of the JACK server running as the service's user (docs/jack.md).",
                valueName: "alsa|jack"))
        var driver = "alsa"

        @Option(help: "The system user the service runs as (created in group audio if missing).")
        var user = "aulos"

        @Option(help: "Serve the web panel on [address:]port (docs/web.md); beyond 127.0.0.1 with --web-password.")
        var web: String?

        @Option(
            name: .customLong("web-password"),
            help: "The file holding the panel's password hash (install copies it to /etc/aulos/web-password).")
        var webPassword: String?

        @Option(help: "Listen for Open Sound Control on this UDP port of 127.0.0.1 (docs/osc.md).")
        var osc: String?

        @OptionGroup var networkMIDI: NetworkMIDIOptions

        @Option(
            help: ArgumentHelp(
                "A folder of MIDI files and scores for the file player (install copies them to "
                    + "/var/lib/aulos/songs): the first is loaded, stopped, at every start.",
                valueName: "folder"))
        var playlist: String?

        @Option(
            name: .customLong("song-channel"),
            help: ArgumentHelp(
                "Program changes on this channel (1-16) choose the playlist's song.", valueName: "channel"))
        var songChannel: Int?

        func validate() throws {
            if let songChannel {
                guard (1...16).contains(songChannel) else {
                    throw ValidationError("--song-channel takes a channel from 1 to 16, not \(songChannel)")
                }
                guard playlist != nil else { throw ValidationError("--song-channel goes with --playlist FOLDER") }
            }
            guard ["alsa", "jack"].contains(driver) else {
                throw ValidationError("--driver must be alsa or jack, not '\(driver)'")
            }
            if let rig, rig.split(separator: "/").isEmpty || rig.hasSuffix("/") {
                throw ValidationError("--rig must name a rig file, not '\(rig)'")
            }
            if let web, ListenAddress(web) == nil {
                throw ValidationError("--web takes PORT or ADDRESS:PORT (127.0.0.1:8080, 0.0.0.0:8080), not '\(web)'")
            }
            if let osc, ListenAddress(osc)?.isLoopback != true {
                throw ValidationError("--osc takes PORT or 127.0.0.1:PORT (OSC listens on this machine only)")
            }
        }

        func configure(_ installer: inout ServiceInstaller) {
            installer.rig = rig
            installer.device = device
            installer.driver = driver
            installer.user = user
            installer.web = web
            installer.webPasswordFile = webPassword
            installer.isPasswordHash = WebPanel.isPasswordHash
            installer.osc = osc
            installer.networkMIDIListen = networkMIDI.listen
            installer.networkMIDIAllow = networkMIDI.allowPrefixes
            installer.networkMIDILatency = networkMIDI.latency
            installer.networkMIDIConnect = networkMIDI.connectPeers
            installer.networkMIDI2Listen = networkMIDI.midi2
            installer.playlist = playlist
            installer.songChannel = songChannel
        }
    }

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "install",
            abstract:
                "Write /etc/systemd/system/aulos.service and the rigs it plays, create the 'aulos' user and start "
                + "it; an aulos from a build folder is first copied under the prefix with its data."
        )

        @OptionGroup var location: Location
        @OptionGroup var playing: Playing

        func run() throws {
            guard location.root != "" || geteuid() == 0 else {
                throw CommandError("installing a system service needs root: sudo aulos service install")
            }
            var installer = location.installer()
            playing.configure(&installer)
            let executable = SearchPaths.executablePath
            guard let presets = SearchPaths.presetFolders.first(where: { access($0 + "/rigs/stage.yaml", R_OK) == 0 })
            else {
                throw CommandError(
                    "cannot find the presets folder to install (searched "
                        + "\(SearchPaths.presetFolders.joined(separator: ", ")))"
                )
            }
            for line in try installer.install(
                executable: executable, presets: presets, soundFont: SearchPaths.soundFont)
            { print(line) }
            if installer.hasUnusedNetworkMIDISecret {
                print(
                    "the rig's network-midi secret and users are for Network MIDI 2.0, which is off (midi2: or "
                        + "--network-midi2)")
            }
        }
    }

    struct Unit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unit",
            abstract:
                "Print the systemd unit install would write (packaging/systemd/aulos.service is this with the "
                + "defaults)."
        )

        @OptionGroup var location: Location
        @OptionGroup var playing: Playing

        func run() throws {
            var installer = location.installer()
            playing.configure(&installer)
            try installer.readRig()
            print(installer.unitText, terminator: "")
        }
    }

    struct Uninstall: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "uninstall",
            abstract:
                "Stop and remove the service, and the binary and data it copied (a package's stay; so does the user).")

        @OptionGroup var location: Location

        func run() throws {
            guard location.root != "" || geteuid() == 0 else {
                throw CommandError("removing a system service needs root: sudo aulos service uninstall")
            }
            for line in try location.installer().uninstall() { print(line) }
        }
    }
}
