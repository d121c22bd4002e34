import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `aulos status` (and `--json`) shows each network MIDI session with its counters: a peer built from raw bytes
/// here (AppleMIDI's IN on both ports, then RTP-MIDI packets with a gap in their sequence numbers) joins a live
/// `aulos play --network-midi 127.0.0.1:0`. Threads: the test's.
@Suite struct NetworkMIDIStatusTests {
    /// A UDP socket on 127.0.0.1, for one of the peer's two ports. Threads: the test's.
    final class PeerSocket {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        init() {
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = Self.loopback(port: 0)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        deinit { close(fd) }

        var port: UInt16 {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            return UInt16(bigEndian: address.sin_port)
        }

        static func loopback(port: UInt16) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            address.sin_port = port.bigEndian
            return address
        }

        func send(_ bytes: [UInt8], to port: UInt16) {
            var address = Self.loopback(port: port)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }

        /// The next datagram's first four bytes (`FF FF 'O' 'K'` for an accepted invitation), or nil.
        func receiveCommand() -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: 1500)
            let count = recv(fd, &buffer, buffer.count, 0)
            return count >= 4 ? Array(buffer[0..<4]) : nil
        }
    }

    static let ssrc: [UInt8] = [0x51, 0x50, 0xCA, 0xFE]

    /// IN: signature, "IN", protocol version 2, the initiator's token, its SSRC and its name.
    static func invitation(name: String) -> [UInt8] {
        [0xFF, 0xFF, 0x49, 0x4E, 0, 0, 0, 2, 0x12, 0x34, 0x56, 0x78] + ssrc + Array(name.utf8) + [0]
    }

    /// An RTP-MIDI packet with one note-on (a short command section, no journal).
    static func notePacket(sequence: UInt16, note: UInt8) -> [UInt8] {
        [0x80, 0x61, UInt8(sequence >> 8), UInt8(sequence & 0xFF), 0, 0, 0, 0] + ssrc + [0x03, 0x90, note, 0x64]
    }

    @Test func sessionsAndTheirCountersAreInTheStatus() throws {
        let folder = NSTemporaryDirectory() + "aulos-netstatus-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let aulos = try BackgroundAulos(
            ["play", "--device", "null", "--duration", "30", "--network-midi", "127.0.0.1:0"], in: folder)
        #expect(try aulos.waitForStatus { $0["networkSessions"] as? [Any] != nil }, "\(aulos.stderr)")
        let plainEmpty = try runAulos(["status", "--socket", aulos.socketPath])
        #expect(plainEmpty.stdout.contains("\nnetwork MIDI: no sessions\n"), "\(plainEmpty.stdout)")
        // Loopback alone is nothing to advertise to the network.
        #expect(aulos.stderr.contains("aulos: network MIDI not advertised: it listens on loopback only"))
        let listening = try #require(
            aulos.stderr.firstMatch(of: /network MIDI \(AppleMIDI\) on 127\.0\.0\.1:(\d+)/), "\(aulos.stderr)")
        let port = try #require(UInt16(listening.1))

        let control = PeerSocket()
        let data = PeerSocket()
        control.send(Self.invitation(name: "Status Peer"), to: port)
        #expect(control.receiveCommand() == [0xFF, 0xFF, 0x4F, 0x4B])
        data.send(Self.invitation(name: "Status Peer"), to: port + 1)
        #expect(data.receiveCommand() == [0xFF, 0xFF, 0x4F, 0x4B])
        // Packets 0 and 2: one lost, none repaired (no journal).
        data.send(Self.notePacket(sequence: 0, note: 60), to: port + 1)
        data.send(Self.notePacket(sequence: 2, note: 62), to: port + 1)
        #expect(
            try aulos.waitForStatus {
                (($0["networkSessions"] as? [[String: Any]])?.first?["packets"] as? Int) == 2
            }, "\(aulos.stderr)")
        let json = try #require(try aulos.status())
        let session = try #require((json["networkSessions"] as? [[String: Any]])?.first)
        #expect(session["peer"] as? String == "Status Peer")
        #expect(session["address"] as? String == "127.0.0.1:\(control.port)")
        #expect(session["kind"] as? String == "AppleMIDI")
        #expect(session["lost"] as? Int == 1)
        #expect(session["repaired"] as? Int == 0)
        let plain = try runAulos(["status", "--socket", aulos.socketPath])
        #expect(plain.status == 0)
        #expect(
            plain.stdout.contains(
                "\nnetwork MIDI: Status Peer (AppleMIDI 127.0.0.1:\(control.port)): 2 packets, 1 lost, 0 repaired"),
            "\(plain.stdout)")
        // BY: the session ends, and the status says so.
        control.send([0xFF, 0xFF, 0x42, 0x59, 0, 0, 0, 2, 0x12, 0x34, 0x56, 0x78] + Self.ssrc, to: port)
        #expect(
            try aulos.waitForStatus { ($0["networkSessions"] as? [Any])?.isEmpty == true }, "\(aulos.stderr)")
    }
}
