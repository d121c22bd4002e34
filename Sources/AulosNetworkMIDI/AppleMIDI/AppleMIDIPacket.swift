/// The session packets of Apple's MIDI Network Driver Protocol (AppleMIDI), which sets up and keeps an RTP-MIDI
/// session: every one starts with the signature 0xFFFF and a two-letter ASCII command, all integers big-endian.
/// Layouts as the research brief §1.2–1.5 gives them (Apple's document, Wireshark's packet-applemidi.c, the
/// Arduino AppleMIDI library); anything on a data port that does not start with 0xFFFF is RTP.
///
/// Threads: a value.
public enum AppleMIDIPacket: Equatable, Sendable {
    /// IN: the initiator asks to open a session (sent on the control port, then on the data port).
    case invitation(AppleMIDIExchange)
    /// OK: the invitation is accepted.
    case accept(AppleMIDIExchange)
    /// NO: the invitation is refused.
    case reject(AppleMIDIExchange)
    /// BY: the session ends. Macs send token 0 here, so match a BY on its SSRC.
    case bye(AppleMIDIExchange)
    /// CK: one step of the three-way clock synchronisation.
    case clockSync(AppleMIDIClockSync)
    /// RS: receiver feedback, the highest RTP sequence number received in order, so the sender can move its
    /// journal's checkpoint forward.
    case receiverFeedback(ssrc: UInt32, sequenceNumber: UInt16)
    /// RL: a bitrate receive limit (a 2010 extension, rare). Read so it is not an error; a session ignores it.
    case bitrateLimit(ssrc: UInt32, bitsPerSecond: UInt32)

    /// The protocol version IN/OK/NO/BY carry; the only one there is.
    public static let protocolVersion: UInt32 = 2

    /// True when `bytes` is a session command (starts with 0xFFFF) rather than an RTP packet: the test every
    /// data-port datagram goes through first.
    public static func isSessionPacket(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 2 && bytes[0] == 0xFF && bytes[1] == 0xFF
    }

    /// Reads one session packet. Never traps: any malformed, truncated or unknown input throws with one line
    /// saying which field is wrong. A name longer than `NetworkMIDILimits.maximumNameBytes` is cut there, and
    /// invalid UTF-8 in it becomes U+FFFD (a name is only ever displayed).
    public init(parsing bytes: [UInt8]) throws(NetworkMIDIError) {
        guard bytes.count <= NetworkMIDILimits.maximumPacketBytes else {
            throw .tooLarge(
                what: "AppleMIDI packet of \(bytes.count) bytes", limit: NetworkMIDILimits.maximumPacketBytes)
        }
        var reader = WireReader(bytes)
        guard try reader.uint16("signature") == 0xFFFF else {
            throw .invalid(field: "signature", offset: 0, reason: "not 0xFFFF, so not an AppleMIDI session packet")
        }
        let command = try reader.uint16("command")
        switch command {
        case Command.invitation, Command.accept, Command.reject, Command.bye:
            let exchange = try AppleMIDIExchange(reading: &reader)
            switch command {
            case Command.invitation: self = .invitation(exchange)
            case Command.accept: self = .accept(exchange)
            case Command.reject: self = .reject(exchange)
            default: self = .bye(exchange)
            }
        case Command.clockSync:
            self = .clockSync(try AppleMIDIClockSync(reading: &reader))
        case Command.receiverFeedback:
            let ssrc = try reader.uint32("RS SSRC")
            // Wireshark reads a 32-bit field and keeps its top half; the Arduino library writes uint16 + padding.
            // Both put the RTP sequence number in bytes 8–9, which is all that is read.
            let sequence = try reader.uint16("RS sequence number")
            try reader.skip("RS padding", count: 2)
            self = .receiverFeedback(ssrc: ssrc, sequenceNumber: sequence)
        case Command.bitrateLimit:
            self = .bitrateLimit(ssrc: try reader.uint32("RL SSRC"), bitsPerSecond: try reader.uint32("RL limit"))
        default:
            let letters = String(decoding: bytes[2..<4], as: UTF8.self)
            throw .invalid(field: "command", offset: 2, reason: "unknown command \(letters.debugDescription)")
        }
    }

    /// The packet's bytes as they go on the wire.
    public var bytes: [UInt8] {
        var out: [UInt8] = [0xFF, 0xFF]
        switch self {
        case .invitation(let exchange): exchange.append(command: Command.invitation, to: &out)
        case .accept(let exchange): exchange.append(command: Command.accept, to: &out)
        case .reject(let exchange): exchange.append(command: Command.reject, to: &out)
        case .bye(let exchange): exchange.append(command: Command.bye, to: &out)
        case .clockSync(let sync): sync.append(to: &out)
        case .receiverFeedback(let ssrc, let sequence):
            out.appendBigEndian(Command.receiverFeedback)
            out.appendBigEndian(ssrc)
            out.appendBigEndian(sequence)
            out.appendBigEndian(UInt16(0))
        case .bitrateLimit(let ssrc, let limit):
            out.appendBigEndian(Command.bitrateLimit)
            out.appendBigEndian(ssrc)
            out.appendBigEndian(limit)
        }
        return out
    }

    /// The two ASCII letters of each command as a big-endian 16-bit value. Threads: constants.
    enum Command {
        static let invitation: UInt16 = 0x494E  // "IN"
        static let accept: UInt16 = 0x4F4B  // "OK"
        static let reject: UInt16 = 0x4E4F  // "NO"
        static let bye: UInt16 = 0x4259  // "BY"
        static let clockSync: UInt16 = 0x434B  // "CK"
        static let receiverFeedback: UInt16 = 0x5253  // "RS"
        static let bitrateLimit: UInt16 = 0x524C  // "RL"
    }
}

/// The body IN, OK, NO and BY share: protocol version, initiator token, the sender's SSRC and an optional name.
///
/// Threads: a value.
public struct AppleMIDIExchange: Equatable, Sendable {
    public var protocolVersion: UInt32
    /// Chosen at random by the initiator; OK/NO/BY echo it (a Mac's BY carries 0).
    public var initiatorToken: UInt32
    /// The sender's synchronisation source: the same on both ports and in its RTP headers.
    public var ssrc: UInt32
    /// The session name (UTF-8, NUL-terminated on the wire); nil when the packet has none, as BY usually does.
    public var name: String?

    public init(
        initiatorToken: UInt32, ssrc: UInt32, name: String? = nil,
        protocolVersion: UInt32 = AppleMIDIPacket.protocolVersion
    ) {
        self.protocolVersion = protocolVersion
        self.initiatorToken = initiatorToken
        self.ssrc = ssrc
        self.name = name
    }

    init(reading reader: inout WireReader) throws(NetworkMIDIError) {
        protocolVersion = try reader.uint32("protocol version")
        // Version 2 is the only one there is, but a peer with another is still told apart by its token and SSRC:
        // the session layer decides whether to refuse it, so the value is kept rather than rejected here.
        initiatorToken = try reader.uint32("initiator token")
        ssrc = try reader.uint32("SSRC")
        guard !reader.isAtEnd else {
            name = nil
            return
        }
        // The name runs to the first NUL, or to the end of the datagram (tolerated: some senders omit the NUL).
        let rest = reader.bytes[reader.offset..<reader.end]
        var text = rest.prefix { $0 != 0 }
        if text.count > NetworkMIDILimits.maximumNameBytes {
            text = text.prefix(NetworkMIDILimits.maximumNameBytes)
            // Cut at a character boundary: drop UTF-8 continuation bytes and a lead byte left without them.
            while let last = text.last, last & 0xC0 == 0x80 { text = text.dropLast() }
            if let last = text.last, last >= 0xC0 { text = text.dropLast() }
        }
        name = String(decoding: text, as: UTF8.self)
    }

    func append(command: UInt16, to out: inout [UInt8]) {
        out.appendBigEndian(command)
        out.appendBigEndian(protocolVersion)
        out.appendBigEndian(initiatorToken)
        out.appendBigEndian(ssrc)
        if let name {
            // A NUL inside the name would end it early on the peer's side: write what the peer will read, and
            // no more than a reader keeps, cut before a character that would not fit whole.
            var text = Array(name.utf8.prefix { $0 != 0 })
            if text.count > NetworkMIDILimits.maximumNameBytes {
                var cut = NetworkMIDILimits.maximumNameBytes
                while cut > 0 && text[cut] & 0xC0 == 0x80 { cut -= 1 }
                text.removeSubrange(cut...)
            }
            out.append(contentsOf: text)
            out.append(0)
        }
    }
}

/// CK: the initiator sends count 0 with its time in `timestamp1`; the responder answers count 1 with its own
/// time in `timestamp2`; the initiator sends count 2 with its time of arrival in `timestamp3`. Times are
/// 100 µs ticks on each side's own clock; unused fields are 0 and all three are always sent (36 bytes).
///
/// Threads: a value.
public struct AppleMIDIClockSync: Equatable, Sendable {
    public var ssrc: UInt32
    /// 0, 1 or 2: which step of the exchange this is.
    public var count: UInt8
    public var timestamp1: UInt64
    public var timestamp2: UInt64
    public var timestamp3: UInt64

    public init(ssrc: UInt32, count: UInt8, timestamp1: UInt64, timestamp2: UInt64 = 0, timestamp3: UInt64 = 0) {
        self.ssrc = ssrc
        self.count = count
        self.timestamp1 = timestamp1
        self.timestamp2 = timestamp2
        self.timestamp3 = timestamp3
    }

    init(reading reader: inout WireReader) throws(NetworkMIDIError) {
        ssrc = try reader.uint32("CK SSRC")
        let countOffset = reader.offset
        count = try reader.byte("CK count")
        guard count <= 2 else {
            throw .invalid(field: "CK count", offset: countOffset, reason: "\(count), where only 0, 1 and 2 exist")
        }
        try reader.skip("CK padding", count: 3)
        timestamp1 = try reader.uint64("CK timestamp 1")
        timestamp2 = try reader.uint64("CK timestamp 2")
        timestamp3 = try reader.uint64("CK timestamp 3")
    }

    func append(to out: inout [UInt8]) {
        out.appendBigEndian(AppleMIDIPacket.Command.clockSync)
        out.appendBigEndian(ssrc)
        out.append(contentsOf: [count, 0, 0, 0])
        out.appendBigEndian(timestamp1)
        out.appendBigEndian(timestamp2)
        out.appendBigEndian(timestamp3)
    }
}
