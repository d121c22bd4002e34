/// One request to the live instrument, whichever road it came by: the control socket's text line
/// (`ControlRequest(line:)`), an OSC message (`OSCServer.request(for:)`) or the web panel's JSON all become
/// this value, and one executor (`ControlServer.perform`) carries it out. A value is a number or, for EQ
/// targets, a preset's name; a name (a rig, a part) may hold spaces.
///
/// The text form is the socket's protocol (docs/service.md): words split on spaces, and a word with spaces
/// in double quotes (`rig "Grand Piano"`, with `\"` and `\\` inside). The last argument of `set` and `rig` may
/// also be several plain words (`set output.eq Bass Booster`, `rig Grand Piano`), as before quoting existed.
///
/// Threads: a value.
public enum ControlRequest: Sendable, Equatable {
    case status
    case parts
    case fonts
    case get(target: String)
    case set(target: String, value: ControlValue)
    /// MIDI-learn `target`: the next controller moved within `seconds` is mapped to it.
    case learn(target: String, seconds: Double)
    case unlearn
    case learned
    case rig(RigChoice)
    /// Bank select and program change to part `part` of the active rig alone, on `channel` (1…16; nil: the
    /// part's first).
    case preset(part: String, bank: Int, program: Int, channel: Int?)
    case tempo(Double)
    case transport(Transport)
    case record(Recording)
    /// MIDI bytes, parsed as a MIDI stream and played as if a keyboard had sent them.
    case midi([UInt8])
    /// The rig as it plays written to its file(s) (nil), or as a new file `name` beside it.
    case save(name: String?)
    /// The file player.
    case player(PlayerCommand)
    /// Recalls a snapshot of the active rig, by name or number (from 1).
    case snapshot(String)

    public enum PlayerCommand: Sendable, Equatable {
        case play, pause, stop
        /// To a time in the file, in seconds (playing on if it plays).
        case locate(seconds: Double)
        case loop(Bool)
        /// A song of the playlist, by number (from 1) or name, loaded stopped at its start.
        case load(String)
        /// The playlist's next or previous song, loaded stopped at its start.
        case next, previous
    }

    /// A rig by its place in the set (1…) or by its name.
    public enum RigChoice: Sendable, Equatable {
        case number(Int)
        case name(String)
    }

    public enum Transport: Sendable, Equatable {
        case play, stop, rewind
        case locate(beat: Double)
    }

    public enum Recording: Sendable, Equatable {
        /// Into `name` (.wav or .flac) in the record folder; nil: a dated FLAC.
        case start(name: String?)
        case stop
    }

    /// Whether this request changes a parameter only — the kind that may be carried out at once, off the
    /// control thread (`ControlTargets.setAtOnce`).
    public var isParameterSet: Bool {
        if case .set = self { true } else { false }
    }
}

/// A value for `set`: the number it reads as, and the text it was given (an EQ preset's name, or what an
/// error quotes back).
public struct ControlValue: Sendable, Equatable {
    /// The value as a finite number, if it is one.
    public let number: Float?
    public let text: String

    public init(text: String) {
        self.text = text
        number = Float(text).flatMap { $0.isFinite ? $0 : nil }
    }

    public init(_ number: Float) {
        self.number = number.isFinite ? number : nil
        text = "\(number)"
    }
}

/// Why a request was not carried out, as one line, and whether it was the request (`badRequest`) or the
/// instrument's state (`unavailable`: not playing yet, waiting for a device, too busy) that stood in the way.
public struct ControlFailure: Error, Sendable, Equatable {
    public enum Reason: Sendable, Equatable {
        case badRequest
        case unavailable
    }

    public let message: String
    public let reason: Reason

    public init(_ message: String, reason: Reason = .badRequest) {
        self.message = message
        self.reason = reason
    }
}

// MARK: The socket's text form

extension ControlRequest {
    static let usage =
        "status, parts, fonts, get T, set T V, learn T [SECONDS], learned, unlearn, rig N|NAME, "
        + "preset PART BANK PROGRAM [CHANNEL], tempo BPM, transport play|stop|rewind|locate BEAT, "
        + "record start [NAME]|stop, midi HEX…, save [NAME.yaml], "
        + "player play|pause|stop|locate SECONDS|loop on|off|load SONG|next|previous, snapshot NAME|N"

    /// Reads one request line of the control socket; a line that is not a request is a one-line failure
    /// saying what the requests are.
    public init(line: String) throws(ControlFailure) {
        let words = try Self.words(of: line)
        guard let verb = words.first else { throw ControlFailure("empty request") }
        let arguments = Array(words.dropFirst())
        func rest(from index: Int) -> String { arguments[index...].joined(separator: " ") }
        switch (verb, arguments.count) {
        case ("status", _): self = .status
        case ("parts", 0): self = .parts
        case ("fonts", 0): self = .fonts
        case ("get", 1): self = .get(target: arguments[0])
        case ("set", 2...): self = .set(target: arguments[0], value: ControlValue(text: rest(from: 1)))
        case ("learn", 1...2):
            // `learn TARGET [SECONDS]`: waits that long (default 30 s, at most an hour) for a controller.
            let seconds = arguments.count == 2 ? Double(arguments[1]) : 30
            guard let seconds, seconds > 0, seconds <= 3600 else {
                throw ControlFailure("'\(arguments[1])' is not a number of seconds to wait (0…3600)")
            }
            self = .learn(target: arguments[0], seconds: seconds)
        case ("unlearn", 0): self = .unlearn
        case ("learned", _): self = .learned
        case ("rig", 1...):
            let name = rest(from: 0)
            self = .rig(Int(name).map(RigChoice.number) ?? .name(name))
        case ("preset", 3...4):
            guard let bank = Int(arguments[1]), (0...16383).contains(bank), let program = Int(arguments[2]),
                (0...127).contains(program),
                arguments.count == 3 || Int(arguments[3]).map({ (1...16).contains($0) }) == true
            else { throw ControlFailure("preset takes PART BANK (0…16383) PROGRAM (0…127) [CHANNEL (1…16)]") }
            self = .preset(
                part: arguments[0], bank: bank, program: program,
                channel: arguments.count == 4 ? Int(arguments[3]) : nil)
        case ("tempo", 1):
            guard let bpm = Double(arguments[0]) else {
                throw ControlFailure("'\(arguments[0])' is not a tempo (20…400 beats per minute)")
            }
            self = .tempo(bpm)
        case ("transport", 1...2):
            switch (arguments[0], arguments.count) {
            case ("play", 1): self = .transport(.play)
            case ("stop", 1): self = .transport(.stop)
            case ("rewind", 1): self = .transport(.rewind)
            case ("locate", 2) where Double(arguments[1]).map { $0.isFinite && $0 >= 0 } == true:
                self = .transport(.locate(beat: Double(arguments[1])!))
            default: throw ControlFailure("transport takes play, stop, rewind or locate BEAT (a beat ≥ 0)")
            }
        case ("record", 1...2):
            switch (arguments[0], arguments.count) {
            case ("stop", 1): self = .record(.stop)
            case ("start", _): self = .record(.start(name: arguments.count == 2 ? arguments[1] : nil))
            default: throw ControlFailure("record takes start [NAME.wav|NAME.flac] or stop")
            }
        case ("save", 0...1): self = .save(name: arguments.first)
        case ("snapshot", 1...): self = .snapshot(rest(from: 0))
        case ("player", 1...):
            switch (arguments[0], arguments.count) {
            case ("play", 1): self = .player(.play)
            case ("pause", 1): self = .player(.pause)
            case ("stop", 1): self = .player(.stop)
            case ("next", 1): self = .player(.next)
            case ("previous", 1): self = .player(.previous)
            case ("load", 2...): self = .player(.load(rest(from: 1)))
            case ("locate", 2) where Double(arguments[1]).map { $0.isFinite && $0 >= 0 } == true:
                self = .player(.locate(seconds: Double(arguments[1])!))
            case ("loop", 2) where ["on", "off"].contains(arguments[1]):
                self = .player(.loop(arguments[1] == "on"))
            default:
                throw ControlFailure(
                    "player takes play, pause, stop, locate SECONDS (≥ 0), loop on|off, load SONG, next or previous")
            }
        case ("midi", 1...):
            var bytes: [UInt8] = []
            for word in arguments {
                guard let byte = UInt8(word, radix: 16) else { throw ControlFailure("'\(word)' is not a hex byte") }
                bytes.append(byte)
            }
            self = .midi(bytes)
        default:
            throw ControlFailure("unknown request '\(Self.echo(line))' (\(Self.usage))")
        }
    }

    /// The start of a request, quoted back in an error: 40 characters at most, on one line.
    static func echo(_ line: String) -> String {
        String(line.prefix(40).map { $0.isNewline || $0 == "\t" ? " " : $0 })
    }

    /// The words of a request line: split on spaces and tabs, a double-quoted word taken whole (`\"` and `\\`
    /// inside stand for `"` and `\`).
    static func words(of line: String) throws(ControlFailure) -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var quoted = false
        var escaped = false
        for character in line {
            if quoted {
                if escaped {
                    word.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    quoted = false
                } else {
                    word.append(character)
                }
            } else if character == " " || character == "\t" {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else if character == "\"" {
                quoted = true
                inWord = true
            } else {
                word.append(character)
                inWord = true
            }
        }
        guard !quoted else { throw ControlFailure("a quote without its end in '\(echo(line))'") }
        if inWord { words.append(word) }
        return words
    }

    /// The request as the socket's text line (what `aulos set` and `aulos status` send): reads back as the
    /// same request.
    public var line: String {
        func quoted(_ word: String) -> String {
            guard word.isEmpty || word.contains(where: { $0 == " " || $0 == "\t" || $0 == "\"" || $0 == "\\" })
            else { return word }
            return "\"" + word.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                + "\""
        }
        switch self {
        case .status: return "status"
        case .parts: return "parts"
        case .fonts: return "fonts"
        case .get(let target): return "get \(quoted(target))"
        case .set(let target, let value): return "set \(quoted(target)) \(quoted(value.text))"
        case .learn(let target, let seconds): return "learn \(quoted(target)) \(seconds)"
        case .unlearn: return "unlearn"
        case .learned: return "learned"
        case .rig(.number(let number)): return "rig \(number)"
        case .rig(.name(let name)): return "rig \(quoted(name))"
        case .preset(let part, let bank, let program, let channel):
            return "preset \(quoted(part)) \(bank) \(program)" + (channel.map { " \($0)" } ?? "")
        case .tempo(let bpm): return "tempo \(bpm)"
        case .transport(.play): return "transport play"
        case .transport(.stop): return "transport stop"
        case .transport(.rewind): return "transport rewind"
        case .transport(.locate(let beat)): return "transport locate \(beat)"
        case .record(.start(let name)): return "record start" + (name.map { " " + quoted($0) } ?? "")
        case .record(.stop): return "record stop"
        case .save(let name): return "save" + (name.map { " " + quoted($0) } ?? "")
        case .snapshot(let name): return "snapshot \(quoted(name))"
        case .player(.play): return "player play"
        case .player(.pause): return "player pause"
        case .player(.stop): return "player stop"
        case .player(.locate(let seconds)): return "player locate \(seconds)"
        case .player(.loop(let on)): return "player loop \(on ? "on" : "off")"
        case .player(.load(let song)): return "player load \(quoted(song))"
        case .player(.next): return "player next"
        case .player(.previous): return "player previous"
        case .midi(let bytes):
            let hex = bytes.map { String($0, radix: 16, uppercase: true) }.map { $0.count == 1 ? "0" + $0 : $0 }
            return "midi " + hex.joined(separator: " ")
        }
    }
}
