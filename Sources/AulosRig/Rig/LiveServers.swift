import AulosCore
import Yams

/// The servers live play starts beside the instrument, as a rig or set file names them (`web:`,
/// `web-password:`, `osc:`); `aulos play`'s `--web`, `--web-password` and `--osc` win over them. Read when
/// `aulos play` starts: a reload rebuilds the rig, not the servers.
///
/// Threads: a value; control side.
public struct LiveServers: Equatable, Sendable {
    /// The web panel's `[address:]port`.
    public var web: String?
    /// The absolute path of the file holding the panel's password hash (`aulos web-password -o FILE`).
    public var webPassword: String?
    /// OSC's `[127.0.0.1:]port`.
    public var osc: String?

    public init(web: String? = nil, webPassword: String? = nil, osc: String? = nil) {
        (self.web, self.webPassword, self.osc) = (web, webPassword, osc)
    }

    /// Whether the service's sandbox must allow IPv4 sockets (the panel's TCP, OSC's UDP).
    public var needsNetwork: Bool { web != nil || osc != nil }

    /// The keys as a rig or set file writes them.
    var yamlLines: [String] {
        [("web", web), ("web-password", webPassword), ("osc", osc)].compactMap { key, value in
            value.map { "\(key): \(Rig.quoted($0))" }
        }
    }
}

extension RigReader {
    static let serverKeys = ["web", "web-password", "osc"]

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
        return servers
    }
}
