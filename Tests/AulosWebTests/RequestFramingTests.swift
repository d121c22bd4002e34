import Foundation
import Testing

@testable import AulosWeb

/// The web gate's reading of what clients send: requests passed on unchanged and whole, whatever the
/// chunking; every limit refused with its status; nothing passed on after a refusal.
struct RequestFramingTests {
    static let start = Date(timeIntervalSince1970: 1_000_000)

    /// Feeds `bytes` in chunks of `size`: what was passed on, and the last outcome.
    static func feed(_ bytes: [UInt8], size: Int) -> (passed: [UInt8], outcome: RequestFraming.Outcome) {
        var framing = RequestFraming()
        var passed: [UInt8] = []
        var outcome = RequestFraming.Outcome.goOn
        var index = 0
        while index < bytes.count, outcome == .goOn {
            let end = min(bytes.count, index + size)
            let step = framing.take(bytes[index..<end], now: start)
            passed += step.passed
            outcome = step.outcome
            index = end
        }
        return (passed, outcome)
    }

    static let pipelined = Array(
        ("GET / HTTP/1.1\r\nHost: a\r\n\r\n"
            + "POST /api/control HTTP/1.1\r\nHost: a\r\ncontent-length: 11\r\n\r\n{\"x\":\"GET\"}"
            + "PUT /api/rig-file HTTP/1.1\nContent-Length:  3 \n\nabc"
            + "GET /api/status HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" + "frames").utf8)

    @Test(arguments: [1, 2, 3, 7, 64, 100_000])
    func requestsPassUnchangedWhateverTheChunks(size: Int) {
        let (passed, outcome) = Self.feed(Self.pipelined, size: size)
        #expect(outcome == .goOn)
        #expect(passed == Self.pipelined)
    }

    /// A head not yet whole is held back (the server must not read a head the gate has not checked).
    @Test func aHeadIsPassedOnOnlyWhenWhole() {
        var framing = RequestFraming()
        #expect(framing.take(Array("GET / HTTP/1.1\r\nHost: a\r\n".utf8)[...], now: Self.start).passed.isEmpty)
        #expect(framing.take(Array("\r\n".utf8)[...], now: Self.start).passed.count == 27)
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 17_000), 431),
        ("GET / HTTP/1.1\r\n" + String(repeating: "X: a\r\n", count: 101) + "\r\n", 431),
        ("PUT / HTTP/1.1\r\nContent-Length: 1056769\r\n\r\n", 413),
        ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 411),
        ("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nX: a\rContent-Length: 5\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nX: \u{85}\r\n\r\n", 400),
    ])
    func limitsAreRefused(head: String, status: Int) {
        let (passed, outcome) = Self.feed(Array(head.utf8) + Array(repeating: 0x61, count: 100), size: 4096)
        guard case .refuse(let refusal) = outcome else {
            Issue.record("\(head.prefix(40)): \(outcome)")
            return
        }
        #expect(refusal.status == status)
        #expect(passed.isEmpty, "nothing of a refused request is passed on")
        #expect(String(decoding: refusal.response, as: UTF8.self).hasPrefix("HTTP/1.1 \(status) "))
    }

    /// Requests before a refused one pass; nothing after it does, however much follows.
    @Test func nothingPassesAfterARefusal() {
        var framing = RequestFraming()
        let good = Array("GET / HTTP/1.1\r\n\r\n".utf8)
        let step = framing.take(
            (good + Array("POST / HTTP/1.1\r\nTransfer-Encoding: x\r\n\r\n".utf8))[...], now: Self.start)
        #expect(step.passed == good)
        #expect(framing.take(good[...], now: Self.start).passed.isEmpty)
    }

    /// After a WebSocket upgrade the client may send 64 KB; a byte more closes the connection.
    @Test func aWebSocketClientMaySendLittle() {
        var framing = RequestFraming()
        let upgrade = Array("GET /api/status HTTP/1.1\r\nUpgrade: websocket\r\n\r\n".utf8)
        #expect(framing.take(upgrade[...], now: Self.start).passed == upgrade)
        let frames = [UInt8](repeating: 0x81, count: RequestFraming.tunnelLimit)
        #expect(framing.take(frames[...], now: Self.start) == (frames, .goOn))
        #expect(framing.take([0x81][...], now: Self.start).outcome == .overrun)
    }

    /// A head begun must be whole within the time allowed; a connection idle between requests is not timed
    /// out here.
    @Test func aSlowHeadIsRefused() {
        var framing = RequestFraming()
        #expect(framing.refusalIfLate(now: Self.start.addingTimeInterval(3600)) == nil, "idle")
        _ = framing.take(Array("GET / HT".utf8)[...], now: Self.start)
        #expect(framing.refusalIfLate(now: Self.start.addingTimeInterval(RequestFraming.headSeconds - 1)) == nil)
        #expect(
            framing.refusalIfLate(now: Self.start.addingTimeInterval(RequestFraming.headSeconds + 1))?.status == 408)
        #expect(framing.take(Array("TP/1.1\r\n\r\n".utf8)[...], now: Self.start).passed.isEmpty)
    }
}
