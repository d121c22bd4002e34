/// Reads the events of one `MTrk` chunk, strictly or forgivingly.
///
/// Strictly, the first deviation from the specification is an error naming the track and byte (the messages
/// are those the reader has always given). Forgivingly, it reads on the way players do and notes each
/// recovery: a system message that has no place in a file (F1–F6, F8–FE) is skipped with its data bytes; the
/// running status survives meta and SysEx events; stray data bytes are skipped to the next status byte; a
/// message cut short by a status byte is dropped and that status byte read as the next event; an event cut
/// off by the end of the data is dropped; a tempo event of the wrong size is ignored; an overlong
/// variable-length quantity is read to its last byte; and a chunk whose length disagrees with its data is
/// read by its data (see `nextChunk`).
///
/// Threads: a value, used by one read on the control side.
struct MIDITrackReader {
    private var reader: ByteReader
    private let mode: MIDIFileReading
    private let track: Int
    private let chunkStart: Int
    private let declaredEnd: Int

    /// A track whose data starts at `start` in `bytes` and whose chunk header claims it ends at `declaredEnd`
    /// (which may lie past the end of the file: a truncated file).
    init(bytes: [UInt8], start: Int, declaredEnd: Int, track: Int, mode: MIDIFileReading) {
        self.reader = ByteReader(bytes: bytes, from: start, to: declaredEnd)
        self.mode = mode
        self.track = track
        self.chunkStart = start - 8
        self.declaredEnd = declaredEnd
    }

    /// The track's events, the tick where it ends (its end-of-track event, or its last event), and where
    /// the next chunk starts.
    mutating func read(noting recoveries: inout MIDIFileRecoveries) throws(MIDIFileError) -> (
        events: [StandardMIDIFile.TrackEvent], endTick: Int, nextChunk: Int
    ) {
        let forgiving = mode == .forgiving
        let bytes = reader.bytes
        if forgiving {
            if declaredEnd > bytes.count {
                // A strict read refused this chunk header already.
                recoveries.note(
                    "the chunk claims \(declaredLength) bytes but the file ends \(bytes.count - chunkStart - 8) bytes "
                        + "in: read what is there", track: track, byte: chunkStart)
            } else if declaredEnd < bytes.count, !Self.isChunkHeader(bytes, at: declaredEnd) {
                // What follows the chunk is not a chunk: its length may be too short. The events may read
                // on to the next track chunk (or the end of the file).
                reader.end = Self.nextTrackChunk(bytes, after: declaredEnd) ?? bytes.count
            }
        }
        var events: [StandardMIDIFile.TrackEvent] = []
        var tick = 0
        var runningStatus: UInt8 = 0
        var readsDelta = true
        var endOfTrack = false
        // What cancelled the running status by the specification, which a forgiving reading keeps anyway.
        var cancelledBy: String?
        events: while reader.remaining > 0 {
            if readsDelta {
                guard let (delta, overlong) = try? reader.variableLength(allowingOverlong: forgiving) else {
                    if forgiving {
                        note("the data ends inside a delta time", &recoveries)
                        break events
                    }
                    throw fail("truncated or overlong delta time")
                }
                if overlong { note("a delta time longer than 4 bytes (read, held to 28 bits)", &recoveries) }
                tick += delta
            }
            readsDelta = true
            guard let first = try? reader.uint8() else {
                if forgiving {
                    note("the data ends after a delta time, before its event", &recoveries)
                    break events
                }
                throw fail("event missing after delta time")
            }
            switch first {
            case 0xFF:
                guard let type = try? reader.uint8(),
                    let (length, _) = try? reader.variableLength(allowingOverlong: forgiving),
                    let data = try? reader.bytes(length)
                else {
                    if forgiving {
                        note("the data ends inside a meta event (dropped)", &recoveries)
                        break events
                    }
                    throw fail("truncated meta event")
                }
                // Players keep the running status across meta events; the specification cancels it.
                if !forgiving { runningStatus = 0 } else if runningStatus != 0 { cancelledBy = "a meta event" }
                if type == 0x2F {
                    endOfTrack = true
                    break events
                }
                if type == 0x51 {
                    if data.count != 3 {
                        if forgiving {
                            note("a tempo event of \(data.count) bytes, not 3 (ignored)", &recoveries)
                            continue
                        }
                        throw fail("tempo meta event with \(data.count) bytes, expected 3")
                    }
                    let tempo = Int(data[0]) << 16 | Int(data[1]) << 8 | Int(data[2])
                    if tempo == 0 {
                        if forgiving {
                            note("a tempo of 0 microseconds per quarter note (ignored)", &recoveries)
                            continue
                        }
                        throw fail("tempo of 0 microseconds per quarter note")
                    }
                    events.append(.init(tick: tick, event: .tempo(microsecondsPerQuarter: tempo)))
                } else {
                    events.append(.init(tick: tick, event: .meta(type: type, data: data)))
                }
                continue
            case 0xF0, 0xF7:
                guard let (length, _) = try? reader.variableLength(allowingOverlong: forgiving),
                    let data = try? reader.bytes(length)
                else {
                    if forgiving {
                        note("the data ends inside a system-exclusive event (dropped)", &recoveries)
                        break events
                    }
                    throw fail("truncated system-exclusive event")
                }
                if !forgiving {
                    runningStatus = 0
                } else if runningStatus != 0 {
                    cancelledBy = "a system-exclusive event"
                }
                let payload = data.last == 0xF7 ? Array(data.dropLast()) : data
                if first == 0xF0 { events.append(.init(tick: tick, event: .midi(.systemExclusive(payload)))) }
                continue
            case 0x80...0xEF:
                runningStatus = first
                cancelledBy = nil
            case 0x00...0x7F:
                guard runningStatus != 0 else {
                    if forgiving {
                        // Skip to the next status byte and read it as an event at this tick.
                        note("skipped data bytes with no running status", &recoveries)
                        while let byte = reader.peek(), byte < 0x80 { reader.position += 1 }
                        readsDelta = false
                        continue
                    }
                    throw fail("data byte 0x\(String(first, radix: 16)) with no running status")
                }
                if let cancelling = cancelledBy {
                    note("kept the running status across", detail: cancelling, &recoveries)
                    cancelledBy = nil
                }
                reader.position -= 1
            default:
                // F1–F6 and F8–FE: wire messages that have no place in a file. Players skip them (with the
                // data bytes of those that have them) and play on, keeping the running status.
                guard forgiving else {
                    throw fail("system message 0x\(String(first, radix: 16)) is not allowed in a MIDI file track")
                }
                let status = "0x" + String(first, radix: 16, uppercase: true)
                note("skipped illegal system message", detail: status, &recoveries)
                for _ in 0..<MIDIParser.dataLength(first) {
                    guard let byte = reader.peek(), byte < 0x80 else { break }
                    reader.position += 1
                }
                continue
            }
            // A channel message with status `runningStatus`, its data bytes next.
            guard forgiving else {
                do {
                    events.append(.init(tick: tick, event: .midi(try channelMessage(runningStatus))))
                } catch { throw fail(error.message) }
                continue
            }
            switch channelMessageForgiving(runningStatus) {
            case .message(let message): events.append(.init(tick: tick, event: .midi(message)))
            case .cutShort:
                let status = "0x" + String(runningStatus, radix: 16, uppercase: true)
                recoveries.note(
                    "dropped a message cut short by a status byte:", detail: status, track: track,
                    byte: reader.position + 1)
                readsDelta = false
            case .ended:
                note("the data ends inside a channel message (dropped)", &recoveries)
                break events
            }
        }
        let next = nextChunk(stoppedAt: reader.position, sawEndOfTrack: endOfTrack, noting: &recoveries)
        return (events, endOfTrack ? tick : events.last?.tick ?? 0, next)
    }

    private var declaredLength: Int { declaredEnd - chunkStart - 8 }

    /// Where the next chunk starts. Strictly, where this chunk's header says it ends. Forgivingly, by the
    /// data when the header disagrees with it: after the events that went on past a length that was too
    /// short, or — when the end-of-track came early, a track chunk starts right after it and the declared end
    /// is no chunk — after the end-of-track (the length was too long).
    private func nextChunk(stoppedAt position: Int, sawEndOfTrack: Bool, noting recoveries: inout MIDIFileRecoveries)
        -> Int
    {
        guard mode == .forgiving else { return declaredEnd }
        let bytes = reader.bytes
        let end = min(declaredEnd, bytes.count)
        if position > end {
            recoveries.note(
                "the chunk claims \(declaredLength) bytes but its events go on: read to byte \(position)",
                track: track, byte: chunkStart)
            return position
        }
        let declaredEndIsAChunk = declaredEnd < bytes.count && Self.isChunkHeader(bytes, at: declaredEnd)
        if sawEndOfTrack, position < end, !declaredEndIsAChunk, Self.isTrackChunk(bytes, at: position) {
            recoveries.note(
                "the chunk claims \(declaredLength) bytes but the next track starts after its end-of-track, "
                    + "at byte \(position)",
                track: track, byte: chunkStart)
            return position
        }
        return end
    }

    private enum ForgivingMessage {
        case message(MIDIMessage)
        case cutShort
        case ended
    }

    private mutating func channelMessageForgiving(_ status: UInt8) -> ForgivingMessage {
        var data: [UInt8] = [0, 0]
        for index in 0..<MIDIParser.dataLength(status) {
            guard let byte = reader.peek() else { return .ended }
            guard byte < 0x80 else { return .cutShort }
            data[index] = byte
            reader.position += 1
        }
        return MIDIMessage(status: status, data1: data[0], data2: data[1]).map { .message($0) } ?? .cutShort
    }

    /// A channel message read as the reader always has (strict).
    private mutating func channelMessage(_ status: UInt8) throws(MIDIFileError) -> MIDIMessage {
        let count = MIDIParser.dataLength(status)
        guard let data1 = try? reader.uint8() else { throw MIDIFileError("truncated channel message") }
        let data2 = count == 2 ? (try? reader.uint8()) : 0
        guard let data2, let message = MIDIMessage(status: status, data1: data1, data2: data2) else {
            throw MIDIFileError("invalid data bytes for status 0x\(String(status, radix: 16))")
        }
        return message
    }

    private func fail(_ what: String) -> MIDIFileError {
        MIDIFileError("track \(track + 1), byte \(reader.position): \(what)")
    }

    /// Notes a recovery at the current position: just past the byte that needed it.
    private func note(_ what: String, detail: String? = nil, _ recoveries: inout MIDIFileRecoveries) {
        recoveries.note(what, detail: detail, track: track, byte: reader.position)
    }

    /// Four printable ASCII characters: what a chunk type looks like ("MTrk", "XFIH", "Junk").
    static func isChunkHeader(_ bytes: [UInt8], at position: Int) -> Bool {
        position + 8 <= bytes.count && bytes[position..<(position + 4)].allSatisfy { (0x20...0x7E).contains($0) }
    }

    static func isTrackChunk(_ bytes: [UInt8], at position: Int) -> Bool {
        position + 4 <= bytes.count && bytes[position..<(position + 4)].elementsEqual("MTrk".utf8)
    }

    /// The offset of the next "MTrk" at or after `position`.
    static func nextTrackChunk(_ bytes: [UInt8], after position: Int) -> Int? {
        var index = position
        while index + 4 <= bytes.count {
            if isTrackChunk(bytes, at: index) { return index }
            index += 1
        }
        return nil
    }
}
