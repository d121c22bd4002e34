import AulosCore
import AulosRig
import AulosTestSupport
import Foundation
import Synchronization
import Testing

@testable import AulosPlayback

#if canImport(Glibc)
import Glibc
#endif

/// The typed control road: one `ControlRequest` read from a socket line or an OSC message, typed replies
/// encoded once, names with spaces, one-line errors, and parameter changes that land without the tick.
@Suite struct ControlRequestTests {
    @Test func quotedWordsHoldSpaces() throws {
        #expect(try ControlRequest(line: #"rig "Grand Piano""#) == .rig(.name("Grand Piano")))
        #expect(try ControlRequest(line: "rig Grand Piano") == .rig(.name("Grand Piano")))
        #expect(try ControlRequest(line: "rig 2") == .rig(.number(2)))
        #expect(
            try ControlRequest(line: #"set "Grand Piano.volume" 0.5"#)
                == .set(target: "Grand Piano.volume", value: ControlValue(text: "0.5")))
        #expect(
            try ControlRequest(line: #"preset "Left Hand" 0 5"#)
                == .preset(part: "Left Hand", bank: 0, program: 5, channel: nil))
        #expect(
            try ControlRequest(line: #"record start "a \"b\" c.wav""#) == .record(.start(name: #"a "b" c.wav"#)))
        #expect(
            try ControlRequest(line: "set output.eq Bass Booster")
                == .set(
                    target: "output.eq", value: ControlValue(text: "Bass Booster")))
        // Every request's text form reads back as the same request.
        for request: ControlRequest in [
            .rig(.name("Grand Piano")), .rig(.name(#"odd \ "name""#)), .get(target: "Grand Piano.pan"),
            .set(target: "Lead.cutoff", value: ControlValue(1200)),
            .preset(part: "Left Hand", bank: 1, program: 2, channel: nil),
            .preset(part: "GM", bank: 128, program: 25, channel: 10),
            .learn(target: "Lead.cutoff", seconds: 5), .tempo(96), .transport(.locate(beat: 8)),
            .record(.start(name: "take one.wav")), .record(.stop), .midi([0x90, 0x3C, 0x64]), .status, .unlearn,
            .save(name: nil), .save(name: "gig.yaml"), .player(.play), .player(.pause), .player(.stop),
            .player(.locate(seconds: 1.5)), .player(.loop(true)), .player(.loop(false)), .snapshot("Big Chorus"),
            .player(.load("2 Ballad")), .player(.load("3")), .player(.next), .player(.previous),
        ] {
            #expect(try ControlRequest(line: request.line) == request, "\(request.line)")
        }
    }

    /// A bad request is one line, short, saying what the requests are — and never more of what was sent
    /// than its first 40 characters, with no line break in it (a reply is one line on every road).
    @Test func badRequestsAreOneLine() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
        for line in [
            "", "quit", "set Lead.cutoff", "tempo fast", "transport dance", "midi 9G", #"rig "Grand"#,
            "learn Lead.cutoff 9999", "preset Lead 0 300", "unknown\n" + passwd,
            passwd + String(repeating: "x", count: 9000),
        ] {
            do throws(ControlFailure) {
                let request = try ControlRequest(line: line)
                Issue.record("'\(line.prefix(20))' read as \(request)")
            } catch {
                #expect(error.reason == .badRequest)
                #expect(!error.message.contains("\n"), "\(error.message)")
                #expect(!error.message.contains("/usr/sbin"), "\(error.message)")
                #expect(error.message.count < 400, "\(error.message)")
                let reply = ControlReply.failure(error)
                #expect(reply.kind == .badRequest)
                #expect(!reply.json.contains("\n"))
            }
        }
    }

    @Test func repliesAreTypedAndEncodedOnce() throws {
        var done = ControlReply.Done()
        done.target = "Lead.cutoff"
        done.value = .number(1234)
        #expect(ControlReply.done(done).json == #"{"ok":true,"target":"Lead.cutoff","value":1234}"#)
        #expect(ControlReply.done(done).kind == .ok)
        #expect(
            ControlReply.value(target: "output.eq", value: .text("off")).json
                == #"{"target":"output.eq","value":"off"}"#)
        #expect(ControlReply.learning("Lead.cutoff").json == #"{"learning":"Lead.cutoff"}"#)
        #expect(
            ControlReply.learned(ControlReply.Learned(cc: 74, channel: 0, target: "Lead.cutoff")).json
                == #"{"learned":{"cc":74,"channel":0,"target":"Lead.cutoff"}}"#)
        #expect(ControlReply.failure(#"no rig "x""#).json == #"{"error":"no rig \"x\""}"#)
        #expect(ControlReply.failure("no rig").kind == .badRequest)
        #expect(ControlReply.failure("not playing yet", .unavailable).kind == .unavailable)
        // What clients read back: the same fields, typed.
        let decoded = try JSONDecoder().decode(ControlReply.Done.self, from: Data(ControlReply.done(done).json.utf8))
        #expect(decoded == done)
    }

    @Test func oscMessagesMapToRequestsWithNamesAsTheyAre() throws {
        func request(_ message: OSCMessage) -> ControlRequest? { try? OSCServer.request(for: message).get().request }
        #expect(request(OSCMessage("/aulos/rig", [.string("Grand Piano")])) == .rig(.name("Grand Piano")))
        #expect(
            request(OSCMessage("/aulos/part/Lead/cutoff", [.float(1200)]))
                == .set(target: "Lead.cutoff", value: ControlValue(1200)))
        #expect(request(OSCMessage("/aulos/tempo", [.int(96)])) == .tempo(96))
        #expect(request(OSCMessage("/aulos/player", [.string("load"), .int(3)])) == .player(.load("3")))
        #expect(
            request(OSCMessage("/aulos/player", [.string("load"), .string("2 Ballad")])) == .player(.load("2 Ballad")))
        #expect(request(OSCMessage("/aulos/player", [.string("next")])) == .player(.next))
        #expect(request(OSCMessage("/aulos/player", [.string("previous")])) == .player(.previous))
        #expect(request(OSCMessage("/aulos/player", [.string("load")])) == nil)
    }

    /// A rig's targets behind the cache, and the rig's MIDI path, as the control loop holds them.
    static func targets() throws -> (PlaybackRig, LiveMIDIPath, ControlTargets) {
        let (rig, _, path) = try LiveMIDIPathTests.livePath()
        let targets = ControlTargets()
        targets.attach(path)
        return (rig, path, targets)
    }

    /// A target is resolved once per rig: the second request for it (any spelling) is the cached one.
    @Test func targetsAreResolvedOnce() throws {
        let (rig, _, targets) = try Self.targets()
        defer { rig.close() }
        let first = try targets.resolve("Lead.cutoff", in: rig, activeRig: 0)
        let again = try targets.resolve("lead.CUT-OFF", in: rig, activeRig: 0)
        #expect(targets.count == 1)
        #expect(first.name == again.name)
        #expect(throws: RigError.self) { try targets.resolve("Lead.nonesuch", in: rig, activeRig: 0) }
        targets.detach()
        #expect(targets.count == 0)
    }

    /// An OSC float reaches the parameter with nobody serving the control loop: the OSC thread sets it.
    @Test func oscFloatReachesTheParameterWithoutTheControlTick() throws {
        let (rig, _, targets) = try Self.targets()
        defer { rig.close() }
        let target = try targets.resolve("Lead.cutoff", in: rig, activeRig: 0)  // the control thread, once
        let osc = try OSCServer("127.0.0.1:0")
        osc.answerAtOnce { targets.setAtOnce($0) }
        let client = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(client) }
        var timeout = timeval(tv_sec: 3, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = osc.port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let message = OSCMessage("/aulos/part/Lead/cutoff", [.float(1234)]).encoded()
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                message.withUnsafeBytes {
                    sendto(client, $0.baseAddress, $0.count, 0, raw, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(client, &buffer, buffer.count, 0)
        #expect(count > 0, "no reply without the control loop")
        let reply = try OSCMessage.parse(Array(buffer[..<max(0, count)])).first
        #expect(reply?.address == "/aulos/reply")
        #expect(reply?.arguments.first == .string(#"{"ok":true,"target":"Lead.cutoff","value":1234}"#))
        #expect(try target.current() == 1234)
        #expect(osc.take().isEmpty, "nothing left for the control thread")
    }

    /// The panel's parameter change is answered at once too (before `submit` returns: no control loop runs
    /// here); anything else waits for the control loop.
    @Test func panelParameterChangeLandsWithoutTheControlTick() throws {
        let (rig, _, targets) = try Self.targets()
        defer { rig.close() }
        let target = try targets.resolve("Lead.cutoff", in: rig, activeRig: 0)
        let bridge = ControlBridge()
        bridge.answerAtOnce { targets.setAtOnce($0) }
        func submit(_ name: String, _ value: String) -> ControlReply? {
            let answer = Mutex<ControlReply?>(nil)
            bridge.submit(.control(.set(target: name, value: ControlValue(text: value)))) { reply in
                answer.withLock { $0 = reply }
            }
            return answer.withLock { $0 }
        }
        let reply = try #require(submit("lead.cutoff", "2345"), "not answered without the control loop")
        #expect(reply.kind == .ok, "\(reply.json)")
        #expect(try target.current() == 2345)
        let refused = try #require(submit("Lead.cutoff", "1e9"))
        #expect(refused.kind == .badRequest, "\(refused.json)")
        #expect(try target.current() == 2345)
        // Not resolved before: left for the control thread.
        #expect(submit("Lead.resonance", "0.5")?.json == nil)
        #expect(bridge.take().count == 1)
        // Once the control thread has resolved it, it is not.
        _ = try targets.resolve("Lead.resonance", in: rig, activeRig: 0)
        let resolved = try #require(submit("Lead.resonance", "0.5"))
        #expect(resolved.kind == .ok, "\(resolved.json)")
        #expect(bridge.take().isEmpty)
    }
}
