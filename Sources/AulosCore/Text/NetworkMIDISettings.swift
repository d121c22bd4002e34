/// Network MIDI as a rig or set file's `network-midi:` key and `aulos play`'s `--network-midi`,
/// `--network-midi-allow`, `--network-midi-latency` and `--network-midi-connect` say it: where the AppleMIDI host
/// listens, who may open a session, the playout latency, and the peers Aulos invites. One reading, so the command
/// line, a rig file and the service installer agree.
///
/// Threads: a value; control side.
public struct NetworkMIDISettings: Equatable, Sendable {
    /// `[ADDR:]PORT`, as `--network-midi` takes it (checked by `parseListen`); nil: no AppleMIDI host (a rig that
    /// turns on Network MIDI 2.0 alone, `midi2:` without `listen:`).
    public var listen: String?
    /// Who may open a session; nil: the local network (`NetworkPrefix.localNetwork`).
    public var allow: [NetworkPrefix]?
    /// The playout latency in ms; nil: the host's default (3 ms).
    public var latencyMilliseconds: Double?
    /// The peers Aulos invites (it is the initiator towards them), each `ADDR:PORT` as given (checked by
    /// `parsePeer`); empty: Aulos only answers invitations.
    public var connect: [String]
    /// Network MIDI 2.0's shared secret: with it, a Network MIDI 2.0 client must authenticate (AppleMIDI sessions
    /// have no authentication).
    public var secret: String?
    /// Network MIDI 2.0's user accounts, name → password (`users:`): with them, a client that can authenticate as a
    /// user must (a user name and SHA-256 of the host's nonce, the name and the password). Empty: none.
    public var users: [String: String] = [:]
    /// `[ADDR:]PORT` of a Network MIDI 2.0 (UMP over UDP) host beside the AppleMIDI one (`midi2:`,
    /// `--network-midi2`); nil: none.
    public var midi2: String?

    public init(
        listen: String?, allow: [NetworkPrefix]? = nil, latencyMilliseconds: Double? = nil, secret: String? = nil,
        connect: [String] = []
    ) {
        (self.listen, self.allow, self.latencyMilliseconds, self.secret) = (listen, allow, latencyMilliseconds, secret)
        self.connect = connect
    }

    /// Whether Network MIDI 2.0 clients must authenticate (a secret or users).
    public var hasAuthentication: Bool { secret != nil || !users.isEmpty }

    /// The playout latency's range, in ms.
    public static let latencyRange: ClosedRange<Double> = 0...1000

    /// The most user accounts, and the longest name and password in UTF-8 bytes: an invitation carries the name in
    /// its payload, whose length is counted in a byte of 32-bit words.
    public static let maximumUsers = 64
    public static let maximumUserBytes = 128

    /// A user name or password read: 1…`maximumUserBytes` UTF-8 bytes, no control characters. Throws the reason,
    /// without the value (a password must not reach a log).
    public static func checkCredential(_ text: String, _ what: String) throws(NetworkMIDISettingsError) {
        guard !text.isEmpty, text.utf8.count <= maximumUserBytes else {
            throw NetworkMIDISettingsError("a \(what) is 1 to \(maximumUserBytes) bytes")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw NetworkMIDISettingsError("a \(what) has no control characters")
        }
    }

    /// `[ADDR:]PORT` read: `5004`, `0.0.0.0:5004`, `192.168.1.20:5004`, `[::1]:5004`. The port is 0…65534 (its data
    /// port, the next one up, must exist too; 0 asks the system); the address must be numeric (IPv6 in brackets).
    /// Throws the reason, without the value.
    public static func parseListen(_ spec: String) throws(NetworkMIDISettingsError) -> (address: String?, port: UInt16)
    {
        var host: String?
        var portText = Substring(spec)
        if spec.hasPrefix("[") {
            guard let close = spec.firstIndex(of: "]"), spec[spec.index(after: close)...].hasPrefix(":") else {
                throw NetworkMIDISettingsError("an IPv6 address goes in brackets before the port: [::1]:5004")
            }
            host = String(spec[spec.index(after: spec.startIndex)..<close])
            portText = spec[spec.index(close, offsetBy: 2)...]
        } else if let colon = spec.lastIndex(of: ":") {
            guard spec.firstIndex(of: ":") == colon else {
                throw NetworkMIDISettingsError("an IPv6 address goes in brackets: [::1]:5004")
            }
            host = String(spec[..<colon])
            portText = spec[spec.index(after: colon)...]
        }
        guard portText.allSatisfy(\.isASCII), let port = UInt16(portText), port <= 65_534 else {
            throw NetworkMIDISettingsError("the port must be a number from 1 to 65534 (the data port is the next)")
        }
        if let host {
            guard let prefix = NetworkPrefix(host), prefix.length == (prefix.isIPv6 ? 128 : 32), !host.contains("/")
            else {
                throw NetworkMIDISettingsError("'\(host.clipped(40))' is not a numeric IPv4 or IPv6 address")
            }
        }
        return (host, port)
    }

    /// A peer to invite, `ADDR:PORT`, read: `192.168.1.5:5004`, `[::1]:5004`. The address is required, numeric (names
    /// are not looked up) and a peer's (not 0.0.0.0 or ::); the port is 1…65534 (the data port is the next). Throws
    /// the reason, without the value.
    public static func parsePeer(_ spec: String) throws(NetworkMIDISettingsError) -> (address: String, port: UInt16) {
        let (address, port) = try parseListen(spec)
        guard let address else {
            throw NetworkMIDISettingsError("give the peer's numeric address and port: 192.168.1.5:5004, [fe80::2]:5004")
        }
        guard port > 0 else {
            throw NetworkMIDISettingsError("the port must be a number from 1 to 65534 (the data port is the next)")
        }
        guard let prefix = NetworkPrefix(address), prefix != NetworkPrefix("0.0.0.0"), prefix != NetworkPrefix("::")
        else {
            throw NetworkMIDISettingsError("'\(address)' is every interface, not a peer's address")
        }
        return (address, port)
    }

    /// The peers of a `--network-midi-connect` list (`ADDR:PORT,ADDR:PORT`) or a rig's `connect:` entries, read;
    /// throws naming the first that is not one.
    public static func parseConnect(_ entries: [String]) throws(NetworkMIDISettingsError) -> [String] {
        guard !entries.isEmpty else {
            throw NetworkMIDISettingsError("give the peers as ADDR:PORT (192.168.1.5:5004,[::1]:5004), or leave it out")
        }
        var peers: [String] = []
        for entry in entries {
            let peer = entry.trimmingSpaces
            guard !peer.isEmpty else {
                throw NetworkMIDISettingsError("an empty entry: give each peer as ADDR:PORT (192.168.1.5:5004)")
            }
            do { _ = try parsePeer(peer) } catch {
                throw NetworkMIDISettingsError("'\(peer.clipped(40))': \(error.reason)")
            }
            peers.append(peer)
        }
        return peers
    }

    /// An allow list read from its entries (`192.168.1.0/24`, `::1`); throws naming the first that is not one.
    public static func parseAllow(_ entries: [String]) throws(NetworkMIDISettingsError) -> [NetworkPrefix] {
        var prefixes: [NetworkPrefix] = []
        for entry in entries {
            guard let prefix = NetworkPrefix(entry.trimmingSpaces) else {
                throw NetworkMIDISettingsError(
                    "'\(entry.clipped(40))' is not a numeric address or prefix "
                        + "(192.168.1.0/24, 10.0.0.5, ::1, fe80::/10)")
            }
            prefixes.append(prefix)
        }
        return prefixes
    }

    /// The allow list's entries as a rig file or the command line writes them back.
    public var allowText: [String]? { allow.map { $0.map(\.description) } }
}

/// Why a network MIDI setting is not one, without the key or option it came from (the caller names that).
///
/// Threads: a value.
public struct NetworkMIDISettingsError: Error, Equatable, Sendable {
    public let reason: String

    public init(_ reason: String) { self.reason = reason }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
