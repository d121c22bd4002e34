import AulosMIDI
import Testing

@testable import AulosNetworkMIDI

/// Damaged packets: every truncation and many single-byte changes of valid packets must read or throw, never
/// trap (a trap here would take the network thread, and every session with it, down).
@Suite struct MalformedPacketTests {
    /// Valid RTP-MIDI packets with every part the reader has: the Mac captures, and one the encoder built with
    /// a long header, SysEx, system messages and every chapter, behind a system journal.
    static func validPackets() throws -> [[UInt8]] {
        var commands: [RTPMIDITimedCommand] = (0..<6).map { note in
            RTPMIDITimedCommand(
                delta: UInt32(note * 300), .message(.noteOn(channel: 1, note: UInt8(40 + note), velocity: 70)))
        }
        commands += [
            RTPMIDITimedCommand(delta: 1, .sysEx(RTPMIDISysExSegment(head: 0xF0, data: [1, 2], tail: 0xF0))),
            RTPMIDITimedCommand(delta: 1, .message(.songPosition(9))), RTPMIDITimedCommand(delta: 1, .message(.stop)),
            RTPMIDITimedCommand(delta: 1, .message(.pitchBend(channel: 1, value: 5))),
        ]
        let journal = RecoveryJournal(
            checkpointSequenceNumber: 9,
            channels: [
                ChannelJournal(
                    channel: 1, program: ChapterP(program: 3, bankMSB: 2),
                    controllers: ChapterC(logs: [
                        ChapterC.Log(controller: 64, tool: .toggle(1)), ChapterC.Log(controller: 7, tool: .value(9)),
                    ]), pitchWheel: ChapterW(value: 5),
                    notes: ChapterN(logs: [ChapterN.Log(note: 45, velocity: 70)], offNotes: [40, 41, 90])),
                ChannelJournal(channel: 2, notes: ChapterN(offNotes: [1])),
            ], systemJournal: hex("0004abcd"))
        let built = try RTPMIDIPacket(
            header: RTPHeader(sequenceNumber: 10, timestamp: 5, ssrc: 6), commands: commands, journal: journal
        ).encoded()
        return MacCaptures.all + [built]
    }

    @Test func everyTruncationOfAnRTPMIDIPacketReadsOrThrows() throws {
        var outcomes = (packets: 0, errors: 0, journalErrors: 0)
        for packet in try Self.validPackets() {
            #expect(throws: Never.self) { try RTPMIDIPacket(parsing: packet) }
            for length in 0..<packet.count {
                do {
                    let read = try RTPMIDIPacket(parsing: Array(packet[..<length]))
                    outcomes.packets += 1
                    if read.journalError != nil { outcomes.journalErrors += 1 }
                    // Whatever reads, a receiver takes without trapping.
                    var receiver = RTPMIDIReceiver()
                    _ = receiver.receive(read)
                } catch {
                    outcomes.errors += 1
                    #expect(!error.description.isEmpty && !error.description.contains("\n"))
                }
            }
        }
        // Cut inside the command section, a packet is an error; cut inside the journal, only its journal is.
        #expect(outcomes.errors > 0 && outcomes.journalErrors > 0)
        #expect(outcomes.packets == outcomes.journalErrors)
    }

    /// Each byte of each valid packet set to values that matter to the readers (flags, lengths, status bytes,
    /// continuation bits): every result reads or throws, and whatever reads goes through a receiver.
    @Test func singleByteChangesReadOrThrow() throws {
        let values: [UInt8] = [
            0x00, 0x01, 0x0F, 0x10, 0x3F, 0x40, 0x7F, 0x80, 0x81, 0xC0, 0xF0, 0xF4, 0xF7, 0xF8, 0xFF,
        ]
        var read = 0
        for packet in try Self.validPackets() + [
            AppleMIDIPacket.clockSync(AppleMIDIClockSync(ssrc: 1, count: 1, timestamp1: 2)).bytes
        ] {
            for index in packet.indices {
                for value in values {
                    var damaged = packet
                    damaged[index] = value
                    if let parsed = try? RTPMIDIPacket(parsing: damaged) {
                        read += 1
                        var receiver = RTPMIDIReceiver()
                        _ = receiver.receive(
                            RTPMIDIPacket(
                                header: RTPHeader(
                                    sequenceNumber: parsed.header.sequenceNumber &- 2, timestamp: 0, ssrc: 1),
                                commands: []))
                        _ = receiver.receive(parsed)  // after a loss, so the journal is applied
                    }
                    _ = try? AppleMIDIPacket(parsing: damaged)
                }
            }
        }
        #expect(read > 0)
    }

    /// The limits: a packet over 64 KiB, a command section with more commands than allowed.
    @Test func limits() throws {
        #expect(throws: NetworkMIDIError.tooLarge(what: "RTP-MIDI packet of 65537 bytes", limit: 65_536)) {
            try RTPMIDIPacket(parsing: [UInt8](repeating: 0x80, count: 65_537))
        }
        // 1,025 timing clocks with one-byte deltas: 2,049 bytes of list.
        var list: [UInt8] = [0xF8]
        for _ in 0..<1_024 { list += [0x00, 0xF8] }
        let packet =
            hex("8061 0001 00000000 00000001") + [0x80 | UInt8(list.count >> 8), UInt8(list.count & 0xFF)] + list
        #expect(throws: NetworkMIDIError.tooLarge(what: "commands in one packet", limit: 1_024)) {
            try RTPMIDIPacket(parsing: packet)
        }
        let allowed = hex("8061 0001 00000000 00000001") + [0x87, 0xFF] + list[..<2_047]
        #expect(try RTPMIDIPacket(parsing: allowed).section.commands.count == 1_024)
        // The encoder refuses a list over LEN's 12 bits rather than writing a wrong length.
        let tooMany = RTPMIDICommandSection(
            commands: (0..<1_400).map { _ in
                RTPMIDITimedCommand(delta: 1, .message(.noteOn(channel: 0, note: 1, velocity: 1)))
            })
        #expect(throws: NetworkMIDIError.tooLarge(what: "MIDI list bytes", limit: 4_095)) { try tooMany.encoded() }
    }
}
