import Foundation

/// Where each request a client sends the panel begins and ends — HTTP/1.1 framing, read the way the server
/// behind reads it — with the gate's limits (`WebGate`): what may be passed on, and when to refuse. Bytes are
/// passed on unchanged and in order, so what is passed on is always a prefix of what was taken.
///
/// Public for the fuzz package's `http` target.
///
/// Threads: a value, used by the gate's thread.
public struct RequestFraming {
    static let headLimit = 16 * 1024
    static let headLines = 100
    static let bodyLimit = (1 << 20) + 8 * 1024
    public static let tunnelLimit = 64 * 1024
    /// Seconds a request head may take from its first byte (AULOS_WEB_HEAD_SECONDS for tests).
    public static let headSeconds =
        ProcessInfo.processInfo.environment["AULOS_WEB_HEAD_SECONDS"].flatMap(Double.init) ?? 10

    /// Why a request is refused, and the answer the client gets.
    public struct Refusal: Equatable, Sendable {
        public var status: Int
        public var phrase: String
        public var why: String

        /// A whole HTTP/1.1 response: the status, and the reason as one JSON line.
        public var response: [UInt8] {
            let body = #"{"error":"\#(why)"}"#
            return Array(
                ("HTTP/1.1 \(status) \(phrase)\r\nContent-Type: application/json\r\nContent-Length: "
                    + "\(body.utf8.count)\r\nConnection: close\r\n\r\n" + body).utf8)
        }
    }

    /// What to do after `take`.
    public enum Outcome: Equatable, Sendable {
        case goOn
        /// Answer with this and pass nothing more on.
        case refuse(Refusal)
        /// More than a WebSocket client may send: close the connection.
        case overrun
    }

    public enum Phase: Equatable, Sendable {
        /// Reading a request head.
        case head
        /// Passing on a body: bytes still to come.
        case body(Int)
        /// After a WebSocket upgrade: bytes the client may still send.
        case tunnel(Int)
        /// Refused or overrun: nothing more is passed on.
        case stopped
    }

    public private(set) var phase = Phase.head
    /// Request heads passed on so far (the gate waits for an answer after each).
    public private(set) var requestsPassed = 0

    public init() {}

    /// Between requests (or before the first): no head begun, no body or WebSocket under way.
    public var isBetweenRequests: Bool { phase == .head && head.isEmpty }
    /// The head read so far, not yet passed on.
    private var head: [UInt8] = []
    private var headSince = Date.distantPast
    /// The lines in `head` ("\n" bytes).
    private var headLineCount = 0

    /// Takes bytes from the client: returns what may be passed on now, and whether to go on.
    public mutating func take(_ bytes: ArraySlice<UInt8>, now: Date) -> (passed: [UInt8], outcome: Outcome) {
        var passed: [UInt8] = []
        var rest = bytes
        while !rest.isEmpty {
            switch phase {
            case .stopped:
                return (passed, .goOn)
            case .head:
                if head.isEmpty { headSince = now }
                // Only the new bytes are searched and counted: a head sent a byte at a time costs no more.
                let (searchFrom, appended) = (max(0, head.count - 2), head.count)
                head += rest
                rest = []
                let end = Self.headEnd(in: head, from: searchFrom)
                if let end {
                    rest = ArraySlice(head[(end + 1)...])
                    head.removeSubrange((end + 1)...)
                }
                headLineCount += head[appended...].lazy.filter { $0 == 0x0A }.count
                if head.count > Self.headLimit || headLineCount > Self.headLines {
                    return (passed, stop(refusing: Self.tooLarge))
                }
                guard end != nil else { return (passed, .goOn) }
                switch nextPhase() {
                case .success(let next):
                    passed += head
                    head = []
                    headLineCount = 0
                    phase = next
                    requestsPassed += 1
                case .failure(let refusal):
                    return (passed, stop(refusing: refusal))
                }
            case .body(let remaining):
                let part = rest.prefix(remaining)
                passed += part
                rest = rest[part.endIndex...]
                phase = remaining == part.count ? .head : .body(remaining - part.count)
            case .tunnel(let remaining):
                guard rest.count <= remaining else {
                    phase = .stopped
                    return (passed, .overrun)
                }
                passed += rest
                phase = .tunnel(remaining - rest.count)
                return (passed, .goOn)
            }
        }
        return (passed, .goOn)
    }

    /// A head begun more than `headSeconds` ago and still not whole is refused (408). An idle connection
    /// between requests is the server's to time out.
    public mutating func refusalIfLate(now: Date) -> Refusal? {
        guard phase == .head, !head.isEmpty, now.timeIntervalSince(headSince) > Self.headSeconds else { return nil }
        let refusal = Refusal(
            status: 408, phrase: "Request Timeout", why: "the request did not arrive within \(Int(Self.headSeconds)) s")
        phase = .stopped
        return refusal
    }

    static let tooLarge = Refusal(
        status: 431, phrase: "Request Header Fields Too Large",
        why: "a request head is at most \(headLimit / 1024) KB and \(headLines) lines")

    private mutating func stop(refusing refusal: Refusal) -> Outcome {
        phase = .stopped
        head = []
        return .refuse(refusal)
    }

    /// The index of the last byte of a head (its empty line's "\n"), searching from `start`.
    public static func headEnd(in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index < bytes.count {
            if bytes[index] == 0x0A {
                if index + 1 < bytes.count && bytes[index + 1] == 0x0A { return index + 1 }
                if index + 2 < bytes.count && bytes[index + 1] == 0x0D && bytes[index + 2] == 0x0A { return index + 2 }
            }
            index += 1
        }
        return nil
    }

    /// What follows the head just read: a body, a WebSocket, the next head; or why it is refused.
    ///
    /// The head is read as the server behind reads it — lines split at "\n" bytes, a header's name and value
    /// trimmed, names compared without case, the last of repeated headers kept — and anything the two might
    /// read differently is refused: bytes outside printable ASCII (but tab, CR, LF), a CR not before a LF,
    /// a second different Content-Length, a Content-Length that is not plain digits. Otherwise the server
    /// could take a body passed on here for a request head the gate never saw.
    private func nextPhase() -> Result<Phase, Refusal> {
        for (index, byte) in head.enumerated() {
            let printable = (0x20...0x7E).contains(byte) || byte == 0x09 || byte == 0x0A
            let lineEnd = byte == 0x0D && index + 1 < head.count && head[index + 1] == 0x0A
            guard printable || lineEnd else {
                return .failure(Refusal(status: 400, phrase: "Bad Request", why: "a request head is ASCII text"))
            }
        }
        var lengths: Set<String> = []
        var upgrade = false
        for line in head.split(separator: 0x0A, omittingEmptySubsequences: false).dropFirst() {
            let text = String(decoding: line, as: UTF8.self)
            guard let colon = text.firstIndex(of: ":") else { continue }
            let name = text[..<colon].trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
            switch name {
            case "content-length": lengths.insert(value)
            case "transfer-encoding":
                return .failure(
                    Refusal(
                        status: 411, phrase: "Length Required",
                        why: "a request body needs a Content-Length (no chunked bodies)"))
            case "upgrade": upgrade = value.lowercased() == "websocket"
            default: break
            }
        }
        guard lengths.count <= 1 else {
            return .failure(Refusal(status: 400, phrase: "Bad Request", why: "two different Content-Lengths"))
        }
        // Plain digits: Int("+5") would read 5.
        let digits = lengths.first ?? "0"
        guard !digits.isEmpty, digits.count <= 10, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let length = Int(digits)
        else {
            return .failure(Refusal(status: 400, phrase: "Bad Request", why: "the Content-Length is not a number"))
        }
        guard length <= Self.bodyLimit else {
            return .failure(
                Refusal(status: 413, phrase: "Content Too Large", why: "a request body is at most 1 MB (a rig file)"))
        }
        if upgrade { return .success(.tunnel(Self.tunnelLimit)) }
        return .success(length > 0 ? .body(length) : .head)
    }
}

extension RequestFraming.Refusal: Error {}
