import Foundation
import Testing

@testable import AulosWeb

/// The pieces of the panel's own HTTP/1.1 and WebSocket server that can be checked without a network: the
/// handshake's hash against published vectors, frames both ways, request heads and answers on the wire.
/// (The server itself is exercised end to end by the CLI's WebPanelTests and `make test-web`.)
struct PanelServerTests {
    func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test func sha1MatchesThePublishedVectors() {
        // FIPS 180 examples, and a message longer than one block with its length across the padding.
        #expect(hex(SHA1.digest(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SHA1.digest([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(
            hex(SHA1.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(
            hex(SHA1.digest([UInt8](repeating: 0x61, count: 1_000_000))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test func theHandshakeAnswersRFC6455sExample() {
        #expect(WebSocketFrame.accept(key: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func framesAreWrittenWithTheirLengthsAndReadBackUnmasked() {
        #expect(WebSocketFrame.text("Hello") == [0x81, 0x05] + Array("Hello".utf8))
        let medium = WebSocketFrame.make(opcode: 1, [UInt8](repeating: 7, count: 300))
        #expect(Array(medium.prefix(4)) == [0x81, 126, 0x01, 0x2C] && medium.count == 304)
        let large = WebSocketFrame.make(opcode: 2, [UInt8](repeating: 7, count: 70_000))
        #expect(Array(large.prefix(10)) == [0x82, 127, 0, 0, 0, 0, 0, 0x01, 0x11, 0x70] && large.count == 70_010)
        // RFC 6455 §5.7: a masked "Hello" from a client.
        let masked: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
        #expect(WebSocketFrame.parse(masked, limit: 100) == .frame(opcode: 1, payload: Array("Hello".utf8), length: 11))
        #expect(WebSocketFrame.parse(Array(masked.prefix(8)), limit: 100) == .incomplete)
        // Unmasked (a server's frame sent back), or longer than the limit: not what a client sends.
        #expect(WebSocketFrame.parse([0x81, 0x05] + Array("Hello".utf8), limit: 100) == .invalid)
        #expect(WebSocketFrame.parse(masked, limit: 4) == .invalid)
        #expect(WebSocketFrame.parse([0x81, 0xFF, 1, 0, 0, 0, 0, 0, 0, 0], limit: 100) == .invalid)
    }

    @Test func requestHeadsAreReadAsTheGateReadsThem() throws {
        let head = Array(
            "POST /api/control?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\ncontent-LENGTH: 12\r\nX-A: 1\r\nX-A:  2 \r\n\r\n"
                .utf8)
        let request = try #require(PanelRequest(head: head[...]))
        #expect(request.method == "POST" && request.path == "/api/control")
        #expect(request[header: "Content-Length"] == "12" && request.contentLength == 12)
        #expect(request[header: "x-a"] == "2" && request.keepAlive)
        #expect(PanelRequest(head: Array("GET / HTTP/1.1\r\nConnection: close\r\n\r\n".utf8)[...])?.keepAlive == false)
        #expect(PanelRequest(head: Array("GET / HTTP/1.0\r\n\r\n".utf8)[...])?.keepAlive == false)
        #expect(PanelRequest(head: Array("GET /\r\n\r\n".utf8)[...]) == nil)
        #expect(PanelRequest(head: Array("GET / SPDY/3\r\n\r\n".utf8)[...]) == nil)
        #expect(
            PanelRequest(head: Array("GET / HTTP/1.1\r\nContent-Length: +5\r\n\r\n".utf8)[...])?.contentLength == nil)
    }

    @Test func answersCarryTheirLengthAndWhetherTheConnectionStays() {
        var response = PanelResponse(status: 429, contentType: "application/json", body: Data("{}".utf8))
        response[header: "retry-after"] = "1"
        let text = String(decoding: response.bytes(keepAlive: false), as: UTF8.self)
        #expect(
            text == "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nretry-after: 1\r\n"
                + "Content-Length: 2\r\nConnection: close\r\n\r\n{}")
    }
}
