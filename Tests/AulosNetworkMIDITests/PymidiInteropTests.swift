import AulosMIDI
import AulosTestSupport
import Foundation
import Testing

@testable import AulosNetworkMIDI

/// pymidi (PyPI 0.5.0), code the project did not write, as the other end: packets it builds are read here, and
/// packets Aulos builds are read by it (scripts/pymidi-peer.py). The Python with pymidi is `$AULOS_PYMIDI_PYTHON`,
/// else the checkout's `.build-pymidi/venv` (scripts/setup.sh --tests makes it), else python3 if it has pymidi;
/// without one the tests are skipped, saying so. Only what pymidi does right is compared (brief §3.6): deltas
/// below 128, Z = 0, no program change or bend before other commands, ASCII names, one channel journal with S = 0.
enum Pymidi {
    static let python: String? = {
        var candidates = [TestFiles.repositoryRoot + "/.build-pymidi/venv/bin/python3", "/usr/bin/python3"]
        if let chosen = ProcessInfo.processInfo.environment["AULOS_PYMIDI_PYTHON"], !chosen.isEmpty {
            candidates.insert(chosen, at: 0)
        }
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
            if (try? run(candidate, ["-c", "import pymidi.packets"]))?.status == 0 { return candidate }
        }
        print(
            "skipped: pymidi interop (no Python with pymidi: run scripts/setup.sh --tests or set AULOS_PYMIDI_PYTHON)")
        return nil
    }()

    static let skipReason: Comment = "skipped: no Python with pymidi (scripts/setup.sh --tests, or AULOS_PYMIDI_PYTHON)"

    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, stdout: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, data)
    }

    /// Runs scripts/pymidi-peer.py with `arguments` and returns its JSON.
    static func peer(_ arguments: [String]) throws -> Any {
        let python = try #require(python)
        let result = try run(python, [TestFiles.repositoryRoot + "/scripts/pymidi-peer.py"] + arguments)
        #expect(result.status == 0)
        return try JSONSerialization.jsonObject(with: result.stdout)
    }

    /// What pymidi reads from packets Aulos built, one dictionary per packet.
    static func parse(_ kind: String, _ packets: [[UInt8]]) throws -> [[String: Any]] {
        try #require(try peer(["parse", kind] + packets.map(hexString)) as? [[String: Any]])
    }
}

/// A value deep inside pymidi's JSON: `field(json, "command", "flags", "len")`.
private func field(_ json: Any?, _ path: String...) -> Any? {
    path.reduce(json) { ($0 as? [String: Any])?[$1] }
}

@Suite(.enabled(if: Pymidi.python != nil, Pymidi.skipReason)) struct PymidiInteropTests {
    /// IN/OK/NO/BY/CK and RTP-MIDI packets built by pymidi read as what pymidi meant.
    @Test func aulosReadsWhatPymidiBuilds() throws {
        let built = try #require(try Pymidi.peer(["build"]) as? [String: String]).mapValues(hex)
        func session(_ name: String) throws -> AppleMIDIPacket {
            try AppleMIDIPacket(parsing: try #require(built[name]))
        }
        #expect(
            try session("IN")
                == .invitation(AppleMIDIExchange(initiatorToken: 0x1234_5678, ssrc: 0xCAFE_BABE, name: "aulos-test")))
        #expect(
            try session("OK")
                == .accept(AppleMIDIExchange(initiatorToken: 0x1234_5678, ssrc: 0x0BAD_F00D, name: "peer")))
        #expect(try session("NO") == .reject(AppleMIDIExchange(initiatorToken: 0x1234_5678, ssrc: 0x0BAD_F00D)))
        #expect(try session("BY") == .bye(AppleMIDIExchange(initiatorToken: 0, ssrc: 0xCAFE_BABE)))
        #expect(try session("CK0") == .clockSync(AppleMIDIClockSync(ssrc: 0xCAFE_BABE, count: 0, timestamp1: 1000)))
        #expect(
            try session("CK1")
                == .clockSync(
                    AppleMIDIClockSync(ssrc: 0x0BAD_F00D, count: 1, timestamp1: 1000, timestamp2: 15_370_297_433_218)))
        guard case .clockSync(let ck2) = try session("CK2") else {
            Issue.record("CK2 is not a clock sync")
            return
        }
        #expect(AppleMIDIClockSample(ck2)?.roundTripTicks == 10)

        let noteOnOff = try RTPMIDIPacket(parsing: try #require(built["noteOnOff"]))
        #expect(
            noteOnOff.header
                == RTPHeader(sequenceNumber: 0x1234, timestamp: 0x0001_0000, ssrc: 0xCAFE_BABE, marker: true))
        #expect(
            noteOnOff.section.commands == [
                RTPMIDITimedCommand(.message(.noteOn(channel: 0, note: 60, velocity: 100))),
                RTPMIDITimedCommand(delta: 10, .message(.noteOff(channel: 0, note: 60, velocity: 0))),
            ])
        // The same commands encoded here are pymidi's bytes.
        #expect(try noteOnOff.encoded() == built["noteOnOff"])

        let controllers = try RTPMIDIPacket(parsing: try #require(built["controllers"]))
        #expect(
            controllers.section.commands == [
                RTPMIDITimedCommand(.message(.controlChange(channel: 3, controller: 7, value: 100))),
                RTPMIDITimedCommand(delta: 5, .message(.controlChange(channel: 3, controller: 64, value: 127))),
                RTPMIDITimedCommand(delta: 127, .message(.noteOn(channel: 3, note: 62, velocity: 90))),
            ])

        let journal = try RTPMIDIPacket(parsing: try #require(built["journal"]))
        #expect(
            journal.section.commands == [RTPMIDITimedCommand(.message(.noteOn(channel: 0, note: 62, velocity: 90)))])
        #expect(
            journal.journal
                == RecoveryJournal(
                    checkpointSequenceNumber: 7,
                    channels: [
                        ChannelJournal(
                            channel: 0, notes: ChapterN(offNotes: [60], offBitsSinglePacketLoss: false),
                            singlePacketLoss: false)
                    ],
                    singlePacketLoss: false))
        // And a receiver that missed the note-off before it repairs from pymidi's journal.
        var receiver = RTPMIDIReceiver()
        _ = receiver.receive(
            RTPMIDIPacket(
                header: RTPHeader(sequenceNumber: 6, timestamp: 0, ssrc: 0xCAFE_BABE),
                commands: [
                    RTPMIDITimedCommand(.message(.noteOn(channel: 0, note: 60, velocity: 100)))
                ]))
        #expect(receiver.receive(journal).repairs == [.noteOff(channel: 0, note: 60)])
    }

    /// Packets Aulos built read in pymidi as what Aulos meant.
    @Test func pymidiReadsWhatAulosBuilds() throws {
        let sessions: [AppleMIDIPacket] = [
            .invitation(AppleMIDIExchange(initiatorToken: 0xDEAD_BEEF, ssrc: 0x0102_0304, name: "Aulos")),
            .accept(AppleMIDIExchange(initiatorToken: 0xDEAD_BEEF, ssrc: 0x0506_0708, name: "stage")),
            .reject(AppleMIDIExchange(initiatorToken: 1, ssrc: 2)), .bye(AppleMIDIExchange(initiatorToken: 3, ssrc: 4)),
        ]
        let exchanges = try Pymidi.parse("exchange", sessions.map(\.bytes))
        let expected: [(String, Int, Int, String?)] = [
            ("IN", 0xDEAD_BEEF, 0x0102_0304, "Aulos"), ("OK", 0xDEAD_BEEF, 0x0506_0708, "stage"), ("NO", 1, 2, nil),
            ("BY", 3, 4, nil),
        ]
        for (read, (command, token, ssrc, name)) in zip(exchanges, expected) {
            #expect(read["command"] as? String == command && read["protocol_version"] as? Int == 2)
            #expect(read["initiator_token"] as? Int == token && read["ssrc"] as? Int == ssrc)
            #expect(read["name"] as? String == name)
        }
        let clocks = try Pymidi.parse(
            "timestamp",
            [
                AppleMIDIPacket.clockSync(
                    AppleMIDIClockSync(ssrc: 9, count: 1, timestamp1: 1_140_859_518, timestamp2: 15_370_297_433_218)
                ).bytes,
                AppleMIDIPacket.clockSync(
                    AppleMIDIClockSync(ssrc: 9, count: 2, timestamp1: 1, timestamp2: 2, timestamp3: UInt64.max)
                ).bytes,
            ])
        #expect(clocks[0]["count"] as? Int == 1 && clocks[0]["timestamp_2"] as? Int == 15_370_297_433_218)
        #expect(
            clocks[1]["timestamp_3"] as? UInt64 == UInt64.max
                || (clocks[1]["timestamp_3"] as? NSNumber)?.uint64Value == UInt64.max)

        // Notes and controllers with running status and deltas; a journal of one channel with S = 0.
        let commands: [RTPMIDITimedCommand] = [
            RTPMIDITimedCommand(.message(.noteOn(channel: 2, note: 60, velocity: 100))),
            RTPMIDITimedCommand(delta: 10, .message(.noteOn(channel: 2, note: 64, velocity: 80))),
            RTPMIDITimedCommand(delta: 0, .message(.controlChange(channel: 2, controller: 64, value: 127))),
            RTPMIDITimedCommand(delta: 100, .message(.controlChange(channel: 2, controller: 1, value: 33))),
            RTPMIDITimedCommand(delta: 1, .message(.noteOff(channel: 2, note: 60, velocity: 0))),
        ]
        let journal = RecoveryJournal(
            checkpointSequenceNumber: 500,
            channels: [ChannelJournal(channel: 2, notes: ChapterN(offNotes: [60]), singlePacketLoss: false)],
            singlePacketLoss: false)
        let packets = [
            try RTPMIDIPacket(header: RTPHeader(sequenceNumber: 501, timestamp: 123_456, ssrc: 77), commands: commands)
                .encoded(),
            try RTPMIDIPacket(
                header: RTPHeader(sequenceNumber: 502, timestamp: 123_999, ssrc: 77), commands: [commands[0]],
                journal: journal
            ).encoded(),
        ]
        let read = try Pymidi.parse("midi", packets)
        #expect(field(read[0], "header", "rtp_header", "sequence_number") as? Int == 501)
        #expect(
            field(read[0], "header", "timestamp") as? Int == 123_456 && field(read[0], "header", "ssrc") as? Int == 77)
        #expect(field(read[0], "header", "rtp_header", "flags", "m") as? Bool == false)
        let list = try #require(field(read[0], "command", "midi_list") as? [[String: Any]])
        let seen = list.map { entry in
            [
                entry["command"] as? String ?? "?", "\(entry["channel"] ?? "?")", "\(entry["delta_time"] ?? "nil")",
                "\(field(entry, "params", "key") ?? field(entry, "params", "controller") ?? "?")",
                "\(field(entry, "params", "velocity") ?? field(entry, "params", "value") ?? "?")",
            ]
        }
        #expect(
            seen == [
                ["note_on", "2", "<null>", "60", "100"], ["note_on", "2", "10", "64", "80"],
                ["control_mode_change", "2", "0", "64", "127"], ["control_mode_change", "2", "100", "1", "33"],
                ["note_off", "2", "1", "60", "0"],
            ])
        #expect(field(read[1], "journal", "checkpoint_seqnum") as? Int == 500)
        #expect(field(read[1], "journal", "channel_journal", "header", "chan") as? Int == 2)
        #expect(field(read[1], "journal", "channel_journal", "journal") as? String == "807708")
    }

    /// pymidi 0.5.0's deviations from RFC 6295 and Apple's protocol, each checked so a pymidi that fixes one
    /// is noticed (brief §3.6): B1 delta times in LEB128, B9 a standard journal with S = 1 refused, B8 UTF-8
    /// names read as none, B3 a program change swallowing the rest of the list.
    @Test func pymidiDeviationsAreAsDocumented() throws {
        let header = RTPHeader(sequenceNumber: 1, timestamp: 0, ssrc: 1)
        let on = RTPMIDITimedCommand(.message(.noteOn(channel: 0, note: 60, velocity: 100)))
        let long = try RTPMIDIPacket(header: header, commands: [on, RTPMIDITimedCommand(delta: 200, on.command)])
            .encoded()
        let standard = try RTPMIDIPacket(
            header: header, commands: [on],
            journal: RecoveryJournal(
                checkpointSequenceNumber: 0, channels: [ChannelJournal(channel: 0, notes: ChapterN(offNotes: [61]))])
        ).encoded()
        let program = try RTPMIDIPacket(
            header: header,
            commands: [
                RTPMIDITimedCommand(.message(.programChange(channel: 0, program: 5))), on,
            ]
        ).encoded()
        let read = try Pymidi.parse("midi", [long, standard, program])
        // B1: RFC 6295's 81 48 (200) read as LEB128: 1 + 72 × 128 = 9217.
        #expect((field(read[0], "command", "midi_list") as? [[String: Any]])?.last?["delta_time"] as? Int == 9217)
        // B9: the system journal is gated on S instead of Y, so S = 1 breaks the parse.
        #expect(read[1]["error"] != nil)
        // B3: the note-on after the program change is not a command of its own.
        #expect((field(read[2], "command", "midi_list") as? [[String: Any]])?.count == 1)
        // B8: a UTF-8 name is no name to pymidi.
        let invitation = AppleMIDIPacket.invitation(AppleMIDIExchange(initiatorToken: 1, ssrc: 2, name: "Bühne"))
        let named = try Pymidi.parse("exchange", [invitation.bytes])
        #expect(named[0]["name"] is NSNull || named[0]["error"] != nil)
    }
}
