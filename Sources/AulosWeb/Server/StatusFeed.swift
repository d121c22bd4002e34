import AulosCore
import AulosPlayback
import AulosRealtime
import Foundation

/// The status WebSocket: every 50 ms (20 Hz) the client gets the control loop's latest status, with its
/// number and the CLOCK_MONOTONIC time it was taken (so a client on this machine can measure how old it
/// is). A status not newer than the one sent is not sent again. What the client sends is read only for its
/// control frames: a ping is answered, a close is answered and ends the feed; the rest is dropped (the gate
/// lets a client send at most 64 KB after the upgrade).
///
/// Threads: its connection's thread, for the feed's life.
struct StatusFeed {
    let bridge: ControlBridge
    static let intervalMilliseconds = 50
    /// The longest frame read from a client; a longer one ends the feed.
    static let frameLimit = 64 * 1024

    /// Sends the status until the client closes, the connection fails or `stopping` says so.
    func run(on connection: PanelConnection, stopping: () -> Bool) {
        var sent = 0
        var nextSend = monotonicNanoseconds()
        while true {
            if stopping() {
                _ = connection.write(WebSocketFrame.close(code: 1001))
                return
            }
            let now = monotonicNanoseconds()
            if now >= nextSend {
                nextSend = now + Int64(Self.intervalMilliseconds) * 1_000_000
                if let snapshot = bridge.latest, snapshot.sequence != sent {
                    sent = snapshot.sequence
                    let text =
                        #"{"sequence":\#(snapshot.sequence),"sampledNanos":\#(snapshot.sampledNanos),"#
                        + #""status":\#(snapshot.json)}"#
                    guard connection.write(WebSocketFrame.text(text)) else { return }
                }
            }
            let wait = Int32(max(1, (nextSend - monotonicNanoseconds()) / 1_000_000))
            switch connection.fill(waiting: wait) {
            case .bytes: guard answerFrames(on: connection) else { return }
            case .quiet: continue
            case .ended: return
            }
        }
    }

    /// Reads the whole frames waiting: answers pings, and returns false after a close (answered) or a frame
    /// no client sends (unmasked, or longer than the limit).
    private func answerFrames(on connection: PanelConnection) -> Bool {
        while true {
            switch WebSocketFrame.parse(connection.buffered, limit: Self.frameLimit) {
            case .incomplete:
                return true
            case .invalid:
                _ = connection.write(WebSocketFrame.close(code: 1002))
                return false
            case .frame(let opcode, let payload, let length):
                connection.take(length)
                switch opcode {
                case 0x8:
                    _ = connection.write(WebSocketFrame.close(code: 1000))
                    return false
                case 0x9:
                    guard connection.write(WebSocketFrame.make(opcode: 0xA, payload)) else { return false }
                default:
                    continue
                }
            }
        }
    }
}

/// WebSocket frames (RFC 6455 §5): the server's, unmasked; the client's, which must be masked, read back.
/// Public for the fuzz package's `http` target.
///
/// Threads: any (pure functions).
public enum WebSocketFrame {
    /// The `Sec-WebSocket-Accept` answer to a client's `Sec-WebSocket-Key` (§4.2.2).
    static func accept(key: String) -> String {
        Data(SHA1.digest(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
    }

    static func text(_ text: String) -> [UInt8] { make(opcode: 0x1, Array(text.utf8)) }

    static func close(code: UInt16) -> [UInt8] { make(opcode: 0x8, [UInt8(code >> 8), UInt8(code & 0xFF)]) }

    /// A final frame of `opcode` carrying `payload`, unmasked (a server's).
    static func make(opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = [0x80 | opcode]
        switch payload.count {
        case ..<126:
            frame.append(UInt8(payload.count))
        case ..<65_536:
            frame += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default:
            frame.append(127)
            for shift in stride(from: 56, through: 0, by: -8) {
                frame.append(UInt8(truncatingIfNeeded: payload.count >> shift))
            }
        }
        return frame + payload
    }

    public enum Parsed: Equatable {
        case incomplete
        case invalid
        /// A whole frame: its opcode, its payload unmasked, and how many bytes it took.
        case frame(opcode: UInt8, payload: [UInt8], length: Int)
    }

    /// The first frame in `bytes`, as a client sends it (masked, at most `limit` bytes of payload).
    public static func parse(_ bytes: [UInt8], limit: Int) -> Parsed {
        guard bytes.count >= 2 else { return .incomplete }
        let opcode = bytes[0] & 0x0F
        guard bytes[1] & 0x80 != 0 else { return .invalid }  // a client's frames are masked
        var length = Int(bytes[1] & 0x7F)
        var at = 2
        if length == 126 {
            guard bytes.count >= 4 else { return .incomplete }
            length = Int(bytes[2]) << 8 | Int(bytes[3])
            at = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return .incomplete }
            guard bytes[2...5].allSatisfy({ $0 == 0 }) else { return .invalid }
            length = bytes[6...9].reduce(0) { $0 << 8 | Int($1) }
            at = 10
        }
        guard length <= limit else { return .invalid }
        guard bytes.count >= at + 4 + length else { return .incomplete }
        let mask = bytes[at..<(at + 4)]
        let start = at + 4
        var payload = Array(bytes[start..<(start + length)])
        for index in payload.indices { payload[index] ^= mask[mask.startIndex + index % 4] }
        return .frame(opcode: opcode, payload: payload, length: start + length)
    }
}
