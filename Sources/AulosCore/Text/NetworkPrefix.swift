import Glibc

/// A numeric IP address or a CIDR prefix, as an allow list writes it: `192.168.1.5`, `192.168.1.0/24`, `::1`,
/// `fe80::/10`. One reading for `--network-midi-allow`, a rig's `network-midi: allow:` and the AppleMIDI host,
/// so the command line, a rig file and the host agree on who may open a session. Names are not looked up.
///
/// Threads: a value; any thread.
public struct NetworkPrefix: Equatable, Sendable, CustomStringConvertible {
    /// True for IPv6; an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) is read as IPv4.
    public let isIPv6: Bool
    /// The address's bits, left-aligned in 128 (IPv4 in the top 32), the bits past `length` zero.
    let high: UInt64
    let low: UInt64
    /// How many leading bits must match: 0…32 for IPv4, 0…128 for IPv6.
    public let length: Int

    /// Nil when `text` is not a numeric IPv4 or IPv6 address with an optional `/LENGTH` in range.
    public init?(_ text: String) {
        let pieces = text.split(separator: "/", omittingEmptySubsequences: false)
        guard pieces.count <= 2, let address = Self.bits(of: String(pieces[0])) else { return nil }
        let maximum = address.isIPv6 ? 128 : 32
        var length = maximum
        if pieces.count == 2 {
            guard pieces[1].allSatisfy(\.isASCII), let given = Int(pieces[1]), (0...maximum).contains(given) else {
                return nil
            }
            length = given
        }
        let (high, low) = Self.masked(address.high, address.low, to: length)
        (isIPv6, self.high, self.low, self.length) = (address.isIPv6, high, low, length)
    }

    /// Whether the numeric address `host` (as a socket shows a peer: `192.168.1.5`, `::1`) is in the prefix.
    public func contains(_ host: String) -> Bool {
        guard let address = Self.bits(of: host), address.isIPv6 == isIPv6 else { return false }
        let (high, low) = Self.masked(address.high, address.low, to: length)
        return high == self.high && low == self.low
    }

    /// The local network, whose peers may open a session when no allow list is given: this machine
    /// (127.0.0.0/8, ::1), the private ranges (RFC 1918: 10/8, 172.16/12, 192.168/16; IPv6's unique local
    /// fc00::/7) and link-local addresses (169.254/16, fe80::/10).
    public static let localNetwork: [NetworkPrefix] = [
        "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "::1/128", "fc00::/7",
        "fe80::/10",
    ].map { NetworkPrefix($0)! }

    /// Whether `host` may open a session under `allow`: the list when given, else the local network.
    public static func allows(_ host: String, under allow: [NetworkPrefix]?) -> Bool {
        (allow ?? localNetwork).contains { $0.contains(host) }
    }

    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        if isIPv6 {
            var address = in6_addr()
            withUnsafeMutableBytes(of: &address) { raw in
                for index in 0..<8 { raw[index] = UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64(index))) }
                for index in 0..<8 { raw[8 + index] = UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64(index))) }
            }
            inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
        } else {
            var address = in_addr(s_addr: UInt32(truncatingIfNeeded: high >> 32).bigEndian)
            inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
        }
        let shown = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return length == (isIPv6 ? 128 : 32) ? shown : "\(shown)/\(length)"
    }

    /// A numeric address's bits, left-aligned in 128; IPv4-mapped IPv6 as IPv4.
    private static func bits(of text: String) -> (isIPv6: Bool, high: UInt64, low: UInt64)? {
        guard text.count <= Int(INET6_ADDRSTRLEN), text.allSatisfy(\.isASCII) else { return nil }
        var four = in_addr()
        if inet_pton(AF_INET, text, &four) == 1 {
            return (false, UInt64(UInt32(bigEndian: four.s_addr)) << 32, 0)
        }
        var six = in6_addr()
        guard inet_pton(AF_INET6, text, &six) == 1 else { return nil }
        let (high, low) = withUnsafeBytes(of: &six) { raw in
            (
                raw[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) },
                raw[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            )
        }
        if high == 0 && low >> 32 == 0xFFFF { return (false, (low & 0xFFFF_FFFF) << 32, 0) }
        return (true, high, low)
    }

    private static func masked(_ high: UInt64, _ low: UInt64, to length: Int) -> (UInt64, UInt64) {
        let highMask: UInt64 = length >= 64 ? .max : length == 0 ? 0 : ~(UInt64.max >> UInt64(length))
        let lowMask: UInt64 = length >= 128 ? .max : length <= 64 ? 0 : ~(UInt64.max >> UInt64(length - 64))
        return (high & highMask, low & lowMask)
    }
}
