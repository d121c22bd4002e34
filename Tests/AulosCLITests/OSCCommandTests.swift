import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `aulos play --osc`: real UDP datagrams on loopback to the service on ALSA's `null` device, every
/// documented address answered to its sender, and what they did visible in `aulos status`.
@Suite(.serialized) struct OSCCommandTests {
    /// A UDP socket on loopback that sends OSC and reads the reply (three seconds at most).
    final class Client {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        let port: UInt16

        init(port: UInt16) {
            self.port = port
            var timeout = timeval(tv_sec: 3, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(descriptor) }

        static func padded(_ text: String) -> [UInt8] {
            let bytes = Array(text.utf8)
            return bytes + [UInt8](repeating: 0, count: 4 - bytes.count % 4)
        }

        /// `address` with int (`Int32`), float and string arguments.
        static func message(_ address: String, _ arguments: [Any] = []) -> [UInt8] {
            var tags = ","
            var data: [UInt8] = []
            for argument in arguments {
                switch argument {
                case let value as Int32:
                    tags += "i"
                    data += withUnsafeBytes(of: value.bigEndian, Array.init)
                case let value as Float:
                    tags += "f"
                    data += withUnsafeBytes(of: value.bitPattern.bigEndian, Array.init)
                case let value as String:
                    tags += "s"
                    data += padded(value)
                default: fatalError("unsupported argument")
                }
            }
            return padded(address) + padded(tags) + data
        }

        /// Sends `bytes`; the reply's address and first string argument, or nil without one.
        func send(_ bytes: [UInt8]) -> (address: String, text: String)? {
            var target = sockaddr_in()
            target.sin_family = sa_family_t(AF_INET)
            target.sin_port = port.bigEndian
            target.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            _ = withUnsafePointer(to: &target) { address in
                address.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    bytes.withUnsafeBytes {
                        sendto(descriptor, $0.baseAddress, $0.count, 0, raw, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            let reply = Array(buffer[..<count])
            let strings = reply.split(separator: 0, omittingEmptySubsequences: true).map {
                String(decoding: $0, as: UTF8.self)
            }
            guard strings.count >= 3 else { return nil }
            return (strings[0], strings[2])
        }
    }

    @Test func everyAddressIsAnsweredAndActs() throws {
        let folder = NSTemporaryDirectory() + "aulos-osc-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try BackgroundAulos.writeTwoRigSet(in: folder)
        let port = UInt16(20_000 + getpid() % 20_000)
        let aulos = try BackgroundAulos(
            ["play", "--service", "--rig", folder + "/set.yaml", "--device", "null", "--osc", "127.0.0.1:\(port)"],
            in: folder)
        #expect(try aulos.waitForStatus { ($0["rigs"] as? [String])?.count == 2 }, "\(aulos.stderr)")
        let client = Client(port: port)

        let status = client.send(Client.message("/aulos/status"))
        #expect(status?.address == "/aulos/status")
        #expect(status?.text.contains(#""rig":"One""#) == true, "\(status?.text ?? "no reply")")

        #expect(
            client.send(Client.message("/aulos/note", [Int32(1), Int32(60), Int32(100)]))?.text.contains("ok") == true)
        #expect(client.send(Client.message("/aulos/cc", [Int32(1), Int32(7), Int32(90)]))?.text.contains("ok") == true)
        #expect(
            client.send(Client.message("/aulos/note", [Int32(1), Int32(60), Int32(0)]))?.text.contains("ok") == true)
        #expect(try aulos.waitForStatus { ($0["midiDelivered"] as? Int ?? 0) >= 3 })

        let set = client.send(Client.message("/aulos/part/Lead/cutoff", [Float(1234)]))
        #expect(set?.text.contains("ok") == true, "\(set?.text ?? "no reply")")
        let value = aulos.request("get Lead.cutoff") ?? "no reply"
        #expect(value.contains("1234"), "\(value)")

        // Program, bank, bend, pressure and raw MIDI reach the instrument as a keyboard's would: the program
        // change loads Bright Lead (81) on the synth's first channel, whose cutoff is 3,500 Hz.
        let delivered = try aulos.status()?["midiDelivered"] as? Int ?? 0
        for message in [
            Client.message("/aulos/bank", [Int32(1), Int32(0)]),
            Client.message("/aulos/program", [Int32(1), Int32(81)]),
            Client.message("/aulos/bend", [Int32(1), Float(0.25)]),
            Client.message("/aulos/pressure", [Int32(1), Int32(40)]),
            Client.message("/aulos/midi", [Int32(0x90), Int32(64), Int32(90), Int32(0x80), Int32(64), Int32(0)]),
        ] {
            let reply = client.send(message)
            #expect(reply?.text.contains("ok") == true, "\(reply?.text ?? "no reply")")
        }
        #expect(try aulos.waitForStatus { ($0["midiDelivered"] as? Int ?? 0) >= delivered + 6 })
        let preset = aulos.request("get Lead.cutoff") ?? "no reply"
        #expect(preset.contains(#""value":3500"#), "the program change did not load Bright Lead: \(preset)")

        #expect(client.send(Client.message("/aulos/rig", ["Two"]))?.text.contains("Two") == true)
        #expect(try aulos.waitForStatus { $0["rig"] as? String == "Two" })
        #expect(client.send(Client.message("/aulos/rig", [Int32(1)]))?.text.contains("One") == true)

        // The tempo set while the transport plays is the session's: after a rewind it still plays at it (it was
        // written into the map at the beat where it was set, so beat 0 played the rig's tempo again).
        #expect(client.send(Client.message("/aulos/transport", ["play"]))?.text.contains("ok") == true)
        #expect(try aulos.waitForStatus { $0["transportBeat"] as? Double ?? 0 > 0.5 })
        #expect(client.send(Client.message("/aulos/tempo", [Float(96)]))?.text.contains("ok") == true)
        #expect(try aulos.waitForStatus { $0["tempo"] as? Double == 96 && $0["transportTempo"] as? Double == 96 })
        #expect(client.send(Client.message("/aulos/transport", ["stop"]))?.text.contains("ok") == true)
        #expect(client.send(Client.message("/aulos/transport", ["rewind"]))?.text.contains("ok") == true)
        var lastSeen = "no status"
        let afterRewind = try aulos.waitForStatus(seconds: 5) { status in
            lastSeen = "beat \(status["transportBeat"] ?? "-"), tempo \(status["transportTempo"] ?? "-")"
            return status["transportBeat"] as? Double == 0 && status["transportTempo"] as? Double == 96
        }
        #expect(afterRewind, "after a rewind the transport is not at beat 0 at the tempo set: \(lastSeen)")
        #expect(client.send(Client.message("/aulos/transport", ["locate", Float(8)]))?.text.contains("ok") == true)
        #expect(client.send(Client.message("/aulos/transport", ["stop"]))?.text.contains("ok") == true)

        // Bad requests: an error to the sender, and the instrument plays on.
        for (bytes, expected) in [
            (Client.message("/aulos/launch"), "unknown address"),
            (Client.message("/aulos/tempo", [Float(9000)]), "20…400"),
            (Client.message("/aulos/transport", ["dance"]), "play, stop, rewind"),
            (Client.message("/aulos/note", [Int32(17), Int32(60), Int32(1)]), "channel 1…16"),
            (Client.message("/aulos/part/Lead/nonesuch", [Float(1)]), "Lead"),
            (Array("/bad".utf8), "without its end"),
            (Array("/ba".utf8), "multiple of 4"),
        ] {
            let reply = client.send(bytes)
            #expect(
                reply?.address == "/aulos/error" || reply?.text.contains("error") == true, "\(reply.debugDescription)")
            #expect(reply?.text.contains(expected) == true, "\(reply?.text ?? "no reply") for \(expected)")
        }
        #expect(try aulos.waitForStatus { _ in true })
    }

    /// A packet over 8 KB is answered with its real size (it used to be "8193 bytes", whatever it was); and
    /// replies to one sender are limited to 4 times what it sent plus 32 KB a second (a 20-byte
    /// /aulos/status asks for 0.7 KB here, 3.5 KB with a larger rig: a sender asking as fast as it can used
    /// to get 35–200 times what it sent). Small replies to a flood of small messages are all sent.
    @Test func oversizedPacketsAndRepliesAreMeasured() throws {
        let folder = NSTemporaryDirectory() + "aulos-osc-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try BackgroundAulos.writeTwoRigSet(in: folder)
        let port = UInt16(20_000 + (getpid() + 3_001) % 20_000)
        let aulos = try BackgroundAulos(
            ["play", "--service", "--rig", folder + "/set.yaml", "--device", "null", "--osc", "127.0.0.1:\(port)"],
            in: folder)
        #expect(try aulos.waitForStatus { ($0["rigs"] as? [String])?.count == 2 }, "\(aulos.stderr)")

        let oversized = Client(port: port).send(Client.padded("/aulos/status") + [UInt8](repeating: 0, count: 10_000))
        #expect(oversized?.text.contains("10016 bytes") == true, "\(oversized?.text ?? "no reply")")

        let client = Client(port: port)
        let request = Client.message("/aulos/status")
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = port.bigEndian
        target.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var received = 0
        var replies = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        func drain() {
            while true {
                let count = recv(client.descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                guard count > 0 else { return }
                received += count
                replies += 1
            }
        }
        let started = Date()
        for _ in 0..<300 {
            _ = withUnsafePointer(to: &target) { address in
                address.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    request.withUnsafeBytes {
                        sendto(
                            client.descriptor, $0.baseAddress, $0.count, 0, raw,
                            socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
            drain()
            usleep(1_000)
        }
        while Date().timeIntervalSince(started) < 1.5 {
            drain()
            usleep(10_000)
        }
        let elapsed = Date().timeIntervalSince(started)
        print("300 /aulos/status of \(request.count) bytes in \(elapsed) s: \(replies) replies, \(received) bytes")
        #expect(replies > 0)
        // 32 KB at once, 32 KB a second, 4 bytes for every byte sent, and one reply that may overdraw.
        let allowed = 32_768 * (1 + elapsed) + 4 * Double(300 * request.count) + 8_192
        #expect(Double(received) <= allowed, "\(received) bytes in \(elapsed) s (at most \(allowed))")
        #expect(aulos.process.isRunning)
    }

    /// OSC listens on loopback only, for now: another address is refused in one line.
    @Test func otherAddressesAreRefused() throws {
        let result = try runAulos(["play", "--device", "null", "--osc", "0.0.0.0:9000", "--duration", "1"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("OSC listens on this machine only"), "\(result.stderr)")
    }
}
