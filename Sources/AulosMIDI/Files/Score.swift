/// A small, human-writable score: one event per line, `TIME COMMAND ARGUMENTS [key=value…]`.
/// The format is documented in docs/score.md. Every error names the file and line.
///
/// Threads: control side.
public struct Score: Sendable {
    /// A time or duration as written: frames are exact, seconds absolute, beats follow the tempo map.
    public enum Time: Equatable, Sendable {
        case frames(Int64)
        case seconds(Double)
        case beats(Double)
    }

    public enum Command: Equatable, Sendable {
        case tempo(bpm: Double)
        case note(note: UInt8, duration: Time, velocity: UInt8, channel: UInt8)
        /// One or more messages at the same time (a program change with its bank select).
        case messages([MIDIMessage])
        case end
    }

    public struct Line: Equatable, Sendable {
        public var number: Int
        public var time: Time
        public var command: Command
    }

    public let name: String
    public let lines: [Line]

    public init(text: String, name: String = "score") throws(MIDIFileError) {
        self.name = name
        var lines: [Line] = []
        // Lines end in LF, CRLF (a Windows editor; Swift reads "\r\n" as one character, so splitting at "\n"
        // alone would see one long line) or CR; a byte-order mark at the start is not part of the first word.
        let body = text.hasPrefix("\u{FEFF}") ? text.dropFirst() : Substring(text)
        for (index, raw) in body.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let number = index + 1
            let words = Self.words(of: raw)
            if words.isEmpty { continue }
            do {
                lines.append(try Self.parseLine(words, number: number))
            } catch {
                throw MIDIFileError("\(name):\(number): \(error.message)")
            }
        }
        self.lines = lines
    }

    /// The words of a line before its comment. `#` starts a comment at the start of a line or after white
    /// space; elsewhere it is part of a word (`F#3` is a note).
    static func words(of line: Substring) -> [String] {
        var words: [String] = []
        for word in line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }) {
            if word.hasPrefix("#") { break }
            words.append(String(word))
        }
        return words
    }

    private static func parseLine(_ words: [String], number: Int) throws(MIDIFileError) -> Line {
        guard words.count >= 2 else {
            throw MIDIFileError("expected TIME COMMAND, got '\(words.joined(separator: " "))'")
        }
        let time = try parseTime(words[0])
        var positional: [String] = []
        var options: [String: String] = [:]
        for word in words[2...] {
            if let equals = word.firstIndex(of: "=") {
                let key = String(word[..<equals]).lowercased()
                guard ["vel", "ch", "bank"].contains(key) else {
                    throw MIDIFileError("unknown option '\(key)=' (vel=, ch=, bank=)")
                }
                options[key] = String(word[word.index(after: equals)...])
            } else {
                positional.append(word)
            }
        }
        func count(_ expected: Int, _ usage: String) throws(MIDIFileError) {
            guard positional.count == expected else { throw MIDIFileError("usage: TIME \(usage)") }
        }
        let channel =
            try options["ch"].map { (text: String) throws(MIDIFileError) -> UInt8 in
                UInt8(try integer(text, in: 1...16, what: "channel") - 1)
            } ?? 0
        let command: Command
        switch words[1].lowercased() {
        case "tempo":
            try count(1, "tempo BPM")
            guard let bpm = Double(positional[0]), bpm >= 1, bpm <= 1000 else {
                throw MIDIFileError("tempo '\(positional[0])' is not a number of beats per minute in 1...1000")
            }
            guard case .beats = time else {
                throw MIDIFileError("tempo changes are placed in beats (e.g. '4b tempo 90')")
            }
            command = .tempo(bpm: bpm)
        case "note":
            try count(2, "note NOTE DURATION [vel=1…127] [ch=1…16]")
            let duration = try parseTime(positional[1])
            if duration.isBeats && !time.isBeats {
                throw MIDIFileError("a duration in beats needs a start in beats; give the length in s, ms or f")
            }
            command = .note(
                note: try parseNote(positional[0]), duration: duration,
                velocity: UInt8(try integer(options["vel"] ?? "100", in: 1...127, what: "velocity")), channel: channel)
        case "on":
            try count(1, "on NOTE [vel=1…127] [ch=1…16]")
            command = .messages([
                .noteOn(
                    channel: channel, note: try parseNote(positional[0]),
                    velocity: UInt8(try integer(options["vel"] ?? "100", in: 1...127, what: "velocity")))
            ])
        case "off":
            try count(1, "off NOTE [vel=0…127] [ch=1…16]")
            command = .messages([
                .noteOff(
                    channel: channel, note: try parseNote(positional[0]),
                    velocity: UInt8(try integer(options["vel"] ?? "64", in: 0...127, what: "velocity")))
            ])
        case "cc":
            try count(2, "cc CONTROLLER VALUE [ch=1…16]")
            command = .messages([
                .controlChange(
                    channel: channel, controller: UInt8(try integer(positional[0], in: 0...127, what: "controller")),
                    value: UInt8(try integer(positional[1], in: 0...127, what: "value")))
            ])
        case "program":
            try count(1, "program 0…127 [bank=MSB or MSB:LSB] [ch=1…16]")
            var messages: [MIDIMessage] = []
            if let bank = options["bank"] {
                let parts = bank.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
                guard (1...2).contains(parts.count) else {
                    throw MIDIFileError("bank= takes MSB or MSB:LSB, not '\(bank)'")
                }
                messages.append(
                    .controlChange(
                        channel: channel, controller: 0,
                        value: UInt8(try integer(parts[0], in: 0...127, what: "bank MSB"))))
                if parts.count == 2 {
                    messages.append(
                        .controlChange(
                            channel: channel, controller: 32,
                            value: UInt8(try integer(parts[1], in: 0...127, what: "bank LSB"))))
                }
            }
            messages.append(
                .programChange(
                    channel: channel, program: UInt8(try integer(positional[0], in: 0...127, what: "program"))))
            command = .messages(messages)
        case "bend":
            try count(1, "bend -8192…8191 [ch=1…16]")
            let value = try integer(positional[0], in: -8192...8191, what: "bend")
            command = .messages([.pitchBend(channel: channel, value: UInt16(value + 8192))])
        case "pressure":
            try count(1, "pressure 0…127 [ch=1…16]")
            command = .messages([
                .channelPressure(
                    channel: channel, pressure: UInt8(try integer(positional[0], in: 0...127, what: "pressure")))
            ])
        case "end":
            try count(0, "end")
            command = .end
        default:
            throw MIDIFileError(
                "unknown command '\(words[1])' (tempo, note, on, off, cc, program, bend, pressure, end)")
        }
        if options["bank"] != nil, words[1].lowercased() != "program" {
            throw MIDIFileError("bank= goes with program")
        }
        if options["vel"] != nil, !["note", "on", "off"].contains(words[1].lowercased()) {
            throw MIDIFileError("vel= goes with note, on and off")
        }
        return Line(number: number, time: time, command: command)
    }

    /// The latest time a line may name: `InputTimeLimit` in seconds, in beats at the fastest tempo (1000
    /// BPM), or in frames at 768 kHz. Beyond, converting to sample times could overflow (found by `make
    /// fuzz`: a 30-digit beat crashed the renderer instead of being refused). How long a score may play is
    /// the player's limit, checked before it starts.
    static let maximumSeconds = InputTimeLimit.seconds
    static let maximumBeats = InputTimeLimit.seconds * 1000 / 60
    static let maximumFrames = Int64(InputTimeLimit.seconds) * 768_000

    /// `480f` frames, `1.5s` seconds, `250ms` milliseconds, `2b` or `2.5b` beats.
    static func parseTime(_ text: String) throws(MIDIFileError) -> Time {
        let lower = text.lowercased()
        func number(_ suffix: Int) -> Double? { Double(lower.dropLast(suffix)) }
        let time: Time
        if lower.hasSuffix("ms"), let value = number(2), value >= 0, value.isFinite {
            time = .seconds(value / 1000)
        } else if lower.hasSuffix("s"), let value = number(1), value >= 0, value.isFinite {
            time = .seconds(value)
        } else if lower.hasSuffix("b"), let value = number(1), value >= 0, value.isFinite {
            time = .beats(value)
        } else if lower.hasSuffix("f"), let value = Int64(lower.dropLast()), value >= 0 {
            time = .frames(value)
        } else {
            throw MIDIFileError("'\(text)' is not a time: write frames (480f), seconds (1.5s, 250ms) or beats (2b)")
        }
        switch time {
        case .seconds(let value) where value > maximumSeconds, .beats(let value) where value > maximumBeats:
            throw MIDIFileError("'\(text)' is too far: a score places events within \(InputTimeLimit.description)")
        case .frames(let value) where value > maximumFrames:
            throw MIDIFileError("'\(text)' is too far: a score places events within \(InputTimeLimit.description)")
        default:
            return time
        }
    }

    /// A MIDI note number (0…127) or a name: C4 is middle C (60), with # or b: F#3, Bb5, C-1 (0), G9 (127).
    public static func parseNote(_ text: String) throws(MIDIFileError) -> UInt8 {
        if let value = Int(text) {
            guard (0...127).contains(value) else { throw MIDIFileError("note \(value) is outside 0…127") }
            return UInt8(value)
        }
        let letters: [Character: Int] = ["c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11]
        var rest = Substring(text.lowercased())
        guard let letter = rest.first, let base = letters[letter] else {
            throw MIDIFileError("'\(text)' is not a note (a number 0…127 or a name like C4, F#3, Bb5)")
        }
        rest = rest.dropFirst()
        var semitone = base
        if rest.first == "#" {
            semitone += 1
            rest = rest.dropFirst()
        } else if rest.first == "b" {
            semitone -= 1
            rest = rest.dropFirst()
        }
        guard let octave = Int(rest), (-1...9).contains(octave) else {
            throw MIDIFileError("'\(text)' has no octave from -1 to 9 (C4 is middle C)")
        }
        let value = (octave + 1) * 12 + semitone
        guard (0...127).contains(value) else { throw MIDIFileError("note \(text) is outside the MIDI range C-1…G9") }
        return UInt8(value)
    }

    static func integer(_ text: String, in range: ClosedRange<Int>, what: String) throws(MIDIFileError) -> Int {
        guard let value = Int(text.hasPrefix("+") ? String(text.dropFirst()) : text), range.contains(value) else {
            throw MIDIFileError("\(what) '\(text)' is not a whole number in \(range.lowerBound)…\(range.upperBound)")
        }
        return value
    }

    /// The tempo map as (beat, BPM) pairs starting at beat 0 (120 BPM unless the score says otherwise).
    public var tempoMap: [(beat: Double, bpm: Double)] {
        let changes = tempoChanges
        return changes.first?.beat == 0 ? changes : [(0, 120)] + changes
    }

    /// The tempo map: beat positions of tempo changes, sorted; 120 BPM before the first.
    private var tempoChanges: [(beat: Double, bpm: Double)] {
        lines.compactMap { line -> (Double, Double)? in
            if case .tempo(let bpm) = line.command, case .beats(let beat) = line.time { return (beat, bpm) }
            return nil
        }.sorted { $0.0 < $1.0 }
    }

    /// Seconds at a beat position under the tempo map.
    private func seconds(atBeat beat: Double, _ changes: [(beat: Double, bpm: Double)]) -> Double {
        var seconds = 0.0
        var position = 0.0
        var bpm = 120.0
        for change in changes where change.beat < beat {
            seconds += (change.beat - position) * 60 / bpm
            position = change.beat
            bpm = change.bpm
        }
        return seconds + (beat - position) * 60 / bpm
    }

    private func sampleTime(_ time: Time, sampleRate: Double, _ changes: [(beat: Double, bpm: Double)]) -> Int64 {
        switch time {
        case .frames(let frames): frames
        case .seconds(let seconds): Int64((seconds * sampleRate).rounded())
        case .beats(let beats): Int64((seconds(atBeat: beats, changes) * sampleRate).rounded())
        }
    }

    /// Every message at its sample time, in time order (same-time messages in line order), and the end:
    /// the last event, or a later `end` line.
    public func scheduledMessages(sampleRate: Double) -> (messages: [ScheduledMessage], end: Int64) {
        let changes = tempoChanges
        var messages: [(time: Int64, line: Int, order: Int, message: MIDIMessage)] = []
        var end: Int64 = 0
        for line in lines {
            let start = sampleTime(line.time, sampleRate: sampleRate, changes)
            end = max(end, start)
            switch line.command {
            case .tempo, .end:
                break
            case .messages(let list):
                for (order, message) in list.enumerated() { messages.append((start, line.number, order, message)) }
            case .note(let note, let duration, let velocity, let channel):
                let stop: Int64
                if case .beats(let at) = line.time, case .beats(let length) = duration {
                    stop = sampleTime(.beats(at + length), sampleRate: sampleRate, changes)
                } else {
                    stop = start + sampleTime(duration, sampleRate: sampleRate, changes)  // frames or seconds
                }
                messages.append((start, line.number, 0, .noteOn(channel: channel, note: note, velocity: velocity)))
                messages.append(
                    (max(start, stop), line.number, 1, .noteOff(channel: channel, note: note, velocity: 64)))
                end = max(end, stop)
            }
        }
        messages.sort { ($0.time, $0.line, $0.order) < ($1.time, $1.line, $1.order) }
        return (messages.map { ScheduledMessage(sampleTime: $0.time, message: $0.message) }, end)
    }
}

extension Score.Time {
    var isBeats: Bool { if case .beats = self { return true } else { return false } }
}
