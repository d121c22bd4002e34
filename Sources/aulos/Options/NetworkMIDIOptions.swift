import ArgumentParser
import AulosCore

/// Network MIDI's options, for `aulos play` and `aulos service install|unit`: where the AppleMIDI host and the
/// Network MIDI 2.0 host listen, who may open a session, the playout latency and the peers Aulos invites. Each
/// given wins over the rig's `network-midi:` (its `listen`, `midi2`, `allow`, `latency-ms`, `connect`); the allow
/// list and latency alone tune the rig's.
struct NetworkMIDIOptions: ParsableArguments {
    @Option(
        name: .customLong("network-midi"),
        help: ArgumentHelp(
            "Accept AppleMIDI (RTP-MIDI) sessions from Macs, iPads and rtpmidid on this UDP port (data on the next "
                + "port up), every interface unless an address is given (docs/network-midi.md). With a file, it "
                + "plays on the live instrument and the peers play along; no ALSA sequencer is needed.",
            valueName: "[addr:]port"))
    var listen: String?

    @Option(
        name: .customLong("network-midi-allow"),
        help: ArgumentHelp(
            "Who may open a network MIDI session: addresses and prefixes, comma-separated (192.168.1.0/24,::1; "
                + "0.0.0.0/0,::/0 for anyone). Default: the local network (private, link-local and this machine).",
            valueName: "list"))
    var allow: String?

    @Option(
        name: .customLong("network-midi-latency"), parsing: .unconditional,
        help: ArgumentHelp(
            "The playout latency added to every network MIDI event's time on its sender's clock, in ms (0-1000, "
                + "default 3): the room the network is given before an event is late.",
            valueName: "ms"))
    var latency: Double?

    @Option(
        name: .customLong("network-midi-connect"),
        help: ArgumentHelp(
            "Invite these AppleMIDI hosts (a Mac, rtpmidid, another Aulos) and keep the sessions open: numeric "
                + "addresses and their control ports, comma-separated (192.168.1.5:5004,[fe80::2]:5004). Invites "
                + "from the --network-midi ports.",
            valueName: "addr:port,..."))
    var connect: String?

    @Option(
        name: .customLong("network-midi2"),
        help: ArgumentHelp(
            "Accept Network MIDI 2.0 (UMP over UDP) sessions on this UDP port, every interface unless an address is "
                + "given (docs/network-midi.md); the allow list and the rig's secret apply. With a file, as "
                + "--network-midi.",
            valueName: "[addr:]port"))
    var midi2: String?

    /// Whether any of the options is given.
    var isGiven: Bool { listen != nil || allow != nil || latency != nil || connect != nil || midi2 != nil }

    func validate() throws {
        if let listen {
            do { _ = try NetworkMIDISettings.parseListen(listen) } catch {
                throw ValidationError("--network-midi '\(listen)': \(error.reason)")
            }
        }
        if let midi2 {
            do { _ = try NetworkMIDISettings.parseListen(midi2) } catch {
                throw ValidationError("--network-midi2 '\(midi2)': \(error.reason)")
            }
        }
        if let allow {
            do { _ = try allowList(allow) } catch {
                throw ValidationError("--network-midi-allow: \(error.reason)")
            }
        }
        if let latency, !NetworkMIDISettings.latencyRange.contains(latency) {
            throw ValidationError("--network-midi-latency must be between 0 and 1000 ms, not \(latency.clean)")
        }
        if let connect {
            do { _ = try Self.peers(connect) } catch {
                throw ValidationError("--network-midi-connect: \(error.reason)")
            }
        }
    }

    private static func peers(_ text: String) throws(NetworkMIDISettingsError) -> [String] {
        // An empty entry (`a,,b`, a comma at the end) is a mistake, not nothing.
        try NetworkMIDISettings.parseConnect(
            text.split(separator: ",", omittingEmptySubsequences: false).map(String.init))
    }

    /// `--network-midi-connect` read (valid after `validate`); nil when not given.
    var connectPeers: [String]? { connect.flatMap { try? Self.peers($0) } }

    private func allowList(_ text: String) throws(NetworkMIDISettingsError) -> [NetworkPrefix] {
        let entries = text.split(separator: ",").map(String.init)
        guard !entries.isEmpty else {
            throw NetworkMIDISettingsError("give addresses or prefixes (192.168.1.0/24,::1), or leave it out")
        }
        return try NetworkMIDISettings.parseAllow(entries)
    }

    /// `--network-midi-allow` read (valid after `validate`); nil when not given.
    var allowPrefixes: [NetworkPrefix]? { allow.flatMap { try? allowList($0) } }

    /// The settings to play with: the rig's `network-midi:` with these options over it; nil when neither turns
    /// network MIDI on. The options are valid (`validate`).
    func settings(over rig: NetworkMIDISettings?) throws -> NetworkMIDISettings? {
        guard let listen = listen ?? rig?.listen ?? nil else {
            if connect != nil {
                // A usage error: the peers are invited from the local ports, which only --network-midi gives here.
                throw ValidationError(
                    "--network-midi-connect needs --network-midi [ADDR:]PORT (or a rig's network-midi:): the local "
                        + "ports Aulos invites from")
            }
            if isGiven && (midi2 ?? rig?.midi2) == nil {
                throw CommandError(
                    "--network-midi-allow and --network-midi-latency go with --network-midi [ADDR:]PORT (or a rig's "
                        + "network-midi:)")
            }
            return nil
        }
        var settings = rig ?? NetworkMIDISettings(listen: listen)
        settings.listen = listen
        if allow != nil { settings.allow = allowPrefixes }
        if let latency { settings.latencyMilliseconds = latency }
        if let peers = connectPeers { settings.connect = peers }
        if let midi2 { settings.midi2 = midi2 }
        return settings
    }

    /// The settings Network MIDI 2.0 plays with (`midi2` is where it listens: `--network-midi2`, else the rig's
    /// `midi2:`), sharing the allow list and the secret with AppleMIDI; nil when neither turns it on.
    func midi2Settings(over rig: NetworkMIDISettings?) -> NetworkMIDISettings? {
        guard let midi2 = midi2 ?? rig?.midi2 else { return nil }
        var settings = rig ?? NetworkMIDISettings(listen: nil)
        settings.midi2 = midi2
        if allow != nil { settings.allow = allowPrefixes }
        return settings
    }
}
