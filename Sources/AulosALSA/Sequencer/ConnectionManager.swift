/// A connection asked for with `--connect`: a name (matched case-insensitively against the client name,
/// the port name, or "client:port-name") or an address.
public enum ConnectionRequest: Equatable, Sendable, CustomStringConvertible {
    case name(String)
    case address(SequencerAddress)

    /// "24:0" is an address; anything else a name.
    public init(parsing text: String) {
        self = SequencerAddress(parsing: text).map(ConnectionRequest.address) ?? .name(text)
    }

    public var description: String {
        switch self {
        case .name(let name): "'\(name)'"
        case .address(let address): address.description
        }
    }
}

/// Decides which sequencer ports Aulos listens to, as ports come and go.
///
/// At start it takes every readable MIDI port of a kernel client (USB keyboards, sound-card MIDI ports,
/// virtual raw MIDI), skipping its own client, the System client and "Midi Through" (which only echoes
/// other programs, and would double their notes). `--connect` requests add ports by name or address;
/// an address is resolved to the port's names the first time it is seen and remembered by name from then
/// on, because a re-plugged keyboard usually comes back under a different client number.
/// When a connected port disappears, its address is reported so the notes it held can be released.
///
/// Pure logic, no sequencer calls: the caller subscribes and reports failures.
///
/// Threads: owned by the MIDI thread (or the control thread before it starts).
public struct ConnectionManager: Sendable {
    public enum Action: Equatable, Sendable {
        /// Subscribe to this port.
        case connect(SequencerPort)
        /// This connected port is gone: release what it held.
        case disconnected(SequencerPort)
    }

    public let ownClient: Int
    public let autoconnect: Bool
    public private(set) var requests: [ConnectionRequest]
    /// Ports asked for by address, remembered by (client name, port name) once seen.
    public private(set) var rememberedNames: [(client: String, port: String)] = []
    /// Address requests already resolved to names: from then on the address means nothing.
    private var resolvedAddresses: Set<SequencerAddress> = []
    /// What is connected now.
    public private(set) var connected: [SequencerAddress: SequencerPort] = [:]

    public init(ownClient: Int, autoconnect: Bool = true, requests: [ConnectionRequest] = []) {
        self.ownClient = ownClient
        self.autoconnect = autoconnect
        self.requests = requests
    }

    /// Whether Aulos should listen to `port`.
    public mutating func wants(_ port: SequencerPort) -> Bool {
        guard port.isReadable, port.address.client != ownClient, port.address.client != SequencerAddress.systemClient
        else { return false }
        if isRequested(port) { return true }
        return autoconnect && port.isKernelClient && port.isMIDI
            && !port.clientName.lowercased().hasPrefix("midi through")
    }

    mutating func isRequested(_ port: SequencerPort) -> Bool {
        for request in requests {
            switch request {
            case .address(let address) where address == port.address && !resolvedAddresses.contains(address):
                resolvedAddresses.insert(address)
                rememberedNames.append((port.clientName, port.portName))
                return true
            case .name(let name):
                let wanted = name.lowercased()
                let candidates = [port.clientName, port.portName, "\(port.clientName):\(port.portName)"].map {
                    $0.lowercased()
                }
                if candidates.contains(where: { $0.contains(wanted) }) { return true }
            default:
                continue
            }
        }
        return rememberedNames.contains { $0.client == port.clientName && $0.port == port.portName }
    }

    /// The ports present at start: what to connect.
    public mutating func start(with ports: [SequencerPort]) -> [Action] {
        ports.sorted { $0.address < $1.address }.flatMap { portAppeared($0) }
    }

    /// A port appeared (or changed its name or capabilities).
    public mutating func portAppeared(_ port: SequencerPort) -> [Action] {
        if let existing = connected[port.address] {
            if existing.clientName == port.clientName && existing.portName == port.portName { return [] }
            // Same address, another port: the old one is gone.
            connected[port.address] = nil
            return [.disconnected(existing)] + portAppeared(port)
        }
        return wants(port) ? [.connect(port)] : []
    }

    /// The subscription to `port` worked (after a `.connect`).
    public mutating func didConnect(_ port: SequencerPort) { connected[port.address] = port }

    /// A port went away (PORT_EXIT), or our subscription to it was removed (PORT_UNSUBSCRIBED).
    public mutating func portDisappeared(_ address: SequencerAddress) -> [Action] {
        guard let port = connected.removeValue(forKey: address) else { return [] }
        return [.disconnected(port)]
    }

    /// A whole client went away (CLIENT_EXIT): every port of it.
    public mutating func clientDisappeared(_ client: Int) -> [Action] {
        connected.keys.filter { $0.client == client }.sorted().flatMap { portDisappeared($0) }
    }
}
