import Testing

@testable import AulosPlayback

/// The OSC reader and writer: round trips, bundles, every malformation as one line, and how messages map
/// to the control server's requests.
@Suite struct OSCMessageTests {
    @Test func messagesRoundTrip() throws {
        let message = OSCMessage(
            "/aulos/part/Lead/cutoff",
            [
                .float(1200.5), .int(-7), .string("a"), .string("four"), .blob([1, 2, 3]), .bool(true), .bool(false),
                .null,
            ])
        #expect(message.encoded().count % 4 == 0)
        #expect(try OSCMessage.parse(message.encoded()) == [message])
        #expect(try OSCMessage.parse(OSCMessage("/aulos/status").encoded()) == [OSCMessage("/aulos/status")])
    }

    @Test func bundlesAreFlattened() throws {
        let first = OSCMessage("/aulos/note", [.int(1), .int(60), .int(100)]).encoded()
        let second = OSCMessage("/aulos/status").encoded()
        var bundle = OSCMessage.padded(Array("#bundle".utf8)) + [0, 0, 0, 0, 0, 0, 0, 1]
        for element in [first, second] { bundle += OSCMessage.bigEndian(UInt32(element.count)) + element }
        #expect(try OSCMessage.parse(bundle).map(\.address) == ["/aulos/note", "/aulos/status"])
    }

    /// Malformed packets and the words their one-line error must contain.
    static var malformed: [([UInt8], String)] {
        let name: [UInt8] = OSCMessage.padded(Array("/a".utf8))
        let bundle: [UInt8] = OSCMessage.padded(Array("#bundle".utf8)) + [0, 0, 0, 0, 0, 0, 0, 1]
        var cases: [([UInt8], String)] = []
        cases.append(([], "multiple of 4"))
        cases.append((Array("/aulos".utf8), "multiple of 4"))
        cases.append((Array("nope".utf8) + [0, 0, 0, 0], "must start with '/'"))
        cases.append((name + OSCMessage.padded(Array(",x".utf8)), "argument type 'x'"))
        cases.append((name + OSCMessage.padded(Array(",i".utf8)), "past the end"))
        cases.append((name + OSCMessage.padded(Array(",b".utf8)) + [0x7F, 0, 0, 0], "a blob of"))
        cases.append((Array("/abcdefg".utf8), "without its end"))
        cases.append((Array("/a".utf8) + [0, 7], "padded with something other than zeros"))
        cases.append((bundle + [0, 0, 1, 0], "bundle element"))
        cases.append(([UInt8](repeating: 0x2F, count: 8200), "8192-byte limit"))
        return cases
    }

    @Test(arguments: Self.malformed)
    func malformedPacketsAreOneLine(_ bytes: [UInt8], _ expected: String) {
        do {
            _ = try OSCMessage.parse(bytes)
            Issue.record("expected an error for \(bytes.prefix(16))")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    /// Nested bundles stop at eight deep.
    @Test func deepBundlesAreRefused() {
        var packet = OSCMessage("/aulos/status").encoded()
        for _ in 0..<10 {
            packet =
                OSCMessage.padded(Array("#bundle".utf8)) + [0, 0, 0, 0, 0, 0, 0, 1]
                + OSCMessage.bigEndian(UInt32(packet.count)) + packet
        }
        #expect(throws: OSCError.self) { try OSCMessage.parse(packet) }
    }

    @Test func messagesMapToControlRequests() {
        func line(_ message: OSCMessage) -> String? { try? OSCServer.request(for: message).get().request.line }
        #expect(line(OSCMessage("/aulos/status")) == "status")
        #expect(line(OSCMessage("/aulos/note", [.int(2), .int(60), .int(100)])) == "midi 91 3C 64")
        #expect(line(OSCMessage("/aulos/note", [.int(1), .int(60), .int(0)])) == "midi 80 3C 00")
        #expect(line(OSCMessage("/aulos/note", [.float(1), .float(60), .float(90)])) == "midi 90 3C 5A")
        #expect(line(OSCMessage("/aulos/cc", [.int(16), .int(7), .int(127)])) == "midi BF 07 7F")
        #expect(line(OSCMessage("/aulos/rig", [.int(2)])) == "rig 2")
        #expect(line(OSCMessage("/aulos/rig", [.string("Stage")])) == "rig Stage")
        #expect(line(OSCMessage("/aulos/rig", [.string("two words")])) == #"rig "two words""#)
        #expect(line(OSCMessage("/aulos/part/Lead/cutoff", [.float(1200)])) == "set Lead.cutoff 1200.0")
        // Program, bank, pressure, bend and raw MIDI, what a TouchOSC or Zynthian layout sends.
        #expect(line(OSCMessage("/aulos/program", [.int(1), .int(81)])) == "midi C0 51")
        #expect(line(OSCMessage("/aulos/bank", [.int(10), .int(8)])) == "midi B9 00 08")
        #expect(line(OSCMessage("/aulos/pressure", [.int(3), .int(100)])) == "midi D2 64")
        #expect(line(OSCMessage("/aulos/bend", [.int(1), .int(0)])) == "midi E0 00 40")
        #expect(line(OSCMessage("/aulos/bend", [.int(1), .int(-8192)])) == "midi E0 00 00")
        #expect(line(OSCMessage("/aulos/bend", [.int(1), .int(8191)])) == "midi E0 7F 7F")
        #expect(line(OSCMessage("/aulos/bend", [.int(2), .float(1)])) == "midi E1 7F 7F")
        #expect(line(OSCMessage("/aulos/bend", [.int(2), .float(-0.5)])) == "midi E1 00 20")
        #expect(line(OSCMessage("/aulos/midi", [.blob([0x90, 60, 100])])) == "midi 90 3C 64")
        #expect(line(OSCMessage("/aulos/midi", [.int(0xF8)])) == "midi F8")
        for bad in [
            OSCMessage("/aulos/program", [.int(0), .int(1)]),
            OSCMessage("/aulos/program", [.int(1), .int(128)]),
            OSCMessage("/aulos/bank", [.int(1)]),
            OSCMessage("/aulos/bend", [.int(1), .int(8192)]),
            OSCMessage("/aulos/bend", [.int(1), .float(1.5)]),
            OSCMessage("/aulos/bend", [.int(17), .int(0)]),
            OSCMessage("/aulos/pressure", [.int(1), .int(-1)]),
            OSCMessage("/aulos/midi", []),
            OSCMessage("/aulos/midi", [.int(256)]),
            OSCMessage("/aulos/midi", [.string("90 3c 64")]),
            OSCMessage("/aulos/note", [.int(0), .int(60), .int(100)]),
            OSCMessage("/aulos/note", [.int(1), .int(128), .int(100)]),
            OSCMessage("/aulos/note", [.int(1), .int(60)]),
            OSCMessage("/aulos/cc", [.string("x"), .int(1), .int(1)]),
            OSCMessage("/aulos/rig", [.string("")]),
            OSCMessage("/aulos/part/Lead/cutoff", [.float(.nan)]),
            OSCMessage("/aulos/part/Lead/cutoff", [.string("loud")]),
            OSCMessage("/aulos/launch", []),
        ] {
            #expect(line(bad) == nil, "\(bad)")
        }
    }
}
