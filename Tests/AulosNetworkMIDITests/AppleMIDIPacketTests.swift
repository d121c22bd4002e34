import Testing

@testable import AulosNetworkMIDI

/// The AppleMIDI session packets against the bytes of the research brief §1.8 (built with pymidi) and the real
/// Mac captures pymidi ships in its tests (`pymidi/tests/packets_test.py`).
@Suite struct AppleMIDIPacketTests {
    @Test func invitationReadsAndWritesTheBriefBytes() throws {
        let bytes = hex("ffff494e 00000002 12345678 cafebabe 61756c6f732d7465737400")
        let packet = try AppleMIDIPacket(parsing: bytes)
        #expect(
            packet == .invitation(AppleMIDIExchange(initiatorToken: 0x1234_5678, ssrc: 0xCAFE_BABE, name: "aulos-test"))
        )
        #expect(packet.bytes == bytes)
    }

    @Test func acceptAndByeFromTheBrief() throws {
        let accept = hex("ffff4f4b 00000002 12345678 0badf00d 7065657200")
        #expect(
            try AppleMIDIPacket(parsing: accept)
                == .accept(AppleMIDIExchange(initiatorToken: 0x1234_5678, ssrc: 0x0BAD_F00D, name: "peer")))
        let bye = hex("ffff4259 00000002 12345678 cafebabe")
        #expect(
            try AppleMIDIPacket(parsing: bye) == .bye(AppleMIDIExchange(initiatorToken: 0x1234_5678, ssrc: 0xCAFE_BABE))
        )
        #expect(AppleMIDIPacket.bye(AppleMIDIExchange(initiatorToken: 0x1234_5678, ssrc: 0xCAFE_BABE)).bytes == bye)
        let reject = AppleMIDIPacket.reject(AppleMIDIExchange(initiatorToken: 7, ssrc: 9, name: "busy"))
        #expect(try AppleMIDIPacket(parsing: reject.bytes) == reject)
        #expect(reject.bytes[2...3] == [0x4E, 0x4F])
    }

    /// A Mac's invitation and its BY, which carries token 0 (match a BY on its SSRC).
    @Test func macCaptures() throws {
        let invitation = hex("ffff494e000000026633487347d810966d626f6f6b2d73657373696f6e00")
        #expect(
            try AppleMIDIPacket(parsing: invitation)
                == .invitation(
                    AppleMIDIExchange(initiatorToken: 1_714_636_915, ssrc: 1_205_342_358, name: "mbook-session")))
        let bye = hex("ffff4259000000020000000047d81096")
        #expect(try AppleMIDIPacket(parsing: bye) == .bye(AppleMIDIExchange(initiatorToken: 0, ssrc: 0x47D8_1096)))
    }

    @Test func clockSyncMacCaptureAndCK0() throws {
        let ck2 = hex("ffff434b47d8109602000000000000004400227e00000dfaad1e5c820000000044002288")
        let expected = AppleMIDIClockSync(
            ssrc: 0x47D8_1096, count: 2, timestamp1: 1_140_859_518, timestamp2: 15_370_297_433_218,
            timestamp3: 1_140_859_528)
        #expect(try AppleMIDIPacket(parsing: ck2) == .clockSync(expected))
        #expect(AppleMIDIPacket.clockSync(expected).bytes == ck2)
        let ck0 = hex("ffff434b cafebabe 00 000000 00000000000003e8 0000000000000000 0000000000000000")
        #expect(ck0.count == 36)
        #expect(
            AppleMIDIPacket.clockSync(AppleMIDIClockSync(ssrc: 0xCAFE_BABE, count: 0, timestamp1: 1000)).bytes == ck0)
    }

    @Test func receiverFeedbackAndBitrateLimit() throws {
        let rs = AppleMIDIPacket.receiverFeedback(ssrc: 0xCAFE_BABE, sequenceNumber: 0x1234)
        #expect(rs.bytes == hex("ffff5253 cafebabe 1234 0000"))
        #expect(try AppleMIDIPacket(parsing: rs.bytes) == rs)
        let rl = hex("ffff524c cafebabe 00010000")
        #expect(try AppleMIDIPacket(parsing: rl) == .bitrateLimit(ssrc: 0xCAFE_BABE, bitsPerSecond: 65_536))
    }

    /// The name ends at the first NUL or at the datagram's end, is cut at 255 bytes on a character boundary, and
    /// invalid UTF-8 becomes U+FFFD instead of refusing the packet.
    @Test func namesAreReadTolerantly() throws {
        let head = hex("ffff494e 00000002 00000001 00000002")
        #expect(
            try AppleMIDIPacket(parsing: head + Array("no-nul".utf8))
                == .invitation(AppleMIDIExchange(initiatorToken: 1, ssrc: 2, name: "no-nul")))
        #expect(
            try AppleMIDIPacket(parsing: head + [0x41, 0, 0x42, 0])
                == .invitation(AppleMIDIExchange(initiatorToken: 1, ssrc: 2, name: "A")))
        #expect(
            try AppleMIDIPacket(parsing: head + [0x41, 0xFF, 0x42, 0])
                == .invitation(AppleMIDIExchange(initiatorToken: 1, ssrc: 2, name: "A\u{FFFD}B")))
        let long = Array(repeating: "é", count: 200).joined()  // 400 bytes
        guard case .invitation(let exchange) = try AppleMIDIPacket(parsing: head + Array(long.utf8) + [0]) else {
            Issue.record("not an invitation")
            return
        }
        #expect(exchange.name == Array(repeating: "é", count: 127).joined())  // 254 bytes: no half character
        // Written the same way: at most 255 bytes, cut before a character that would not fit, then the NUL.
        let written = AppleMIDIPacket.invitation(AppleMIDIExchange(initiatorToken: 1, ssrc: 2, name: long)).bytes
        #expect(written.count == 16 + 254 + 1 && written.last == 0)
        #expect(try AppleMIDIPacket(parsing: written) == .invitation(exchange))
        let unicode = AppleMIDIPacket.invitation(AppleMIDIExchange(initiatorToken: 1, ssrc: 2, name: "Bühne ♪"))
        #expect(try AppleMIDIPacket(parsing: unicode.bytes) == unicode)
    }

    @Test func malformedPacketsGiveOneLineErrors() {
        let cases: [([UInt8], String)] = [
            ([], "truncated: signature at byte 0 is cut off"),
            (hex("8061"), "invalid signature at byte 0: not 0xFFFF, so not an AppleMIDI session packet"),
            (hex("ffff5858 00000002"), "invalid command at byte 2: unknown command \"XX\""),
            (hex("ffff494e 00000002 00000001"), "truncated: SSRC at byte 12 is cut off"),
            (hex("ffff434b cafebabe 03 000000"), "invalid CK count at byte 8: 3, where only 0, 1 and 2 exist"),
            (hex("ffff434b cafebabe 00 000000 00000000"), "truncated: CK timestamp 1 at byte 12 is cut off"),
            (hex("ffff5253 cafebabe 0001"), "truncated: RS padding at byte 10 is cut off"),
        ]
        for (bytes, message) in cases {
            #expect(throws: NetworkMIDIError.self) { try AppleMIDIPacket(parsing: bytes) }
            do {
                _ = try AppleMIDIPacket(parsing: bytes)
            } catch {
                #expect(error.description == message)
                #expect(!error.description.contains("\n"))
            }
        }
        #expect(throws: NetworkMIDIError.tooLarge(what: "AppleMIDI packet of 65537 bytes", limit: 65_536)) {
            try AppleMIDIPacket(parsing: [0xFF, 0xFF] + [UInt8](repeating: 0, count: 65_535))
        }
        #expect(AppleMIDIPacket.isSessionPacket(hex("ffff494e")) && !AppleMIDIPacket.isSessionPacket(hex("8061")))
    }

    /// Every prefix of every valid packet reads or fails with an error; none traps.
    @Test func everyTruncationIsAnErrorOrAPacket() {
        let packets = [
            hex("ffff494e000000026633487347d810966d626f6f6b2d73657373696f6e00"),
            hex("ffff434b47d8109602000000000000004400227e00000dfaad1e5c820000000044002288"),
            hex("ffff4259000000020000000047d81096"), hex("ffff5253 cafebabe 1234 0000"),
            hex("ffff524c cafebabe 00010000"),
        ]
        var errors = 0
        for packet in packets {
            for length in 0..<packet.count {
                do {
                    _ = try AppleMIDIPacket(parsing: Array(packet[..<length]))
                } catch {
                    errors += 1
                }
            }
        }
        // Only the invitation cut after its SSRC still reads (16 bytes up to its NUL: the name is optional and
        // its NUL too), 14 prefixes.
        #expect(errors == packets.map(\.count).reduce(0, +) - 14)
    }
}

/// The clock model's arithmetic with exact numbers.
@Suite struct AppleMIDIClockModelTests {
    /// The Mac's CK2 from pymidi's tests: rtt 10 ticks (1 ms), offset −15,369,156,573,695 ticks (brief §1.7).
    @Test func macExchange() throws {
        let sample = try #require(
            AppleMIDIClockSample(timestamp1: 1_140_859_518, timestamp2: 15_370_297_433_218, timestamp3: 1_140_859_528))
        #expect(sample.roundTripTicks == 10)
        #expect(sample.initiatorMinusResponderTicks == -15_369_156_573_695)
        var responder = AppleMIDIClockModel(role: .responder)
        responder.add(sample)
        // The Mac (initiator) sent its time; as the responder, its time 1,140,859,523 is our 15,370,297,433,218.
        #expect(responder.localTicks(fromPeer: 1_140_859_523) == 15_370_297_433_218)
        #expect(responder.oneWayLatencyTicks == 5)
        var initiator = AppleMIDIClockModel(role: .initiator)
        initiator.add(sample)
        #expect(initiator.localTicks(fromPeer: 15_370_297_433_218) == 1_140_859_523)
    }

    @Test func smallestRoundTripWinsAndSlowSamplesAreDiscarded() throws {
        var model = AppleMIDIClockModel(role: .initiator, capacity: 3)
        // Responder clock = initiator clock − 1000. A queued exchange (rtt 40) skews its midpoint by 15 ticks.
        model.add(try #require(AppleMIDIClockSample(timestamp1: 10_000, timestamp2: 9_020, timestamp3: 10_040)))
        model.add(try #require(AppleMIDIClockSample(timestamp1: 20_000, timestamp2: 19_005, timestamp3: 20_010)))
        #expect(model.peerToLocalTicks == 1_000)
        #expect(model.minimumRoundTripTicks == 10)
        #expect(model.acceptedSamples.count == 1)  // 40 > 2 × 10
        model.add(try #require(AppleMIDIClockSample(timestamp1: 30_000, timestamp2: 29_006, timestamp3: 30_012)))
        model.add(try #require(AppleMIDIClockSample(timestamp1: 40_000, timestamp2: 39_008, timestamp3: 40_016)))
        #expect(model.samples.count == 3)  // the capacity: the slow first sample went
        #expect(model.minimumRoundTripTicks == 10)
        #expect(AppleMIDIClockSample(timestamp1: 10, timestamp2: 0, timestamp3: 9) == nil)  // t3 before t1
    }

    /// A responder clock that runs 100 ppm slow: the offset grows by 1 tick every 10,000.
    @Test func driftIsTheSlopeOfTheOffset() throws {
        var model = AppleMIDIClockModel(role: .initiator)
        for step in 0..<5 {
            let t1 = UInt64(100_000 * step)
            let t2 = t1 + 5 - UInt64(10 * step) + 500
            model.add(try #require(AppleMIDIClockSample(timestamp1: t1, timestamp2: t2, timestamp3: t1 + 10)))
        }
        #expect(model.driftPartsPerMillion == 100)
        #expect(AppleMIDIClockModel(role: .initiator).driftPartsPerMillion == nil)
    }
}
