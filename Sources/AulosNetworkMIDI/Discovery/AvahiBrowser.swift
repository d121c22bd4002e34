import AulosRealtime
import CAvahi
import Glibc

/// A network MIDI service found over DNS-SD: who (the instance name), what (the service type), where (address,
/// port and the interface it was seen on). Threads: a value.
public struct NetworkMIDIPeer: Equatable, Sendable, Codable {
    public var name: String
    public var type: String
    /// The host's mDNS name (`studio-mac.local`).
    public var host: String
    /// Numeric, as resolved (`192.168.1.5`, `fe80::1`).
    public var address: String
    public var port: UInt16
    public var interface: String
    /// This machine's own service (Aulos's advertisement among them).
    public var isLocal: Bool

    public init(
        name: String, type: String, host: String, address: String, port: UInt16, interface: String, isLocal: Bool
    ) {
        self.name = name
        self.type = type
        self.host = host
        self.address = address
        self.port = port
        self.interface = interface
        self.isLocal = isLocal
    }
}

/// Why browsing found nothing to say: no daemon to ask. Threads: a value.
public struct AvahiUnavailable: Error, Equatable, Sendable {
    public let reason: String
}

/// Finds the network MIDI services on the local network through avahi-daemon, for `aulos devices`: browses
/// the types for a short while, resolves what it finds, and returns them sorted.
///
/// Threads: `browse` runs Avahi's simple poll on the calling thread; the callbacks run inside it.
public enum AvahiBrowser {
    /// The most services resolved in one browse (each is a small value; a network full of them is cut here).
    public static let maximumPeers = 256

    /// The services of `types` found within `seconds` (at most; sooner once each type's browser says it has
    /// all it will get for now and every resolution is done), or why there is no daemon to ask.
    public static func browse(
        types: [String] = [DNSServiceName.appleMIDI, DNSServiceName.networkMIDI2], seconds: Double = 2
    ) -> Result<[NetworkMIDIPeer], AvahiUnavailable> {
        guard let poll = avahi_simple_poll_new() else {
            return .failure(AvahiUnavailable(reason: "Avahi's poll could not be made"))
        }
        defer { avahi_simple_poll_free(poll) }
        let search = Search()
        let context = Unmanaged.passUnretained(search).toOpaque()
        var error: Int32 = 0
        // No NO_FAIL: a daemon that is not there is the answer, at once.
        guard
            let client = avahi_client_new(
                avahi_simple_poll_get(poll), AvahiClientFlags(0), { _, _, _ in }, context, &error)
        else {
            return .failure(AvahiUnavailable(reason: AvahiAdvertiser.reason(error)))
        }
        defer { avahi_client_free(client) }
        search.client = client
        var browsers: [OpaquePointer] = []
        defer { for browser in browsers { avahi_service_browser_free(browser) } }
        for type in types where DNSServiceName.isValidType(type) {
            guard
                let browser = avahi_service_browser_new(
                    client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), type, nil,
                    AvahiLookupFlags(0), browsed, context)
            else {
                return .failure(AvahiUnavailable(reason: AvahiAdvertiser.reason(avahi_client_errno(client))))
            }
            browsers.append(browser)
        }
        let deadline = monotonicNanoseconds() / 1_000_000 + Int64(seconds * 1000)
        while search.failure == nil, !(search.complete >= browsers.count && search.resolving.isEmpty) {
            let left = deadline - monotonicNanoseconds() / 1_000_000
            guard left > 0, avahi_simple_poll_iterate(poll, Int32(min(left, 100))) >= 0 else { break }
        }
        for resolver in search.resolving { avahi_service_resolver_free(resolver) }
        if let failure = search.failure { return .failure(AvahiUnavailable(reason: failure)) }
        return .success(
            search.peers.sorted {
                ($0.name, $0.type, $0.interface, $0.address) < ($1.name, $1.type, $1.interface, $1.address)
            })
    }

    /// One browse's state. Threads: the calling thread (the simple poll's callbacks run inside `browse`).
    private final class Search {
        var client: OpaquePointer?
        var peers: [NetworkMIDIPeer] = []
        var resolving: [OpaquePointer] = []
        /// Browsers that said ALL_FOR_NOW (the cache and the first queries are answered).
        var complete = 0
        var failure: String?
        /// Resolutions started: bounded with the peers, so a flood of services is not a flood of lookups.
        var started = 0
    }

    private static let browsed: AvahiServiceBrowserCallback = {
        _, interface, proto, event, name, type, domain, _, raw in
        let search = Unmanaged<Search>.fromOpaque(raw!).takeUnretainedValue()
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let client = search.client, search.started < maximumPeers else { return }
            search.started += 1
            if let resolver = avahi_service_resolver_new(
                client, interface, proto, name, type, domain, AvahiProtocol(AVAHI_PROTO_UNSPEC),
                AvahiLookupFlags(0), resolved, raw)
            {
                search.resolving.append(resolver)
            }
        case AVAHI_BROWSER_ALL_FOR_NOW: search.complete += 1
        case AVAHI_BROWSER_FAILURE:
            search.failure = search.client.map { AvahiAdvertiser.reason(avahi_client_errno($0)) } ?? "browsing failed"
        default: break
        }
    }

    private static let resolved: AvahiServiceResolverCallback = {
        resolver, interface, _, event, name, type, _, host, address, port, _, flags, raw in
        let search = Unmanaged<Search>.fromOpaque(raw!).takeUnretainedValue()
        if let resolver, let index = search.resolving.firstIndex(of: resolver) {
            search.resolving.remove(at: index)
            defer { avahi_service_resolver_free(resolver) }
            guard event == AVAHI_RESOLVER_FOUND, let name, let type, let address else { return }
            var text = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
            avahi_address_snprint(&text, text.count, address)
            let local = flags.rawValue & (AVAHI_LOOKUP_RESULT_LOCAL.rawValue | AVAHI_LOOKUP_RESULT_OUR_OWN.rawValue)
            search.peers.append(
                NetworkMIDIPeer(
                    name: String(cString: name), type: String(cString: type),
                    host: host.map { String(cString: $0) } ?? "",
                    address: String(cString: text), port: port, interface: interfaceName(interface),
                    isLocal: local != 0))
        }
    }

    /// `eth0`, or the index when the interface has gone.
    private static func interfaceName(_ index: AvahiIfIndex) -> String {
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard index >= 0, if_indextoname(UInt32(index), &name) != nil else { return "#\(index)" }
        return String(cString: name)
    }
}
