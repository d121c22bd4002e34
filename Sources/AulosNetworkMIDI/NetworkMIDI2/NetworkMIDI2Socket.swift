import AulosCore
import Glibc

/// The bound UDP socket of a Network MIDI 2.0 host: one port (the protocol has no separate data port),
/// non-blocking, bound as soon as made so a port in use is said before anything plays; closed when released.
/// With no address, one dual-stack IPv6 socket takes IPv4 too (IPv4 alone where there is no IPv6) — the same
/// binding `AppleMIDISockets` does, through its helper.
///
/// Threads: made on the control thread; the host's network thread reads and writes the descriptor.
public final class NetworkMIDI2Socket: @unchecked Sendable {
    public let fd: Int32
    /// The port bound (the one asked for, or the system's choice for 0): what mDNS `_midi2._udp` advertises.
    public let port: UInt16
    /// The numeric address bound; nil: every interface.
    public let address: String?
    /// What was bound, for the `listening` notice: `[::]:5673`, `192.168.1.20:5673`.
    public let description: String

    /// Binds `[ADDR:]PORT` as `--network-midi2` gives it (`NetworkMIDISettings.parseListen`'s reading).
    public convenience init(parsing spec: String) throws(AppleMIDIHostError) {
        let parsed: (address: String?, port: UInt16)
        do { parsed = try NetworkMIDISettings.parseListen(spec) } catch {
            throw AppleMIDIHostError("--network-midi2 '\(spec)': \(error.reason)")
        }
        try self.init(address: parsed.address, port: parsed.port)
    }

    public init(address: String?, port: UInt16) throws(AppleMIDIHostError) {
        let family = address.flatMap(AppleMIDIEndpoint.family(of:))
        let bound: (fd: Int32, family: Int32)
        do { bound = try AppleMIDISockets.bind(address, family: family, port: port) } catch {
            let shown = AppleMIDIEndpoint(address: address, port: port)
            throw AppleMIDIHostError("cannot listen for Network MIDI 2.0 on \(shown): \(error.message)")
        }
        fd = bound.fd
        self.address = address
        self.port = AppleMIDISockets.boundPort(bound.fd)
        let shown = address ?? (bound.family == AF_INET6 ? "::" : "0.0.0.0")
        description = shown.contains(":") ? "[\(shown)]:\(self.port)" : "\(shown):\(self.port)"
    }

    deinit { close(fd) }
}
