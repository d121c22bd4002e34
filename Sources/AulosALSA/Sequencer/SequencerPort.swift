import AulosCore
import CALSA
import Glibc

/// A sequencer address, `client:port` (client numbers change when a device is re-plugged; names do not).
public struct SequencerAddress: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var client: Int
    public var port: Int

    public init(client: Int, port: Int) {
        self.client = client
        self.port = port
    }

    /// "24:0" (or "24", port 0).
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let client = Int(parts[0]), (0...255).contains(client) else { return nil }
        let port = parts.count == 2 ? Int(parts[1]) : 0
        guard let port, (0...255).contains(port) else { return nil }
        self.init(client: client, port: port)
    }

    public var description: String { "\(client):\(port)" }
    public static func < (a: Self, b: Self) -> Bool { (a.client, a.port) < (b.client, b.port) }

    /// The kernel's System client: port 0 is its timer, port 1 announces clients and ports coming and going.
    public static let systemClient = 0
}

/// One port of one sequencer client, as `aconnect -l` shows it.
///
/// Threads: a value; made on the control or MIDI thread.
public struct SequencerPort: Equatable, Sendable, CustomStringConvertible {
    public var address: SequencerAddress
    public var clientName: String
    public var portName: String
    /// Others can subscribe to read from it (a keyboard, a sequencer's output).
    public var isReadable: Bool
    /// Others can subscribe to write to it (a synth's input).
    public var isWritable: Bool
    /// Owned by a kernel driver (USB MIDI, a sound card's MIDI port, virmidi) rather than a program.
    public var isKernelClient: Bool
    /// Declares itself a MIDI device (generic MIDI, GM/GS/XG, hardware, a synth).
    public var isMIDI: Bool

    public init(
        address: SequencerAddress, clientName: String, portName: String, isReadable: Bool, isWritable: Bool,
        isKernelClient: Bool, isMIDI: Bool
    ) {
        self.address = address
        self.clientName = clientName
        self.portName = portName
        self.isReadable = isReadable
        self.isWritable = isWritable
        self.isKernelClient = isKernelClient
        self.isMIDI = isMIDI
    }

    init(_ port: AulosSeqPort) {
        var copy = port
        let clientName = withUnsafeBytes(of: &copy.client_name) {
            String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
        }
        let portName = withUnsafeBytes(of: &copy.port_name) {
            String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
        }
        let read = UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ)
        let write = UInt32(SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE)
        let midiTypes = UInt32(
            SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_MIDI_GM | SND_SEQ_PORT_TYPE_MIDI_GS
                | SND_SEQ_PORT_TYPE_MIDI_XG | SND_SEQ_PORT_TYPE_MIDI_MT32 | SND_SEQ_PORT_TYPE_MIDI_GM2
                | SND_SEQ_PORT_TYPE_HARDWARE
                | SND_SEQ_PORT_TYPE_SYNTHESIZER)
        self.init(
            address: SequencerAddress(client: Int(port.client), port: Int(port.port)), clientName: clientName,
            portName: portName, isReadable: port.capability & read == read,
            isWritable: port.capability & write == write,
            isKernelClient: port.client_type == Int32(SND_SEQ_KERNEL_CLIENT.rawValue),
            isMIDI: port.type & midiTypes != 0)
    }

    public var description: String { "\(address) \(clientName): \(portName)" }
}

extension SequencerPort {
    /// Every port of every sequencer client (for `aulos devices`), or the one-line reason there is none.
    public static func all() throws(SequencerError) -> [SequencerPort] {
        aulos_alsa_capture_errors()
        var handle: OpaquePointer?
        let opened = aulos_seq_open(&handle, "aulos devices")
        guard opened >= 0, let handle else { throw SequencerError.unavailable(opened) }
        defer { snd_seq_close(handle) }
        return list(handle)
    }

    static func list(_ handle: OpaquePointer) -> [SequencerPort] {
        var ports = [AulosSeqPort](repeating: AulosSeqPort(), count: 1024)
        let count = aulos_seq_list_ports(handle, &ports, Int32(ports.count))
        return count <= 0 ? [] : ports[0..<Int(count)].map(SequencerPort.init)
    }
}
