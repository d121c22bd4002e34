/// Answers a peer's UMP stream messages (type 0xF) about the endpoint it is talking to, so a MIDI 2.0 host can
/// show Aulos by name and know it is one instrument that receives: Endpoint Discovery → Endpoint Info, Endpoint
/// Name, Product Instance Id and Stream Configuration notifications (as its filter asks); Stream Configuration
/// Request → the configuration taken; Function Block Discovery → one Function Block Info and Name. Other stream
/// messages (notifications a peer sends about itself, clips) need no answer.
///
/// Layout source: M2-104-UM §7.1 (UMP stream messages: format in bits 27–26, status in bits 25–16; the endpoint,
/// stream configuration and function block messages), as remembered; no copy of the specification is here, and
/// the bit positions were compared with Zephyr's `ump_stream_responder.c` (read through the code search).
///
/// Threads: the network thread that owns the session.
public struct UMPStreamResponder: Sendable {
    /// The endpoint's name (at most 98 bytes are sent, the specification's limit) and product instance id (42).
    public var endpointName: String
    public var productInstanceId: String
    /// The protocol the peer last asked for and was given: 0x01 MIDI 1.0, 0x02 MIDI 2.0 (both are read).
    public private(set) var protocolInUse: UInt8 = 0x02

    /// Stream message statuses (M2-104-UM §7.1).
    public enum Status {
        public static let endpointDiscovery: UInt16 = 0x000
        public static let endpointInfo: UInt16 = 0x001
        public static let endpointName: UInt16 = 0x003
        public static let productInstanceId: UInt16 = 0x004
        public static let streamConfigurationRequest: UInt16 = 0x005
        public static let streamConfigurationNotification: UInt16 = 0x006
        public static let functionBlockDiscovery: UInt16 = 0x010
        public static let functionBlockInfo: UInt16 = 0x011
        public static let functionBlockName: UInt16 = 0x012
    }

    public init(endpointName: String, productInstanceId: String) {
        self.endpointName = endpointName
        self.productInstanceId = productInstanceId
    }

    /// The UMP version Aulos speaks: 1.1.
    static let versionMajor: UInt32 = 1
    static let versionMinor: UInt32 = 1

    /// The messages that answer `message` (a 4-word stream message); none when it needs no answer.
    public mutating func answer(_ message: [UInt32]) -> [[UInt32]] {
        guard message.count == 4 else { return [] }
        let status = UInt16(message[0] >> 16 & 0x3FF)
        switch status {
        case Status.endpointDiscovery:
            let filter = message[1] & 0xFF
            var out: [[UInt32]] = []
            if filter & 0x01 != 0 { out.append(endpointInfo) }
            if filter & 0x04 != 0 { out += Self.text(endpointName, status: Status.endpointName, limit: 98) }
            if filter & 0x08 != 0 { out += Self.text(productInstanceId, status: Status.productInstanceId, limit: 42) }
            if filter & 0x10 != 0 { out.append(streamConfiguration) }
            return out
        case Status.streamConfigurationRequest:
            let asked = UInt8(message[0] >> 8 & 0xFF)
            if asked == 0x01 || asked == 0x02 { protocolInUse = asked }
            return [streamConfiguration]
        case Status.functionBlockDiscovery:
            let block = message[0] >> 8 & 0xFF
            guard block == 0 || block == 0xFF else { return [] }
            let filter = message[0] & 0xFF
            var out: [[UInt32]] = []
            if filter & 0x01 != 0 { out.append(functionBlockInfo) }
            if filter & 0x02 != 0 { out += functionBlockName }
            return out
        default: return []
        }
    }

    /// Endpoint Info Notification: UMP 1.1; word 1: static function blocks (bit 31), one block (bits 30–24),
    /// MIDI 2.0 (bit 9) and MIDI 1.0 (bit 8) protocols, no jitter-reduction timestamps (bits 1–0).
    var endpointInfo: [UInt32] {
        [Self.head(Status.endpointInfo) | Self.versionMajor << 8 | Self.versionMinor, 1 << 31 | 1 << 24 | 0x300, 0, 0]
    }

    /// Stream Configuration Notification: the protocol in bits 15–8, no jitter-reduction timestamps.
    var streamConfiguration: [UInt32] {
        [Self.head(Status.streamConfigurationNotification) | UInt32(protocolInUse) << 8, 0, 0, 0]
    }

    /// Function Block Info Notification for block 0: active (bit 15), UI hint receiver (bits 5–4 = 01), not
    /// a MIDI 1.0 port (bits 3–2 = 00), direction input (bits 1–0 = 01); word 1: first group 0, one group, no
    /// MIDI-CI, no SysEx8 streams.
    var functionBlockInfo: [UInt32] {
        [Self.head(Status.functionBlockInfo) | 1 << 15 | 0b01 << 4 | 0b01, 0x0001_0000, 0, 0]
    }

    /// Function Block Name Notification(s) for block 0: its number in bits 15–8, then 13 bytes of name a message.
    var functionBlockName: [[UInt32]] {
        let bytes = Array(endpointName.utf8.prefix(91))
        var out: [[UInt32]] = []
        var offset = 0
        repeat {
            let chunk = Array(bytes[offset..<min(bytes.count, offset + 13)]) + [UInt8](repeating: 0, count: 13)
            let format = Self.format(offset: offset, chunk: 13, total: bytes.count)
            out.append([
                Self.head(Status.functionBlockName, format: format) | UInt32(chunk[0]),
                Self.word(chunk[1...4]), Self.word(chunk[5...8]), Self.word(chunk[9...12]),
            ])
            offset += 13
        } while offset < bytes.count
        return out
    }

    /// A text notification (endpoint name, product instance id): 14 bytes a message, 2 in word 0 and 12 after.
    static func text(_ text: String, status: UInt16, limit: Int) -> [[UInt32]] {
        let bytes = Array(text.utf8.prefix(limit))
        var out: [[UInt32]] = []
        var offset = 0
        repeat {
            let chunk = Array(bytes[offset..<min(bytes.count, offset + 14)]) + [UInt8](repeating: 0, count: 14)
            let format = format(offset: offset, chunk: 14, total: bytes.count)
            out.append([
                head(status, format: format) | UInt32(chunk[0]) << 8 | UInt32(chunk[1]),
                word(chunk[2...5]), word(chunk[6...9]), word(chunk[10...13]),
            ])
            offset += 14
        } while offset < bytes.count
        return out
    }

    /// Format bits: 0 complete in one message, 1 start, 2 continue, 3 end.
    private static func format(offset: Int, chunk: Int, total: Int) -> UInt32 {
        let isLast = offset + chunk >= total
        return offset == 0 ? (isLast ? 0 : 1) : (isLast ? 3 : 2)
    }

    private static func head(_ status: UInt16, format: UInt32 = 0) -> UInt32 {
        0xF000_0000 | format << 26 | UInt32(status) << 16
    }

    private static func word(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }
}
