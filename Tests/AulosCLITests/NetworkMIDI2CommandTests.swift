import AulosTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `aulos play --network-midi2`: a client written here from the specification's structure invites the live
/// instrument over real UDP on loopback, plays a MIDI 2.0 note and says goodbye, with no other MIDI input (ALSA's
/// null device, no sequencer needed); bad values are usage errors.
///
/// Threads: the test's; aulos runs as a process of its own.
@Suite(.serialized) struct NetworkMIDI2CommandTests {
    @Test func badValuesAreUsageErrors() throws {
        for bad in ["x", "70000", "host.example:5673"] {
            let result = try runAulos(["play", "--device", "null", "--duration", "1", "--network-midi2", bad])
            #expect(result.status == 64, "\(bad): \(result.stderr)")
            #expect(result.stderr.contains("--network-midi2 '\(bad)'"), "\(result.stderr)")
        }
        // With a file, Network MIDI 2.0 plays it on the live instrument, the clients playing along.
        let file = try runAulos([
            "play", "--demo", "--device", "null", "--duration", "1", "--network-midi2", "127.0.0.1:0",
        ])
        #expect(file.status == 0, "\(file.stderr)")
        #expect((file.stdout + file.stderr).contains("played live"), "\(file.stdout)")
        let unit = try runAulos(["service", "unit", "--network-midi2", "5673"])
        #expect(unit.status == 0, "\(unit.stderr)")
        #expect(unit.stdout.contains(" --network-midi2 5673"), "\(unit.stdout)")
        #expect(unit.stdout.contains("RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n"), "\(unit.stdout)")
    }

    /// A rig's `network-midi:` with `midi2:` alone: a Network MIDI 2.0 host and no AppleMIDI one.
    @Test func aRigTurnsOnNetworkMIDI2Alone() throws {
        let folder = NSTemporaryDirectory() + "aulos-midi2-rig-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let rig = folder + "/rig.yaml"
        TestFiles.write(
            "network-midi:\n  midi2: 127.0.0.1:0\n  secret: s3cret\nparts:\n  - instrument: synth\n", to: rig)
        let result = try runAulos(["play", "--device", "null", "--duration", "1", "--rig", rig])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("aulos: MIDI: Network MIDI 2.0 on 127.0.0.1:"), "\(result.stderr)")
        #expect(result.stderr.contains("that know the shared secret"), "\(result.stderr)")
        #expect(!result.stderr.contains("aulos: network MIDI accepts sessions"), "no AppleMIDI host: \(result.stderr)")
    }

    @Test func aPortInUseIsOneLine() throws {
        let holder = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(holder, $0, length) == 0 && getsockname(holder, $0, &length) == 0
            }
        }
        let port = UInt16(bigEndian: address.sin_port)
        let result = try runAulos([
            "play", "--device", "null", "--duration", "1", "--network-midi2", "127.0.0.1:\(port)",
        ])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(
            result.stderr.contains("cannot listen for Network MIDI 2.0 on 127.0.0.1:\(port): Address already in use"),
            "\(result.stderr)")
    }

    @Test func aClientPlaysANoteAndSaysGoodbye() throws {
        let folder = NSTemporaryDirectory() + "aulos-network-midi2-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let client = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(client) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        // A free port for aulos: bound by a probe socket, read, released.
        let probe = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(probe, $0, length) == 0 && getsockname(probe, $0, &length) == 0
            }
        }
        let port = UInt16(bigEndian: address.sin_port)
        close(probe)
        let aulos = try BackgroundAulos(
            ["play", "--device", "null", "--duration", "20", "--network-midi2", "127.0.0.1:\(port)"], in: folder)
        func send(_ commands: [UInt8]) {
            let bytes: [UInt8] = Array("MIDI".utf8) + commands
            _ = bytes.withUnsafeBytes { raw in
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(client, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
        }
        func receive(_ milliseconds: Int32) -> [UInt8] {
            var descriptor = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, milliseconds) == 1 else { return [] }
            var buffer = [UInt8](repeating: 0, count: 1500)
            let count = recv(client, &buffer, buffer.count, 0)
            return count > 0 ? Array(buffer[0..<count]) : []
        }
        // Invitation (0x01): name "Test" (1 word), no capabilities, no product id.
        var reply: [UInt8] = []
        for _ in 0..<80 where reply.isEmpty {  // until aulos listens (it builds the rig first)
            send([0x01, 1, 1, 0] + Array("Test".utf8))
            reply = receive(250)
        }
        #expect(Array(reply.prefix(5)) == Array("MIDI".utf8) + [0x10], "accepted: \(reply) \(aulos.stderr)")
        // UMP data 0: MIDI 2.0 note on 60; 1: its note off; then BYE (0xF0, reason 1).
        send([0xFF, 2, 0, 0, 0x40, 0x90, 60, 0, 0xC0, 0, 0, 0])
        send([0xFF, 2, 0, 1, 0x40, 0x80, 60, 0, 0x80, 0, 0, 0])
        send([0xF0, 0, 1, 0])
        // The BYE reply; first, maybe, the answer to an invitation repeated while aulos was slow to answer the first
        // (a loaded machine): a repeated invitation is answered again, as it should be.
        var answer = receive(2_000)
        while Array(answer.prefix(5)) == Array("MIDI".utf8) + [0x10] { answer = receive(2_000) }
        #expect(Array(answer.prefix(5)) == Array("MIDI".utf8) + [0xF1], "\(answer)")
        for _ in 0..<50 where !aulos.stderr.contains("said goodbye") { usleep(100_000) }
        aulos.signal(SIGTERM)
        #expect(aulos.waitForExit() != nil)
        #expect(aulos.stderr.contains("Network MIDI 2.0 on 127.0.0.1:\(port)"), "\(aulos.stderr)")
        #expect(aulos.stderr.contains("connected Test: Network MIDI 2.0 127.0.0.1:"), "\(aulos.stderr)")
        #expect(
            aulos.stderr.contains("said goodbye after 2 UMP commands, 0 lost; released 0 notes"), "\(aulos.stderr)")
    }
}
