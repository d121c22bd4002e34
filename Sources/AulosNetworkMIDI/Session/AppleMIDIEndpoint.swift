import AulosCore
import Glibc

/// Where an AppleMIDI host listens, as `--network-midi [ADDR:]PORT` says it: an optional numeric address (IPv4,
/// or IPv6 in brackets) and the control port; the data port is the next one up (Apple's convention). No
/// address: every interface, IPv6 and IPv4 both where the system has IPv6.
///
/// Threads: a value.
public struct AppleMIDIEndpoint: Equatable, Sendable, CustomStringConvertible {
    /// The numeric address to bind, without brackets; nil: every interface.
    public var address: String?
    /// The control port; the data port is `port + 1`.
    public var port: UInt16

    public init(address: String? = nil, port: UInt16) {
        self.address = address
        self.port = port
    }

    /// Reads `[ADDR:]PORT`: `5004`, `0.0.0.0:5004`, `192.168.1.20:5004`, `[::1]:5004`, `[::]:5004`. The port
    /// is 1…65534 (its data port must exist too); 0 asks the system for a free pair (tests). The address must be
    /// numeric: names are not looked up.
    public init(parsing spec: String) throws(AppleMIDIEndpointError) {
        do {
            let (address, port) = try NetworkMIDISettings.parseListen(spec)
            self.init(address: address, port: port)
        } catch {
            throw AppleMIDIEndpointError(spec, error.reason)
        }
    }

    /// Reads a peer to invite, `ADDR:PORT`: `192.168.1.5:5004`, `[::1]:5004`; the address is
    /// required and numeric (names are not looked up), the port 1…65534 (the data port is the next).
    public init(parsingPeer spec: String) throws(AppleMIDIEndpointError) {
        do {
            let (address, port) = try NetworkMIDISettings.parsePeer(spec)
            self.init(address: address, port: port)
        } catch {
            throw AppleMIDIEndpointError(option: "--network-midi-connect", spec, error.reason)
        }
    }

    /// AF_INET or AF_INET6 for a numeric address; nil for anything else.
    static func family(of address: String) -> Int32? {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 { return AF_INET }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, address, &v6) == 1 { return AF_INET6 }
        return nil
    }

    public var description: String {
        guard let address else { return "port \(port)" }
        return address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
    }
}

/// A `--network-midi` value that does not say where to listen, as one line.
///
/// Threads: a value.
public struct AppleMIDIEndpointError: ReportableError, Equatable {
    public let message: String

    init(option: String = "--network-midi", _ spec: String, _ reason: String) {
        message = "\(option) '\(spec)': \(reason)"
    }
}

/// Why the host could not listen (a port in use, an address not on this machine), as one line.
///
/// Threads: a value.
public struct AppleMIDIHostError: ReportableError, Equatable {
    public let message: String

    public init(_ message: String) { self.message = message }
}

/// The two bound UDP sockets of an AppleMIDI host: the control port and the data port next to it, both
/// non-blocking. Bound as soon as made, so a port in use is said before anything plays; closed when released.
/// With no address, one dual-stack IPv6 socket per port takes IPv4 too (IPv4 alone where there is no IPv6).
///
/// Threads: made on the control thread; the host's network thread reads and writes the descriptors.
public final class AppleMIDISockets: @unchecked Sendable {
    public let control: Int32
    public let data: Int32
    /// The control port actually bound (the one asked for, or the system's choice for 0).
    public let port: UInt16
    /// What was bound, for the `listening` notice: `0.0.0.0:5004`, `[::]:5004`, `192.168.1.20:5004`.
    public let description: String
    /// AF_INET or AF_INET6, and whether an IPv6 socket takes IPv4 too (bound to every interface).
    let family: Int32
    let isDualStack: Bool

    public init(_ endpoint: AppleMIDIEndpoint) throws(AppleMIDIHostError) {
        let wanted = endpoint.address.flatMap(AppleMIDIEndpoint.family(of:))
        var lastError = AppleMIDIHostError("cannot listen for network MIDI")
        // Port 0: the system picks a control port; its data port may be taken, so a few pairs are tried.
        for _ in 0..<(endpoint.port == 0 ? 16 : 1) {
            do {
                let control = try Self.bind(endpoint.address, family: wanted, port: endpoint.port)
                let bound = Self.boundPort(control.fd)
                do {
                    let data = try Self.bind(endpoint.address, family: control.family, port: bound &+ 1)
                    self.control = control.fd
                    self.data = data.fd
                    port = bound
                    self.family = control.family
                    isDualStack = control.family == AF_INET6 && (endpoint.address == nil || endpoint.address == "::")
                    let shown = endpoint.address ?? (control.family == AF_INET6 ? "::" : "0.0.0.0")
                    description =
                        shown.contains(":")
                        ? "[\(shown)]:\(bound) (data \(bound + 1))" : "\(shown):\(bound) (data \(bound + 1))"
                    return
                } catch {
                    close(control.fd)
                    lastError = AppleMIDIHostError(
                        "cannot listen for network MIDI on data port \(bound &+ 1): \(error.message)")
                }
            } catch {
                lastError = AppleMIDIHostError("cannot listen for network MIDI on \(endpoint): \(error.message)")
            }
        }
        throw lastError
    }

    deinit {
        close(control)
        close(data)
    }

    /// Where to send to a peer Aulos invites (`endpoint`: its numeric address and control port; the data port is
    /// the next) from these sockets: an IPv4 peer from an IPv6 socket bound to every interface as an IPv4-mapped
    /// address. Throws, as one line, when these sockets cannot reach it (an IPv6 peer from IPv4 sockets, an IPv4
    /// peer from sockets bound to one IPv6 address).
    func destinations(_ endpoint: AppleMIDIEndpoint) throws(AppleMIDIHostError)
        -> (control: PeerAddress, data: PeerAddress)
    {
        guard let address = endpoint.address, let peerFamily = AppleMIDIEndpoint.family(of: address),
            endpoint.port > 0, endpoint.port < UInt16.max
        else {
            throw AppleMIDIHostError("cannot invite '\(endpoint)': give a numeric address and port (192.168.1.5:5004)")
        }
        let reachable = peerFamily == family || (peerFamily == AF_INET && isDualStack)
        guard reachable,
            let control = PeerAddress(address: address, port: endpoint.port, socketFamily: family),
            let data = PeerAddress(address: address, port: endpoint.port + 1, socketFamily: family)
        else {
            let needed =
                peerFamily == AF_INET6
                ? "an IPv6 peer needs network MIDI on an IPv6 address or every interface (--network-midi PORT)"
                : "an IPv4 peer needs network MIDI on an IPv4 address or every interface (--network-midi PORT)"
            throw AppleMIDIHostError("cannot invite \(endpoint) from network MIDI on \(description): \(needed)")
        }
        return (control, data)
    }

    /// Throws, as one line, when these sockets cannot reach a peer to invite at `endpoint` (`destinations`).
    public func checkReachable(_ endpoint: AppleMIDIEndpoint) throws(AppleMIDIHostError) {
        _ = try destinations(endpoint)
    }

    static func bind(_ address: String?, family: Int32?, port: UInt16) throws(AppleMIDIHostError)
        -> (fd: Int32, family: Int32)
    {
        let families = family.map { [$0] } ?? [AF_INET6, AF_INET]
        var failure = "no socket"
        for family in families {
            let fd = socket(
                family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                failure = String(cString: strerror(errno))
                continue
            }
            var result: Int32
            if family == AF_INET6 {
                var off: Int32 = 0
                if address == nil {
                    setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, socklen_t(MemoryLayout<Int32>.size))
                }
                var socketAddress = sockaddr_in6()
                socketAddress.sin6_family = sa_family_t(AF_INET6)
                socketAddress.sin6_port = port.bigEndian
                if let address { inet_pton(AF_INET6, address, &socketAddress.sin6_addr) }
                result = withUnsafePointer(to: &socketAddress) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                    }
                }
            } else {
                var socketAddress = sockaddr_in()
                socketAddress.sin_family = sa_family_t(AF_INET)
                socketAddress.sin_port = port.bigEndian
                if let address { inet_pton(AF_INET, address, &socketAddress.sin_addr) }
                result = withUnsafePointer(to: &socketAddress) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
            if result == 0 { return (fd, family) }
            // bind's errno, read before close() can change it.
            let code = errno
            failure = String(cString: strerror(code))
            close(fd)
            // A port in use is in use on IPv4 too: say so rather than try the other family.
            if code == EADDRINUSE || code == EACCES { break }
        }
        throw AppleMIDIHostError(failure)
    }

    static func boundPort(_ fd: Int32) -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return PeerAddress(storage, length: length).port
    }
}

/// A peer's UDP address as `recvfrom` gave it, kept whole (no allocation) to answer on, with its numeric form
/// for names, notices and the allow list (an IPv4 peer on a dual-stack socket is shown as IPv4).
///
/// Threads: a value.
struct PeerAddress: @unchecked Sendable, Equatable {
    var storage = sockaddr_storage()
    var length: socklen_t = 0

    init() {}

    init(_ storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    /// The address of `address` (numeric) and `port` as a socket of `socketFamily` sends to it: an IPv4 address
    /// from an IPv6 socket as IPv4-mapped (::ffff:a.b.c.d). Nil for an address that is not one, or an IPv6
    /// address from an IPv4 socket.
    init?(address: String, port: UInt16, socketFamily: Int32) {
        var four = in_addr()
        var six = in6_addr()
        if inet_pton(AF_INET, address, &four) == 1 {
            if socketFamily == AF_INET {
                var socketAddress = sockaddr_in()
                socketAddress.sin_family = sa_family_t(AF_INET)
                socketAddress.sin_port = port.bigEndian
                socketAddress.sin_addr = four
                withUnsafeMutableBytes(of: &storage) { target in
                    withUnsafeBytes(of: &socketAddress) { target.copyMemory(from: $0) }
                }
                length = socklen_t(MemoryLayout<sockaddr_in>.size)
                return
            }
            guard inet_pton(AF_INET6, "::ffff:" + address, &six) == 1 else { return nil }
        } else if inet_pton(AF_INET6, address, &six) != 1 || socketFamily != AF_INET6 {
            return nil
        }
        var socketAddress = sockaddr_in6()
        socketAddress.sin6_family = sa_family_t(AF_INET6)
        socketAddress.sin6_port = port.bigEndian
        socketAddress.sin6_addr = six
        withUnsafeMutableBytes(of: &storage) { target in
            withUnsafeBytes(of: &socketAddress) { target.copyMemory(from: $0) }
        }
        length = socklen_t(MemoryLayout<sockaddr_in6>.size)
    }

    static func == (lhs: PeerAddress, rhs: PeerAddress) -> Bool {
        lhs.length == rhs.length && lhs.host == rhs.host && lhs.port == rhs.port
    }

    var port: UInt16 {
        var copy = storage
        return withUnsafePointer(to: &copy) { raw in
            if storage.ss_family == sa_family_t(AF_INET6) {
                raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            } else {
                raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            }
        }
    }

    /// The numeric address: `192.168.1.5`, `::1`; an IPv4-mapped IPv6 address as plain IPv4.
    var host: String {
        var copy = storage
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        withUnsafePointer(to: &copy) { raw in
            if storage.ss_family == sa_family_t(AF_INET6) {
                raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { six in
                    var address = six.pointee.sin6_addr
                    let bytes = withUnsafeBytes(of: &address) { Array($0) }
                    if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                        var four = in_addr()
                        withUnsafeMutableBytes(of: &four) { $0.copyBytes(from: bytes[12..<16]) }
                        inet_ntop(AF_INET, &four, &text, socklen_t(text.count))
                    } else {
                        inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
                    }
                }
            } else {
                raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { four in
                    var address = four.pointee.sin_addr
                    inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
                }
            }
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
