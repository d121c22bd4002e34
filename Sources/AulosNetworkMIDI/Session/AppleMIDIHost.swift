import AulosCore
import AulosIO
import AulosMIDI
import AulosRealtime
import Glibc
import Synchronization

/// An AppleMIDI session endpoint on UDP, the responder side (Macs, iPads, rtpMIDI and rtpmidid invite it):
/// IN → OK on the port it came from (NO beyond the session cap, or from a peer outside the allow list), CK0 →
/// CK1 at once, CK2 → the session's clock model; RTP-MIDI → the session's `RTPMIDIReceiver` (journal repair
/// after a gap) → each message to the `MIDIReceiver`, placed at the packet's time on the peer's clock mapped to
/// CLOCK_MONOTONIC plus a constant playout latency (never earlier than the session's previous event); BY, or a
/// session silent for `silenceTimeout`, ends the session's notes (`sourceEnded`); RS about once a second.
/// Every session is a `MIDISource` of its own (`MIDISource.network(_:)`).
///
/// It is the initiator too, towards each peer in `Options.invite` (`AppleMIDIInvitation`: IN on the peer's control
/// port from the control socket, then on its data port from the data socket, CK0 → CK1 → CK2 led from here, retries
/// with backoff, a new invitation after the session ends). A session Aulos opened takes a slot like any other and
/// plays the same way: the peer's RTP-MIDI goes through the same journal repair to the receiver, its clock samples
/// into the same clock model (as the initiator), its BY or silence ends its notes.
///
/// Threads: `start`, `stop`, `takeNotices` and `sessions` on the control thread; one network thread (poll() with
/// a 100 ms timeout) owns the sockets and the sessions and calls the receiver. The sessions' counters and the
/// notices cross between the two under a `Mutex`.
public final class AppleMIDIHost: @unchecked Sendable {
    /// How the host answers and places. Threads: a value.
    public struct Options: Sendable {
        /// The name sent in OK (Audio MIDI Setup shows it).
        public var name = "Aulos"
        /// Sessions at once; an invitation beyond them is refused (NO).
        public var sessionCap = 16
        /// Addresses and prefixes allowed to open a session; nil: the local network (`NetworkPrefix.localNetwork`:
        /// this machine, the private ranges and link-local addresses). `0.0.0.0/0` and `::/0` allow anyone.
        public var allowList: [NetworkPrefix]?
        /// A session with no CK and no data for this long (ns) ends, its notes released (a sleeping phone).
        public var silenceTimeoutNanos: Int64 = 30_000_000_000
        /// Added to every event's time on the peer's clock: the constant delay the network is given (ns).
        public var playoutLatencyNanos: Int64 = 3_000_000
        /// How often receiver feedback (RS) goes to a peer that sent MIDI since the last (ns).
        public var feedbackIntervalNanos: Int64 = 1_000_000_000
        /// CLOCK_MONOTONIC in ns (tests may run it elsewhere).
        public var now: @Sendable () -> Int64 = { monotonicNanoseconds() }
        /// Peers Aulos invites (their numeric address and control port), each a session Aulos keeps open.
        public var invite: [AppleMIDIEndpoint] = []
        /// How the invitations wait and retry, and how often their clocks are synchronised.
        public var invitation = AppleMIDIInvitation.Timing()

        public init() {}

        /// Whether a peer at the numeric address `host` may open a session: in the allow list when one is
        /// given, else on the local network. A peer refused is answered NO.
        public func allows(_ host: String) -> Bool { NetworkPrefix.allows(host, under: allowList) }

        /// The options `settings` (a rig's `network-midi:` or the command line's) set, over these.
        public func applying(_ settings: NetworkMIDISettings) -> Options {
            var options = self
            options.allowList = settings.allow
            if let latency = settings.latencyMilliseconds { options.playoutLatencyNanos = Int64(latency * 1e6) }
            // Checked when read (`NetworkMIDISettings.parsePeer`).
            options.invite = settings.connect.compactMap { try? AppleMIDIEndpoint(parsingPeer: $0) }
            return options
        }
    }

    /// One session's counters, as the control thread reads them. Threads: a value.
    public struct SessionStatus: Equatable, Sendable {
        public var source: MIDISource
        public var peerName: String
        /// The peer's control address (`192.168.1.5:5004`).
        public var peer: String
        public var ssrc: UInt32
        /// RTP-MIDI packets read.
        public var packets = 0
        /// Packets missing from the sequence numbers.
        public var lostPackets = 0
        /// Losses put right from the journal, and those that ended every note instead (no usable journal).
        public var journalRepairs = 0
        public var releasedForLoss = 0
        /// CK exchanges completed (CK2 received).
        public var clockSamples = 0
        /// Peer clock minus ours, in 100 µs ticks, from the best CK exchange; nil before the first.
        public var offsetTicks: Int64?
        /// Half the best CK round trip (µs).
        public var oneWayLatencyMicros: Int64?
        /// How late the last packet arrived after its own time, mapped to our clock (µs); nil when placed by arrival.
        public var lastTransitMicros: Int64?
        /// Events placed by the peer's clock, and those placed at their arrival (no clock yet, or a timestamp that
        /// does not follow the peer's CK clock, as pymidi's client's constant 0).
        public var placedByClock = 0
        public var placedByArrival = 0
        /// Aulos invited the peer (it is the initiator), rather than answered its invitation.
        public var initiated = false
    }

    public let options: Options
    public let sockets: AppleMIDISockets
    private let receiver: any MIDIReceiver
    private let ssrc = UInt32.random(in: 1...UInt32.max)
    private let thread = NetworkThread()
    private let shared = Mutex(Shared())

    /// What the two threads share. Threads: the control and network threads, under `shared`'s lock.
    private struct Shared {
        var notices: [MIDIInputNotice] = []
        var statuses: [SessionStatus?] = []
    }

    /// The network thread's own: the sessions and the receive buffer (sized once).
    private var sessions: [Session?]
    private var buffer = [UInt8](repeating: 0, count: NetworkMIDILimits.maximumPacketBytes)
    private var nextSourceNumber: UInt16 = 1
    /// The peers Aulos invites, made by `start`.
    private var invited: [Invited] = []
    /// The last peer refused by the allow rule and when, so a repeating initiator is said once a minute.
    private var lastRefusal: (host: String, at: Int64)?

    public init(sockets: AppleMIDISockets, receiver: any MIDIReceiver, options: Options = Options()) {
        self.sockets = sockets
        self.receiver = receiver
        self.options = options
        sessions = [Session?](repeating: nil, count: max(1, options.sessionCap))
        shared.withLock { $0.statuses = [SessionStatus?](repeating: nil, count: max(1, options.sessionCap)) }
    }

    deinit { stop() }

    public var isStarted: Bool { thread.isStarted }

    /// Starts the network thread; the `listening` notice says where. Throws when a peer to invite cannot be
    /// reached from the sockets (an IPv6 peer from IPv4 sockets).
    public func start() throws(AppleMIDIHostError) {
        guard !thread.isStarted else { return }
        let now = options.now()
        var invited: [Invited] = []
        // A peer named twice is invited once (its answers could only reach one invitation).
        for (position, endpoint) in options.invite.enumerated() where !options.invite[..<position].contains(endpoint) {
            let (control, data) = try sockets.destinations(endpoint)
            let machine = AppleMIDIInvitation(
                peer: "AppleMIDI \(endpoint)", ssrc: ssrc, name: options.name, timing: options.invitation,
                sessionCap: sessions.count, now: now)
            invited.append(Invited(machine: machine, control: control, data: data))
        }
        self.invited = invited
        let listening = MIDIInputNotice.networkListening(address: sockets.description)
        shared.withLock { $0.notices.append(listening) }
        try thread.start("network MIDI") { self.run() }
    }

    /// Stops the thread: every session says BY to its peer and its notes are released.
    public func stop() { thread.stop() }

    /// Connected and disconnected peers since the last call, oldest first.
    public func takeNotices() -> [MIDIInputNotice] {
        shared.withLock { shared in
            defer { shared.notices.removeAll(keepingCapacity: true) }
            return shared.notices
        }
    }

    /// The sessions open now, with their counters.
    public var sessionStatuses: [SessionStatus] { shared.withLock { $0.statuses.compactMap { $0 } } }

    // MARK: - The network thread

    /// One peer's session. Threads: the network thread.
    private struct Session {
        var status: SessionStatus
        var token: UInt32
        var control: PeerAddress
        var data: PeerAddress?
        var clock = AppleMIDIClockModel(role: .responder)
        /// The invitation (an index of `invited`) that opened it, when Aulos is the initiator.
        var invitation: Int?
        var stream = RTPMIDIReceiver()
        var lastHeard: Int64
        /// The latest arrival time handed to the receiver: arrivals never go back.
        var lastArrival: Int64 = .min
        var lastFeedback: Int64
        var feedbackSent: UInt16?
    }

    /// A peer Aulos invites: its invitation, where its ports are, and the slot of its open session.
    /// Threads: the network thread.
    private struct Invited {
        var machine: AppleMIDIInvitation
        let control: PeerAddress
        let data: PeerAddress
        var slot: Int?
    }

    private func run() {
        var fds = [
            pollfd(fd: sockets.control, events: Int16(POLLIN), revents: 0),
            pollfd(fd: sockets.data, events: Int16(POLLIN), revents: 0),
        ]
        while !thread.isStopping {
            let ready = poll(&fds, 2, 100)
            if ready > 0 {
                if fds[0].revents & Int16(POLLIN) != 0 { drain(sockets.control, isData: false) }
                if fds[1].revents & Int16(POLLIN) != 0 { drain(sockets.data, isData: true) }
            }
            housekeeping(options.now())
        }
        for index in sessions.indices where sessions[index] != nil {
            if let session = sessions[index] {
                send(
                    .bye(AppleMIDIExchange(initiatorToken: session.token, ssrc: ssrc)), on: sockets.control,
                    to: session.control)
            }
            end(index, now: options.now(), reason: "ended as Aulos stopped")
        }
        // An invitation still half open (OK from the control port only) is withdrawn too.
        for index in invited.indices { perform(invited[index].machine.stop(), for: index, now: options.now()) }
    }

    private func drain(_ fd: Int32, isData: Bool) {
        while let (datagram, from) = PeerAddress.receive(on: fd, into: &buffer) {
            if AppleMIDIPacket.isSessionPacket(datagram) {
                guard let packet = try? AppleMIDIPacket(parsing: datagram) else { continue }
                handle(packet, from: from, on: fd, isData: isData)
            } else if isData, let packet = try? RTPMIDIPacket(parsing: datagram) {
                handle(packet)
            }
        }
    }

    private func index(of peerSSRC: UInt32) -> Int? {
        sessions.firstIndex { $0?.status.ssrc == peerSSRC }
    }

    private func handle(_ packet: AppleMIDIPacket, from peer: PeerAddress, on fd: Int32, isData: Bool) {
        let now = options.now()
        if let index = invited.firstIndex(where: { (isData ? $0.data : $0.control) == peer }),
            answerInvitation(packet, index, isData: isData, now: now)
        {
            return
        }
        switch packet {
        case .invitation(let invitation):
            invite(invitation, from: peer, on: fd, isData: isData, now: now)
        case .bye(let bye):
            if let index = index(of: bye.ssrc) { end(index, now: now, reason: "said goodbye") }
        case .clockSync(let sync):
            guard let index = index(of: sync.ssrc) else { return }
            sessions[index]!.lastHeard = now
            switch sync.count {
            case 0:
                // Answered before anything else: the peer's round trip is measured through this.
                let answer = AppleMIDIClockSync(
                    ssrc: ssrc, count: 1, timestamp1: sync.timestamp1, timestamp2: UInt64(now / 100_000))
                send(.clockSync(answer), on: fd, to: peer)
            case 2:
                guard let sample = AppleMIDIClockSample(sync) else { return }
                add(sample, at: index)
            default: break  // CK1 answers an exchange the responder never starts (an initiator's: `invited`)
            }
        case .accept, .reject, .receiverFeedback, .bitrateLimit:
            break
        }
    }

    /// A CK exchange completed (a CK2 received, or our CK2 sent): into the session's clock model and its status.
    private func add(_ sample: AppleMIDIClockSample, at index: Int) {
        sessions[index]!.clock.add(sample)
        var status = sessions[index]!.status
        status.clockSamples += 1
        if let toLocal = sessions[index]!.clock.peerToLocalTicks { status.offsetTicks = 0 &- toLocal }
        status.oneWayLatencyMicros = sessions[index]!.clock.oneWayLatencyTicks.map { $0 * 100 }
        publish(status, at: index)
    }

    // MARK: Aulos as the initiator

    /// A session packet from a port of a peer Aulos invites, when it belongs to the invitation: OK and NO, CK1, and
    /// BY (which ends its session). False for anything else (its CK0, an IN of its own), which is read as any
    /// peer's.
    private func answerInvitation(_ packet: AppleMIDIPacket, _ index: Int, isData: Bool, now: Int64) -> Bool {
        switch packet {
        case .accept, .reject:
            perform(invited[index].machine.received(packet, onData: isData, now: now), for: index, now: now)
        case .clockSync(let sync) where sync.count == 1:
            if let slot = invited[index].slot { sessions[slot]!.lastHeard = now }
            perform(invited[index].machine.received(packet, onData: isData, now: now), for: index, now: now)
        case .bye:
            if let slot = invited[index].slot {
                end(slot, now: now, reason: "said goodbye")
            } else {
                perform(invited[index].machine.received(packet, onData: isData, now: now), for: index, now: now)
            }
        default:
            return false
        }
        return true
    }

    /// Carries out what an invitation asks: packets to the peer's ports, its session opened in a free slot (none
    /// free: the invitation is told the session ended, and the rest of its actions, meant for that session, are
    /// dropped), clock samples, lines for the log.
    private func perform(_ actions: [AppleMIDIInvitation.Action], for index: Int, now: Int64) {
        for action in actions {
            switch action {
            case .sendControl(let packet): send(packet, on: sockets.control, to: invited[index].control)
            case .sendData(let packet): send(packet, on: sockets.data, to: invited[index].data)
            case .open(let name, let peerSSRC):
                guard let free = sessions.firstIndex(where: { $0 == nil }) else {
                    perform(invited[index].machine.ended(now: now, sayGoodbye: true), for: index, now: now)
                    return
                }
                let peer = invited[index].control
                var status = SessionStatus(
                    source: .network(takeSourceNumber()), peerName: name ?? "AppleMIDI \(peer.host)",
                    peer: peer.description, ssrc: peerSSRC)
                status.initiated = true
                sessions[free] = Session(
                    status: status, token: invited[index].machine.token, control: peer, data: invited[index].data,
                    clock: AppleMIDIClockModel(role: .initiator), invitation: index, lastHeard: now, lastFeedback: now)
                invited[index].slot = free
                publish(status, at: free, notice: .connected(Self.portName(status)))
            case .clockSample(let sample):
                if let slot = invited[index].slot { add(sample, at: slot) }
            case .notice(let text):
                let notice = MIDIInputNotice.networkInvitation(peer: invited[index].machine.peer, event: text)
                shared.withLock { $0.notices.append(notice) }
            }
        }
    }

    private func takeSourceNumber() -> UInt16 {
        let number = nextSourceNumber
        nextSourceNumber = nextSourceNumber == UInt16.max ? 1 : nextSourceNumber + 1
        return number
    }

    private func invite(
        _ invitation: AppleMIDIExchange, from peer: PeerAddress, on fd: Int32, isData: Bool, now: Int64
    ) {
        let refusal = AppleMIDIPacket.reject(AppleMIDIExchange(initiatorToken: invitation.initiatorToken, ssrc: ssrc))
        let accept = AppleMIDIPacket.accept(
            AppleMIDIExchange(initiatorToken: invitation.initiatorToken, ssrc: ssrc, name: options.name))
        if !options.allows(peer.host) {
            send(refusal, on: fd, to: peer)
            noteRefusal(invitation, from: peer, now: now)
            return
        }
        if let index = index(of: invitation.ssrc) {
            // A repeated IN (our OK was lost) is answered again; on the data port it completes the session.
            if isData { sessions[index]!.data = peer } else { sessions[index]!.control = peer }
            sessions[index]!.token = invitation.initiatorToken
            sessions[index]!.lastHeard = now
            send(accept, on: fd, to: peer)
            return
        }
        // A data-port IN with no control-port session, or no room: refused.
        guard !isData, let free = sessions.firstIndex(where: { $0 == nil }) else {
            send(refusal, on: fd, to: peer)
            return
        }
        let name = invitation.name ?? "AppleMIDI \(peer.host)"
        let status = SessionStatus(
            source: .network(takeSourceNumber()), peerName: name, peer: peer.description, ssrc: invitation.ssrc)
        sessions[free] = Session(
            status: status, token: invitation.initiatorToken, control: peer, lastHeard: now, lastFeedback: now)
        publish(status, at: free, notice: .connected(Self.portName(status)))
        send(accept, on: fd, to: peer)
    }

    /// Says once a minute per address that a peer outside the allow rule was answered NO (an initiator repeats
    /// its IN every second or so, on both ports).
    private func noteRefusal(_ invitation: AppleMIDIExchange, from peer: PeerAddress, now: Int64) {
        let host = peer.host
        if let last = lastRefusal, last.host == host, now - last.at < 60_000_000_000 { return }
        lastRefusal = (host, now)
        let rule = options.allowList == nil ? "not on the local network" : "not in the allow list"
        let port = MIDIPortName(
            client: MIDIPortName.networkClientBase, port: 0, clientName: invitation.name ?? "AppleMIDI \(host)",
            portName: "AppleMIDI \(peer.description)")
        shared.withLock { $0.notices.append(.connectFailed(port, reason: "\(rule); answered NO (network-midi allow)")) }
    }

    /// How a session is named in notices: the peer's session name, and where it is.
    static func portName(_ status: SessionStatus) -> MIDIPortName {
        MIDIPortName(
            client: MIDIPortName.networkClientBase + Int(status.source.networkSession ?? 0), port: 0,
            clientName: status.peerName, portName: "AppleMIDI \(status.peer)")
    }

    private func handle(_ packet: RTPMIDIPacket) {
        guard let index = index(of: packet.header.ssrc) else { return }
        let now = options.now()
        sessions[index]!.lastHeard = now
        let reception = sessions[index]!.stream.receive(packet)
        var status = sessions[index]!.status
        status.packets += 1
        status.lostPackets = sessions[index]!.stream.lostPackets
        switch reception.repair {
        case .journal where reception.continuity != .first: status.journalRepairs += 1
        case .releasedAll: status.releasedForLoss += 1
        default: break
        }
        let source = status.source
        let packetTime = place(packet.header.timestamp, index, now: now, status: &status)
        for message in reception.repairs {
            receiver.receive(message, from: source, scheduledNanos: packetTime)
        }
        for event in reception.events {
            let arrival =
                event.timestamp == packet.header.timestamp
                ? packetTime : place(event.timestamp, index, now: now, status: &status)
            if let message = ChannelMessage(event.message) {
                receiver.receive(message, from: source, scheduledNanos: arrival)
            } else {
                receiver.receive(system: event.message, from: source, arrivalNanos: arrival)
            }
        }
        publish(status, at: index)
    }

    /// Where an event stamped `timestamp` on the peer's RTP clock lands on CLOCK_MONOTONIC: through the clock
    /// model plus the playout latency when the timestamp follows the peer's CK clock (within a second of its
    /// now), else at its arrival; never before the session's previous event.
    private func place(_ timestamp: UInt32, _ index: Int, now: Int64, status: inout SessionStatus) -> Int64 {
        var arrival = now
        if let toLocal = sessions[index]!.clock.peerToLocalTicks {
            // The RTP timestamp is the low 32 bits of the peer's 10 kHz clock: widened next to the peer's now.
            let peerNow = now / 100_000 &- toLocal
            let step = Int64(Int32(bitPattern: timestamp &- UInt32(truncatingIfNeeded: peerNow)))
            if abs(step) < 10_000 {
                let sent = (peerNow &+ step &+ toLocal) &* 100_000
                arrival = sent &+ options.playoutLatencyNanos
                status.lastTransitMicros = (now - sent) / 1_000
                status.placedByClock += 1
            } else {
                status.lastTransitMicros = nil
                status.placedByArrival += 1
            }
        } else {
            status.placedByArrival += 1
        }
        arrival = max(arrival, sessions[index]!.lastArrival)
        sessions[index]!.lastArrival = arrival
        return arrival
    }

    private func housekeeping(_ now: Int64) {
        for index in sessions.indices {
            guard let session = sessions[index] else { continue }
            if now - session.lastHeard > options.silenceTimeoutNanos {
                let seconds = Double(options.silenceTimeoutNanos) / 1e9
                // A peer Aulos invited is told (BY), so that it takes the next invitation as new.
                end(index, now: now, reason: "silent for \(seconds.formatted) s", sayGoodbye: true)
                continue
            }
            if let sequence = session.stream.feedbackSequenceNumber, sequence != session.feedbackSent,
                now - session.lastFeedback >= options.feedbackIntervalNanos
            {
                send(.receiverFeedback(ssrc: ssrc, sequenceNumber: sequence), on: sockets.control, to: session.control)
                sessions[index]!.feedbackSent = sequence
                sessions[index]!.lastFeedback = now
            }
        }
        for index in invited.indices {
            let hasRoom = sessions.contains { $0 == nil }
            perform(invited[index].machine.tick(now: now, hasRoom: hasRoom), for: index, now: now)
        }
    }

    /// Ends a session: its notes and pedals released through the receiver, and a notice naming the peer, why it
    /// ended and what it sent. A session Aulos opened is invited again later (`sayGoodbye`: with a BY to the peer
    /// first).
    private func end(_ index: Int, now: Int64, reason: String, sayGoodbye: Bool = false) {
        guard let session = sessions[index] else { return }
        sessions[index] = nil
        if let invitation = session.invitation {
            invited[invitation].slot = nil
            perform(invited[invitation].machine.ended(now: now, sayGoodbye: sayGoodbye), for: invitation, now: now)
        }
        let released = receiver.sourceEnded(session.status.source, arrivalNanos: max(now, session.lastArrival))
        var port = Self.portName(session.status)
        port.portName += " " + reason + " after " + Self.summary(session.status)
        shared.withLock {
            $0.statuses[index] = nil
            $0.notices.append(.disconnected(port, releasedNotes: released))
        }
    }

    /// `12 packets, 1 lost, 1 repaired from the journal`.
    static func summary(_ status: SessionStatus) -> String {
        var text = "\(status.packets) packet\(status.packets == 1 ? "" : "s"), \(status.lostPackets) lost"
        if status.journalRepairs > 0 { text += ", \(status.journalRepairs) repaired from the journal" }
        if status.releasedForLoss > 0 { text += ", \(status.releasedForLoss) ended every note (no usable journal)" }
        return text
    }

    private func publish(_ status: SessionStatus, at index: Int, notice: MIDIInputNotice? = nil) {
        sessions[index]!.status = status
        shared.withLock {
            $0.statuses[index] = status
            if let notice { $0.notices.append(notice) }
        }
    }

    private func send(_ packet: AppleMIDIPacket, on fd: Int32, to peer: PeerAddress) {
        peer.send(packet.bytes, on: fd)
    }
}

extension Double {
    /// `30`, `0.3`: a number of seconds as a person writes it.
    fileprivate var formatted: String { self == rounded() ? String(Int(self)) : String(self) }
}
