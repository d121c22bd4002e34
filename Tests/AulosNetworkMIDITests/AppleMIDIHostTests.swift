import AulosCore
import AulosIO
import AulosMIDI
import AulosTestSupport
import Glibc
import Synchronization
import Testing

@testable import AulosNetworkMIDI

/// What the host handed on, with the notes each source still holds. Threads: called on the host's network
/// thread, read by the test under the lock.
final class RecordingReceiver: MIDIReceiver, @unchecked Sendable {
    /// One message as handed on, with the time the host gave it and the time it came. Threads: a value.
    struct Delivery: Equatable {
        var message: ChannelMessage
        var source: MIDISource
        var arrival: Int64
        var received: Int64
    }

    let state = Mutex((deliveries: [Delivery](), ended: [(MIDISource, Int)](), held: [MIDISource: Set<UInt16>]()))

    func receive(_ message: ChannelMessage, from source: MIDISource, arrivalNanos: Int64) {
        let now = monotonicNow()
        state.withLock {
            $0.deliveries.append(Delivery(message: message, source: source, arrival: arrivalNanos, received: now))
            let key = UInt16(message.channel) << 8 | UInt16(message.data1)
            if message.isNoteOn { $0.held[source, default: []].insert(key) }
            if message.isNoteOff { $0.held[source, default: []].remove(key) }
        }
    }

    func receive(system message: MIDIMessage, from source: MIDISource, arrivalNanos: Int64) {}

    func sourceEnded(_ source: MIDISource, arrivalNanos: Int64) -> Int {
        state.withLock {
            let released = $0.held[source]?.count ?? 0
            $0.held[source] = nil
            $0.ended.append((source, released))
            return released
        }
    }

    var deliveries: [Delivery] { state.withLock { $0.deliveries } }
    var ended: [(MIDISource, Int)] { state.withLock { $0.ended } }
    var heldNotes: Int { state.withLock { $0.held.values.reduce(0) { $0 + $1.count } } }

    /// Waits up to `seconds` for `condition` to hold.
    func wait(_ seconds: Double = 2, until condition: (RecordingReceiver) -> Bool) -> Bool {
        let deadline = monotonicNow() + Int64(seconds * 1e9)
        while monotonicNow() < deadline {
            if condition(self) { return true }
            usleep(2_000)
        }
        return condition(self)
    }
}

func monotonicNow() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

/// A peer on loopback: a control and a data socket of its own, sending packets built here to the host's ports
/// and reading its answers. Threads: the test's.
final class LoopbackPeer {
    let control: Int32
    let data: Int32
    let hostPort: UInt16
    let ssrc: UInt32
    /// This peer's clock runs `clockOffsetTicks` ahead of CLOCK_MONOTONIC in 100 µs ticks.
    let clockOffsetTicks: Int64

    init(hostPort: UInt16, ssrc: UInt32, clockOffsetTicks: Int64 = 0) {
        control = Self.socket()
        data = Self.socket()
        self.hostPort = hostPort
        self.ssrc = ssrc
        self.clockOffsetTicks = clockOffsetTicks
    }

    deinit {
        close(control)
        close(data)
    }

    private static func socket() -> Int32 {
        boundLoopbackUDPSocket()
    }

    var nowTicks: UInt64 { UInt64(monotonicNow() / 100_000 + clockOffsetTicks) }

    func send(_ bytes: [UInt8], toData: Bool) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = (toData ? hostPort + 1 : hostPort).bigEndian
        _ = bytes.withUnsafeBytes { raw in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(
                        toData ? data : control, raw.baseAddress, raw.count, 0, $0,
                        socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    func send(_ packet: AppleMIDIPacket, toData: Bool) { send(packet.bytes, toData: toData) }

    /// The next datagram on the control or data socket within `milliseconds`, read as a session packet.
    func receive(fromData: Bool, milliseconds: Int32 = 1_000) -> AppleMIDIPacket? {
        var descriptor = pollfd(fd: fromData ? data : control, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, milliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 2048)
        let count = recv(descriptor.fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return try? AppleMIDIPacket(parsing: Array(buffer[0..<count]))
    }

    /// IN on both ports; true when both came back OK.
    func join(name: String = "peer", token: UInt32 = 0x1234_5678) -> Bool {
        send(.invitation(AppleMIDIExchange(initiatorToken: token, ssrc: ssrc, name: name)), toData: false)
        guard case .accept = receive(fromData: false) else { return false }
        send(.invitation(AppleMIDIExchange(initiatorToken: token, ssrc: ssrc, name: name)), toData: true)
        guard case .accept = receive(fromData: true) else { return false }
        return true
    }

    /// One CK0 → CK1 → CK2 exchange on this peer's clock; the CK1 received.
    @discardableResult
    func synchronize() -> AppleMIDIClockSync? {
        let t1 = nowTicks
        send(.clockSync(AppleMIDIClockSync(ssrc: ssrc, count: 0, timestamp1: t1)), toData: true)
        guard case .clockSync(let answer) = receive(fromData: true) else { return nil }
        send(
            .clockSync(
                AppleMIDIClockSync(
                    ssrc: ssrc, count: 2, timestamp1: t1, timestamp2: answer.timestamp2, timestamp3: nowTicks)),
            toData: true)
        return answer
    }

    func sendMIDI(
        _ messages: [ChannelMessage], sequence: UInt16, timestamp: UInt32, journal: RecoveryJournal? = nil
    ) {
        let commands = messages.map { RTPMIDITimedCommand(.message($0.message)) }
        let packet = RTPMIDIPacket(
            header: RTPHeader(sequenceNumber: sequence, timestamp: timestamp, ssrc: ssrc), commands: commands,
            journal: journal)
        send(try! packet.encoded(), toData: true)
    }
}

/// The AppleMIDI host on loopback, driven by packets built with this module's own encoders (pymidi drives it in
/// the CLI test): sessions, clock sync, placement, journal repair, endings and limits.
///
/// Threads: the test's; each host runs its network thread.
@Suite(.serialized) struct AppleMIDIHostTests {
    static func host(
        _ receiver: RecordingReceiver, configure: (inout AppleMIDIHost.Options) -> Void = { _ in }
    ) throws -> AppleMIDIHost {
        var options = AppleMIDIHost.Options()
        options.name = "Aulos test"
        configure(&options)
        let sockets = try AppleMIDISockets(AppleMIDIEndpoint(address: "127.0.0.1", port: 0))
        let host = AppleMIDIHost(sockets: sockets, receiver: receiver, options: options)
        try host.start()
        return host
    }

    @Test func endpointsParseAndRefuse() throws {
        #expect(try AppleMIDIEndpoint(parsing: "5004") == AppleMIDIEndpoint(port: 5004))
        #expect(try AppleMIDIEndpoint(parsing: "0.0.0.0:5004") == AppleMIDIEndpoint(address: "0.0.0.0", port: 5004))
        #expect(try AppleMIDIEndpoint(parsing: "[::1]:5004") == AppleMIDIEndpoint(address: "::1", port: 5004))
        for bad in ["", "x", "65535", "70000", "host.local:5004", "::1:5004", "[::1]5004", "1.2.3.4:", "-1"] {
            #expect(throws: AppleMIDIEndpointError.self) { try AppleMIDIEndpoint(parsing: bad) }
        }
    }

    /// Without an allow list the host takes invitations from the local network only (a public address is answered
    /// NO: the same `allows` the network thread asks); a list given, or a rig's settings, replace that.
    @Test func theLocalNetworkIsAllowedByDefault() throws {
        let options = AppleMIDIHost.Options()
        for host in ["192.168.1.5", "10.20.30.40", "172.20.0.9", "127.0.0.1", "::1", "fe80::1", "fd00::7"] {
            #expect(options.allows(host), "\(host)")
        }
        for host in ["203.0.113.9", "198.51.100.1", "8.8.8.8", "2001:db8::1", "2a00:1450::1"] {
            #expect(!options.allows(host), "\(host)")
        }
        let settings = NetworkMIDISettings(
            listen: "5004", allow: [NetworkPrefix("203.0.113.0/24")!], latencyMilliseconds: 1.5)
        let applied = options.applying(settings)
        #expect(applied.allows("203.0.113.9") && !applied.allows("192.168.1.5"))
        #expect(applied.playoutLatencyNanos == 1_500_000)
        #expect(
            options.applying(NetworkMIDISettings(listen: "5004")).playoutLatencyNanos == options.playoutLatencyNanos)

        // On loopback: the default takes this machine; a list without it answers NO.
        let receiver = RecordingReceiver()
        let open = try Self.host(receiver)
        defer { open.stop() }
        #expect(LoopbackPeer(hostPort: open.sockets.port, ssrc: 77).join())
        let closed = try Self.host(receiver) { $0 = $0.applying(settings) }
        defer { closed.stop() }
        let outsider = LoopbackPeer(hostPort: closed.sockets.port, ssrc: 78)
        outsider.send(.invitation(AppleMIDIExchange(initiatorToken: 5, ssrc: 78)), toData: false)
        guard case .reject = outsider.receive(fromData: false) else {
            Issue.record("a peer outside the allow list was not refused")
            return
        }
        #expect(closed.sessionStatuses.isEmpty)
        // Said once, however often the initiator repeats its IN.
        outsider.send(.invitation(AppleMIDIExchange(initiatorToken: 5, ssrc: 78)), toData: false)
        guard case .reject = outsider.receive(fromData: false) else {
            Issue.record("a repeated IN from outside the allow list was not refused")
            return
        }
        let refusals = closed.takeNotices().compactMap { notice -> String? in
            guard case .connectFailed(_, let reason) = notice else { return nil }
            return reason
        }
        #expect(refusals == ["not in the allow list; answered NO (network-midi allow)"], "\(refusals)")
    }

    @Test func aPortInUseIsOneLine() throws {
        let first = try AppleMIDISockets(AppleMIDIEndpoint(address: "127.0.0.1", port: 0))
        do {
            _ = try AppleMIDISockets(AppleMIDIEndpoint(address: "127.0.0.1", port: first.port))
            Issue.record("bound a port in use")
        } catch {
            #expect(error.message.contains("in use"))
            #expect(!error.message.contains("\n"))
        }
    }

    /// No address: one dual-stack IPv6 socket per port, which takes IPv4 peers too (shown as IPv4).
    @Test func everyInterfaceTakesIPv4OnADualStackSocket() throws {
        let receiver = RecordingReceiver()
        let sockets = try AppleMIDISockets(AppleMIDIEndpoint(port: 0))
        let host = AppleMIDIHost(sockets: sockets, receiver: receiver)
        try host.start()
        defer { host.stop() }
        let peer = LoopbackPeer(hostPort: sockets.port, ssrc: 0xD0D0_0001)
        #expect(peer.join())
        #expect(host.sessionStatuses.first?.peer == "127.0.0.1:\(Self.port(of: peer.control))")
        print("AppleMIDI host on every interface: \(sockets.description)")
    }

    @Test func invitationsAreAcceptedOnBothPortsAndRepeatedOnesAgain() throws {
        let receiver = RecordingReceiver()
        let host = try Self.host(receiver)
        defer { host.stop() }
        let peer = LoopbackPeer(hostPort: host.sockets.port, ssrc: 0xCAFE_BABE)
        peer.send(.invitation(AppleMIDIExchange(initiatorToken: 7, ssrc: peer.ssrc, name: "iPad")), toData: false)
        guard case .accept(let ok) = peer.receive(fromData: false) else {
            Issue.record("no OK on the control port")
            return
        }
        #expect(ok.initiatorToken == 7)
        #expect(ok.name == "Aulos test")
        // The OK was "lost": the same IN again is answered again, with the same SSRC.
        peer.send(.invitation(AppleMIDIExchange(initiatorToken: 7, ssrc: peer.ssrc, name: "iPad")), toData: false)
        guard case .accept(let again) = peer.receive(fromData: false) else {
            Issue.record("a repeated IN was not answered")
            return
        }
        #expect(again.ssrc == ok.ssrc)
        peer.send(.invitation(AppleMIDIExchange(initiatorToken: 7, ssrc: peer.ssrc, name: "iPad")), toData: true)
        guard case .accept(let data) = peer.receive(fromData: true) else {
            Issue.record("no OK on the data port")
            return
        }
        #expect(data.ssrc == ok.ssrc)
        // A data-port IN from an SSRC with no control session is refused.
        let stranger = LoopbackPeer(hostPort: host.sockets.port, ssrc: 0x0BAD_F00D)
        stranger.send(.invitation(AppleMIDIExchange(initiatorToken: 9, ssrc: stranger.ssrc)), toData: true)
        guard case .reject(let no) = stranger.receive(fromData: true) else {
            Issue.record("a data-port IN without a session was not refused")
            return
        }
        #expect(no.initiatorToken == 9)
        let notices = host.takeNotices()
        #expect(notices.count == 2)
        #expect(notices.first == .networkListening(address: host.sockets.description))
        guard case .connected(let port) = notices.last else {
            Issue.record("no connected notice: \(notices)")
            return
        }
        #expect(port.clientName == "iPad")
        #expect(port.isNetwork)
        #expect(host.sessionStatuses.count == 1)
    }

    @Test func clockSyncIsAnsweredWithOurTime() throws {
        let receiver = RecordingReceiver()
        let host = try Self.host(receiver)
        defer { host.stop() }
        let peer = LoopbackPeer(hostPort: host.sockets.port, ssrc: 0x0102_0304, clockOffsetTicks: 987_654_321)
        #expect(peer.join())
        let before = UInt64(monotonicNow() / 100_000)
        let t1 = peer.nowTicks
        peer.send(.clockSync(AppleMIDIClockSync(ssrc: peer.ssrc, count: 0, timestamp1: t1)), toData: true)
        guard case .clockSync(let answer) = peer.receive(fromData: true) else {
            Issue.record("no CK1")
            return
        }
        let after = UInt64(monotonicNow() / 100_000)
        #expect(answer.count == 1)
        #expect(answer.timestamp1 == t1)
        #expect(answer.timestamp2 >= before && answer.timestamp2 <= after)
        #expect(answer.timestamp3 == 0)
        #expect(answer.ssrc != peer.ssrc)
        peer.send(
            .clockSync(
                AppleMIDIClockSync(
                    ssrc: peer.ssrc, count: 2, timestamp1: t1, timestamp2: answer.timestamp2,
                    timestamp3: peer.nowTicks)), toData: true)
        #expect(receiver.wait { _ in host.sessionStatuses.first?.clockSamples == 1 })
        let offset = try #require(host.sessionStatuses.first?.offsetTicks)
        #expect(abs(offset - 987_654_321) <= 10)  // within a millisecond on loopback
    }

    /// Events sent with a known clock offset land at their own time plus the playout latency: the spread of
    /// (arrival − time sent) is the placement's jitter, whatever the network and the scheduler did.
    @Test func eventsArePlacedByThePeersClockInOrder() throws {
        let receiver = RecordingReceiver()
        let latency: Int64 = 4_000_000
        let host = try Self.host(receiver) { $0.playoutLatencyNanos = latency }
        defer { host.stop() }
        let offset: Int64 = 55_555_555_555
        let peer = LoopbackPeer(hostPort: host.sockets.port, ssrc: 0x1111_2222, clockOffsetTicks: offset)
        #expect(peer.join())
        for _ in 0..<4 { peer.synchronize() }
        #expect(receiver.wait { _ in host.sessionStatuses.first?.clockSamples == 4 })
        var sent: [Int64] = []
        for index in 0..<40 {
            let ticks = peer.nowTicks
            sent.append((Int64(ticks) - offset) * 100_000)
            let note = UInt8(40 + index % 20)
            let message: ChannelMessage =
                index % 2 == 0 ? .noteOn(channel: 0, note: note, velocity: 90) : .noteOff(channel: 0, note: note)
            peer.sendMIDI([message], sequence: UInt16(index), timestamp: UInt32(truncatingIfNeeded: ticks))
            usleep(UInt32.random(in: 200...3_000))
        }
        #expect(receiver.wait { $0.deliveries.count == 40 })
        let deliveries = receiver.deliveries
        let errors = zip(deliveries, sent).map { $0.arrival - $1 }
        let spread = (errors.max() ?? 0) - (errors.min() ?? 0)
        let transit = zip(deliveries, sent).map { $0.received - $1 }
        let (low, high) = (errors.min()! / 1000, errors.max()! / 1000)
        let (fastest, slowest) = (transit.min()! / 1000, transit.max()! / 1000)
        print(
            "AppleMIDI loopback placement: 40 events, arrival − sent \(low)…\(high) µs "
                + "(spread \(spread / 1000) µs), transit to the receiver \(fastest)…\(slowest) µs")
        // Within one 100 µs tick of the latency (the offset estimate's rounding), and no spread at all: the
        // timestamps, not the arrivals, place the events.
        #expect(errors.allSatisfy { abs($0 - latency) <= 200_000 })
        #expect(spread == 0)
        #expect(zip(deliveries, deliveries.dropFirst()).allSatisfy { $0.arrival <= $1.arrival })
        let status = try #require(host.sessionStatuses.first)
        #expect(status.placedByClock == 40)
        #expect(status.packets == 40)
        // A timestamp that goes back (a reordered sender clock) never moves an arrival back.
        let last = deliveries.last!.arrival
        peer.sendMIDI(
            [.controlChange(channel: 0, controller: 1, value: 5)], sequence: 40,
            timestamp: UInt32(truncatingIfNeeded: peer.nowTicks - 300))
        #expect(receiver.wait { $0.deliveries.count == 41 })
        #expect(receiver.deliveries.last!.arrival >= last)
    }

    @Test func timestampsThatDoNotFollowTheClockArePlacedOnArrival() throws {
        let receiver = RecordingReceiver()
        let host = try Self.host(receiver)
        defer { host.stop() }
        let peer = LoopbackPeer(hostPort: host.sockets.port, ssrc: 0x5555_6666)
        #expect(peer.join())
        peer.synchronize()
        // pymidi's client sends timestamp 0 always.
        let before = monotonicNow()
        peer.sendMIDI([.noteOn(channel: 0, note: 60, velocity: 100)], sequence: 1, timestamp: 0)
        #expect(receiver.wait { $0.deliveries.count == 1 })
        let arrival = receiver.deliveries[0].arrival
        #expect(arrival >= before && arrival <= monotonicNow())
        #expect(host.sessionStatuses.first?.placedByArrival == 1)
    }

    @Test func aDroppedPacketIsRepairedFromTheJournal() throws {
        let receiver = RecordingReceiver()
        let host = try Self.host(receiver)
        defer { host.stop() }
        let peer = LoopbackPeer(hostPort: host.sockets.port, ssrc: 0x7777_8888)
        #expect(peer.join())
        var journal = RecoveryJournalSender(firstSequence: 10)
        let noteOn = ChannelMessage.noteOn(channel: 2, note: 64, velocity: 100)
        peer.sendMIDI(
            [noteOn], sequence: 10, timestamp: 1_000, journal: journal.journal(forSequence: 10, timestamp: 1_000))
        journal.record(noteOn, sequence: 10, timestamp: 1_000)
        // Packet 11 carries the note-off and is lost.
        journal.record(.noteOff(channel: 2, note: 64), sequence: 11, timestamp: 1_100)
        let next = ChannelMessage.noteOn(channel: 2, note: 67, velocity: 80)
        peer.sendMIDI(
            [next], sequence: 12, timestamp: 1_200, journal: journal.journal(forSequence: 12, timestamp: 1_200))
        #expect(receiver.wait { $0.deliveries.count == 3 })
        let messages = receiver.deliveries.map(\.message)
        #expect(messages == [noteOn, .noteOff(channel: 2, note: 64), next])
        let status = try #require(host.sessionStatuses.first)
        #expect(status.lostPackets == 1)
        #expect(status.journalRepairs == 1)
        #expect(receiver.heldNotes == 1)
    }

    @Test func goodbyeEndsTheSessionsNotes() throws {
        let receiver = RecordingReceiver()
        let host = try Self.host(receiver)
        defer { host.stop() }
        let peer = LoopbackPeer(hostPort: host.sockets.port, ssrc: 0x9999_0000)
        #expect(peer.join(name: "phone"))
        peer.sendMIDI(
            [.noteOn(channel: 0, note: 60, velocity: 100), .noteOn(channel: 0, note: 64, velocity: 100)], sequence: 1,
            timestamp: 0)
        #expect(receiver.wait { $0.heldNotes == 2 })
        peer.send(.bye(AppleMIDIExchange(initiatorToken: 0, ssrc: peer.ssrc)), toData: false)
        #expect(receiver.wait { $0.ended.count == 1 })
        #expect(receiver.heldNotes == 0)
        #expect(receiver.ended.first?.1 == 2)
        #expect(host.sessionStatuses.isEmpty)
        #expect(
            host.takeNotices().last
                == .disconnected(
                    MIDIPortName(
                        client: MIDIPortName.networkClientBase + 1, port: 0, clientName: "phone",
                        portName:
                            "AppleMIDI 127.0.0.1:\(Self.port(of: peer.control)) said goodbye after 1 packet, 0 lost"),
                    releasedNotes: 2))
    }

    static func port(of fd: Int32) -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    @Test func aSilentSessionEndsItsNotes() throws {
        let receiver = RecordingReceiver()
        let host = try Self.host(receiver) { $0.silenceTimeoutNanos = 300_000_000 }
        defer { host.stop() }
        let peer = LoopbackPeer(hostPort: host.sockets.port, ssrc: 0x1357_2468)
        #expect(peer.join())
        let start = monotonicNow()
        peer.sendMIDI([.noteOn(channel: 5, note: 50, velocity: 100)], sequence: 1, timestamp: 0)
        #expect(receiver.wait { $0.heldNotes == 1 })
        #expect(receiver.wait(3) { $0.ended.count == 1 })
        let waited = Double(monotonicNow() - start) / 1e9
        #expect(waited >= 0.3)
        guard case .disconnected(let port, 1) = host.takeNotices().last else {
            Issue.record("no disconnected notice releasing 1 note")
            return
        }
        #expect(port.portName.hasSuffix(" silent for 0.3 s after 1 packet, 0 lost"), "\(port.portName)")
        #expect(receiver.heldNotes == 0)
        #expect(host.sessionStatuses.isEmpty)
    }

    @Test func theSessionCapAndTheAllowListRefuse() throws {
        let receiver = RecordingReceiver()
        let host = try Self.host(receiver) { $0.sessionCap = 2 }
        defer { host.stop() }
        let peers = (1...3).map { LoopbackPeer(hostPort: host.sockets.port, ssrc: UInt32($0)) }
        #expect(peers[0].join())
        #expect(peers[1].join())
        peers[2].send(.invitation(AppleMIDIExchange(initiatorToken: 3, ssrc: 3, name: "third")), toData: false)
        guard case .reject = peers[2].receive(fromData: false) else {
            Issue.record("a session beyond the cap was not refused")
            return
        }
        // A session that ends makes room.
        peers[0].send(.bye(AppleMIDIExchange(initiatorToken: 0, ssrc: 1)), toData: false)
        #expect(receiver.wait { $0.ended.count == 1 })
        #expect(peers[2].join())

        let guarded = try Self.host(receiver) { $0.allowList = [NetworkPrefix("10.1.2.3")!] }
        defer { guarded.stop() }
        let outsider = LoopbackPeer(hostPort: guarded.sockets.port, ssrc: 42)
        outsider.send(.invitation(AppleMIDIExchange(initiatorToken: 4, ssrc: 42)), toData: false)
        guard case .reject = outsider.receive(fromData: false) else {
            Issue.record("a peer outside the allow list was not refused")
            return
        }
    }

    @Test func receiverFeedbackReportsTheHighestSequence() throws {
        let receiver = RecordingReceiver()
        let host = try Self.host(receiver) { $0.feedbackIntervalNanos = 50_000_000 }
        defer { host.stop() }
        let peer = LoopbackPeer(hostPort: host.sockets.port, ssrc: 0x2468_1357)
        #expect(peer.join())
        for sequence: UInt16 in 100...102 {
            peer.sendMIDI([.controlChange(channel: 0, controller: 7, value: 64)], sequence: sequence, timestamp: 0)
        }
        #expect(receiver.wait { $0.deliveries.count == 3 })
        guard case .receiverFeedback(_, let sequence) = peer.receive(fromData: false) else {
            Issue.record("no RS on the control port")
            return
        }
        #expect(sequence == 102)
    }

    @Test func stoppingSaysGoodbyeAndReleases() throws {
        let receiver = RecordingReceiver()
        let host = try Self.host(receiver)
        let peer = LoopbackPeer(hostPort: host.sockets.port, ssrc: 0xABCD_0001)
        #expect(peer.join())
        peer.sendMIDI([.noteOn(channel: 0, note: 60, velocity: 100)], sequence: 1, timestamp: 0)
        #expect(receiver.wait { $0.heldNotes == 1 })
        host.stop()
        #expect(receiver.heldNotes == 0)
        guard case .bye = peer.receive(fromData: false) else {
            Issue.record("no BY when the host stopped")
            return
        }
    }
}
