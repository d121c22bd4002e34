import Foundation

/// What a `ControlRequest` answers, typed until it is sent and encoded once (`json`, through `Codable`): the
/// control socket writes it as a line, OSC as the string of its reply message, and the web panel picks its
/// HTTP status from `kind`.
///
/// Threads: a value.
public enum ControlReply: Sendable {
    /// Done: what changed (`{"ok":true,…}`).
    case done(Done)
    /// `get`: a target's value (a number, or `off` for an output EQ out of the signal path).
    case value(target: String, value: Value)
    /// Learning this target (`learn`, or `learned` before a controller moved).
    case learning(String)
    /// `learned`: the controller MIDI-learn mapped.
    case learned(Learned)
    case status(ServiceStatus)
    case parts(PanelParts)
    case fonts(PanelFonts)
    /// The playing rig file's text (the panel's download).
    case rigFile(String)
    /// The rig files beside the playing one (the panel's *Load* menu), and the playing one's name.
    case rigFiles(playing: String, files: [String])
    /// The name a copy of the rig file was saved as.
    case saved(String)
    case failure(ControlFailure)

    /// How a reply went, for a protocol that says so apart from the body (HTTP's status code).
    public enum Kind: Sendable, Equatable {
        case ok
        /// The request could not be carried out as asked (HTTP 400).
        case badRequest
        /// The instrument cannot take it now: not playing yet, waiting for a device, too busy (HTTP 503).
        case unavailable
    }

    public var kind: Kind {
        switch self {
        case .failure(let failure): failure.reason == .badRequest ? .badRequest : .unavailable
        default: .ok
        }
    }

    /// A number or a word (an EQ preset's name, `off`), encoded as itself.
    public enum Value: Sendable, Equatable, Codable {
        case number(Float)
        case text(String)

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .number(let number): try container.encode(number)
            case .text(let text): try container.encode(text)
            }
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Float.self) {
                self = .number(number)
            } else {
                self = .text(try container.decode(String.self))
            }
        }
    }

    /// What a request that acts did: the fields that say what changed (the others are left out), after
    /// `"ok":true`.
    public struct Done: Sendable, Equatable, Codable {
        public var target: String?
        public var value: Value?
        public var rig: String?
        public var tempo: Double?
        public var transport: String?
        public var part: String?
        public var bank: Int?
        public var program: Int?
        public var channel: Int?
        public var recording: String?
        public var recorded: String?
        public var frames: Int64?
        public var dropped: Int?
        public var parts: [String]?
        public var failed: String?
        public var messages: Int?
        public var reloading: Bool?
        /// The file player's state after a `player` request, where it is (seconds), and the graph frame its
        /// file's frame 0 plays at.
        public var player: String?
        public var position: Double?
        public var origin: Int64?
        /// The playlist's song loaded (from 1), when the player has a playlist.
        public var song: Int?
        /// The snapshot a `snapshot` request recalled.
        public var snapshot: String?

        public init() {}
    }

    public struct Learned: Sendable, Equatable, Codable {
        public var cc: Int
        public var channel: Int
        public var target: String
    }

    /// The reply as one line of JSON, keys sorted — except that a `done` reply starts `{"ok":true`, as
    /// clients test for.
    public var json: String {
        do {
            let body = String(decoding: try Self.encoder.encode(Body(reply: self)), as: UTF8.self)
            guard case .done = self else { return body }
            return #"{"ok":true"# + (body == "{}" ? "}" : "," + body.dropFirst())
        } catch {
            // Only a non-finite number fails to encode, and none is ever put in a reply.
            return #"{"error":"the reply could not be encoded"}"#
        }
    }

    /// One encoder for every reply (it keeps no state between calls; made once, not a thousand times a
    /// second when OSC sets a parameter at that rate).
    private static let encoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func failure(_ message: String, _ reason: ControlFailure.Reason = .badRequest) -> ControlReply {
        .failure(ControlFailure(message, reason: reason))
    }

    /// The encoded shape of each reply.
    private struct Body: Encodable {
        let reply: ControlReply

        enum Key: String, CodingKey {
            case target, value, learning, learned, rigFile, playing, files, saved, error
        }

        func encode(to encoder: any Encoder) throws {
            switch reply {
            case .done(let done): return try done.encode(to: encoder)
            case .status(let status): return try status.encode(to: encoder)
            case .parts(let parts): return try parts.encode(to: encoder)
            case .fonts(let fonts): return try fonts.encode(to: encoder)
            default: break
            }
            var container = encoder.container(keyedBy: Key.self)
            switch reply {
            case .value(let target, let value):
                try container.encode(target, forKey: .target)
                try container.encode(value, forKey: .value)
            case .learning(let target): try container.encode(target, forKey: .learning)
            case .learned(let learned): try container.encode(learned, forKey: .learned)
            case .rigFile(let text): try container.encode(text, forKey: .rigFile)
            case .rigFiles(let playing, let files):
                try container.encode(playing, forKey: .playing)
                try container.encode(files, forKey: .files)
            case .saved(let name): try container.encode(name, forKey: .saved)
            case .failure(let failure): try container.encode(failure.message, forKey: .error)
            case .done, .status, .parts, .fonts: break
            }
        }
    }
}
