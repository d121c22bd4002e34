/// A Standard MIDI File (SMF) of format 0 or 1: its division and tracks of timed events.
///
/// Threads: control side (it allocates). Reading never traps on bad input: every malformed file is a
/// `MIDIFileError` naming the track and byte offset.
public struct StandardMIDIFile: Sendable {
    public enum Division: Equatable, Sendable {
        case ticksPerQuarterNote(Int)
        /// SMPTE: frames per second (24, 25, 29 = 29.97 drop, 30) and ticks per frame.
        case smpte(framesPerSecond: Int, ticksPerFrame: Int)
    }

    public enum Event: Equatable, Sendable {
        case midi(MIDIMessage)
        /// Tempo in microseconds per quarter note (meta event 0x51).
        case tempo(microsecondsPerQuarter: Int)
        case meta(type: UInt8, data: [UInt8])
    }

    public struct TrackEvent: Equatable, Sendable {
        public var tick: Int
        public var event: Event
    }

    public let format: Int
    public let division: Division
    public let tracks: [[TrackEvent]]

    /// Parses a file's bytes.
    public init(bytes: [UInt8]) throws(MIDIFileError) {
        var reader = ByteReader(bytes: bytes)
        guard bytes.starts(with: Array("MThd".utf8)) else {
            throw MIDIFileError("not a Standard MIDI File (it does not start with 'MThd')")
        }
        guard bytes.count >= 14 else {
            throw MIDIFileError("truncated: the file ends after \(bytes.count) bytes, inside its 14-byte MThd header")
        }
        _ = try reader.tag()
        let headerLength = try reader.uint32()
        guard headerLength >= 6 else { throw MIDIFileError("MThd header is \(headerLength) bytes, expected 6") }
        let format = Int(try reader.uint16())
        let trackCount = Int(try reader.uint16())
        let rawDivision = try reader.uint16()
        try reader.skip(Int(headerLength) - 6)
        guard format == 0 || format == 1 else {
            throw MIDIFileError("MIDI file format \(format) is not supported (only 0 and 1)")
        }
        if format == 0 && trackCount != 1 {
            throw MIDIFileError("format 0 MIDI file declares \(trackCount) tracks, expected 1")
        }
        if rawDivision & 0x8000 != 0 {
            let fps = -Int(Int8(bitPattern: UInt8(rawDivision >> 8)))
            let ticks = Int(rawDivision & 0xFF)
            guard [24, 25, 29, 30].contains(fps), ticks > 0 else {
                throw MIDIFileError("invalid SMPTE division (\(fps) fps, \(ticks) ticks per frame)")
            }
            division = .smpte(framesPerSecond: fps, ticksPerFrame: ticks)
        } else {
            guard rawDivision > 0 else { throw MIDIFileError("division of 0 ticks per quarter note") }
            division = .ticksPerQuarterNote(Int(rawDivision))
        }
        var tracks: [[TrackEvent]] = []
        while tracks.count < trackCount {
            guard reader.remaining >= 8 else {
                throw MIDIFileError("file ends after \(tracks.count) of \(trackCount) tracks")
            }
            let tag = try reader.tag()
            let length = Int(try reader.uint32())
            guard length <= reader.remaining else {
                throw MIDIFileError(
                    "chunk '\(tag)' at byte \(reader.position - 8) claims \(length) bytes but only "
                        + "\(reader.remaining) remain"
                )
            }
            let body = Array(bytes[reader.position..<(reader.position + length)])
            let start = reader.position
            try reader.skip(length)
            guard tag == "MTrk" else { continue }  // unknown chunks are skipped, as the SMF spec asks
            tracks.append(try Self.parseTrack(body, index: tracks.count, fileOffset: start))
        }
        self.format = format
        self.tracks = tracks
    }

    private static func parseTrack(_ bytes: [UInt8], index: Int, fileOffset: Int) throws(MIDIFileError) -> [TrackEvent]
    {
        var reader = ByteReader(bytes: bytes)
        var events: [TrackEvent] = []
        var tick = 0
        var runningStatus: UInt8 = 0
        func fail(_ what: String) -> MIDIFileError {
            MIDIFileError("track \(index + 1), byte \(fileOffset + reader.position): \(what)")
        }
        while reader.remaining > 0 {
            guard let delta = try? reader.variableLength() else { throw fail("truncated or overlong delta time") }
            tick += delta
            guard let first = try? reader.uint8() else { throw fail("event missing after delta time") }
            switch first {
            case 0xFF:
                guard let type = try? reader.uint8(), let length = try? reader.variableLength(),
                    let data = try? reader.bytes(length)
                else { throw fail("truncated meta event") }
                runningStatus = 0
                if type == 0x2F { return events }  // end of track
                if type == 0x51 {
                    guard data.count == 3 else { throw fail("tempo meta event with \(data.count) bytes, expected 3") }
                    let tempo = Int(data[0]) << 16 | Int(data[1]) << 8 | Int(data[2])
                    guard tempo > 0 else { throw fail("tempo of 0 microseconds per quarter note") }
                    events.append(TrackEvent(tick: tick, event: .tempo(microsecondsPerQuarter: tempo)))
                } else {
                    events.append(TrackEvent(tick: tick, event: .meta(type: type, data: data)))
                }
            case 0xF0, 0xF7:
                guard let length = try? reader.variableLength(), let data = try? reader.bytes(length) else {
                    throw fail("truncated system-exclusive event")
                }
                runningStatus = 0
                let payload = data.last == 0xF7 ? Array(data.dropLast()) : data
                if first == 0xF0 { events.append(TrackEvent(tick: tick, event: .midi(.systemExclusive(payload)))) }
            case 0x80...0xEF:
                runningStatus = first
                let message: MIDIMessage
                do { message = try channelMessage(first, &reader) } catch { throw fail(error.message) }
                events.append(TrackEvent(tick: tick, event: .midi(message)))
            case 0x00...0x7F:
                guard runningStatus != 0 else {
                    throw fail("data byte 0x\(String(first, radix: 16)) with no running status")
                }
                reader.position -= 1
                let message: MIDIMessage
                do { message = try channelMessage(runningStatus, &reader) } catch { throw fail(error.message) }
                events.append(TrackEvent(tick: tick, event: .midi(message)))
            default:
                throw fail("system message 0x\(String(first, radix: 16)) is not allowed in a MIDI file track")
            }
        }
        return events  // a missing end-of-track is tolerated: many writers omit it
    }

    private static func channelMessage(_ status: UInt8, _ reader: inout ByteReader) throws(MIDIFileError) -> MIDIMessage
    {
        let count = MIDIParser.dataLength(status)
        guard let data1 = try? reader.uint8() else { throw MIDIFileError("truncated channel message") }
        let data2 = count == 2 ? (try? reader.uint8()) : 0
        guard let data2, let message = MIDIMessage(status: status, data1: data1, data2: data2) else {
            throw MIDIFileError("invalid data bytes for status 0x\(String(status, radix: 16))")
        }
        return message
    }

    /// Every MIDI message of every track at its sample time, applying the tempo map (tempo events from any
    /// track, in tick order) at `sampleRate`. Same-tick events keep track order, then file order. An event
    /// later than `InputTimeLimit` is an error (its sample time could not be represented).
    public func scheduledMessages(sampleRate: Double) throws(MIDIFileError) -> [ScheduledMessage] {
        var result: [ScheduledMessage] = []
        result.reserveCapacity(tracks.reduce(0) { $0 + $1.count })
        var seconds = 0.0
        var lastTick = 0
        var tempo = 500_000  // microseconds per quarter note: 120 BPM until told otherwise
        // Each track is in tick order already: merge them through a heap of track heads (the earliest tick,
        // the lowest track on a tie) rather than copy and sort every event, which took five times the
        // file's events in memory; a heap, because a file may declare 65,535 tracks.
        var heads = [Int](repeating: 0, count: tracks.count)
        var heap = TrackHeads(tracks.indices.filter { !tracks[$0].isEmpty }.map { (tracks[$0][0].tick, $0) })
        while let next = heap.popFirst() {
            let entry = (tick: next.tick, track: next.track, event: tracks[next.track][heads[next.track]].event)
            heads[next.track] += 1
            if heads[next.track] < tracks[next.track].count {
                heap.insert((tracks[next.track][heads[next.track]].tick, next.track))
            }
            switch division {
            case .ticksPerQuarterNote(let ticks):
                seconds += Double(entry.tick - lastTick) * Double(tempo) / (Double(ticks) * 1_000_000)
            case .smpte(let fps, let ticksPerFrame):
                let rate = fps == 29 ? 29.97 : Double(fps)
                seconds += Double(entry.tick - lastTick) / (rate * Double(ticksPerFrame))
            }
            lastTick = entry.tick
            guard seconds <= InputTimeLimit.seconds else {
                throw MIDIFileError(
                    "track \(entry.track + 1): the event at tick \(entry.tick) comes "
                        + "\((seconds / 3600).rounded(.down).clean) hours in; a MIDI file places events within "
                        + InputTimeLimit.description)
            }
            switch entry.event {
            case .tempo(let microseconds): tempo = microseconds
            case .midi(let message):
                result.append(ScheduledMessage(sampleTime: Int64((seconds * sampleRate).rounded()), message: message))
            case .meta: break
            }
        }
        return result
    }

    /// The tempo map as (beat, BPM) pairs from beat 0 (120 BPM until the first tempo event); SMPTE files,
    /// which have no beats, report 120 BPM.
    public var tempoMap: [(beat: Double, bpm: Double)] {
        guard case .ticksPerQuarterNote(let ticks) = division else { return [(0, 120)] }
        var map: [(beat: Double, bpm: Double)] = [(0, 120)]
        let tempos = tracks.flatMap { $0 }.compactMap { entry -> (Int, Int)? in
            if case .tempo(let microseconds) = entry.event { return (entry.tick, microseconds) }
            return nil
        }.sorted { $0.0 < $1.0 }
        for (tick, microseconds) in tempos {
            let beat = Double(tick) / Double(ticks)
            let bpm = 60_000_000 / Double(microseconds)
            if beat == map.last!.beat { map[map.count - 1] = (beat, bpm) } else { map.append((beat, bpm)) }
        }
        return map
    }

    /// Writes a format-1 file (for tests and tools): one track per array, ticks per quarter note.
    public static func encode(tracks: [[(tick: Int, event: Event)]], ticksPerQuarterNote: Int) -> [UInt8] {
        func be32(_ v: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) } }
        func vlq(_ value: Int) -> [UInt8] {
            var bytes = [UInt8(value & 0x7F)]
            var rest = value >> 7
            while rest > 0 {
                bytes.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
                rest >>= 7
            }
            return bytes
        }
        var file: [UInt8] =
            Array("MThd".utf8) + be32(6) + [
                0, 1, UInt8(tracks.count >> 8), UInt8(tracks.count & 0xFF),
                UInt8(ticksPerQuarterNote >> 8), UInt8(ticksPerQuarterNote & 0xFF),
            ]
        for track in tracks {
            var body: [UInt8] = []
            var last = 0
            for (tick, event) in track.sorted(by: { $0.tick < $1.tick }) {
                body += vlq(tick - last)
                last = tick
                switch event {
                case .midi(.systemExclusive(let data)): body += [0xF0] + vlq(data.count + 1) + data + [0xF7]
                case .midi(let message): body += message.bytes
                case .tempo(let t):
                    body += [0xFF, 0x51, 3, UInt8(t >> 16 & 0xFF), UInt8(t >> 8 & 0xFF), UInt8(t & 0xFF)]
                case .meta(let type, let data): body += [0xFF, type] + vlq(data.count) + data
                }
            }
            body += [0, 0xFF, 0x2F, 0]
            file += Array("MTrk".utf8) + be32(body.count) + body
        }
        return file
    }
}

/// Big-endian reading with bounds checks: every read past the end throws instead of trapping.
struct ByteReader {
    let bytes: [UInt8]
    var position = 0

    var remaining: Int { bytes.count - position }

    mutating func uint8() throws(MIDIFileError) -> UInt8 {
        guard position < bytes.count else { throw MIDIFileError("unexpected end of data") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func uint16() throws(MIDIFileError) -> UInt16 { UInt16(try uint8()) << 8 | UInt16(try uint8()) }

    mutating func uint32() throws(MIDIFileError) -> UInt32 { UInt32(try uint16()) << 16 | UInt32(try uint16()) }

    mutating func tag() throws(MIDIFileError) -> String { String(decoding: try bytes(4), as: UTF8.self) }

    mutating func bytes(_ count: Int) throws(MIDIFileError) -> [UInt8] {
        guard count >= 0, count <= remaining else { throw MIDIFileError("unexpected end of data") }
        defer { position += count }
        return Array(bytes[position..<(position + count)])
    }

    mutating func skip(_ count: Int) throws(MIDIFileError) { _ = try bytes(count) }

    /// A variable-length quantity: at most four bytes (28 bits), as the SMF spec allows.
    mutating func variableLength() throws(MIDIFileError) -> Int {
        var value = 0
        for _ in 0..<4 {
            let byte = try uint8()
            value = value << 7 | Int(byte & 0x7F)
            if byte & 0x80 == 0 { return value }
        }
        throw MIDIFileError("variable-length quantity longer than 4 bytes")
    }
}

/// A binary min-heap of tracks by their next event's (tick, track): the merge in `scheduledMessages`.
struct TrackHeads {
    private var items: [(tick: Int, track: Int)]

    init(_ items: [(tick: Int, track: Int)]) {
        self.items = []
        self.items.reserveCapacity(items.count)
        for item in items { insert(item) }
    }

    private static func before(_ a: (tick: Int, track: Int), _ b: (tick: Int, track: Int)) -> Bool {
        a.tick != b.tick ? a.tick < b.tick : a.track < b.track
    }

    mutating func insert(_ item: (tick: Int, track: Int)) {
        items.append(item)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popFirst() -> (tick: Int, track: Int)? {
        guard let first = items.first else { return nil }
        let last = items.removeLast()
        guard !items.isEmpty else { return first }
        items[0] = last
        var parent = 0
        while true {
            let (left, right) = (2 * parent + 1, 2 * parent + 2)
            var smallest = parent
            if left < items.count && Self.before(items[left], items[smallest]) { smallest = left }
            if right < items.count && Self.before(items[right], items[smallest]) { smallest = right }
            guard smallest != parent else { return first }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
