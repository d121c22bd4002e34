/// A Network MIDI 2.0 command, its fields read from a `NetworkMIDI2CommandPacket`, and built back into one.
///
/// Layout sources. The command codes and each command's fields are from "Network MIDI 2.0 (UDP) Transport
/// Specification" (M2-124-UM) §5.5 (codes) and §6.4–6.16 (fields), as remembered — no copy of the specification
/// is on this machine — and checked against Zephyr's `subsys/net/lib/midi2` and ALSA's `amidi2net`, read through
/// the code search (their code is not copied). Where they differ it is said at the case. Strings (names, product
/// instance ids, user names, NAK and BYE texts) are UTF-8 padded with zero bytes to whole words; amidi2net writes
/// a terminating NUL, Zephyr does not, so trailing zeros are dropped on reading and only padding is written.
///
/// Threads: a value.
public enum NetworkMIDI2Command: Equatable, Sendable {
    /// 0x01: a client asks for a session. Specific bytes: the endpoint name's length in words, the client's
    /// capabilities (bit 0: can answer authentication, bit 1: user authentication). Payload: the UMP endpoint name,
    /// then the product instance id.
    case invitation(name: String, productInstanceId: String, capabilities: UInt8)
    /// 0x02: the answer to "authentication required": SHA-256 of the host's 16-byte nonce followed by the shared
    /// secret's UTF-8 bytes (the input order both peers use). Payload: the 32-byte digest.
    case invitationWithAuthentication(digest: [UInt8])
    /// 0x03: as 0x02 with SHA-256(nonce + user name + password) and the user name after the digest.
    case invitationWithUserAuthentication(digest: [UInt8], user: String)
    /// 0x10: the host accepts. Specific bytes: the name's length in words, reserved. Payload: name, product id.
    case invitationAccepted(name: String, productInstanceId: String)
    /// 0x11: the host will decide later (a person must accept). Same layout as 0x10.
    case invitationPending(name: String, productInstanceId: String)
    /// 0x12: the host wants the shared secret. Specific bytes: the name's length in words, the authentication
    /// state (0: first request, 1: the digest was wrong). Payload: the 16-byte nonce, name, product id.
    case authenticationRequired(nonce: [UInt8], state: UInt8, name: String, productInstanceId: String)
    /// 0x13: as 0x12 for user and password (state 2 in amidi2net: user not found).
    case userAuthenticationRequired(nonce: [UInt8], state: UInt8, name: String, productInstanceId: String)
    /// 0x20 / 0x21: a liveness check and its answer, echoing the 32-bit id. Payload: the id.
    case ping(id: UInt32)
    case pingReply(id: UInt32)
    /// 0x80: resend UMP data from `sequence` on (the specific bytes); payload word: how many commands (high 16
    /// bits; 0: all the sender still has, as amidi2net reads it), low 16 bits reserved.
    case retransmitRequest(sequence: UInt16, count: UInt16)
    /// 0x81: what was asked cannot be resent. Specific bytes: the reason (0 unknown, 1 no longer buffered),
    /// reserved. Payload word: the first sequence number not available (high 16 bits).
    case retransmitError(reason: UInt8, sequence: UInt16)
    /// 0x82 / 0x83: start the UMP sequence numbers over, and its answer. No payload.
    case sessionReset
    case sessionResetReply
    /// 0x8F: a command was not understood. Specific bytes: the reason (0 other, 1 not supported, 2 not expected,
    /// 3 malformed, 0x20 bad ping reply), reserved. Payload: the refused command's header word, then a text.
    /// (amidi2net's packet.h uses 0x7F for NAK; Zephyr, pymidi2 and the code listed in the specification's
    /// table as remembered use 0x8F, which is followed here.)
    case nak(reason: UInt8, header: UInt32, text: String)
    /// 0xF0 / 0xF1: the session ends, and its answer. Specific bytes of BYE: the reason, reserved; payload: a
    /// text. BYE reply: nothing.
    case bye(reason: UInt8, text: String)
    case byeReply
    /// 0xFF: UMP words with this command's 16-bit sequence number (the specific bytes).
    case umpData(sequence: UInt16, words: [UInt32])
    /// Any other code: kept whole, to be answered with NAK (not supported).
    case unknown(NetworkMIDI2CommandPacket)

    /// The command codes (M2-124-UM §5.5). Threads: constants.
    public enum Code {
        public static let invitation: UInt8 = 0x01
        public static let invitationWithAuthentication: UInt8 = 0x02
        public static let invitationWithUserAuthentication: UInt8 = 0x03
        public static let invitationAccepted: UInt8 = 0x10
        public static let invitationPending: UInt8 = 0x11
        public static let authenticationRequired: UInt8 = 0x12
        public static let userAuthenticationRequired: UInt8 = 0x13
        public static let ping: UInt8 = 0x20
        public static let pingReply: UInt8 = 0x21
        public static let retransmitRequest: UInt8 = 0x80
        public static let retransmitError: UInt8 = 0x81
        public static let sessionReset: UInt8 = 0x82
        public static let sessionResetReply: UInt8 = 0x83
        public static let nak: UInt8 = 0x8F
        public static let bye: UInt8 = 0xF0
        public static let byeReply: UInt8 = 0xF1
        public static let umpData: UInt8 = 0xFF
    }

    /// Reasons a NAK gives (M2-124-UM, the NAK reasons table, as amidi2net and Zephyr have them).
    public enum NAKReason {
        public static let notSupported: UInt8 = 0x01
        public static let notExpected: UInt8 = 0x02
        public static let malformed: UInt8 = 0x03
    }

    /// Reasons a BYE gives (M2-124-UM, the BYE reasons table, as amidi2net and pymidi2 have them).
    public enum ByeReason {
        public static let userTerminated: UInt8 = 0x01
        public static let timeout: UInt8 = 0x04
        public static let sessionNotEstablished: UInt8 = 0x05
        public static let tooManySessions: UInt8 = 0x40
        public static let notAccepted: UInt8 = 0x42
        public static let authenticationFailed: UInt8 = 0x43
        public static let noMatchingAuthentication: UInt8 = 0x45
    }

    /// The nonce's length in bytes (the authentication-required reply).
    public static let nonceBytes = 16
    /// A SHA-256 digest's length in bytes.
    public static let digestBytes = 32

    /// Reads `packet`'s fields. A payload too short for its fixed fields, or a name length past the payload,
    /// throws (to be answered NAK, malformed); an unknown code is `.unknown`, not an error.
    public init(_ packet: NetworkMIDI2CommandPacket) throws(NetworkMIDIError) {
        let payload = packet.payload
        let high = UInt8(packet.specific >> 8)
        let low = UInt8(packet.specific & 0xFF)
        func need(_ words: Int, _ field: String) throws(NetworkMIDIError) {
            guard payload.count >= words else { throw .truncated(field: field, offset: 4 + payload.count * 4) }
        }
        func names(from start: Int) throws(NetworkMIDIError) -> (String, String) {
            let nameWords = Int(high)
            try need(start + nameWords, "endpoint name")
            let name = Self.text(payload[start..<start + nameWords])
            return (name, Self.text(payload[(start + nameWords)...]))
        }
        switch packet.code {
        case Code.invitation:
            let (name, product) = try names(from: 0)
            self = .invitation(name: name, productInstanceId: product, capabilities: low)
        case Code.invitationWithAuthentication:
            try need(8, "authentication digest")
            self = .invitationWithAuthentication(digest: Self.bytes(payload[0..<8]))
        case Code.invitationWithUserAuthentication:
            try need(8, "authentication digest")
            self = .invitationWithUserAuthentication(digest: Self.bytes(payload[0..<8]), user: Self.text(payload[8...]))
        case Code.invitationAccepted, Code.invitationPending:
            let (name, product) = try names(from: 0)
            self =
                packet.code == Code.invitationAccepted
                ? .invitationAccepted(name: name, productInstanceId: product)
                : .invitationPending(name: name, productInstanceId: product)
        case Code.authenticationRequired, Code.userAuthenticationRequired:
            try need(4, "nonce")
            let nonce = Self.bytes(payload[0..<4])
            let (name, product) = try names(from: 4)
            self =
                packet.code == Code.authenticationRequired
                ? .authenticationRequired(nonce: nonce, state: low, name: name, productInstanceId: product)
                : .userAuthenticationRequired(nonce: nonce, state: low, name: name, productInstanceId: product)
        case Code.ping, Code.pingReply:
            try need(1, "ping id")
            self = packet.code == Code.ping ? .ping(id: payload[0]) : .pingReply(id: payload[0])
        case Code.retransmitRequest:
            try need(1, "number of UMP commands")
            self = .retransmitRequest(sequence: packet.specific, count: UInt16(payload[0] >> 16))
        case Code.retransmitError:
            try need(1, "sequence number")
            self = .retransmitError(reason: high, sequence: UInt16(payload[0] >> 16))
        case Code.sessionReset: self = .sessionReset
        case Code.sessionResetReply: self = .sessionResetReply
        case Code.nak:
            try need(1, "NAK'd command header")
            self = .nak(reason: high, header: payload[0], text: Self.text(payload[1...]))
        case Code.bye: self = .bye(reason: high, text: Self.text(payload[...]))
        case Code.byeReply: self = .byeReply
        case Code.umpData: self = .umpData(sequence: packet.specific, words: payload)
        default: self = .unknown(packet)
        }
    }

    /// The command as a packet (the builder). Strings longer than `NetworkMIDILimits.maximumNameBytes` are cut
    /// there, at a character boundary; a nonce or digest is padded or cut to its length.
    public var packet: NetworkMIDI2CommandPacket {
        func named(_ code: UInt8, _ prefix: [UInt32], _ name: String, _ product: String, _ low: UInt8)
            -> NetworkMIDI2CommandPacket
        {
            let nameWords = Self.words(name)
            return NetworkMIDI2CommandPacket(
                code: code, specific: UInt16(nameWords.count) << 8 | UInt16(low),
                payload: prefix + nameWords + Self.words(product))
        }
        switch self {
        case .invitation(let name, let product, let capabilities):
            return named(Code.invitation, [], name, product, capabilities)
        case .invitationWithAuthentication(let digest):
            return NetworkMIDI2CommandPacket(
                code: Code.invitationWithAuthentication, payload: Self.words(digest, count: Self.digestBytes))
        case .invitationWithUserAuthentication(let digest, let user):
            return NetworkMIDI2CommandPacket(
                code: Code.invitationWithUserAuthentication,
                payload: Self.words(digest, count: Self.digestBytes) + Self.words(user))
        case .invitationAccepted(let name, let product):
            return named(Code.invitationAccepted, [], name, product, 0)
        case .invitationPending(let name, let product):
            return named(Code.invitationPending, [], name, product, 0)
        case .authenticationRequired(let nonce, let state, let name, let product):
            return named(
                Code.authenticationRequired, Self.words(nonce, count: Self.nonceBytes), name, product, state)
        case .userAuthenticationRequired(let nonce, let state, let name, let product):
            return named(
                Code.userAuthenticationRequired, Self.words(nonce, count: Self.nonceBytes), name, product, state)
        case .ping(let id): return NetworkMIDI2CommandPacket(code: Code.ping, payload: [id])
        case .pingReply(let id): return NetworkMIDI2CommandPacket(code: Code.pingReply, payload: [id])
        case .retransmitRequest(let sequence, let count):
            return NetworkMIDI2CommandPacket(
                code: Code.retransmitRequest, specific: sequence, payload: [UInt32(count) << 16])
        case .retransmitError(let reason, let sequence):
            return NetworkMIDI2CommandPacket(
                code: Code.retransmitError, specific: UInt16(reason) << 8, payload: [UInt32(sequence) << 16])
        case .sessionReset: return NetworkMIDI2CommandPacket(code: Code.sessionReset)
        case .sessionResetReply: return NetworkMIDI2CommandPacket(code: Code.sessionResetReply)
        case .nak(let reason, let header, let text):
            return NetworkMIDI2CommandPacket(
                code: Code.nak, specific: UInt16(reason) << 8, payload: [header] + Self.words(text))
        case .bye(let reason, let text):
            return NetworkMIDI2CommandPacket(code: Code.bye, specific: UInt16(reason) << 8, payload: Self.words(text))
        case .byeReply: return NetworkMIDI2CommandPacket(code: Code.byeReply)
        case .umpData(let sequence, let words):
            return NetworkMIDI2CommandPacket(code: Code.umpData, specific: sequence, payload: Array(words.prefix(255)))
        case .unknown(let packet): return packet
        }
    }

    // MARK: - Strings and bytes in words

    /// Words' bytes, big-endian.
    static func bytes(_ words: ArraySlice<UInt32>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(words.count * 4)
        for word in words { out.appendBigEndian(word) }
        return out
    }

    /// A zero-padded string: up to the first NUL, cut to `maximumNameBytes`, invalid UTF-8 as U+FFFD.
    static func text(_ words: ArraySlice<UInt32>) -> String {
        let bytes = bytes(words.prefix(NetworkMIDILimits.maximumNameBytes / 4 + 1))
        return String(decoding: cut(bytes.prefix { $0 != 0 }), as: UTF8.self)
    }

    /// `text`'s UTF-8 bytes (to its first NUL, cut to `maximumNameBytes`) padded with zeros to whole words.
    static func words(_ text: String) -> [UInt32] {
        let bytes = Array(cut(Array(text.utf8.prefix { $0 != 0 })[...]))
        return words(bytes, count: (bytes.count + 3) / 4 * 4)
    }

    /// `bytes` padded with zeros (or cut) to `count` bytes, as words.
    static func words(_ bytes: [UInt8], count: Int) -> [UInt32] {
        var padded = Array(bytes.prefix(count))
        padded += [UInt8](repeating: 0, count: count - padded.count)
        var words: [UInt32] = []
        words.reserveCapacity(count / 4)
        for at in stride(from: 0, to: count, by: 4) {
            words.append(padded[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) })
        }
        return words
    }

    /// At most `maximumNameBytes`, cut before a character that would not fit whole.
    private static func cut(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard bytes.count > NetworkMIDILimits.maximumNameBytes else { return bytes }
        var text = bytes.prefix(NetworkMIDILimits.maximumNameBytes)
        while let last = text.last, last & 0xC0 == 0x80 { text = text.dropLast() }
        if let last = text.last, last >= 0xC0 { text = text.dropLast() }
        return text
    }
}
