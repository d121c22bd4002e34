import Glibc

/// Where a server listens, as people write it: `PORT`, or `ADDRESS:PORT` with a dotted IPv4 address or
/// `localhost` — the web panel's and OSC's `--web`/`--osc` options and a rig's `web:`/`osc:` keys. One
/// reading, so the command line, a rig file and the service installer agree on what is loopback.
///
/// Threads: a value; any thread.
public struct ListenAddress: Equatable, Sendable, CustomStringConvertible {
    /// A dotted IPv4 address; `127.0.0.1` when only a port was given (or `localhost`).
    public let host: String
    /// 0 asks the system for a free port.
    public let port: UInt16

    /// Nil when `spec` is not `PORT` or `ADDRESS:PORT` with an IPv4 address.
    public init?(_ spec: String) {
        let parts = spec.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let last = parts.last, last.allSatisfy(\.isASCII), let port = UInt16(last) else {
            return nil
        }
        let host = parts.count == 2 ? (parts[0] == "localhost" ? "127.0.0.1" : String(parts[0])) : "127.0.0.1"
        var probe = in_addr()
        guard host.count <= 15, inet_pton(AF_INET, host, &probe) == 1 else { return nil }
        (self.host, self.port) = (host, port)
    }

    /// This machine only: 127.0.0.0/8.
    public var isLoopback: Bool { host.hasPrefix("127.") }

    public var description: String { "\(host):\(port)" }
}
