import AulosMIDI
import Testing

@testable import AulosNetworkMIDI

/// The real Mac packets pymidi ships in its tests (`pymidi/tests/packets_test.py`), decoded in the brief §2.9.
enum MacCaptures {
    /// seq 17018: note-on 48 vel 38; journal N offs 48, 53, 55 (checkpoint 17014).
    static let single = hex("8061427a4b9f303647d8109643903026204276000608006685")
    /// seq 17050: note-on 62 vel 49, delta 10, running-status note-on 64 vel 59; two channel journals.
    static let multi = hex("8061429a51d2dc8747d8109646903e310a403b21427c00090881673c250d50c8060880440e")
    /// seq 19365: CC 108 → 0; journal C (CC 108 value 127) and N (off 60).
    static let control = hex("80614ba55944067e47d8109643b06c00204ba0000948006c7f807708")
    static let all = [single, multi, control]
}

@Suite struct RTPMIDIPacketTests {
    @Test func macSingleNoteOn() throws {
        let packet = try RTPMIDIPacket(parsing: MacCaptures.single)
        #expect(packet.header == RTPHeader(sequenceNumber: 17018, timestamp: 1_268_723_766, ssrc: 0x47D8_1096))
        #expect(packet.section.commands == [RTPMIDITimedCommand(.message(.noteOn(channel: 0, note: 48, velocity: 38)))])
        let journal = try #require(packet.journal)
        #expect(!journal.singlePacketLoss && journal.checkpointSequenceNumber == 17014 && journal.systemJournal == nil)
        #expect(
            journal.channels == [
                ChannelJournal(
                    channel: 0, notes: ChapterN(offNotes: [48, 53, 55], offBitsSinglePacketLoss: false),
                    singlePacketLoss: false)
            ])
        // Apple's encoding is the encoder's: the same bytes back.
        #expect(try packet.encoded() == MacCaptures.single)
    }

    @Test func macRunningStatusAndTwoChannelJournals() throws {
        let packet = try RTPMIDIPacket(parsing: MacCaptures.multi)
        #expect(
            packet.header.sequenceNumber == 17050 && packet.header.timestamp == 1_372_773_511 && !packet.header.marker)
        #expect(
            packet.section.commands == [
                RTPMIDITimedCommand(.message(.noteOn(channel: 0, note: 62, velocity: 49))),
                RTPMIDITimedCommand(delta: 10, .message(.noteOn(channel: 0, note: 64, velocity: 59))),
            ])
        #expect(packet.section.commandTimes == [0, 10])
        let journal = try #require(packet.journal)
        #expect(journal.checkpointSequenceNumber == 17020)
        #expect(
            journal.channels == [
                ChannelJournal(
                    channel: 0,
                    notes: ChapterN(
                        logs: [ChapterN.Log(note: 60, velocity: 37, play: false, singlePacketLoss: false)],
                        offNotes: [52, 53, 55, 57, 59]), singlePacketLoss: false),
                ChannelJournal(channel: 9, notes: ChapterN(offNotes: [36, 37, 38])),
            ])
        #expect(try packet.encoded() == MacCaptures.multi)
    }

    @Test func macControllerWithChapterC() throws {
        let packet = try RTPMIDIPacket(parsing: MacCaptures.control)
        #expect(
            packet.section.commands == [
                RTPMIDITimedCommand(.message(.controlChange(channel: 0, controller: 108, value: 0)))
            ])
        let channel = try #require(packet.journal?.channels.first)
        #expect(
            channel.controllers
                == ChapterC(
                    logs: [ChapterC.Log(controller: 108, tool: .value(127), singlePacketLoss: false)],
                    singlePacketLoss: false))
        #expect(channel.notes == ChapterN(offNotes: [60]))
        #expect(try packet.encoded() == MacCaptures.control)
    }

    /// RFC 6295 Figure 4: big-endian 7-bit groups; 200 is 81 48; zero has four codings; five octets is too many.
    @Test func deltaTimes() throws {
        var out: [UInt8] = []
        try RTPMIDICommandSection.appendDelta(200, to: &out)
        #expect(out == [0x81, 0x48])
        for (bytes, value) in [
            ([0x00], 0), ([0x80, 0x00], 0), ([0x80, 0x80, 0x00], 0), ([0x80, 0x80, 0x80, 0x00], 0),
            ([0x81, 0x48], 200), ([0xFF, 0xFF, 0xFF, 0x7F], 0x0FFF_FFFF),
        ] as [([UInt8], UInt32)] {
            var reader = WireReader(bytes)
            #expect(try RTPMIDICommandSection.readDelta(&reader) == value)
        }
        var five = WireReader([0x80, 0x80, 0x80, 0x80, 0x00])
        #expect(throws: NetworkMIDIError.invalid(field: "delta time", offset: 0, reason: "longer than four octets")) {
            try RTPMIDICommandSection.readDelta(&five)
        }
        #expect(throws: NetworkMIDIError.self) { try RTPMIDICommandSection.appendDelta(1 << 28, to: &out) }
    }

    private func section(_ bytes: String) throws -> RTPMIDICommandSection {
        var reader = WireReader(hex(bytes))
        return try RTPMIDICommandSection(reading: &reader)
    }

    @Test func flagsLongHeaderAndRunningStatus() throws {
        // Z = 1: a delta before the first command; P = 1 (phantom).
        let z = try section("35 81 48 90 3c 64")
        #expect(z.commands == [RTPMIDITimedCommand(delta: 200, .message(.noteOn(channel: 0, note: 60, velocity: 100)))])
        #expect(z.phantom && !z.hasJournal)
        // B = 1: a 12-bit LEN. 6 note-ons in running status with one-byte deltas = 18 bytes.
        var commands: [RTPMIDITimedCommand] = []
        for note in 0..<6 {
            commands.append(
                RTPMIDITimedCommand(
                    delta: note == 0 ? 0 : 1, .message(.noteOn(channel: 2, note: UInt8(60 + note), velocity: 90))))
        }
        let long = RTPMIDICommandSection(commands: commands)
        let encoded = try long.encoded()
        #expect(encoded[0] == 0x80 && encoded[1] == 18 && encoded.count == 20)
        #expect(Array(encoded[2...6]) == [0x92, 60, 90, 0x01, 61])  // running status after the first
        var reader = WireReader(encoded)
        #expect(try RTPMIDICommandSection(reading: &reader) == long)
        // Real-Time keeps running status; System Common cancels it.
        let realTime = try section("08 90 3c 64 00 f8 00 3e 64")
        #expect(
            realTime.commands.map(\.command) == [
                .message(.noteOn(channel: 0, note: 60, velocity: 100)), .message(.timingClock),
                .message(.noteOn(channel: 0, note: 62, velocity: 100)),
            ])
        #expect(
            throws: NetworkMIDIError.invalid(field: "command", offset: 7, reason: "a data byte with no running status")
        ) {
            try section("08 90 3c 64 00 f6 00 3e 64")
        }
        // Every system message with its data; F9 and F4 read past as undefined.
        let system = try section("0f f1 12 00 f2 01 02 00 f3 05 00 f6 00 f9 00 f4")
        #expect(
            system.commands.map(\.command) == [
                .message(.timeCodeQuarterFrame(0x12)), .message(.songPosition(0x101)), .message(.songSelect(5)),
                .message(.tuneRequest),
                .undefined(0xF9), .undefined(0xF4),
            ])
        // Program change and channel pressure have one data byte; pitch bend two.
        let short = try section("09 c1 05 00 d1 40 00 e1 00 40")
        #expect(
            short.commands.map(\.command) == [
                .message(.programChange(channel: 1, program: 5)), .message(.channelPressure(channel: 1, pressure: 64)),
                .message(.pitchBend(channel: 1, value: 8192)),
            ])
        #expect(try short.encoded() == hex("09 c1 05 00 d1 40 00 e1 00 40"))
        // A list that ends with a delta (time padding), and one that is a lone delta.
        #expect(try section("04 90 3c 64 05").trailingDelta == 5)
        let lone = try section("21 07")
        #expect(lone.commands.isEmpty && lone.trailingDelta == 7)
        #expect(try lone.encoded() == hex("21 07"))
        #expect(try section("00").commands.isEmpty)
    }

    /// RFC 6295 §3.2's example: F0 01 … 08 F7 sent as F0 01 02 03 04 F0 and F7 05 06 07 08 F7; Real-Time bytes
    /// inside a SysEx field are taken out and played before it.
    @Test func sysExSegments() throws {
        let split = try section("0d f0 01 02 03 04 f0 00 f7 05 06 07 08 f7")
        #expect(
            split.commands.map(\.command) == [
                .sysEx(RTPMIDISysExSegment(head: 0xF0, data: [1, 2, 3, 4], tail: 0xF0)),
                .sysEx(RTPMIDISysExSegment(head: 0xF7, data: [5, 6, 7, 8], tail: 0xF7)),
            ])
        var assembler = RTPMIDISysExAssembler()
        let messages = split.commands.compactMap { command -> MIDIMessage? in
            guard case .sysEx(let segment) = command.command else { return nil }
            return assembler.add(segment)
        }
        #expect(messages == [.systemExclusive([1, 2, 3, 4, 5, 6, 7, 8])])
        let withClock = try section("05 f0 7e f8 7f f7")
        #expect(
            withClock.commands.map(\.command) == [
                .message(.timingClock), .sysEx(RTPMIDISysExSegment(head: 0xF0, data: [0x7E, 0x7F], tail: 0xF7)),
            ])
        #expect(throws: NetworkMIDIError.invalid(field: "SysEx", offset: 3, reason: "status 0x90 inside it")) {
            try section("05 f0 7e 90 7f f7")
        }
        #expect(throws: NetworkMIDIError.truncated(field: "SysEx tail", offset: 4)) { try section("03 f0 7e 7f") }
    }

    @Test func sysExAssemblyAcrossPacketsWithCapCancelAndLoss() {
        var assembler = RTPMIDISysExAssembler(maximumBytes: 8)
        #expect(assembler.add(RTPMIDISysExSegment(head: 0xF0, data: [1, 2], tail: 0xF0)) == nil)
        #expect(assembler.isAssembling)
        #expect(assembler.add(RTPMIDISysExSegment(head: 0xF7, data: [3], tail: 0xF0)) == nil)
        #expect(
            assembler.add(RTPMIDISysExSegment(head: 0xF7, data: [4], tail: 0xF7)) == .systemExclusive([1, 2, 3, 4]))
        // Dropped F7 (F5 tail) ends it too.
        #expect(assembler.add(RTPMIDISysExSegment(head: 0xF0, data: [9], tail: 0xF5)) == .systemExclusive([9]))
        // Over the cap (8 bytes with F0 and F7): dropped whole.
        #expect(assembler.add(RTPMIDISysExSegment(head: 0xF0, data: [1, 2, 3, 4], tail: 0xF0)) == nil)
        #expect(assembler.add(RTPMIDISysExSegment(head: 0xF7, data: [5, 6, 7], tail: 0xF7)) == nil)
        #expect(assembler.dropped == 1)
        // Exactly at the cap: kept.
        #expect(
            assembler.add(RTPMIDISysExSegment(head: 0xF0, data: [1, 2, 3, 4, 5, 6], tail: 0xF7))
                == .systemExclusive([1, 2, 3, 4, 5, 6]))
        // Cancelled (F7 F4), cut by a loss, a continuation with no start: nothing comes out.
        _ = assembler.add(RTPMIDISysExSegment(head: 0xF0, data: [1], tail: 0xF0))
        #expect(assembler.add(RTPMIDISysExSegment(head: 0xF7, data: [], tail: 0xF4)) == nil)
        _ = assembler.add(RTPMIDISysExSegment(head: 0xF0, data: [1], tail: 0xF0))
        assembler.reset()
        #expect(assembler.add(RTPMIDISysExSegment(head: 0xF7, data: [2], tail: 0xF7)) == nil)
        #expect(assembler.dropped == 4)
        #expect(!assembler.isAssembling)
    }

    /// An encoded packet of every kind of command reads back as the same value.
    @Test func roundTrip() throws {
        let commands: [RTPMIDITimedCommand] = [
            RTPMIDITimedCommand(delta: 3, .message(.noteOn(channel: 5, note: 60, velocity: 100))),
            RTPMIDITimedCommand(delta: 0, .message(.noteOn(channel: 5, note: 64, velocity: 90))),
            RTPMIDITimedCommand(delta: 200, .message(.timingClock)),
            RTPMIDITimedCommand(delta: 1, .message(.noteOff(channel: 5, note: 60, velocity: 0))),
            RTPMIDITimedCommand(delta: 16_384, .message(.controlChange(channel: 5, controller: 64, value: 127))),
            RTPMIDITimedCommand(delta: 1, .message(.programChange(channel: 5, program: 12))),
            RTPMIDITimedCommand(delta: 1, .message(.pitchBend(channel: 5, value: 0x3FFF))),
            RTPMIDITimedCommand(
                delta: 1, .sysEx(RTPMIDISysExSegment(head: 0xF0, data: [0x7E, 0x7F, 9, 1], tail: 0xF7))),
            RTPMIDITimedCommand(delta: 1, .message(.songPosition(300))),
            RTPMIDITimedCommand(delta: 0x0FFF_FFFF, .message(.polyPressure(channel: 0, note: 1, pressure: 2))),
        ]
        let journal = RecoveryJournal(
            checkpointSequenceNumber: 65_535,
            channels: [
                ChannelJournal(
                    channel: 5, program: ChapterP(program: 12, bankMSB: 1, bankLSB: 2, resetBetween: true),
                    controllers: ChapterC(logs: [
                        ChapterC.Log(controller: 7, tool: .value(100)), ChapterC.Log(controller: 64, tool: .toggle(3)),
                        ChapterC.Log(controller: 123, tool: .count(63)),
                    ]),
                    pitchWheel: ChapterW(value: 0x3FFF),
                    notes: ChapterN(logs: [ChapterN.Log(note: 64, velocity: 90)], offNotes: [60, 127, 0]))
            ])
        let packet = RTPMIDIPacket(
            header: RTPHeader(sequenceNumber: 65_535, timestamp: 0xFFFF_FFF0, ssrc: 1, marker: true),
            commands: commands, journal: journal)
        let bytes = try packet.encoded()
        let read = try RTPMIDIPacket(parsing: bytes)
        #expect(read == packet)
        #expect(read.section.commandTimes.first == 3)
    }

    /// RTP's optional parts (CSRC list, extension, padding) are skipped; a version other than 2 is refused.
    @Test func rtpHeaderOptions() throws {
        // CC = 1, X = 1 (one extension word), P = 1 (3 bytes of padding).
        let bytes = hex("b1 61 0001 00000002 00000003 00000004 beef0001 aabbccdd 03 903c64 000003")
        let packet = try RTPMIDIPacket(parsing: bytes)
        #expect(
            packet.section.commands == [RTPMIDITimedCommand(.message(.noteOn(channel: 0, note: 60, velocity: 100)))])
        #expect(throws: NetworkMIDIError.invalid(field: "RTP version", offset: 0, reason: "1, where RTP is version 2"))
        {
            try RTPMIDIPacket(parsing: hex("4061 0001 00000002 00000003 00"))
        }
        #expect(throws: NetworkMIDIError.self) { try RTPMIDIPacket(parsing: hex("a061 0001 00000002 00000003 00 ff")) }
    }
}
