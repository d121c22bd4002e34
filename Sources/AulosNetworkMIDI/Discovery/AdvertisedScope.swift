import CAvahi
import Glibc

/// Where a service is advertised, from the address its socket listens on: a host bound to one address is
/// reachable only through the interface that has it, and only over that address's IP version, so its records go
/// there alone. Advertised everywhere, a Pi with Ethernet and Wi-Fi would tell its Wi-Fi peers to connect to an
/// address nothing listens on.
///
/// - no address or `::` (every interface, both versions): every interface, both versions;
/// - `0.0.0.0` (every IPv4 interface): every interface, IPv4 only;
/// - one address: the interface that has it, that address's version; none when no interface has it now.
///
/// Threads: a value; `init(listeningOn:)` reads the interfaces (getifaddrs) on the calling thread.
public struct AdvertisedScope: Equatable, Sendable {
    public enum Version: Equatable, Sendable {
        case both, ipv4, ipv6
    }

    /// The interface's index; nil: every interface.
    public var interfaceIndex: Int32?
    public var version: Version
    /// The interface's name, for what the log says (`eth0`); nil for every interface.
    public var interfaceName: String?

    public static let everywhere = AdvertisedScope(interfaceIndex: nil, version: .both, interfaceName: nil)

    init(interfaceIndex: Int32?, version: Version, interfaceName: String?) {
        self.interfaceIndex = interfaceIndex
        self.version = version
        self.interfaceName = interfaceName
    }

    /// The scope of a socket bound to `address` (numeric, as `--network-midi` takes it; nil: every address);
    /// nil when no interface has that address.
    public init?(listeningOn address: String?) {
        guard let address, address != "::" else {
            self = .everywhere
            return
        }
        if address == "0.0.0.0" {
            self.init(interfaceIndex: nil, version: .ipv4, interfaceName: nil)
            return
        }
        // The address bytes as they sit in sockaddr_in's sin_addr (offset 4) and sockaddr_in6's sin6_addr (8).
        var wanted = [UInt8](repeating: 0, count: 16)
        let family: Int32
        if inet_pton(AF_INET, address, &wanted) == 1 {
            family = AF_INET
        } else if inet_pton(AF_INET6, address, &wanted) == 1 {
            family = AF_INET6
        } else {
            return nil
        }
        let (offset, length) = family == AF_INET ? (4, 4) : (8, 16)
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var entry = list
        while let current = entry {
            entry = current.pointee.ifa_next
            guard let socketAddress = current.pointee.ifa_addr, Int32(socketAddress.pointee.sa_family) == family,
                let name = current.pointee.ifa_name
            else { continue }
            let bytes = Array(UnsafeRawBufferPointer(start: UnsafeRawPointer(socketAddress) + offset, count: length))
            let index = if_nametoindex(name)
            guard bytes == Array(wanted.prefix(length)), index > 0 else { continue }
            self.init(
                interfaceIndex: Int32(index), version: family == AF_INET ? .ipv4 : .ipv6,
                interfaceName: String(cString: name))
            return
        }
        return nil
    }

    /// How the log says it: ` on eth0`, ` over IPv4`, ` over IPv6`, or nothing for everywhere.
    public var described: String {
        if let interfaceName { return " on \(interfaceName)" }
        switch version {
        case .both: return ""
        case .ipv4: return " over IPv4"
        case .ipv6: return " over IPv6"
        }
    }

    /// As Avahi takes them.
    var avahiInterface: AvahiIfIndex { interfaceIndex.map { AvahiIfIndex($0) } ?? AvahiIfIndex(AVAHI_IF_UNSPEC) }
    var avahiProtocol: AvahiProtocol {
        switch version {
        case .both: AvahiProtocol(AVAHI_PROTO_UNSPEC)
        case .ipv4: AvahiProtocol(AVAHI_PROTO_INET)
        case .ipv6: AvahiProtocol(AVAHI_PROTO_INET6)
        }
    }
}
