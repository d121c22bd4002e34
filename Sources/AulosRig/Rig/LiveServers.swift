import AulosCore
import Yams

/// The servers live play starts beside the instrument, as a rig or set file names them (`web:`,
/// `web-password:`, `osc:`, `network-midi:`); `aulos play`'s `--web`, `--web-password`, `--osc` and
/// `--network-midi…` win over them. Read when `aulos play` starts: a reload rebuilds the rig, not the servers.
///
/// Threads: a value; control side.
public struct LiveServers: Equatable, Sendable {
    /// The web panel's `[address:]port`.
    public var web: String?
    /// The absolute path of the file holding the panel's password hash (`aulos web-password -o FILE`).
    public var webPassword: String?
    /// OSC's `[127.0.0.1:]port`.
    public var osc: String?
    /// Network MIDI (AppleMIDI sessions): where it listens, who may join, the playout latency.
    public var networkMIDI: NetworkMIDISettings?

    public init(
        web: String? = nil, webPassword: String? = nil, osc: String? = nil, networkMIDI: NetworkMIDISettings? = nil
    ) {
        (self.web, self.webPassword, self.osc, self.networkMIDI) = (web, webPassword, osc, networkMIDI)
    }

    /// Whether the service's sandbox must allow IPv4 sockets (the panel's TCP, OSC's and network MIDI's UDP).
    public var needsNetwork: Bool { web != nil || osc != nil || networkMIDI != nil }
    /// Whether it must allow IPv6 sockets too: network MIDI listens on both (its peers may be IPv6).
    public var needsIPv6: Bool { networkMIDI != nil }

    /// The keys as a rig or set file writes them.
    var yamlLines: [String] {
        var lines = [("web", web), ("web-password", webPassword), ("osc", osc)].compactMap { key, value in
            value.map { "\(key): \(Rig.quoted($0))" }
        }
        if let networkMIDI {
            lines.append("network-midi:")
            if let listen = networkMIDI.listen { lines.append("  listen: \(Rig.quoted(listen))") }
            if let allow = networkMIDI.allowText {
                lines.append("  allow: [\(allow.map(Rig.quoted).joined(separator: ", "))]")
            }
            if let latency = networkMIDI.latencyMilliseconds { lines.append("  latency-ms: \(latency.clean)") }
            if !networkMIDI.connect.isEmpty {
                lines.append("  connect: [\(networkMIDI.connect.map(Rig.quoted).joined(separator: ", "))]")
            }
            if let secret = networkMIDI.secret { lines.append("  secret: \(Rig.quoted(secret))") }
            if !networkMIDI.users.isEmpty {
                lines.append("  users:")
                for (name, password) in networkMIDI.users.sorted(by: { $0.key < $1.key }) {
                    lines.append("    \(Rig.quoted(name)): \(Rig.quoted(password))")
                }
            }
            if let midi2 = networkMIDI.midi2 { lines.append("  midi2: \(Rig.quoted(midi2))") }
        }
        return lines
    }
}

extension RigReader {
    static let serverKeys = ["web", "web-password", "osc", "network-midi"]

    /// The `web:`, `web-password:` and `osc:` keys among a rig's or a set's keys, each checked as
    /// `aulos play` would check its option.
    func servers(_ keys: [String: Node]) throws(RigError) -> LiveServers {
        var servers = LiveServers()
        if let node = keys["web"] {
            let spec = try string(node, "web")
            guard ListenAddress(spec) != nil else {
                throw error(node, "web", "must be PORT or ADDRESS:PORT (8080, 0.0.0.0:8080), not '\(spec.clipped(40))'")
            }
            servers.web = spec
        }
        if let node = keys["web-password"] {
            // Absolute: a rig plays from wherever aulos runs, and the service plays a copy of it.
            let path = try string(node, "web-password")
            guard path.hasPrefix("/") else {
                throw error(
                    node, "web-password",
                    "must be an absolute path (/etc/aulos/web-password, made by `aulos web-password -o FILE`)")
            }
            servers.webPassword = path
        }
        if let node = keys["osc"] {
            let spec = try string(node, "osc")
            guard let address = ListenAddress(spec), address.isLoopback else {
                throw error(node, "osc", "must be PORT or 127.0.0.1:PORT (OSC listens on this machine only)")
            }
            servers.osc = spec
        }
        if let node = keys["network-midi"] { servers.networkMIDI = try networkMIDI(node) }
        return servers
    }

    /// `network-midi: [ADDR:]PORT`, or a mapping of `listen:` (the AppleMIDI host; required unless `midi2:` is
    /// given), `allow:` (a list of addresses and
    /// prefixes, or one; empty or absent: the local network), `latency-ms:`, `secret:`, `connect:` (the peers
    /// Aulos invites, `ADDR:PORT` each: a list, or one; empty or absent: none), `users:` (Network MIDI 2.0's
    /// accounts, a mapping of name to password) and `midi2:` (a Network MIDI 2.0 host's `[ADDR:]PORT`).
    func networkMIDI(_ node: Node) throws(RigError) -> NetworkMIDISettings {
        let listenNode: Node?
        var keys: [String: Node] = [:]
        if let mapping = node.mapping {
            keys = try self.keys(
                mapping, allowed: ["listen", "allow", "latency-ms", "secret", "users", "connect", "midi2"],
                at: "network-midi.")
            // Network MIDI 2.0 alone (`midi2:`) needs no AppleMIDI host.
            guard keys["listen"] != nil || keys["midi2"] != nil else {
                throw error(
                    node, "network-midi", "needs listen: [ADDR:]PORT (5004, 0.0.0.0:5004, [::1]:5004), or midi2: alone")
            }
            listenNode = keys["listen"]
        } else {
            listenNode = node
        }
        var settings = NetworkMIDISettings(listen: nil)
        if let listenNode {
            let key = node.mapping == nil ? "network-midi" : "network-midi.listen"
            guard let listen = listenNode.scalar?.string else {
                throw error(listenNode, key, "must be [ADDR:]PORT (5004, 0.0.0.0:5004, [::1]:5004)")
            }
            do { _ = try NetworkMIDISettings.parseListen(listen) } catch {
                throw self.error(listenNode, key, "'\(listen.clipped(40))': \(error.reason)")
            }
            settings.listen = listen
        }
        if let allowNode = keys["allow"] {
            let entries = allowNode.sequence.map(Array.init) ?? [allowNode]
            var prefixes: [NetworkPrefix] = []
            for entry in entries {
                guard let text = entry.scalar?.string else {
                    throw error(entry, "network-midi.allow", "lists addresses or prefixes (192.168.1.0/24, \"::1\")")
                }
                // One entry at a time, so an error names that entry's line.
                do { prefixes += try NetworkMIDISettings.parseAllow([text]) } catch {
                    throw self.error(entry, "network-midi.allow", error.reason)
                }
            }
            // Empty, like absent, leaves the local network; 0.0.0.0/0 and ::/0 allow anyone.
            settings.allow = prefixes.isEmpty ? nil : prefixes
        }
        if let latencyNode = keys["latency-ms"] {
            settings.latencyMilliseconds = try number(
                latencyNode, "network-midi.latency-ms", in: NetworkMIDISettings.latencyRange)
        }
        if let connectNode = keys["connect"] {
            let entries = connectNode.sequence.map(Array.init) ?? [connectNode]
            for entry in entries {
                guard let text = entry.scalar?.string else {
                    throw error(entry, "network-midi.connect", "lists peers as ADDR:PORT (\"192.168.1.5:5004\")")
                }
                // One entry at a time, so an error names that entry's line.
                do { settings.connect += try NetworkMIDISettings.parseConnect([text]) } catch {
                    throw self.error(entry, "network-midi.connect", error.reason)
                }
            }
        }
        if let secretNode = keys["secret"] {
            let secret = try string(secretNode, "network-midi.secret")
            guard !secret.isEmpty else { throw error(secretNode, "network-midi.secret", "is empty") }
            settings.secret = secret
        }
        if let usersNode = keys["users"] {
            guard let mapping = usersNode.mapping else {
                throw error(
                    usersNode, "network-midi.users", "is a mapping of user name to password (alice: \"password\")")
            }
            guard mapping.count <= NetworkMIDISettings.maximumUsers else {
                throw error(usersNode, "network-midi.users", "has more than \(NetworkMIDISettings.maximumUsers) users")
            }
            for (nameNode, passwordNode) in mapping {
                // The name may be said in an error (it is the key); the password never is.
                guard let name = nameNode.scalar?.string, let password = passwordNode.scalar?.string else {
                    throw error(
                        nameNode, "network-midi.users", "is a mapping of user name to password (alice: \"password\")")
                }
                do {
                    try NetworkMIDISettings.checkCredential(name, "user name")
                    try NetworkMIDISettings.checkCredential(password, "password")
                } catch {
                    throw self.error(nameNode, "network-midi.users", error.reason)
                }
                guard settings.users[name] == nil else {
                    throw error(nameNode, "network-midi.users", "names '\(name.clipped(40))' twice")
                }
                settings.users[name] = password
            }
        }
        // What only the AppleMIDI host uses needs it.
        if settings.listen == nil,
            let (key, node) = ["connect", "latency-ms"].lazy.compactMap({ key in
                keys[key].map { (key, $0) }
            }).first
        {
            throw error(node, "network-midi.\(key)", "is AppleMIDI's: it needs listen: [ADDR:]PORT too")
        }
        if let midi2Node = keys["midi2"] {
            guard let midi2 = midi2Node.scalar?.string else {
                throw error(midi2Node, "network-midi.midi2", "must be [ADDR:]PORT (5673, [::1]:5673)")
            }
            do { _ = try NetworkMIDISettings.parseListen(midi2) } catch {
                throw self.error(midi2Node, "network-midi.midi2", "'\(midi2.clipped(40))': \(error.reason)")
            }
            settings.midi2 = midi2
        }
        return settings
    }
}
