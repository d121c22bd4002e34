import ArgumentParser
import AulosALSA
import AulosAudioFile
import AulosCore
import AulosIO
import AulosNetworkMIDI
import AulosPlayback
import AulosRig
import AulosWeb
import Glibc

#if canImport(Glibc)
#endif

/// `aulos play`: in real time through an ALSA device — a file (or the demo piece), or live from keyboards.
struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract:
            "Play live from MIDI keyboards, or play a MIDI file or score, in real time through an ALSA device or JACK.",
        discussion: """
            With no file, aulos is a live instrument: the ALSA sequencer client 'Aulos' (input port 0, echo \
            port 1) connects to every MIDI keyboard present and to those plugged in later, releases the notes \
            of one unplugged, and plays until Ctrl-C or SIGTERM. Every event sounds the same time after it arrives \
            (the device buffer: no jitter); --lowest-latency plays them at the next slice instead.
            The device's period is the render slice; the graph runs at the rate the device grants. On a \
            terminal a status line shows time, voices, DSP load and xruns. Ctrl-C stops cleanly.
            With --driver jack (or a rig's driver: jack), aulos is a JACK client named after the rig: out_1 and \
            out_2 connect to the physical playback ports, midi_in takes JACK MIDI at its frame, and live play \
            follows JACK's transport. On a PipeWire desktop this needs pipewire-jack (or run it under pw-jack).
            """)

    @Argument(
        help: ArgumentHelp(
            "A .mid file or a score; omit to play live from MIDI keyboards and other ALSA sequencer clients. "
                + "With --web, --osc, --control-socket or --service the file plays on the live instrument, in its "
                + "file player (pause, locate, loop; docs/service.md); a folder there is a playlist of its MIDI "
                + "files and scores, the first loaded, stopped."))
    var file: String?

    @Option(
        name: .customLong("song-channel"),
        help: ArgumentHelp(
            "Program changes on this channel (1-16) choose the playlist's song (program 0: the first).",
            valueName: "channel"))
    var songChannel: Int?

    @Flag(help: "Play the built-in demo piece.")
    var demo = false

    @Option(
        name: .customLong("connect"),
        help: ArgumentHelp(
            "Also listen to this sequencer port: a name (part of the client or port name) or client:port. Remembered "
                + "by name across re-plugs. Repeatable.",
            valueName: "port"))
    var connections: [String] = []

    @Flag(
        name: .customLong("no-autoconnect"),
        help:
            "Do not connect to MIDI keyboards by themselves (only --connect ports and programs that connect to aulos).")
    var noAutoconnect = false

    @OptionGroup var networkMIDI: NetworkMIDIOptions

    @Flag(
        name: .customLong("send-clock"),
        help: ArgumentHelp(
            "Send MIDI clock (24 a beat) with Start/Stop/Continue on port 1, timed to the audio: aulos as the clock "
                + "master (tempo from --tempo).")
    )
    var sendClock = false

    @Option(
        name: .customLong("midi-headroom"), parsing: .unconditional,
        help: ArgumentHelp(
            "Extra constant latency for live MIDI, in ms, on a machine where the MIDI thread can be held up longer "
                + "than a period (late events in the summary say so).",
            valueName: "ms"))
    var midiHeadroom: Double = 0

    @Flag(
        name: .customLong("lowest-latency"),
        help: ArgumentHelp(
            "Play live MIDI at the next slice start rather than a constant latency after arrival (less latency, up to "
                + "a period of jitter).")
    )
    var lowestLatency = false

    @Option(help: "ALSA PCM name: default, hw:1,0, plughw:1,0, or any PCM the configuration defines.")
    var device: String = "default"

    @Option(
        name: .customLong("control-socket"),
        help: ArgumentHelp(
            "Serve aulos status / set / learn on this Unix socket (mode 0660: this user and group only); live play "
                + "serves the default one (aulos status finds it) unless given a path or none.",
            valueName: "path"))
    var controlSocket: String?

    @Option(
        help: ArgumentHelp(
            "Listen for Open Sound Control on this UDP port of 127.0.0.1 (docs/osc.md): notes, controllers, rig "
                + "switches, part parameters, status.", valueName: "[127.0.0.1:]port"))
    var osc: String?

    @Option(
        help: ArgumentHelp(
            "Serve the web panel on this address (docs/web.md): 127.0.0.1 unless an address is given, which "
                + "needs --web-password.", valueName: "[address:]port"))
    var web: String?

    @Option(
        name: .customLong("record-dir"),
        help: ArgumentHelp(
            "Where `record start` (the panel's record button, the control socket) writes its files.",
            valueName: "folder"))
    var recordFolder = "."

    @Option(
        name: .customLong("web-password"),
        help: ArgumentHelp(
            "A file holding the panel's password hash (made by `aulos web-password`): needed to serve the panel "
                + "beyond this machine.", valueName: "file"))
    var webPassword: String?

    @Flag(
        help: ArgumentHelp(
            "Run unattended (the systemd unit uses this): wait for a missing sound device or MIDI sequencer instead "
                + "of failing, serve the control socket (default path unless --control-socket), plain log lines.")
    )
    var service = false

    @Option(
        name: .customLong("alsa-config"),
        help: "Look --device up in this ALSA configuration file instead of the system's.")
    var alsaConfig: String?

    @OptionGroup var slicing: SliceOptions

    @OptionGroup var drivers: DriverOptions

    @Option(
        help: ArgumentHelp(
            "Also play what this ALSA capture PCM hears, mixed with the instruments (I/O pass-through); with JACK, "
                + "the ports in_1, in_2 connect from these ports (comma-separated) or 'physical'."))
    var input: String? = nil

    @Flag(
        help: ArgumentHelp(
            "Let a device that takes audio faster than real time (null, a file plugin over null) take it as fast as "
                + "it can, instead of pacing it by the clock (aulos devices marks them)."))
    var unpaced = false

    @Option(parsing: .unconditional, help: "Periods in the device buffer (2 = lowest latency).")
    var periods = 3

    @OptionGroup var instrument: InstrumentOptions

    @Option(
        parsing: .unconditional, help: "Stop after this many seconds (default: the end of the input plus its tail).")
    var duration: Double?

    @Option(
        help: ArgumentHelp(
            "Record what plays (the master output) into a WAV (32-bit float) or FLAC (24-bit) file, whole when "
                + "the run ends or is stopped.", valueName: "file"))
    var record: String?

    @Flag(
        name: .customLong("record-parts"),
        help: ArgumentHelp(
            "Recordings (--record, record start) also write each part's own output beside the master's "
                + "(take.PART.wav): after the part's effects and EQ, before its volume, pan and sends."))
    var recordParts = false

    @Flag(
        help: ArgumentHelp(
            "Let --record (and --record-parts) replace files that exist; without it an existing take is never "
                + "replaced."))
    var force = false

    func validate() throws {
        if let slice = slicing.slice, slice < 16 {
            throw ValidationError("--slice must be between 16 and 4096 frames to play (a device period), not \(slice)")
        }
        guard (2...16).contains(periods) else {
            throw ValidationError("--periods must be between 2 and 16, not \(periods)")
        }
        if let duration, !(duration > 0 && duration <= 86_400) {
            throw ValidationError("--duration must be more than 0 and at most 86400 seconds, not \(duration.clean)")
        }
        if demo && file != nil { throw ValidationError("give a file or --demo, not both") }
        if let file, FileContents.isFolder(file), !isLive {
            throw ValidationError(
                "'\(file)' is a folder: a playlist plays on the live instrument, with --web, --osc, --control-socket "
                    + "or --service")
        }
        if let songChannel {
            guard (1...16).contains(songChannel) else {
                throw ValidationError("--song-channel takes a channel from 1 to 16, not \(songChannel)")
            }
            guard let file, FileContents.isFolder(file) else {
                throw ValidationError("--song-channel chooses songs of a playlist: give a folder to play")
            }
        }
        if let record, AudioFileType(path: record) == nil {
            throw ValidationError("--record writes .wav or .flac, not '\(record)'")
        }
        if recordParts && record == nil && !isLive {
            throw ValidationError("--record-parts goes with --record FILE")
        }
        if force && record == nil { throw ValidationError("--force goes with --record FILE") }
        if isLive && !playsFile && instrument.strict {
            throw ValidationError("--strict is for playing a MIDI file")
        }
        if !isLive && (!connections.isEmpty || noAutoconnect || lowestLatency || midiHeadroom != 0 || sendClock) {
            throw ValidationError(
                "--connect, --no-autoconnect, --lowest-latency, --midi-headroom and --send-clock are for live play: "
                    + "with a file, add --web, --osc or --control-socket to play it on the live instrument"
            )
        }
        guard (0...1000).contains(midiHeadroom) else {
            throw ValidationError("--midi-headroom must be between 0 and 1000 ms, not \(midiHeadroom.clean)")
        }
        if lowestLatency && midiHeadroom != 0 {
            throw ValidationError("--midi-headroom adds to the constant latency; --lowest-latency has none")
        }
    }

    /// `accepts sessions from the local network (private, link-local and this machine), playout latency 3 ms`,
    /// and `; invites 192.168.1.5:5004` when it invites peers.
    static func describe(_ settings: NetworkMIDISettings, latency: Double) -> String {
        let who =
            settings.allowText.map { "accepts sessions from " + $0.joined(separator: ", ") }
            ?? "accepts sessions from the local network (private, link-local and this machine)"
        let invites = settings.connect.isEmpty ? "" : "; invites " + settings.connect.joined(separator: ", ")
        return who + ", playout latency \(latency.clean) ms" + invites
    }

    /// Advertises a network MIDI service of `type` (AppleMIDI's, Network MIDI 2.0's) on `port` as `name` through
    /// Avahi (a Mac lists an AppleMIDI session under Directory by itself), on `advertiser` or a new one, on the
    /// interface and IP version the host listens on (`address`: `AdvertisedScope`); not when it listens on loopback
    /// alone, which no other machine can reach. Its notices go to the log
    /// as they happen, from Avahi's thread.
    static func advertise(
        type: String, address: String?, port: UInt16, name: String, with advertiser: AvahiAdvertiser?
    ) -> AvahiAdvertiser? {
        if let address, address.hasPrefix("127.") || address == "::1" {
            let what = type == DNSServiceName.appleMIDI ? "network MIDI" : "Network MIDI 2.0"
            printError("aulos: \(what) not advertised: it listens on loopback only")
            return advertiser
        }
        // Where the socket listens, and nowhere else: a peer told of another interface could not connect.
        guard let scope = AdvertisedScope(listeningOn: address) else {
            let what = type == DNSServiceName.appleMIDI ? "network MIDI" : "Network MIDI 2.0"
            printError("aulos: \(what) not advertised: no interface has \(address ?? "its address") now")
            return advertiser
        }
        let advertiser = advertiser ?? AvahiAdvertiser { printError("aulos: network MIDI " + $0) }
        advertiser.advertise(type: type, port: port, name: name, scope: scope)
        return advertiser
    }

    /// The live instrument plays (keyboards, the control roads, the file player), rather than a file alone
    /// to its end: without a file, or with one and a road to control it by, or network MIDI to play along.
    var isLive: Bool {
        !playsFile || controlSocket != nil || osc != nil || web != nil || service || networkMIDI.listen != nil
            || networkMIDI.midi2 != nil
    }
    var playsFile: Bool { file != nil || demo }

    /// The hash in the password file's first line (`--web-password`, or the rig's `web-password:`).
    static func webPasswordHash(in path: String?) throws -> String? {
        guard let path else { return nil }
        do {
            let text = try FileContents.text(path, limit: 4096)
            // An empty file is a hash that is not there, not "no password".
            return text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        } catch {
            throw CommandError("cannot read the web panel's password file: \(error.message)")
        }
    }

    /// The playback options; unattended, a rig file that cannot be read gives way to the last rig that played
    /// (the reason comes back with them, for the status and the journal).
    func playbackOptions() throws -> (PlaybackOptions, fallback: String?) {
        do {
            return (try instrument.playbackOptions(input: file, slicing: slicing), nil)
        } catch let error as RigError {
            guard service, isLive, let rigFile = instrument.rigFile,
                let good = LastKnownGoodRig(beside: rigFile).load()
            else { throw error }
            var withoutRig = instrument
            withoutRig.rigFile = nil
            var options = try withoutRig.playbackOptions(input: file, slicing: slicing)
            options.rigSet = good
            return (options, "it cannot be read: \(error.message)")
        }
    }

    func run() throws {
        var (options, fallback) = try playbackOptions()
        options.record = record
        options.recordParts = recordParts
        options.recordReplacing = force
        // Before anything is built or played: a take refused at its end is a take lost. The parts' files,
        // named after the rig's parts, are checked as the recording opens, still before playing.
        if let record,
            let refusal = RecordingTarget.refusal(
                for: record, replacing: force, advice: "choose another name, or pass --force to replace it")
        {
            throw CommandError(refusal)
        }
        let session = AudioSession(driver: .alsa, device: device)
        try session.setPreferredPeriods(UInt32(periods))
        let set = options.playedRigSet()
        if drivers.driverName(for: set) == "jack" {
            if device != "default" || alsaConfig != nil {
                throw CommandError(
                    "--device and --alsa-config choose an ALSA PCM; the JACK driver plays to the JACK server")
            }
            if slicing.slice != nil || slicing.sampleRate != nil {
                throw CommandError(
                    "through JACK the server sets the slice and the rate: change them with jack_bufsize (or "
                        + "PIPEWIRE_QUANTUM), not --slice or --sample-rate")
            }
        }
        try drivers.configure(
            session, for: set, live: isLive, input: input, midiConnections: connections,
            midiAutoconnect: !noAutoconnect)
        session.inputDevice = input
        session.pacesUnpacedDevices = !unpaced
        if let alsaConfig {
            do {
                session.configuration = try FileContents.text(alsaConfig, limit: 1 << 20)
            } catch {
                throw CommandError("cannot read ALSA configuration: \(error.message)")
            }
        }
        session.addRouteChangeListener { change in
            guard case .cardsChanged(let added, let removed) = change else { return }
            for card in added { printError("\raulos: sound card plugged in: \(card)") }
            for card in removed { printError("\raulos: sound card gone: \(card)") }
        }
        let report = PlayReport(onTerminal: standardErrorIsTerminal && !service)
        // Network MIDI's DNS-SD advertisement, withdrawn when play ends.
        var advertiser: AvahiAdvertiser?
        defer { advertiser?.stop() }
        if isLive {
            // The ALSA sequencer is the live instrument's MIDI input, opened (and reopened) by it as needed.
            var midiInput = SequencerMIDISource.opener(
                SequencerInput.Options(
                    autoconnect: !noAutoconnect, requests: connections.map(ConnectionRequest.init(parsing:))))
            // With network MIDI (the options, or the rig's network-midi: under them) the sequencer is welcome, not
            // required: the sessions play without it. The sockets are bound now, so a port in use is said before
            // anything is built.
            var networkInputs: [LiveMIDISourceOpener] = []
            // The name peers show for the sessions (a Mac's Audio MIDI Setup, a DNS-SD browser): the rig set's,
            // unless it has none.
            let sessionName = set.name == "default" ? "Aulos" : set.name
            let midi2 = networkMIDI.midi2Settings(over: set.servers.networkMIDI)
            if let settings = try networkMIDI.settings(over: set.servers.networkMIDI), let listen = settings.listen {
                let endpoint = try AppleMIDIEndpoint(parsing: listen)
                let sockets = try AppleMIDISockets(endpoint)
                var network = AppleMIDIHost.Options().applying(settings)
                network.name = sessionName
                // A peer these sockets cannot reach (an IPv6 peer from IPv4 ports) is said now, as a port in use is.
                for peer in network.invite { try sockets.checkReachable(peer) }
                printError(
                    "aulos: network MIDI "
                        + Self.describe(settings, latency: Double(network.playoutLatencyNanos) / 1e6))
                if settings.hasAuthentication && midi2 == nil {
                    printError(
                        "aulos: network-midi: the secret and users are for Network MIDI 2.0 (midi2: or "
                            + "--network-midi2), which is off; AppleMIDI sessions have no authentication")
                }
                networkInputs.append(NetworkMIDISource.opener(sockets, options: network))
                advertiser = Self.advertise(
                    type: DNSServiceName.appleMIDI, address: endpoint.address, port: sockets.port, name: network.name,
                    with: advertiser)
            }
            if let settings = midi2, let listen = settings.midi2 {
                let socket = try NetworkMIDI2Socket(parsing: listen)
                var options = NetworkMIDI2Host.Options().applying(settings)
                options.name = sessionName
                let who = settings.allowText.map { $0.joined(separator: ", ") } ?? "the local network"
                let proof = [
                    settings.secret.map { _ in "the shared secret" },
                    settings.users.isEmpty ? nil : "a user's password (\(settings.users.count) users)",
                ].compactMap { $0 }
                printError(
                    "aulos: Network MIDI 2.0 accepts sessions from \(who)"
                        + (proof.isEmpty ? "" : " that know " + proof.joined(separator: " or ")))
                networkInputs.append(NetworkMIDISource.opener(socket, options: options))
                advertiser = Self.advertise(
                    type: DNSServiceName.networkMIDI2, address: socket.address,
                    port: socket.port, name: options.name, with: advertiser)
            }
            if !networkInputs.isEmpty {
                midiInput = CompositeMIDISource.opener(optional: "ALSA sequencer", midiInput, required: networkInputs)
            }
            var live = KeyboardPlayback.Options(
                midiInput: midiInput, placement: lowestLatency ? .lowestLatency : .constantLatency,
                headroom: midiHeadroom / 1000, sendClock: sendClock)
            live.waitForDevices = service
            live.playsFile = playsFile
            live.songChannel = songChannel
            if let songChannel, set.controlChannel == songChannel {
                throw CommandError(
                    "--song-channel \(songChannel) is the rig set's control channel (it switches rigs); choose another")
            }
            // A file that cannot be read is said now, not after waiting for a device (it is read again at
            // the granted rate); a playlist's songs are read as they are loaded.
            if let file, FileContents.isFolder(file) {
                _ = try Playlist(folder: file)
            } else if playsFile {
                _ = try InputFile.load(orDemo: file, sampleRate: 48_000, reading: options.midiReading)
            }
            // Live play serves the control socket at the default path unless told a path or `none`, so `aulos
            // status` finds a plain `aulos play` too; a default that another aulos already serves is skipped.
            switch controlSocket {
            case "none": live.controlSocket = nil
            case let path?: live.controlSocket = path
            case nil:
                live.controlSocket = ControlSocket.defaultPath
                live.controlSocketIsDefault = !service
            }
            // The rig's (or set's) web:, web-password: and osc:, unless the command line says otherwise.
            let servers = set.servers
            live.osc = osc ?? servers.osc
            live.rigPath = instrument.rigFile
            live.rigTrial = .ownExecutable
            live.keepsLastKnownGood = service
            live.fallback = fallback
            live.recordFolder = recordFolder
            var panel: WebPanel?
            if let web = web ?? servers.web {
                let bridge = ControlBridge()
                live.bridge = bridge
                let hash = try Self.webPasswordHash(in: webPassword ?? servers.webPassword)
                panel = try WebPanel(web, passwordHash: hash, bridge: bridge)
                printError("aulos: web panel on http://\(panel!.host):\(panel!.port)/")
            }
            defer { panel?.stop() }
            let result = try KeyboardPlayback.run(
                options, options: live, session: session, duration: duration, observer: report.observer(live: true))
            report.finish()
            print(report.summary(of: result))
            try checkRecording(result.status)
        } else {
            let final = try FilePlayback.run(
                options, session: session, duration: duration, observer: report.observer(live: false))
            report.finish()
            print(report.summary(of: final))
            try checkRecording(final)
        }
    }

    /// A `--record` take that stopped early (a full disk) was warned of when it happened; the run still ends
    /// in an error, so a script that asked for the take knows it does not have all of it. (A take started on
    /// the control socket or the panel is answered there: the service does not fail for it.)
    func checkRecording(_ status: LiveStatus) throws {
        if record != nil, let failure = status.recording?.failure { throw CommandError(failure) }
    }
}
