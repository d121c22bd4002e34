import AulosTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The Python with pymidi for the end-to-end test: `$AULOS_PYMIDI_PYTHON`, else the checkout's `.build-pymidi/venv`
/// (scripts/setup.sh --tests), else python3 if it has pymidi; nil (and "skipped: …" printed) without one.
private let pymidiPython: String? = {
    var candidates = [repositoryRoot + "/.build-pymidi/venv/bin/python3", "/usr/bin/python3"]
    if let chosen = ProcessInfo.processInfo.environment["AULOS_PYMIDI_PYTHON"], !chosen.isEmpty {
        candidates.insert(chosen, at: 0)
    }
    for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
        let result = try? runAulos(["-c", "import pymidi.packets"], executable: candidate)
        if result?.status == 0 { return candidate }
    }
    print(
        "skipped: network MIDI end to end (no Python with pymidi: run scripts/setup.sh --tests or set "
            + "AULOS_PYMIDI_PYTHON)"
    )
    return nil
}()

/// A UDP port on 127.0.0.1 whose next port is free too, for a control/data pair (free when asked).
private func freePortPair() -> UInt16 {
    for _ in 0..<32 {
        let first = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        let second = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer {
            close(first)
            close(second)
        }
        guard let port = bindLoopback(first, port: 0), port < 65_000, bindLoopback(second, port: port + 1) != nil
        else { continue }
        return port
    }
    return 0
}

/// Binds `fd` to 127.0.0.1:`port`; the port bound, or nil.
private func bindLoopback(_ fd: Int32, port: UInt16) -> UInt16? {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    address.sin_port = port.bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    return bound ? UInt16(bigEndian: address.sin_port) : nil
}

/// The loudest sample of a WAV take (16-, 24- or 32-bit integer, or 32-bit float), 0…1; nil when it does not read.
private func peak(ofWAV path: String) -> Double? {
    if let channels = FloatWAV.read(path) { return Double(channels.flatMap { $0 }.map(abs).max() ?? 0) }
    guard let data = FileManager.default.contents(atPath: path), data.count > 44 else { return nil }
    let bytes = [UInt8](data)
    func u32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
    var offset = 12
    var bits = 0
    while offset + 8 <= bytes.count {
        let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
        let size = u32(offset + 4)
        if id == "fmt " { bits = Int(bytes[offset + 22]) | Int(bytes[offset + 23]) << 8 }
        if id == "data", bits == 16 || bits == 24 || bits == 32 {
            let width = bits / 8
            var loudest = 0
            var at = offset + 8
            let end = min(bytes.count, offset + 8 + size)
            while at + width <= end {
                var value = 0
                for byte in 0..<width { value |= Int(bytes[at + byte]) << (8 * byte) }
                let sign = 1 << (bits - 1)
                if value & sign != 0 { value -= sign << 1 }
                loudest = max(loudest, abs(value))
                at += width
            }
            return Double(loudest) / Double(1 << (bits - 1))
        }
        offset += 8 + size + (size & 1)
    }
    return nil
}

/// `aulos play --network-midi`: pymidi (code the project did not write) invites the live instrument over real UDP
/// on loopback, synchronises its clock, plays a note and a controller and says goodbye; the take is not silent and
/// no note is left on. On ALSA's null device, with no ALSA sequencer on the machine needed.
///
/// Threads: the test's; aulos and pymidi run as processes of their own.
@Suite(.serialized) struct NetworkMIDICommandTests {
    @Test func badValuesAreUsageErrors() throws {
        for bad in ["x", "70000", "host.example:5004", "::1:5004"] {
            let result = try runAulos(["play", "--device", "null", "--duration", "1", "--network-midi", bad])
            #expect(result.status == 64, "\(bad): \(result.stderr)")
            #expect(result.stderr.contains("--network-midi"), "\(result.stderr)")
        }
        // With a file, network MIDI plays it on the live instrument, the peers playing along.
        let file = try runAulos([
            "play", "--demo", "--device", "null", "--duration", "1", "--network-midi", "127.0.0.1:0",
        ])
        #expect(file.status == 0, "\(file.stderr)")
        #expect(file.stderr.contains("aulos: MIDI: network MIDI (AppleMIDI) on 127.0.0.1:"), "\(file.stderr)")
        #expect((file.stdout + file.stderr).contains("played live"), "\(file.stdout)")
    }

    /// `--network-midi-allow` and `--network-midi-latency`: a value that is not one is a usage error naming the
    /// option; without a port (an option's or the rig's) they are one line and exit status 1.
    @Test func allowAndLatencyAreChecked() throws {
        for (arguments, said) in [
            (["--network-midi", "5004", "--network-midi-allow", "pi.local"], "--network-midi-allow: 'pi.local'"),
            (["--network-midi", "5004", "--network-midi-allow", ","], "--network-midi-allow: give addresses"),
            (["--network-midi", "5004", "--network-midi-allow", "10.0.0.0/33"], "--network-midi-allow: '10.0.0.0/33'"),
            (["--network-midi", "5004", "--network-midi-latency", "1001"], "--network-midi-latency must be between"),
            (["--network-midi", "5004", "--network-midi-latency", "-1"], "--network-midi-latency must be between"),
            (["--network-midi-latency", "x"], "--network-midi-latency"),
        ] {
            let result = try runAulos(["play", "--device", "null", "--duration", "1"] + arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(said), "\(arguments): \(result.stderr)")
            let unit = try runAulos(["service", "unit"] + arguments)
            #expect(unit.status == 64, "service unit \(arguments): \(unit.stderr)")
        }
        let alone = try runAulos(["play", "--device", "null", "--duration", "1", "--network-midi-allow", "10.0.0.0/8"])
        #expect(alone.status == 1, "\(alone.stderr)")
        #expect(
            alone.stderr.contains("go with --network-midi [ADDR:]PORT (or a rig's network-midi:)"), "\(alone.stderr)")
        let unit = try runAulos([
            "service", "unit", "--network-midi", "5004", "--network-midi-allow", "192.168.1.0/24,::1",
            "--network-midi-latency", "2",
        ])
        #expect(unit.status == 0, "\(unit.stderr)")
        #expect(
            unit.stdout.contains(
                " --network-midi 5004 --network-midi-allow 192.168.1.0/24,::1 --network-midi-latency 2\n"))
        #expect(unit.stdout.contains("RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n"))
    }

    /// `--network-midi-allow` reaches the host: with a list that leaves this machine out, an invitation from
    /// 127.0.0.1 is answered NO, and the log says so once.
    @Test func anAllowListRefusesThisMachine() throws {
        let folder = NSTemporaryDirectory() + "aulos-network-midi-allow-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let port = freePortPair()
        let aulos = try BackgroundAulos(
            [
                "play", "--device", "null", "--duration", "8", "--network-midi", "127.0.0.1:\(port)",
                "--network-midi-allow", "10.0.0.0/8",
            ], in: folder)
        let peer = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(peer) }
        _ = bindLoopback(peer, port: 0)
        // IN (Apple's session protocol): FFFF "IN", protocol version 2, initiator token, SSRC, name.
        let invitation: [UInt8] =
            [0xFF, 0xFF, 0x49, 0x4E, 0, 0, 0, 2, 0x12, 0x34, 0x56, 0x78, 0xCA, 0xFE, 0x00, 0x35]
            + Array("outsider".utf8) + [0]
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = port.bigEndian
        var reply: [UInt8] = []
        for _ in 0..<40 where reply.isEmpty {  // until aulos listens (it builds the rig first)
            _ = invitation.withUnsafeBytes { raw in
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(peer, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
            var descriptor = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 250) == 1 else { continue }
            var buffer = [UInt8](repeating: 0, count: 512)
            let count = recv(peer, &buffer, buffer.count, 0)
            if count > 0 { reply = Array(buffer[0..<count]) }
        }
        #expect(Array(reply.prefix(4)) == [0xFF, 0xFF, 0x4E, 0x4F], "NO, not \(reply.prefix(4)): \(aulos.stderr)")
        for _ in 0..<50 where !aulos.stderr.contains("refused outsider") { usleep(100_000) }
        aulos.signal(SIGTERM)
        #expect(aulos.waitForExit() != nil)
        let refusals = aulos.stderr.split(separator: "\n").filter { $0.contains("refused outsider") }
        #expect(refusals.count == 1, "\(aulos.stderr)")
        #expect(
            refusals.first?.contains("AppleMIDI 127.0.0.1:") == true
                && refusals.first?.contains(": not in the allow list; answered NO (network-midi allow)") == true,
            "\(aulos.stderr)")
        #expect(aulos.stderr.contains("accepts sessions from 10.0.0.0/8"), "\(aulos.stderr)")
    }

    /// A rig's `network-midi:` turns network MIDI on without the option (its port in use says so), and the options
    /// win over it (another port, an allow list of their own).
    @Test func aRigsKeyPlaysAndTheOptionsWin() throws {
        let holder = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(holder) }
        let port = try #require(bindLoopback(holder, port: 0))
        let rig = NSTemporaryDirectory() + "aulos-network-midi-rig-\(getpid()).yaml"
        defer { unlink(rig) }
        try "network-midi:\n  listen: 127.0.0.1:\(port)\n  latency-ms: 5\n  secret: s\nparts:\n  - instrument: synth\n"
            .write(toFile: rig, atomically: true, encoding: .utf8)
        let held = try runAulos(["play", "--device", "null", "--duration", "1", "--rig", rig])
        #expect(held.status == 1, "\(held.stderr)")
        #expect(held.stderr.contains("127.0.0.1:\(port)") && held.stderr.contains("in use"), "\(held.stderr)")
        let moved = try runAulos([
            "play", "--device", "null", "--duration", "1", "--rig", rig, "--network-midi", "127.0.0.1:0",
            "--network-midi-allow", "10.0.0.0/8",
        ])
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(
            moved.stderr.contains("aulos: network MIDI accepts sessions from 10.0.0.0/8, playout latency 5 ms"),
            "\(moved.stderr)")
        #expect(moved.stderr.contains("the secret and users are for Network MIDI 2.0"), "\(moved.stderr)")
        // ALSA's null device never starts, so its slices have no clock: the summary must not claim a placement.
        #expect(
            (moved.stdout + moved.stderr).contains(
                "placed at the next slice (the device gave its slices no clock to place them by)"),
            "\(moved.stdout)")
    }

    @Test func aPortInUseIsOneLine() throws {
        let holder = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(holder) }
        let port = try #require(bindLoopback(holder, port: 0))
        let result = try runAulos([
            "play", "--device", "null", "--duration", "1", "--network-midi", "127.0.0.1:\(port)",
        ])
        #expect(result.status == 1, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("in use"), "\(result.stderr)")
    }

    /// Whether ::1 can be bound (a machine or container with IPv6 off cannot).
    static let hasIPv6Loopback: Bool = {
        let fd = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr.__in6_u.__u6_addr8.15 = 1
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0
            }
        }
    }()

    /// Over IPv4 and IPv6 loopback (an address given: one socket per port of that family).
    @Test(.enabled(if: pymidiPython != nil, "skipped: no Python with pymidi"), arguments: ["127.0.0.1", "::1"])
    func pymidiPlaysANoteIntoTheLiveInstrument(host: String) throws {
        if host.contains(":") && !Self.hasIPv6Loopback {
            print("skipped: network MIDI end to end over ::1 (no IPv6 loopback here)")
            return
        }
        let stderr = try playThroughPymidi(host: host, drop: false)
        #expect(stderr.contains("said goodbye after 2 packets, 0 lost; released 0 notes"), "\(stderr)")
    }

    /// The packet with the note-off is dropped (pymidi never sends it); the next one's recovery journal ends the
    /// note, so the session ends with nothing to release.
    @Test(.enabled(if: pymidiPython != nil, "skipped: no Python with pymidi"))
    func aDroppedNoteOffIsRepairedFromTheJournal() throws {
        let stderr = try playThroughPymidi(host: "127.0.0.1", drop: true)
        #expect(
            stderr.contains("said goodbye after 2 packets, 1 lost, 1 repaired from the journal; released 0 notes"),
            "\(stderr)")
    }

    /// `--network-midi-connect`: a peer that is not `ADDR:PORT` is a usage error naming the option, and so is the
    /// option without the local ports to invite from; a peer the ports cannot reach (IPv6 from an IPv4 address) is
    /// one line and exit status 1. `aulos service unit` passes the peers into ExecStart.
    @Test func connectIsChecked() throws {
        for (arguments, said) in [
            (["--network-midi", "5004", "--network-midi-connect", "pi.local:5004"], "'pi.local' is not a numeric"),
            (["--network-midi", "5004", "--network-midi-connect", "5004"], "give the peer's numeric address and port"),
            (["--network-midi", "5004", "--network-midi-connect", "0.0.0.0:5004"], "is every interface"),
            (["--network-midi", "5004", "--network-midi-connect", "10.0.0.2:5004,"], "an empty entry"),
            (["--network-midi", "5004", "--network-midi-connect", "::1:5004"], "an IPv6 address goes in brackets"),
        ] {
            let result = try runAulos(["play", "--device", "null", "--duration", "1"] + arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("--network-midi-connect"), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(said), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            let unit = try runAulos(["service", "unit"] + arguments)
            #expect(unit.status == 64, "service unit \(arguments): \(unit.stderr)")
        }
        let alone = try runAulos([
            "play", "--device", "null", "--duration", "1", "--network-midi-connect", "10.0.0.2:5004",
        ])
        #expect(alone.status == 64, "\(alone.stderr)")
        #expect(
            alone.stderr == "aulos: error: --network-midi-connect needs --network-midi [ADDR:]PORT (or a rig's "
                + "network-midi:): the local ports Aulos invites from\n", "\(alone.stderr)")
        let unreachable = try runAulos([
            "play", "--device", "null", "--duration", "1", "--network-midi", "127.0.0.1:0", "--network-midi-connect",
            "[::1]:5004",
        ])
        #expect(unreachable.status == 1, "\(unreachable.stderr)")
        #expect(
            unreachable.stderr.hasPrefix("aulos: error: cannot invite [::1]:5004 from network MIDI on 127.0.0.1:")
                && unreachable.stderr.split(separator: "\n").count == 1, "\(unreachable.stderr)")
        let unit = try runAulos([
            "service", "unit", "--network-midi", "5004", "--network-midi-connect", "192.168.1.5:5004, [fe80::2]:5004",
        ])
        #expect(unit.status == 0, "\(unit.stderr)")
        #expect(
            unit.stdout.contains(" --network-midi 5004 --network-midi-connect 192.168.1.5:5004,[fe80::2]:5004\n"),
            "\(unit.stdout)")
        let orphan = try runAulos(["service", "unit", "--network-midi-connect", "192.168.1.5:5004"])
        #expect(orphan.status == 1 && orphan.stderr.contains("--network-midi-connect needs --network-midi"))
    }

    /// `aulos play --network-midi 127.0.0.1:0 --network-midi-connect 127.0.0.1:PORT --record` on the null device:
    /// nothing listens on PORT at first (the log says once that it does not answer), then pymidi 0.5.0's own server
    /// starts there (scripts/pymidi-peer.py server): Aulos's next invitation joins it, pymidi's server accepts on both
    /// ports and reads Aulos's CK2s, and sends a note back on the session (from its data socket, pymidi's packets),
    /// which Aulos plays into the take. Stopping Aulos says BY, and pymidi lets the peer go.
    @Test(.enabled(if: pymidiPython != nil, "skipped: no Python with pymidi"))
    func aulosInvitesPymidisServer() throws {
        let python = try #require(pymidiPython)
        let folder = NSTemporaryDirectory() + "aulos-netmidi-invite-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let port = freePortPair()
        let take = folder + "/take.wav"
        let aulos = try BackgroundAulos(
            [
                "play", "--device", "null", "--duration", "60", "--record", take, "--network-midi", "127.0.0.1:0",
                "--network-midi-connect", "127.0.0.1:\(port)",
            ], in: folder)
        #expect(try aulos.waitForStatus(seconds: 20) { _ in true }, "\(aulos.stderr)")
        #expect(
            Wait.until(seconds: 10, pollMicroseconds: 50_000) { aulos.stderr.contains("does not answer") },
            "\(aulos.stderr)")
        // pymidi's server, in the background; its report is its stdout's last line.
        let server = Process()
        server.executableURL = URL(fileURLWithPath: python)
        server.arguments = [repositoryRoot + "/scripts/pymidi-peer.py", "server", "127.0.0.1", "\(port)", "40", "play"]
        FileManager.default.createFile(atPath: folder + "/pymidi", contents: nil)
        server.standardOutput = FileHandle(forWritingAtPath: folder + "/pymidi")
        try server.run()
        defer { if server.isRunning { server.terminate() } }
        // The invitations go 1, 2, 4, 8 s apart: the next one finds the server.
        #expect(
            Wait.until(seconds: 20, pollMicroseconds: 50_000) {
                aulos.stderr.contains("MIDI: connected pymidi: AppleMIDI 127.0.0.1:\(port)")
            }, "\(aulos.stderr)")
        // Three CK exchanges in 0.5 s, then the note, its note-off 0.3 s later, and time to sound.
        usleep(1_300_000)
        aulos.signal(SIGTERM)
        #expect(aulos.waitForExit(seconds: 20) == 0, "\(aulos.stderr)")
        server.waitUntilExit()
        let lines = ((try? String(contentsOfFile: folder + "/pymidi", encoding: .utf8)) ?? "").split(separator: "\n")
        let report = try #require(
            lines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] },
            "\(lines)")
        let accepted = report["accepted"] as? [String: [String]] ?? [:]
        #expect(accepted["control"]?.count == 1 && accepted["data"]?.count == 1, "\(report)")
        #expect((report["connected"] as? [[String: Any]])?.first?["name"] as? String == "Aulos", "\(report)")
        #expect((report["ck2"] as? Int ?? 0) >= 3, "\(report)")
        #expect((report["sent"] as? [Any])?.count == 2, "\(report)")
        #expect((report["disconnected"] as? [Any])?.count == 1, "Aulos said BY: \(report)")
        let stderr = aulos.stderr
        #expect(
            stderr.contains(
                "aulos: network MIDI accepts sessions from the local network (private, link-local and this machine), "
                    + "playout latency 3 ms; invites 127.0.0.1:\(port)\n"), "\(stderr)")
        let unanswered = stderr.split(separator: "\n").filter { $0.contains("does not answer") }
        #expect(
            unanswered == [
                "aulos: MIDI: AppleMIDI 127.0.0.1:\(port) does not answer the invitation on its control port; inviting "
                    + "again less often (up to every 30 s)"
            ], "\(stderr)")
        #expect(
            stderr.contains(
                "MIDI: pymidi: AppleMIDI 127.0.0.1:\(port) ended as Aulos stopped after 2 packets, 0 lost; released 0 "
                    + "notes"), "\(stderr)")
        let loudest = try #require(peak(ofWAV: take), "no take at \(take): \(stderr)")
        print("Aulos invited pymidi's server: peak \(loudest); pymidi read \(report["ck2"] ?? "?") CK2")
        #expect(loudest > 0.01, "the take is silent: \(stderr)")
    }

    /// `aulos play --network-midi HOST:PORT --record` on the null device while pymidi-peer.py's session invites
    /// it, synchronises, plays and says goodbye (`drop`: without the note-off's packet); checks the session's
    /// answers and a take that is not silent, and returns Aulos's stderr.
    private func playThroughPymidi(host: String, drop: Bool) throws -> String {
        let python = try #require(pymidiPython)
        let folder = NSTemporaryDirectory() + "aulos-netmidi-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let port = freePortPair()
        let shown = host.contains(":") ? "[\(host)]" : host
        let take = folder + "/take.wav"
        let aulos = try BackgroundAulos(
            [
                "play", "--device", "null", "--duration", "8", "--record", take, "--network-midi",
                "\(shown):\(port)",
            ], in: folder)
        #expect(
            Wait.until(seconds: 20, pollMicroseconds: 50_000) {
                aulos.stderr.contains("network MIDI (AppleMIDI) on \(shown):\(port)") || !aulos.process.isRunning
            }, "\(aulos.stderr)")
        // Give the rig its start (the take must already be running when the note comes).
        #expect(try aulos.waitForStatus(seconds: 20) { _ in true }, "\(aulos.stderr)")
        let session = try runAulos(
            [repositoryRoot + "/scripts/pymidi-peer.py", "session", host, "\(port)", "1"] + (drop ? ["drop"] : []),
            executable: python)
        #expect(session.status == 0, "\(session.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(session.stdout.utf8)) as? [String: Any], "\(session.stdout)")
        let control = report["control"] as? [String: Any]
        let data = report["data"] as? [String: Any]
        #expect(control?["command"] as? String == "OK")
        #expect(data?["command"] as? String == "OK")
        #expect(control?["ssrc"] as? Int == data?["ssrc"] as? Int)
        #expect(control?["name"] as? String == "Aulos")  // the default rig's set is named "default"
        let clock = report["clock"] as? [[String: Any]] ?? []
        #expect(clock.count == 3)
        #expect(clock.allSatisfy { $0["count"] as? Int == 1 && $0["echoed"] as? Bool == true })
        // Both ends run CLOCK_MONOTONIC: Aulos's t2 lies between pymidi's t1 and t3, so the offset is within half
        // the round trip of 0 (and a tick of truncation).
        #expect(
            clock.allSatisfy { abs($0["offset"] as? Int ?? .max) <= ($0["rtt"] as? Int ?? 0) / 2 + 1 }, "\(clock)")
        // Receiver feedback confirmed the last packet.
        let sequence = report["sequence"] as? [Int] ?? []
        #expect((report["feedback"] as? [Int] ?? []).contains(sequence.last ?? -1), "\(report)")
        aulos.process.waitUntilExit()
        let stderr = aulos.stderr
        #expect(aulos.process.terminationStatus == 0, "\(stderr)")
        #expect(stderr.contains("no ALSA sequencer") || !FileManager.default.fileExists(atPath: "/dev/snd/seq"))
        #expect(stderr.contains("MIDI: connected pymidi-session: AppleMIDI \(shown):"), "\(stderr)")
        #expect(stderr.contains("MIDI: pymidi-session: AppleMIDI \(shown):"), "\(stderr)")
        let loudest = try #require(peak(ofWAV: take), "no take at \(take): \(stderr)")
        print(
            "network MIDI end to end over \(host)\(drop ? ", the note-off's packet dropped" : ""): peak \(loudest); "
                + aulos.stdout)
        #expect(loudest > 0.01, "the take is silent: \(stderr)")
        return stderr
    }
}
