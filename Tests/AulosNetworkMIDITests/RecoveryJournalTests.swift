import Testing

@testable import AulosNetworkMIDI

/// The recovery journal's layouts (RFC 6295 §5, App. A), the chapters Aulos skips, and the ones it refuses.
@Suite struct RecoveryJournalTests {
    private func journal(_ bytes: String) throws -> RecoveryJournal {
        var reader = WireReader(hex(bytes))
        return try RecoveryJournal(reading: &reader)
    }

    @Test func everyChapterRoundTrips() throws {
        let value = RecoveryJournal(
            checkpointSequenceNumber: 0x1234,
            channels: [
                ChannelJournal(channel: 0, program: ChapterP(program: 5)),
                ChannelJournal(
                    channel: 3, program: ChapterP(program: 127, bankMSB: 127, bankLSB: 127),
                    controllers: ChapterC(logs: [
                        ChapterC.Log(controller: 1, tool: .value(0)), ChapterC.Log(controller: 64, tool: .toggle(63)),
                        ChapterC.Log(controller: 123, tool: .count(0), singlePacketLoss: false),
                    ]),
                    pitchWheel: ChapterW(value: 0), notes: ChapterN(logs: [ChapterN.Log(note: 127, velocity: 1)])),
                ChannelJournal(channel: 15, notes: ChapterN(offNotes: [0, 7, 8, 127], offBitsSinglePacketLoss: false)),
            ], singlePacketLoss: false)
        let bytes = try value.encoded()
        var reader = WireReader(bytes)
        #expect(try RecoveryJournal(reading: &reader) == value)
        #expect(reader.isAtEnd)
        // The header: S=0 Y=0 A=1 TOTCHAN=2.
        #expect(Array(bytes[0...2]) == [0x22, 0x12, 0x34])
    }

    /// Chapter N's special LOW/HIGH codings: (15, 0) with LEN 127 is 128 logs and no OFFBITS; (15, 1) has none.
    @Test func chapterNLogCounts() throws {
        let all = ChapterN(logs: (0..<128).map { ChapterN.Log(note: UInt8($0), velocity: 100) })
        var bytes: [UInt8] = []
        try all.append(to: &bytes)
        #expect(Array(bytes[0...1]) == [0xFF, 0xF0] && bytes.count == 2 + 256)
        var reader = WireReader(bytes)
        #expect(try ChapterN(reading: &reader) == all)
        let many = ChapterN(logs: (0..<127).map { ChapterN.Log(note: UInt8($0), velocity: 100) })
        bytes = []
        try many.append(to: &bytes)
        #expect(Array(bytes[0...1]) == [0xFF, 0xF1])
        reader = WireReader(bytes)
        #expect(try ChapterN(reading: &reader).logs.count == 127)
        reader = WireReader(hex("00 52"))  // LOW 5 > HIGH 2
        #expect(throws: NetworkMIDIError.invalid(field: "chapter N", offset: 1, reason: "LOW 5 above HIGH 2")) {
            try ChapterN(reading: &reader)
        }
        #expect(throws: NetworkMIDIError.self) {
            var out: [UInt8] = []
            try ChapterN(logs: all.logs, offNotes: [1]).append(to: &out)
        }
    }

    /// The system journal, chapter M and chapters E/T/A are skipped by their LENGTH fields and the chapters Aulos
    /// reads around them still come out right.
    @Test func skippedChaptersAndSystemJournal() throws {
        // Y=1, A=1: a 4-byte system journal (LENGTH 4), then channel 2 with P, M (LENGTH 4), W, N, T, A.
        // Channel journal: header 3 + P 3 + M 4 + W 2 + N 3 + T 1 + A 3 = 19 = 0x13.
        let bytes = "60 0007  0004 abcd  10 13 bb  05 00 00  0004 ffff  00 40  80 77 08  7f  80 3c 40"
        let read = try journal(bytes)
        #expect(read.systemJournal == hex("0004abcd"))
        let channel = try #require(read.channels.first)
        #expect(
            channel.channel == 2 && channel.program == ChapterP(program: 5, singlePacketLoss: false)
                && channel.pitchWheel == ChapterW(value: 0x2000, singlePacketLoss: false))
        #expect(channel.notes == ChapterN(offNotes: [60]))
        #expect(channel.skippedChapters == 0x23 && channel.skippedParameterBytes == hex("0004ffff"))
        #expect(channel.skippedTailBytes == hex("7f803c40"))
        #expect(try read.encoded() == hex(bytes))
    }

    @Test func malformedJournals() throws {
        let cases: [(String, NetworkMIDIError)] = [
            ("20 0001", .truncated(field: "channel journal header", offset: 3)),
            (
                "20 0001 00 02 00",
                .invalid(field: "channel journal LENGTH", offset: 3, reason: "2 is shorter than its header")
            ),
            ("20 0001 00 09 08", .truncated(field: "channel journal of 9 bytes", offset: 6)),
            ("20 0001 00 04 80 05", .truncated(field: "chapter P bank MSB", offset: 7)),
            (
                "21 0001 08 03 00 00 03 00",
                .invalid(
                    field: "channel journal", offset: 6, reason: "channel 0 after channel 1 (they ascend, once each)")
            ),
            (
                "40 0001 0001",
                .invalid(field: "system journal LENGTH", offset: 3, reason: "1 is shorter than its header")
            ),
            (
                "20 0001 00 05 20 00 01",
                .invalid(field: "chapter M LENGTH", offset: 6, reason: "1 is shorter than its header")
            ),
            ("20 0001 00 06 40 01 40 00", .truncated(field: "chapter C log", offset: 9)),
        ]
        for (bytes, error) in cases {
            #expect(throws: error, "\(bytes)") { try journal(bytes) }
        }
        // A channel journal whose LENGTH says more than its chapters use is read by LENGTH (the rest skipped).
        let padded = try journal("20 0001 00 07 08 80 77 08 ee 2a")
        #expect(padded.channels.first?.notes == ChapterN(offNotes: [60]))
        // pymidi's client sends J = 1 with no journal: the commands count, the journal is an error.
        let packet = try RTPMIDIPacket(parsing: hex("8061000700000064cafebabe43903c64"))
        #expect(packet.section.commands.count == 1 && packet.journal == nil)
        #expect(packet.journalError == .truncated(field: "journal header", offset: 16))
    }
}
