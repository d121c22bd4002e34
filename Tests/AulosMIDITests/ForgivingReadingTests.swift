import AulosMIDI
import AulosTestSupport
import Testing

/// MIDI files as people have them: each class of deviation a player reads past, written here byte by byte.
/// The forgiving reader must play exactly the notes a person reads in the file; the strict one must fail
/// with the message the reader has always given.
@Suite struct ForgivingReadingTests {
    static let cMajor: [UInt8] = [60, 62, 64, 65, 67, 69, 71, 72]

    /// A C-major scale on channel 1, a quarter note (96 ticks) a note, note-offs as note-on velocity 0,
    /// with `insert` (whole events with their delta times) placed before note `before`. With
    /// `runningStatus`, only the first event carries its status byte.
    static func scale(runningStatus: Bool = false, insert: [UInt8] = [], before: Int = 4, endOfTrack: Bool = true)
        -> [UInt8]
    {
        var bytes: [UInt8] = []
        for (index, note) in cMajor.enumerated() {
            if index == before { bytes += insert }
            let status: [UInt8] = runningStatus && index > 0 ? [] : [0x90]
            bytes += [0x00] + status + [note, 100]
            bytes += [0x60] + (runningStatus ? [] : [0x90]) + [note, 0]
        }
        return bytes + (endOfTrack ? [0x00, 0xFF, 0x2F, 0x00] : [])
    }

    static func be32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }

    /// A file of `tracks`, each chunk claiming its true length unless `lengths` says otherwise.
    static func file(format: UInt8 = 0, declaring count: Int? = nil, _ tracks: [[UInt8]], lengths: [Int?] = [])
        -> [UInt8]
    {
        var bytes = Array("MThd".utf8) + be32(6) + [0, format, 0, UInt8(count ?? tracks.count), 0, 96]
        for (index, track) in tracks.enumerated() {
            let length = index < lengths.count ? lengths[index] ?? track.count : track.count
            bytes += Array("MTrk".utf8) + be32(length) + track
        }
        return bytes
    }

    /// Note-ons as (frame at 48 kHz, channel, note): at 120 BPM and 96 ticks a quarter, a tick is 250 frames.
    static func onsets(_ file: StandardMIDIFile) throws -> [(frame: Int64, channel: UInt8, note: UInt8)] {
        try file.scheduledMessages(sampleRate: 48_000).compactMap {
            guard case .noteOn(let channel, let note, let velocity) = $0.message, velocity > 0 else { return nil }
            return ($0.sampleTime, channel, note)
        }
    }

    static func expectTheScale(_ bytes: [UInt8], channel: UInt8 = 0, from start: Int64 = 0) throws {
        let played = try onsets(StandardMIDIFile(bytes: bytes))
        #expect(played.map(\.note) == cMajor)
        #expect(played.map(\.frame) == (0..<8).map { start + Int64($0) * 24_000 })
        #expect(played.allSatisfy { $0.channel == channel })
    }

    static func strictError(_ bytes: [UInt8]) -> String? {
        do {
            _ = try StandardMIDIFile(bytes: bytes, reading: .strict)
            return nil
        } catch {
            return error.message
        }
    }

    /// Where an insert before note 4 starts in the file: after the headers (MThd 14 bytes, MTrk 8) and four
    /// notes (8 bytes each, or with running status 7 for the first and 6 for the others).
    static func insertAt(runningStatus: Bool) -> Int { 22 + (runningStatus ? 7 + 3 * 6 : 4 * 8) }

    @Test(
        arguments: [
            ([0xF1, 0x7F], "f1"), ([0xF2, 0x7F, 0x7F], "f2"), ([0xF3, 0x7F], "f3"), ([0xF4], "f4"), ([0xF5], "f5"),
            ([0xF6], "f6"), ([0xF8], "f8"), ([0xF9], "f9"), ([0xFA], "fa"), ([0xFB], "fb"), ([0xFC], "fc"),
            ([0xFD], "fd"), ([0xFE], "fe"),
        ] as [([UInt8], String)])
    func illegalSystemMessagesAreSkippedWithTheirDataBytes(message: [UInt8], hex: String) throws {
        for runningStatus in [false, true] {
            let bytes = Self.file([Self.scale(runningStatus: runningStatus, insert: [0x00] + message)])
            try Self.expectTheScale(bytes)
            let file = try StandardMIDIFile(bytes: bytes)
            // The byte named is the one just past the status byte, as in the strict reader's errors.
            let byte = Self.insertAt(runningStatus: runningStatus) + 2
            #expect(
                file.recoveries.all.map(\.description) == [
                    "track 1, byte \(byte): skipped illegal system message 0x\(hex.uppercased())"
                ])
            #expect(
                Self.strictError(bytes)
                    == "track 1, byte \(byte): system message 0x\(hex) is not allowed in a MIDI file track")
        }
    }

    @Test func repeatedRecoveriesAreCountedOnce() throws {
        let noise: [UInt8] = [0x00, 0xF1, 0x10, 0x00, 0xF8, 0x00, 0xF1, 0x20, 0x00, 0xF1, 0x30]
        let bytes = Self.file([Self.scale(insert: noise)])
        try Self.expectTheScale(bytes)
        #expect(
            try StandardMIDIFile(bytes: bytes).recoveries.all.map(\.description) == [
                "track 1, byte \(Self.insertAt(runningStatus: false) + 2): "
                    + "skipped illegal system message 0xF1, 0xF8 (×4)"
            ])
    }

    @Test(arguments: [
        ([0x00, 0xFF, 0x01, 0x05] + Array("break".utf8), "a meta event"),
        ([0x00, 0xF0, 0x05, 0x7E, 0x7F, 0x09, 0x01, 0xF7], "a system-exclusive event"),
    ])
    func theRunningStatusSurvivesMetaAndSysExEvents(event: [UInt8], what: String) throws {
        let bytes = Self.file([Self.scale(runningStatus: true, insert: event)])
        try Self.expectTheScale(bytes)
        let recoveries = try StandardMIDIFile(bytes: bytes).recoveries.all
        #expect(recoveries.map(\.what) == ["kept the running status across"])
        #expect(recoveries.first?.details == [what])
        let byte = Self.insertAt(runningStatus: true) + event.count + 2
        #expect(Self.strictError(bytes) == "track 1, byte \(byte): data byte 0x43 with no running status")
    }

    @Test func aFormatZeroFileWithTwoTracksPlaysBoth() throws {
        let second = Self.scale().map { $0 == 0x90 ? 0x91 : $0 }  // the same scale on channel 2
        let bytes = Self.file(format: 0, [Self.scale(), second])
        let played = try Self.onsets(StandardMIDIFile(bytes: bytes))
        #expect(played.filter { $0.channel == 0 }.map(\.note) == Self.cMajor)
        #expect(played.filter { $0.channel == 1 }.map(\.note) == Self.cMajor)
        let frames: [Int64] = (0..<8).map { Int64($0) * 24_000 }
        #expect(played.filter { $0.channel == 1 }.map(\.frame) == frames)
        #expect(Self.strictError(bytes) == "format 0 MIDI file declares 2 tracks, expected 1")
    }

    @Test func aFormatTwoFilePlaysItsSequencesOneAfterTheOther() throws {
        // Sequence 1 at 60 BPM (a quarter is 48,000 frames) ending at tick 768; sequence 2 sets no tempo, so
        // it plays at 120 BPM from where sequence 1 ended.
        let slow: [UInt8] = [0x00, 0xFF, 0x51, 0x03, 0x0F, 0x42, 0x40]
        let first = slow + Self.scale()
        let second = Self.scale().map { $0 == 0x90 ? 0x91 : $0 }
        let bytes = Self.file(format: 2, [first, second])
        let file = try StandardMIDIFile(bytes: bytes)
        let played = try Self.onsets(file)
        let slowFrames: [Int64] = (0..<8).map { Int64($0) * 48_000 }
        let laterFrames: [Int64] = (0..<8).map { 384_000 + Int64($0) * 24_000 }
        #expect(played.filter { $0.channel == 0 }.map(\.frame) == slowFrames)
        #expect(played.filter { $0.channel == 1 }.map(\.frame) == laterFrames)
        #expect(played.map(\.note) == Self.cMajor + Self.cMajor)
        #expect(
            file.recoveries.all.map(\.description) == [
                "byte 8: a format-2 file: its 2 sequences play one after the other"
            ])
        #expect(Self.strictError(bytes) == "MIDI file format 2 is not supported (only 0 and 1)")
    }

    @Test func aLastChunkOneByteShortPlaysWhatIsThere() throws {
        var bytes = Self.file([Self.scale()])
        bytes.removeLast()  // the end-of-track event's length byte
        try Self.expectTheScale(bytes)
        let recoveries = try StandardMIDIFile(bytes: bytes).recoveries.all.map(\.description)
        let length = Self.scale().count
        #expect(
            recoveries == [
                "track 1, byte 14: the chunk claims \(length) bytes but the file ends \(length - 1) bytes in: "
                    + "read what is there",
                "track 1, byte \(bytes.count): the data ends inside a meta event (dropped)",
            ])
        #expect(
            Self.strictError(bytes) == "chunk 'MTrk' at byte 14 claims \(length) bytes but only \(length - 1) remain")
    }

    @Test func chunkLengthsThatDisagreeWithTheirDataAreReadByTheData() throws {
        let second = Self.scale().map { $0 == 0x90 ? 0x91 : $0 }
        for (label, lengths) in [("too short", [40]), ("too long", [90]), ("zero", [0])] as [(String, [Int?])] {
            let bytes = Self.file(format: 1, [Self.scale(), second], lengths: lengths)
            let file = try StandardMIDIFile(bytes: bytes)
            let played = try Self.onsets(file)
            #expect(played.filter { $0.channel == 0 }.map(\.note) == Self.cMajor, "\(label)")
            #expect(played.filter { $0.channel == 1 }.map(\.note) == Self.cMajor, "\(label)")
            #expect(!file.recoveries.isEmpty, "\(label)")
            #expect(Self.strictError(bytes) != nil, "\(label)")
        }
    }

    @Test func strayBytesCutMessagesAndOverlongTimesArePlayedPast() throws {
        let cases: [(String, [UInt8], String)] = [
            ("data bytes with no status", [0x00, 0x45, 0x46, 0x47], "skipped data bytes with no running status"),
            (
                "an overlong delta", [0x80, 0x80, 0x80, 0x80, 0x00, 0xFF, 0x01, 0x00],
                "a delta time longer than 4 bytes (read, held to 28 bits)"
            ),
            ("a short tempo", [0x00, 0xFF, 0x51, 0x01, 0x07], "a tempo event of 1 bytes, not 3 (ignored)"),
            (
                "a zero tempo", [0x00, 0xFF, 0x51, 0x03, 0, 0, 0],
                "a tempo of 0 microseconds per quarter note (ignored)"
            ),
        ]
        for (label, insert, what) in cases {
            // At the start of the track, before the first status byte, for the stray data bytes.
            let bytes = Self.file([Self.scale(insert: insert, before: label == "data bytes with no status" ? 0 : 4)])
            try Self.expectTheScale(bytes)
            let file = try StandardMIDIFile(bytes: bytes)
            #expect(
                file.recoveries.all.map { $0.what + ($0.details.isEmpty ? "" : " " + $0.details.joined()) } == [what],
                "\(label)")
            #expect(Self.strictError(bytes) != nil, "\(label)")
        }
    }

    @Test func aMessageCutShortByAStatusByteIsDropped() throws {
        // A controller message missing its value, the next note's status byte right after it (its delta
        // time gone with the lost byte): the next note is read at the same tick.
        var track = Self.scale()
        track.replaceSubrange(32..<33, with: [0x00, 0xB0, 0x07])
        let bytes = Self.file([track])
        try Self.expectTheScale(bytes)
        #expect(
            try StandardMIDIFile(bytes: bytes).recoveries.all.map(\.description) == [
                "track 1, byte 58: dropped a message cut short by a status byte: 0xB0"
            ])
        #expect(Self.strictError(bytes) == "track 1, byte 58: invalid data bytes for status 0xb0")
    }

    @Test func aTrackCutOffMidEventDropsOnlyThatEvent() throws {
        var track = Self.scale(endOfTrack: false)
        track += [0x00, 0x90, 0x48]  // a note-on missing its velocity, then the end of the file
        let bytes = Self.file([track])
        try Self.expectTheScale(bytes)
        #expect(
            try StandardMIDIFile(bytes: bytes).recoveries.all.map(\.what) == [
                "the data ends inside a channel message (dropped)"
            ])
        #expect(Self.strictError(bytes)?.hasSuffix("invalid data bytes for status 0x90") == true)
    }

    /// Found by fuzzing: junk after the first track, then a track chunk header cut off by the end of the file.
    @Test func aTrackHeaderCutOffAfterJunkEndsTheFile() throws {
        let bytes =
            Self.file(format: 1, declaring: 2, [Self.scale()]) + Array("Mk\u{0}Tr".utf8) + Array("MTrk\u{0}/\u{0}".utf8)
        let file = try StandardMIDIFile(bytes: bytes)
        #expect(try Self.onsets(file).map(\.note) == Self.cMajor)
        #expect(
            file.recoveries.all.map(\.what) == [
                "skipped 5 bytes that are not a chunk", "the header declares 2 tracks but the file holds 1",
            ])
    }

    @Test func aMissingEndOfTrackIsToleratedAsAlways() throws {
        let bytes = Self.file([Self.scale(endOfTrack: false)])
        try Self.expectTheScale(bytes)
        #expect(try StandardMIDIFile(bytes: bytes).recoveries.isEmpty)
        #expect(Self.strictError(bytes) == nil)
    }

    @Test(
        arguments: [
            ("empty", [UInt8]()),
            ("no MThd", Array("RIFF....WAVEfmt ".utf8)),
            ("truncated header", Array("MThd".utf8) + [0, 0, 0, 6, 0, 0]),
            ("zero division", Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0, 0]),
            ("a RIFF RMID without data", Array("RIFF".utf8) + [4, 0, 0, 0] + Array("RMID".utf8)),
        ] as [(String, [UInt8])])
    func filesThatAreNotMIDIFilesStayErrors(label: String, bytes: [UInt8]) {
        for reading in [MIDIFileReading.forgiving, .strict] {
            do {
                _ = try StandardMIDIFile(bytes: bytes, reading: reading)
                Issue.record("\(label): read as a MIDI file")
            } catch {
                #expect(error.kind == .notAMIDIFile, "\(label): \(error.message)")
            }
        }
    }

    @Test func aRIFFWrappedFilePlaysLikeTheBareOne() throws {
        let bare = Self.file([Self.scale()])
        func le32(_ value: Int) -> [UInt8] { [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: value >> $0) } }
        let info = Array("LIST".utf8) + le32(3) + [1, 2, 3, 0]  // an odd-length chunk, padded
        let data = Array("data".utf8) + le32(bare.count) + bare
        let rmi = Array("RIFF".utf8) + le32(4 + info.count + data.count) + Array("RMID".utf8) + info + data
        try Self.expectTheScale(rmi)
        #expect(try StandardMIDIFile(bytes: rmi, reading: .strict).tracks == StandardMIDIFile(bytes: bare).tracks)
        // A data chunk cut short: strictly an error, forgivingly what is there.
        let cut = Array(rmi.dropLast(4))
        #expect(Self.strictError(cut)?.contains("'data' chunk") == true)
        #expect(try Self.onsets(StandardMIDIFile(bytes: cut)).map(\.note) == Self.cMajor)
    }

    /// Nothing that read before reads differently: for files that follow the specification — format 0 and
    /// 1, running status or not, SysEx, meta events, SMPTE, many tracks — the forgiving reading equals the
    /// strict one and notes nothing.
    @Test func filesThatFollowTheSpecificationReadExactlyAsBefore() throws {
        var generator = SeededRandom(seed: 0x5EC1A1)
        var files: [[UInt8]] = [Self.file([Self.scale()]), Self.file([Self.scale(runningStatus: true)])]
        for _ in 0..<300 {
            var tracks: [[(tick: Int, event: StandardMIDIFile.Event)]] = []
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                var tick = 0
                var events: [(tick: Int, event: StandardMIDIFile.Event)] = []
                for _ in 0..<Int.random(in: 0...40, using: &generator) {
                    tick += Int.random(in: 0...500, using: &generator)
                    let channel = UInt8.random(in: 0...15, using: &generator)
                    let value = UInt8.random(in: 0...127, using: &generator)
                    let event: StandardMIDIFile.Event =
                        switch Int.random(in: 0...6, using: &generator) {
                        case 0: .midi(.noteOn(channel: channel, note: value, velocity: 1 + value / 2))
                        case 1: .midi(.noteOff(channel: channel, note: value, velocity: 0))
                        case 2: .midi(.controlChange(channel: channel, controller: value, value: value))
                        case 3: .midi(.pitchBend(channel: channel, value: UInt16(value) << 7))
                        case 4: .tempo(microsecondsPerQuarter: 200_000 + Int(value) * 5_000)
                        case 5: .midi(.systemExclusive([0x7E, 0x7F, value]))
                        default: .meta(type: 0x05, data: Array("la".utf8))
                        }
                    events.append((tick, event))
                }
                tracks.append(events)
            }
            files.append(
                StandardMIDIFile.encode(
                    tracks: tracks, ticksPerQuarterNote: Int.random(in: 24...960, using: &generator)))
        }
        for bytes in files {
            let strict = try StandardMIDIFile(bytes: bytes, reading: .strict)
            let forgiving = try StandardMIDIFile(bytes: bytes)
            #expect(forgiving.tracks == strict.tracks && forgiving.division == strict.division)
            #expect(forgiving.recoveries.isEmpty)
            #expect(try forgiving.scheduledMessages(sampleRate: 44_100) == strict.scheduledMessages(sampleRate: 44_100))
        }
    }

    /// Whatever the bytes after a valid header, the forgiving reader reads them: it never refuses a file
    /// for a deviation inside it.
    @Test func theForgivingReaderReadsAnyTrackData() throws {
        var generator = SeededRandom(seed: 0xF0461)
        for _ in 0..<3000 {
            let body = (0..<Int.random(in: 0...80, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            let declared = Int.random(in: 0...100, using: &generator)
            let bytes = Self.file(format: UInt8.random(in: 0...3, using: &generator), [body], lengths: [declared])
            let file = try StandardMIDIFile(bytes: bytes)
            do {
                _ = try file.scheduledMessages(sampleRate: 48_000)
            } catch {
                #expect(error.kind == .pastTheTimeLimit, "\(error.message)")
            }
        }
    }

    @Test func theSummaryListsAtMostEightKindsAndSaysHowManyMore() throws {
        // Ten tracks, each with an illegal message: ten kinds (one per track).
        let tracks = (0..<10).map { _ in Self.scale(insert: [0x00, 0xF4]) }
        let file = try StandardMIDIFile(bytes: Self.file(format: 1, tracks))
        let lines = file.recoveries.lines()
        #expect(lines.count == 9)
        #expect(lines.last == "… and 2 more (aulos check FILE lists them all)")
    }
}
