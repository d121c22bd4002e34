import AulosIO
import AulosMIDI
import AulosTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

@testable import AulosNetworkMIDI

/// pymidi 0.5.0's own *server* (`pymidi.server.Server`, the responder, code the project did not write) run by
/// scripts/pymidi-peer.py as a process of its own, for Aulos to invite. Its stdout is read as it comes: one JSON
/// line when it is bound, one with what it saw when it ends (the peer's BY, or its time is up).
///
/// Threads: the test's; a pipe handler collects the output.
final class PymidiServer {
    let process = Process()
    /// The output so far, whole lines apart. Threads: the pipe's handler and the test, under the lock.
    private final class Output: Sendable {
        let state = Mutex((buffer: Data(), lines: [String]()))
    }
    private let output = Output()

    init(host: String, port: UInt16, seconds: Int, play: Bool) throws {
        let python = try #require(Pymidi.python)
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments =
            [TestFiles.repositoryRoot + "/scripts/pymidi-peer.py", "server", host, "\(port)", "\(seconds)"]
            + (play ? ["play"] : [])
        let pipe = Pipe()
        process.standardOutput = pipe
        pipe.fileHandleForReading.readabilityHandler = { [output] handle in
            let chunk = handle.availableData
            output.state.withLock { output in
                output.buffer.append(chunk)
                while let newline = output.buffer.firstIndex(of: 0x0A) {
                    let line = output.buffer[output.buffer.startIndex..<newline]
                    output.lines.append(String(decoding: line, as: UTF8.self))
                    output.buffer.removeSubrange(output.buffer.startIndex...newline)
                }
            }
        }
        try process.run()
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    var lines: [String] { output.state.withLock { $0.lines } }

    /// The first JSON line with `key`, waiting up to `seconds`.
    func json(with key: String, seconds: Double = 10) -> [String: Any]? {
        let deadline = monotonicNow() + Int64(seconds * 1e9)
        repeat {
            for line in lines {
                if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    object[key] != nil
                {
                    return object
                }
            }
            usleep(10_000)
        } while monotonicNow() < deadline
        return nil
    }
}

/// Aulos joins a pymidi server's session as the initiator, over real UDP on loopback: an `AppleMIDIHost` in this
/// process invites pymidi's unchanged server, which accepts on both ports (its Handler and its log say so), answers
/// the CK0s Aulos leads and reads the CK2s (its log's "offset estimate"), and sends a note back on the session (from
/// its own data socket: pymidi's server has no way to send MIDI itself); the note reaches the receiver through the
/// session, placed by pymidi's clock as the clock model (the initiator's) maps it; Aulos stopping says BY and pymidi
/// lets the peer go.
///
/// Threads: the test's; the host runs its network thread, pymidi its own process.
@Suite(.serialized, .enabled(if: Pymidi.python != nil, Pymidi.skipReason)) struct InitiatorInteropTests {
    /// Whether ::1 can be bound (a machine or container with IPv6 off cannot).
    static let hasIPv6Loopback: Bool = (try? AppleMIDISockets(AppleMIDIEndpoint(address: "::1", port: 0))) != nil

    /// A control port on `host` whose data port is free too (when asked).
    static func freePortPair(_ host: String) throws -> UInt16 {
        let sockets = try AppleMIDISockets(AppleMIDIEndpoint(address: host, port: 0))
        return sockets.port  // released as `sockets` goes
    }

    /// Aulos on `listen` (nil: every interface, dual-stack) invites pymidi's server on `peer`.
    @Test(arguments: [("127.0.0.1", "127.0.0.1"), ("::1", "::1"), (nil, "127.0.0.1")] as [(String?, String)])
    func aulosJoinsPymidisServer(listen: String?, peer: String) throws {
        if peer.contains(":") && !Self.hasIPv6Loopback {
            print("skipped: inviting pymidi over ::1 (no IPv6 loopback here)")
            return
        }
        let port = try Self.freePortPair(peer)
        let server = try PymidiServer(host: peer, port: port, seconds: 30, play: true)
        let bound = try #require(server.json(with: "listening"), "pymidi's server did not start: \(server.lines)")
        let dataSSRC = try #require(bound["data_ssrc"] as? Int)

        let receiver = RecordingReceiver()
        var options = AppleMIDIHost.Options()
        options.name = "Aulos test"
        options.invite = [AppleMIDIEndpoint(address: peer, port: port)]
        // The first three CK exchanges 50 ms apart rather than 250 ms: the same exchanges, sooner.
        options.invitation.initialSyncIntervalNanos = 50_000_000
        let sockets = try AppleMIDISockets(AppleMIDIEndpoint(address: listen, port: 0))
        let aulos = AppleMIDIHost(sockets: sockets, receiver: receiver, options: options)
        try aulos.start()
        let started = monotonicNow()
        #expect(
            receiver.wait(15) { receiver in
                receiver.deliveries.count >= 2 && (aulos.sessionStatuses.first?.clockSamples ?? 0) >= 3
            }, "\(aulos.sessionStatuses) \(server.lines)")
        let status = try #require(aulos.sessionStatuses.first)
        let elapsed = Double(monotonicNow() - started) / 1e9
        // The session is Aulos's: named by pymidi's OK, its SSRC the one pymidi's data port answers with.
        #expect(status.initiated && status.peerName == "pymidi" && status.ssrc == UInt32(dataSSRC), "\(status)")
        #expect(status.peer == (peer.contains(":") ? "[\(peer)]:\(port)" : "\(peer):\(port)"))
        // The clock: samples from the CK exchanges Aulos led.
        let oneWay = try #require(status.oneWayLatencyMicros)
        #expect(oneWay >= 0, "\(status)")
        // pymidi's CK1 and RTP timestamps are its wall clock (time.time()), ours CLOCK_MONOTONIC, decades apart: both
        // events placed by the mapping (within a second of pymidi's now as the initiator's model maps it; with the
        // responder's sign they would be placed by their arrival).
        #expect(status.placedByClock == 2 && status.placedByArrival == 0, "\(status)")
        let transit = try #require(status.lastTransitMicros)
        let deliveries = receiver.deliveries
        #expect(
            deliveries.map(\.message) == [
                .noteOn(channel: 0, note: 60, velocity: 100), .noteOff(channel: 0, note: 60, velocity: 0),
            ], "\(deliveries)")
        #expect(deliveries.allSatisfy { $0.source == status.source })
        #expect(status.packets == 2 && status.lostPackets == 0)

        aulos.stop()
        let report = try #require(server.json(with: "connected"), "pymidi's server said nothing: \(server.lines)")
        server.process.waitUntilExit()
        // pymidi's Handler: one peer connected (the control port's IN) and disconnected (Aulos's BY).
        let connected = report["connected"] as? [[String: Any]] ?? []
        #expect(connected.count == 1 && connected.first?["name"] as? String == "Aulos test", "\(report)")
        #expect((report["disconnected"] as? [Any])?.count == 1, "\(report)")
        // Its log: the invitation accepted once on each port; three CK2s or more read.
        let accepted = report["accepted"] as? [String: [String]] ?? [:]
        #expect(accepted["control"]?.count == 1 && accepted["data"]?.count == 1, "\(report)")
        #expect((report["ck2"] as? Int ?? 0) >= 3, "\(report)")
        #expect((report["sent"] as? [Any])?.count == 2, "\(report)")
        #expect(report["exited"] as? [String] == ["control"], "\(report)")
        #expect(report["data_peers_at_end"] as? Int == 0, "\(report)")

        let notices = aulos.takeNotices()
        #expect(notices.contains { if case .connected(let port) = $0 { port.clientName == "pymidi" } else { false } })
        #expect(
            notices.contains {
                if case .disconnected(let port, 0) = $0 {
                    port.portName.contains("ended as Aulos stopped")
                } else {
                    false
                }
            }, "\(notices)")
        #expect(!notices.contains { if case .networkInvitation = $0 { true } else { false } }, "\(notices)")
        print(
            "Aulos invited pymidi's server on \(peer) (listening on \(sockets.description)): session and note in "
                + "\((elapsed * 1000).rounded()) ms, \(status.clockSamples) CK exchanges, one way \(oneWay) µs, "
                + "transit \(transit) µs, pymidi read \(report["ck2"] ?? "?") CK2")
    }

    /// No server yet: Aulos's invitation goes unanswered (said once), and when pymidi's server comes up on that
    /// port the next invitation finds it (the wait doubling from 0.2 s here, 1 s by default).
    @Test func aServerThatComesLaterIsJoined() throws {
        let port = try Self.freePortPair("127.0.0.1")
        let receiver = RecordingReceiver()
        var options = AppleMIDIHost.Options()
        options.name = "Aulos test"
        options.invite = [AppleMIDIEndpoint(address: "127.0.0.1", port: port)]
        options.invitation.firstRetryNanos = 200_000_000
        let aulos = AppleMIDIHost(
            sockets: try AppleMIDISockets(AppleMIDIEndpoint(address: "127.0.0.1", port: 0)), receiver: receiver,
            options: options)
        try aulos.start()
        defer { aulos.stop() }
        // Past the first repeat (0.2 s), so the log has said it once.
        usleep(400_000)
        let server = try PymidiServer(host: "127.0.0.1", port: port, seconds: 20, play: false)
        #expect(server.json(with: "listening") != nil)
        #expect(receiver.wait(10) { _ in (aulos.sessionStatuses.first?.clockSamples ?? 0) >= 1 }, "\(server.lines)")
        let said = aulos.takeNotices().compactMap { notice -> String? in
            guard case .networkInvitation(let peer, let event) = notice else { return nil }
            return "\(peer) \(event)"
        }
        #expect(
            said == [
                "AppleMIDI 127.0.0.1:\(port) does not answer the invitation on its control port; inviting again less "
                    + "often (up to every 30 s)"
            ], "\(said)")
    }
}
