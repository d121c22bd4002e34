/// One Network MIDI 2.0 (UDP) datagram: the signature "MIDI" and the command packets after it, each a 4-byte
/// header (command code, payload length in 32-bit words, two command-specific bytes) and its payload. The framing
/// only: what each command's fields mean is `NetworkMIDI2Command`.
///
/// Layout source: "Network MIDI 2.0 (UDP) Transport Specification" (M2-124-UM) §5 (signature, §5.4 command packet
/// header), as remembered; no copy of the specification is on this machine. Checked against two open
/// implementations read through the code search (never copied): Zephyr's `subsys/net/lib/midi2` and ALSA's
/// `amidi2net` (alsa-utils), which agree on this framing; all integers are big-endian.
///
/// Threads: a value.
public struct NetworkMIDI2Datagram: Equatable, Sendable {
    /// "MIDI" in ASCII, the first four bytes of every datagram.
    public static let signature: UInt32 = 0x4D49_4449

    public var packets: [NetworkMIDI2CommandPacket]

    public init(_ packets: [NetworkMIDI2CommandPacket]) { self.packets = packets }

    /// The commands built into packets.
    public init(_ commands: [NetworkMIDI2Command]) { packets = commands.map(\.packet) }

    /// Whether `bytes` starts with the signature (so a datagram of another protocol is passed over quietly).
    public static func hasSignature(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 4 && bytes[0] == 0x4D && bytes[1] == 0x49 && bytes[2] == 0x44 && bytes[3] == 0x49
    }

    /// Reads a datagram: the signature, then command packets to the end. A header whose payload runs past the end,
    /// bytes left over that are not a whole header, a datagram over `NetworkMIDILimits.maximumPacketBytes` or
    /// with more than `maximumCommandPackets` packets throw.
    public init(parsing bytes: [UInt8]) throws(NetworkMIDIError) {
        guard bytes.count <= NetworkMIDILimits.maximumPacketBytes else {
            throw .tooLarge(what: "datagram", limit: NetworkMIDILimits.maximumPacketBytes)
        }
        var reader = WireReader(bytes)
        let signature = try reader.uint32("signature")
        guard signature == Self.signature else {
            throw .invalid(field: "signature", offset: 0, reason: "not \"MIDI\" (a Network MIDI 2.0 datagram)")
        }
        packets = []
        while !reader.isAtEnd {
            guard packets.count < NetworkMIDILimits.maximumCommandPackets else {
                throw .tooLarge(what: "command packets in a datagram", limit: NetworkMIDILimits.maximumCommandPackets)
            }
            let start = reader.offset
            let code = try reader.byte("command code")
            let words = Int(try reader.byte("payload length"))
            let specific = try reader.uint16("command-specific data")
            guard words * 4 <= reader.remaining else {
                throw .truncated(field: "payload of command 0x\(String(code, radix: 16))", offset: start + 4)
            }
            var payload: [UInt32] = []
            payload.reserveCapacity(words)
            for _ in 0..<words { payload.append(try reader.uint32("payload word")) }
            packets.append(NetworkMIDI2CommandPacket(code: code, specific: specific, payload: payload))
        }
    }

    /// The datagram's bytes.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4 + packets.reduce(0) { $0 + 4 + $1.payload.count * 4 })
        out.appendBigEndian(Self.signature)
        for packet in packets { packet.append(to: &out) }
        return out
    }
}

/// One command packet as framed: its code (kept raw, so an unknown command can be answered NAK with its header),
/// the two command-specific bytes and the payload words. Threads: a value.
public struct NetworkMIDI2CommandPacket: Equatable, Sendable {
    public var code: UInt8
    public var specific: UInt16
    public var payload: [UInt32]

    /// At most 255 payload words: the length is one byte. A builder passing more is a programming error.
    public init(code: UInt8, specific: UInt16 = 0, payload: [UInt32] = []) {
        precondition(payload.count <= 255, "a command packet's payload is at most 255 words")
        (self.code, self.specific, self.payload) = (code, specific, payload)
    }

    /// The header as one word (code, length, specific bytes): what a NAK quotes.
    public var header: UInt32 { UInt32(code) << 24 | UInt32(payload.count) << 16 | UInt32(specific) }

    func append(to out: inout [UInt8]) {
        out.appendBigEndian(header)
        for word in payload { out.appendBigEndian(word) }
    }
}
