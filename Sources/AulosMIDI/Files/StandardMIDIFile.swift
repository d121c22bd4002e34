/// A Standard MIDI File (SMF): its division and tracks of timed events. Formats 0 and 1 (and, read
/// forgivingly, format 2, whose sequences play one after the other), bare or wrapped in a RIFF `RMID` file.
///
/// Threads: control side (it allocates). Reading never traps on bad input. Read strictly, every deviation
/// from the specification is a `MIDIFileError` naming the track and byte offset. Read forgivingly (the
/// default), a file the strict reader accepts reads exactly as it would strictly, and any other file is
/// read as players read it, with what was done to get past each deviation in `recoveries`; only a file that
/// is not a MIDI file at all (no `MThd`, empty, broken inside its header) is refused.
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
    /// The tracks' events in tick order; a format-2 file's sequences already placed one after the other.
    public let tracks: [[TrackEvent]]
    /// What a forgiving read did to get past deviations; empty for a file that follows the specification.
    public let recoveries: MIDIFileRecoveries

    /// Reads a file's bytes.
    public init(bytes: [UInt8], reading: MIDIFileReading = .forgiving) throws(MIDIFileError) {
        let bytes = try Self.unwrappingRIFF(bytes, reading: reading)
        do {
            self = try StandardMIDIFile(parsing: bytes, mode: .strict)
        } catch let error where error.kind == .deviation && reading == .forgiving {
            self = try StandardMIDIFile(parsing: bytes, mode: .forgiving)
        }
    }

    private init(parsing bytes: [UInt8], mode: MIDIFileReading) throws(MIDIFileError) {
        let forgiving = mode == .forgiving
        var recoveries = MIDIFileRecoveries()
        var reader = ByteReader(bytes: bytes)
        guard bytes.starts(with: Array("MThd".utf8)) else {
            throw MIDIFileError("not a Standard MIDI File (it does not start with 'MThd')", kind: .notAMIDIFile)
        }
        guard bytes.count >= 14 else {
            throw MIDIFileError(
                "truncated: the file ends after \(bytes.count) bytes, inside its 14-byte MThd header",
                kind: .notAMIDIFile)
        }
        _ = try reader.tag()
        let headerLength = try reader.uint32()
        guard headerLength >= 6 else {
            throw MIDIFileError("MThd header is \(headerLength) bytes, expected 6", kind: .notAMIDIFile)
        }
        var format = Int(try reader.uint16())
        let trackCount = Int(try reader.uint16())
        let rawDivision = try reader.uint16()
        guard Int(headerLength) - 6 <= reader.remaining else {
            throw MIDIFileError(
                "MThd header claims \(headerLength) bytes but the file holds \(bytes.count - 8)", kind: .notAMIDIFile)
        }
        try reader.skip(Int(headerLength) - 6)
        switch format {
        case 0, 1: break
        case 2 where forgiving:
            recoveries.note(
                "a format-2 file: its \(trackCount) sequences play one after the other", track: nil, byte: 8)
        default:
            guard forgiving else { throw MIDIFileError("MIDI file format \(format) is not supported (only 0 and 1)") }
            recoveries.note("MIDI file format \(format) does not exist: read as format 1", track: nil, byte: 8)
            format = 1
        }
        if format == 0 && trackCount != 1 {
            guard forgiving else { throw MIDIFileError("format 0 MIDI file declares \(trackCount) tracks, expected 1") }
            recoveries.note(
                "a format-0 file that declares \(trackCount) tracks: they play together, as in format 1", track: nil,
                byte: 10)
        }
        if rawDivision & 0x8000 != 0 {
            let fps = -Int(Int8(bitPattern: UInt8(rawDivision >> 8)))
            let ticks = Int(rawDivision & 0xFF)
            guard [24, 25, 29, 30].contains(fps), ticks > 0 else {
                throw MIDIFileError(
                    "invalid SMPTE division (\(fps) fps, \(ticks) ticks per frame)", kind: .notAMIDIFile)
            }
            division = .smpte(framesPerSecond: fps, ticksPerFrame: ticks)
        } else {
            guard rawDivision > 0 else {
                throw MIDIFileError("division of 0 ticks per quarter note", kind: .notAMIDIFile)
            }
            division = .ticksPerQuarterNote(Int(rawDivision))
        }
        var tracks: [[TrackEvent]] = []
        var endTicks: [Int] = []
        while tracks.count < trackCount {
            guard reader.remaining >= 8 else {
                guard forgiving else { throw MIDIFileError("file ends after \(tracks.count) of \(trackCount) tracks") }
                recoveries.note(
                    "the header declares \(trackCount) track\(trackCount == 1 ? "" : "s") but the file holds "
                        + "\(tracks.count)",
                    track: nil, byte: 10)
                break
            }
            if forgiving && !MIDITrackReader.isChunkHeader(bytes, at: reader.position) {
                // Not a chunk: bytes a wrong chunk length left behind. Players look for the next track.
                guard let next = MIDITrackReader.nextTrackChunk(bytes, after: reader.position) else {
                    reader.position = reader.end
                    continue
                }
                recoveries.note(
                    "skipped \(next - reader.position) bytes that are not a chunk", track: nil, byte: reader.position)
                reader.position = next
                continue  // a track chunk header cut off by the end of the file is checked for above
            }
            let tag = try reader.tag()
            let length = Int(try reader.uint32())
            if length > reader.remaining && !(forgiving && tag == "MTrk") {
                guard forgiving else {
                    throw MIDIFileError(
                        "chunk '\(tag)' at byte \(reader.position - 8) claims \(length) bytes but only "
                            + "\(reader.remaining) remain")
                }
                recoveries.note(
                    "chunk '\(tag)' claims \(length) bytes but only \(reader.remaining) remain: ignored", track: nil,
                    byte: reader.position - 8)
                reader.position = reader.end
                continue
            }
            guard tag == "MTrk" else {  // unknown chunks are skipped, as the SMF spec asks
                try reader.skip(length)
                continue
            }
            var track = MIDITrackReader(
                bytes: bytes, start: reader.position, declaredEnd: reader.position + length, track: tracks.count,
                mode: mode)
            let read = try track.read(noting: &recoveries)
            tracks.append(read.events)
            endTicks.append(read.endTick)
            reader.position = read.nextChunk
        }
        self.format = format
        self.tracks = format == 2 ? Self.oneAfterAnother(tracks, endTicks: endTicks) : tracks
        self.recoveries = recoveries
    }

    /// A format-2 file's sequences placed one after the other, each starting where the one before ended (its
    /// end-of-track), each at 120 BPM until its own tempo events say otherwise: sequences are independent.
    private static func oneAfterAnother(_ tracks: [[TrackEvent]], endTicks: [Int]) -> [[TrackEvent]] {
        var start = 0
        var placed: [[TrackEvent]] = []
        for (events, end) in zip(tracks, endTicks) {
            var shifted = start > 0 ? [TrackEvent(tick: start, event: .tempo(microsecondsPerQuarter: 500_000))] : []
            shifted += events.map { TrackEvent(tick: start + $0.tick, event: $0.event) }
            placed.append(shifted)
            start += end
        }
        return placed
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
                        + InputTimeLimit.description, kind: .pastTheTimeLimit)
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
