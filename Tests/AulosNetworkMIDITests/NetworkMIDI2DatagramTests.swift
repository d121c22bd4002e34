import Testing

@testable import AulosNetworkMIDI

/// Network MIDI 2.0 datagrams: the bytes are written out by hand from the specification's structure (signature,
/// then code · length in words · two specific bytes · payload), not made by the builder, and read and built both
/// ways.
@Suite struct NetworkMIDI2DatagramTests {
    /// Each command as the specification lays it out, and what it reads as.
    static let examples: [(String, NetworkMIDI2Command)] = [
        // Invitation: name "Key" (1 word), capabilities 0x01, product id "P1" (1 word).
        ("01 02 01 01  4b 65 79 00  50 31 00 00", .invitation(name: "Key", productInstanceId: "P1", capabilities: 1)),
        (
            "02 08 00 00" + String(repeating: "ab", count: 32),
            .invitationWithAuthentication(digest: .init(repeating: 0xAB, count: 32))
        ),
        (
            "03 09 00 00" + String(repeating: "01", count: 32) + "62 6f 62 00",
            .invitationWithUserAuthentication(digest: .init(repeating: 1, count: 32), user: "bob")
        ),
        ("10 02 01 00  41 75 6c 6f  73 00 00 00", .invitationAccepted(name: "Aulo", productInstanceId: "s")),
        ("11 00 00 00", .invitationPending(name: "", productInstanceId: "")),
        (
            "12 05 01 01" + String(repeating: "07", count: 16) + "41 00 00 00",
            .authenticationRequired(nonce: .init(repeating: 7, count: 16), state: 1, name: "A", productInstanceId: "")
        ),
        (
            "13 04 00 00" + String(repeating: "07", count: 16),
            .userAuthenticationRequired(
                nonce: .init(repeating: 7, count: 16), state: 0, name: "", productInstanceId: "")
        ),
        ("20 01 00 00  12 34 56 78", .ping(id: 0x1234_5678)),
        ("21 01 00 00  12 34 56 78", .pingReply(id: 0x1234_5678)),
        ("80 01 00 2a  00 03 00 00", .retransmitRequest(sequence: 42, count: 3)),
        ("81 01 01 00  00 2a 00 00", .retransmitError(reason: 1, sequence: 42)),
        ("82 00 00 00", .sessionReset),
        ("83 00 00 00", .sessionResetReply),
        ("8f 02 01 00  77 00 00 00  6e 6f 00 00", .nak(reason: 1, header: 0x7700_0000, text: "no")),
        ("f0 01 01 00  62 79 65 00", .bye(reason: 1, text: "bye")),
        ("f1 00 00 00", .byeReply),
        ("ff 02 ff fe  40 90 3c 00  80 00 00 00", .umpData(sequence: 0xFFFE, words: [0x4090_3C00, 0x8000_0000])),
        (
            "77 01 12 34  00 00 00 05",
            .unknown(NetworkMIDI2CommandPacket(code: 0x77, specific: 0x1234, payload: [5]))
        ),
    ]

    @Test func eachCommandReadsAndBuildsAsTheSpecificationLaysItOut() throws {
        for (text, command) in Self.examples {
            let bytes = hex("4d494449" + text)
            let datagram = try NetworkMIDI2Datagram(parsing: bytes)
            #expect(datagram.packets.count == 1)
            #expect(try NetworkMIDI2Command(datagram.packets[0]) == command, "\(text)")
            #expect(NetworkMIDI2Datagram([command]).bytes == bytes, "\(text)")
        }
    }

    @Test func severalCommandsShareADatagram() throws {
        let bytes = hex("4d494449  20 01 00 00 00 00 00 01  ff 01 00 05 20 90 3c 64  f1 00 00 00")
        let commands = try NetworkMIDI2Datagram(parsing: bytes).packets.map(NetworkMIDI2Command.init)
        #expect(commands == [.ping(id: 1), .umpData(sequence: 5, words: [0x2090_3C64]), .byeReply])
    }

    @Test func namesAreCutAndDecodedSafely() throws {
        // A name of 64 words (256 bytes of 'a') is cut to 255 bytes; invalid UTF-8 becomes U+FFFD.
        let long = NetworkMIDI2CommandPacket(
            code: 0x01, specific: 64 << 8, payload: .init(repeating: 0x6161_6161, count: 64))
        guard case .invitation(let name, _, _) = try NetworkMIDI2Command(long) else {
            Issue.record()
            return
        }
        #expect(name.utf8.count == 255)
        let bad = NetworkMIDI2CommandPacket(code: 0xF0, payload: [0xFF61_0000])
        #expect(try NetworkMIDI2Command(bad) == .bye(reason: 0, text: "\u{FFFD}a"))
    }

    /// Malformed datagrams and commands are typed errors.
    @Test func malformedInputThrows() {
        let datagrams = [
            "",  // no signature
            "4d4944",  // signature cut
            "4d494448 20000000",  // wrong signature
            "4d494449 20",  // header cut
            "4d494449 20010000",  // payload missing
            "4d494449 ff02000000000000",  // payload one word short
        ]
        for text in datagrams {
            #expect(throws: NetworkMIDIError.self, "\(text)") { try NetworkMIDI2Datagram(parsing: hex(text)) }
        }
        let commands = [
            NetworkMIDI2CommandPacket(code: 0x01, specific: 3 << 8, payload: [0, 0]),  // name longer than payload
            NetworkMIDI2CommandPacket(code: 0x02, payload: [0, 0, 0]),  // digest short
            NetworkMIDI2CommandPacket(code: 0x12, specific: 0, payload: [0, 0]),  // nonce short
            NetworkMIDI2CommandPacket(code: 0x20),  // ping without id
            NetworkMIDI2CommandPacket(code: 0x80),  // retransmit request without count
            NetworkMIDI2CommandPacket(code: 0x8F),  // NAK without header
        ]
        for packet in commands {
            #expect(throws: NetworkMIDIError.self, "\(packet)") { try NetworkMIDI2Command(packet) }
        }
    }

    @Test func limitsAreEnforced() {
        let many = hex("4d494449" + String(repeating: "f1000000", count: NetworkMIDILimits.maximumCommandPackets + 1))
        #expect(throws: NetworkMIDIError.tooLarge(what: "command packets in a datagram", limit: 1_024)) {
            try NetworkMIDI2Datagram(parsing: many)
        }
        let huge = [UInt8](repeating: 0, count: NetworkMIDILimits.maximumPacketBytes + 1)
        #expect(throws: NetworkMIDIError.self) { try NetworkMIDI2Datagram(parsing: huge) }
    }

    @Test func sha256MatchesTheStandardsVectors() {
        // FIPS 180-4 examples (NIST CSRC): "abc", the empty message, the two-block message, a million 'a'.
        #expect(
            hexString(SHA256.digest(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            hexString(SHA256.digest([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            hexString(SHA256.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            hexString(SHA256.digest([UInt8](repeating: 0x61, count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
