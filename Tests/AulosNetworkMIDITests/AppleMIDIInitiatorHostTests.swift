import AulosIO
import AulosMIDI
import Glibc
import Synchronization
import Testing

@testable import AulosNetworkMIDI

/// A clock the test moves: the host's `Options.now`, so the invitation's waits pass when the test says.
/// Threads: read by the host's network thread, moved by the test.
final class SimulatedClock: Sendable {
    let nanos = Atomic<Int64>(5_000_000_000_000)

    var now: @Sendable () -> Int64 { { self.nanos.load(ordering: .relaxed) } }

    func advance(seconds: Double) { nanos.add(Int64(seconds * 1e9), ordering: .relaxed) }
}

/// An AppleMIDI responder on loopback for Aulos to invite: a control socket and a data socket on consecutive ports
/// of 127.0.0.1, answering with packets built by this module's encoders, and sending RTP-MIDI from its data port.
/// Threads: the test's.
final class LoopbackResponder {
    let control: Int32
    let data: Int32
    let port: UInt16
    let ssrc: UInt32
    /// Where the last datagram on each socket came from (the host's control and data ports).
    private var replyTo: [Int32: sockaddr_in] = [:]

    init(ssrc: UInt32) throws {
        for _ in 0..<32 {
            let control = Self.socket(port: 0)
            let port = AppleMIDIHostTests.port(of: control)
            let data = Self.socket(port: port &+ 1)
            if port > 0, port < 65_000, data >= 0 {
                (self.control, self.data, self.port, self.ssrc) = (control, data, port, ssrc)
                return
            }
            close(control)
            if data >= 0 { close(data) }
        }
        throw AppleMIDIHostError("no free port pair on 127.0.0.1")
    }

    deinit {
        close(control)
        close(data)
    }

    /// A UDP socket bound to 127.0.0.1:`port`; −1 when the port is taken.
    private static func socket(port: UInt16) -> Int32 {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = port.bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if bound != 0 {
            close(fd)
            return -1
        }
        return fd
    }

    var endpoint: AppleMIDIEndpoint { AppleMIDIEndpoint(address: "127.0.0.1", port: port) }

    /// The next session packet on a port that `matches` within `milliseconds` (others are skipped: RS, CK).
    func receive(
        onData: Bool, milliseconds: Int32 = 2_000, where matches: (AppleMIDIPacket) -> Bool = { _ in true }
    ) -> AppleMIDIPacket? {
        let fd = onData ? data : control
        let deadline = monotonicNow() + Int64(milliseconds) * 1_000_000
        while monotonicNow() < deadline {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, Int32(max(1, (deadline - monotonicNow()) / 1_000_000))) == 1 else { continue }
            var buffer = [UInt8](repeating: 0, count: 2048)
            var from = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = withUnsafeMutablePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(fd, &buffer, buffer.count, 0, $0, &length)
                }
            }
            guard count > 0 else { continue }
            replyTo[fd] = from
            if let packet = try? AppleMIDIPacket(parsing: Array(buffer[0..<count])), matches(packet) { return packet }
        }
        return nil
    }

    /// Sends to where the last datagram on that port came from.
    func reply(_ bytes: [UInt8], onData: Bool) {
        let fd = onData ? data : control
        guard var address = replyTo[fd] else {
            Issue.record("nothing to reply to on the \(onData ? "data" : "control") port")
            return
        }
        _ = bytes.withUnsafeBytes { raw in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    func reply(_ packet: AppleMIDIPacket, onData: Bool) { reply(packet.bytes, onData: onData) }

    static func isInvitation(_ packet: AppleMIDIPacket) -> Bool {
        if case .invitation = packet { true } else { false }
    }

    static func isBye(_ packet: AppleMIDIPacket) -> Bool {
        if case .bye = packet { true } else { false }
    }

    /// Waits for the IN on one port and answers OK; the invitation, or nil.
    @discardableResult
    func accept(onData: Bool, name: String = "responder") -> AppleMIDIExchange? {
        guard case .invitation(let invitation) = receive(onData: onData, where: Self.isInvitation) else { return nil }
        reply(
            .accept(AppleMIDIExchange(initiatorToken: invitation.initiatorToken, ssrc: ssrc, name: name)),
            onData: onData)
        return invitation
    }

    /// Answers the next CK0 with CK1 (its t2 `peerTicks`) and waits for the CK2; true when it came, echoing both.
    func answerClock(peerTicks: UInt64) -> Bool {
        guard
            case .clockSync(let ck0) = receive(
                onData: true, where: { if case .clockSync(let s) = $0 { s.count == 0 } else { false } })
        else { return false }
        reply(
            .clockSync(AppleMIDIClockSync(ssrc: ssrc, count: 1, timestamp1: ck0.timestamp1, timestamp2: peerTicks)),
            onData: true)
        guard
            case .clockSync(let ck2) = receive(
                onData: true, where: { if case .clockSync(let s) = $0 { s.count == 2 } else { false } })
        else { return false }
        return ck2.timestamp1 == ck0.timestamp1 && ck2.timestamp2 == peerTicks && ck2.timestamp3 >= ck0.timestamp1
    }

    func sendMIDI(_ messages: [ChannelMessage], sequence: UInt16, timestamp: UInt32 = 0) {
        let packet = RTPMIDIPacket(
            header: RTPHeader(sequenceNumber: sequence, timestamp: timestamp, ssrc: ssrc),
            commands: messages.map { RTPMIDITimedCommand(.message($0.message)) })
        reply(try! packet.encoded(), onData: true)
    }
}

/// The host as the initiator, on a simulated clock, against responders on loopback (real UDP): the session it opens
/// is a MIDI source like any other, its notes are released when it ends, it is invited again, and the session cap
/// holds for the sessions it opens.
///
/// Threads: the test's; each host runs its network thread.
@Suite(.serialized) struct AppleMIDIInitiatorHostTests {
    static func host(
        _ receiver: RecordingReceiver, clock: SimulatedClock, invite: [AppleMIDIEndpoint],
        configure: (inout AppleMIDIHost.Options) -> Void = { _ in }
    ) throws -> AppleMIDIHost {
        var options = AppleMIDIHost.Options()
        options.name = "Aulos test"
        options.now = clock.now
        options.invite = invite
        configure(&options)
        let host = AppleMIDIHost(
            sockets: try AppleMIDISockets(AppleMIDIEndpoint(address: "127.0.0.1", port: 0)), receiver: receiver,
            options: options)
        try host.start()
        return host
    }

    /// Invited, accepted on both ports, synchronised (CK2 back, a sample in the session's status): the responder's
    /// note reaches the receiver from the session's source; its BY ends the session and releases the note; 5 s
    /// later (simulated) it is invited again with a new token; silence then ends that session with a BY from Aulos
    /// and releases its note too.
    @Test func anInitiatedSessionPlaysEndsAndIsInvitedAgain() throws {
        let receiver = RecordingReceiver()
        let clock = SimulatedClock()
        let peer = try LoopbackResponder(ssrc: 0x5E55_1011)
        let host = try Self.host(receiver, clock: clock, invite: [peer.endpoint])
        defer { host.stop() }
        let first = try #require(peer.accept(onData: false, name: "stage Mac"))
        #expect(first.name == "Aulos test")
        let data = try #require(peer.accept(onData: true))
        #expect(data.initiatorToken == first.initiatorToken && data.ssrc == first.ssrc)
        #expect(peer.answerClock(peerTicks: 77_000_000))
        #expect(receiver.wait { _ in host.sessionStatuses.first?.clockSamples == 1 })
        let status = try #require(host.sessionStatuses.first)
        #expect(status.initiated && status.peerName == "stage Mac" && status.ssrc == peer.ssrc)
        #expect(status.peer == "127.0.0.1:\(peer.port)")
        #expect(status.oneWayLatencyMicros != nil)
        peer.sendMIDI([.noteOn(channel: 0, note: 60, velocity: 100)], sequence: 1)
        #expect(receiver.wait { $0.heldNotes == 1 })
        #expect(receiver.deliveries.first?.source == status.source)
        peer.reply(.bye(AppleMIDIExchange(initiatorToken: 0, ssrc: peer.ssrc)), onData: false)
        #expect(receiver.wait { $0.ended.count == 1 })
        #expect(receiver.ended.first?.0 == status.source && receiver.ended.first?.1 == 1)
        #expect(host.sessionStatuses.isEmpty)
        let notices = host.takeNotices()
        #expect(
            notices.dropFirst() == [
                .connected(
                    MIDIPortName(
                        client: MIDIPortName.networkClientBase + 1, port: 0, clientName: "stage Mac",
                        portName: "AppleMIDI 127.0.0.1:\(peer.port)")),
                .disconnected(
                    MIDIPortName(
                        client: MIDIPortName.networkClientBase + 1, port: 0, clientName: "stage Mac",
                        portName: "AppleMIDI 127.0.0.1:\(peer.port) said goodbye after 1 packet, 0 lost"),
                    releasedNotes: 1),
            ], "\(notices)")
        // Not before 5 s.
        clock.advance(seconds: 4.5)
        #expect(peer.receive(onData: false, milliseconds: 400, where: LoopbackResponder.isInvitation) == nil)
        clock.advance(seconds: 0.6)
        let again = try #require(peer.accept(onData: false))
        #expect(again.initiatorToken != first.initiatorToken)
        #expect(peer.accept(onData: true) != nil)
        #expect(receiver.wait { _ in host.sessionStatuses.count == 1 })
        peer.sendMIDI([.noteOn(channel: 3, note: 40, velocity: 90)], sequence: 1)
        #expect(receiver.wait { $0.heldNotes == 1 })
        clock.advance(seconds: 31)
        guard case .bye(let bye) = peer.receive(onData: false, where: LoopbackResponder.isBye) else {
            Issue.record("no BY when the session went silent")
            return
        }
        #expect(bye.initiatorToken == again.initiatorToken && bye.ssrc == first.ssrc)
        #expect(receiver.wait { $0.ended.count == 2 })
        #expect(receiver.ended.last?.1 == 1 && receiver.heldNotes == 0)
        guard case .disconnected(let port, 1) = host.takeNotices().last else {
            Issue.record("no disconnected notice releasing 1 note")
            return
        }
        #expect(port.portName.hasSuffix("silent for 30 s after 1 packet, 0 lost"), "\(port.portName)")
    }

    /// With one slot: while a peer that invited Aulos holds it, nobody is invited (said once); when it leaves, the
    /// invitation goes. And a slot taken between Aulos's IN and the data port's OK: the session does not open, and
    /// the peer is told BY.
    @Test func theSessionCapHoldsForSessionsAulosOpens() throws {
        let receiver = RecordingReceiver()
        let clock = SimulatedClock()
        let peer = try LoopbackResponder(ssrc: 0x5E55_2022)
        var options = AppleMIDIHost.Options()
        options.name = "Aulos test"
        options.now = clock.now
        options.sessionCap = 1
        options.invite = [peer.endpoint]
        let sockets = try AppleMIDISockets(AppleMIDIEndpoint(address: "127.0.0.1", port: 0))
        let host = AppleMIDIHost(sockets: sockets, receiver: receiver, options: options)
        // The first IN goes at once; the iPad takes the only slot between it and the data port's OK.
        try host.start()
        defer { host.stop() }
        let invitation = try #require(peer.accept(onData: false))
        #expect(peer.receive(onData: true, where: LoopbackResponder.isInvitation) != nil)
        let other = LoopbackPeer(hostPort: sockets.port, ssrc: 0x0111_0111)
        #expect(other.join(name: "iPad"))
        peer.reply(.accept(AppleMIDIExchange(initiatorToken: invitation.initiatorToken, ssrc: peer.ssrc)), onData: true)
        guard case .bye(let bye) = peer.receive(onData: false, where: LoopbackResponder.isBye) else {
            Issue.record("no BY for a session with no slot")
            return
        }
        #expect(bye.initiatorToken == invitation.initiatorToken)
        #expect(host.sessionStatuses.map(\.peerName) == ["iPad"])
        // Full: nothing goes, however long (simulated) it waits, and the log is told once.
        for _ in 0..<4 {
            clock.advance(seconds: 10)
            // Longer than the network thread's 100 ms poll, so it has looked at the new time.
            #expect(peer.receive(onData: false, milliseconds: 150, where: LoopbackResponder.isInvitation) == nil)
            other.synchronize()  // keeps the iPad's session from going silent
        }
        let said = host.takeNotices().compactMap { notice -> String? in
            guard case .networkInvitation(let who, let event) = notice else { return nil }
            return "\(who) \(event)"
        }
        #expect(
            said == [
                "AppleMIDI 127.0.0.1:\(peer.port) is not invited: all 1 network MIDI sessions are taken; it is "
                    + "invited when one ends"
            ], "\(said)")
        other.send(.bye(AppleMIDIExchange(initiatorToken: 0, ssrc: other.ssrc)), toData: false)
        #expect(receiver.wait { $0.ended.count == 1 })
        #expect(peer.accept(onData: false) != nil)
        #expect(peer.accept(onData: true) != nil)
        #expect(receiver.wait { _ in host.sessionStatuses.map(\.initiated) == [true] })
    }

    /// A peer Aulos cannot reach from its sockets is one line when the host starts.
    @Test func anUnreachablePeerIsSaidAtStart() throws {
        let receiver = RecordingReceiver()
        var options = AppleMIDIHost.Options()
        options.invite = [AppleMIDIEndpoint(address: "::1", port: 5004)]
        let host = AppleMIDIHost(
            sockets: try AppleMIDISockets(AppleMIDIEndpoint(address: "127.0.0.1", port: 0)), receiver: receiver,
            options: options)
        #expect {
            try host.start()
        } throws: { error in
            let message = (error as? AppleMIDIHostError)?.message ?? ""
            return message.hasPrefix("cannot invite [::1]:5004 from network MIDI on 127.0.0.1:")
                && message.contains("an IPv6 peer needs") && !message.contains("\n")
        }
        #expect(!host.isStarted)
        for (spec, reason) in [
            ("5004", "give the peer's numeric address"), ("0.0.0.0:5004", "is every interface"),
            ("[::]:5004", "is every interface"), ("10.0.0.1:0", "the port must be"),
            ("pi.local:5004", "is not a numeric"), ("10.0.0.1:65535", "the port must be"),
        ] {
            #expect(throws: AppleMIDIEndpointError.self) { try AppleMIDIEndpoint(parsingPeer: spec) }
            do { _ = try AppleMIDIEndpoint(parsingPeer: spec) } catch {
                #expect(
                    error.message.hasPrefix("--network-midi-connect '\(spec)': ") && error.message.contains(reason),
                    "\(error.message)")
            }
        }
        #expect(
            try AppleMIDIEndpoint(parsingPeer: "[fe80::2]:5004") == AppleMIDIEndpoint(address: "fe80::2", port: 5004))
    }
}
