import AulosCore
import AulosIO
import AulosMIDI
import AulosRealtime
import Glibc
import Synchronization

/// A Network MIDI 2.0 (UMP over UDP, M2-124-UM) host: clients invite it and play UMP into it. Invitation →
/// accepted, or with a shared secret "authentication required" with a fresh nonce, and accepted when the client's
/// SHA-256(nonce + secret) matches; with user accounts "user authentication required", and accepted when the client's
/// SHA-256(nonce + user + password) matches one's (three wrong digests end the attempt with BYE); ping → ping
/// reply; UMP data → the session's `UMPSequenceTracker` (copies skipped, gaps held back and asked for with
/// retransmit requests, a gap not filled after `retransmitAttempts` requests or a retransmit error ends the session's
/// notes) → its `UMPDecoder` → the `MIDIReceiver`, placed at arrival (UMP carries no sender clock Aulos follows);
/// UMP stream discovery → answered as UMP data; session reset → reply, the sequence started over and the notes
/// ended; BYE → BYE reply and the notes ended; unknown commands → NAK; a session silent for `silenceTimeoutNanos`
/// → BYE (timeout) and its notes ended; stopping → BYE to every session. Each session is a `MIDISource` of its
/// own, numbered from 0x8000 so an AppleMIDI host beside it (numbered from 1) never shares one.
///
/// Sessions are told apart by the peer's address and port (the protocol has no session id). Everything a peer
/// can make us hold is bounded: `sessionCap` sessions, the tracker's held-back commands, the decoder's SysEx.
///
/// Threads: `start`, `stop`, `takeNotices` and `sessionStatuses` on the control thread; one network thread (poll()
/// with a 100 ms timeout, 10 ms while a gap is open) owns the socket and the sessions and calls the receiver. The
/// counters and notices cross between the two under a `Mutex`.
public final class NetworkMIDI2Host: @unchecked Sendable {
    /// How the host answers. Threads: a value.
    public struct Options: Sendable {
        /// The UMP endpoint name sent in replies and stream notifications (what `_midi2._udp` should advertise).
        public var name = "Aulos"
        /// The UMP product instance id (at most 42 bytes are sent in stream notifications).
        public var productInstanceId = "aulos"
        /// Sessions at once, those waiting for authentication included; more are refused (BYE, too many sessions).
        public var sessionCap = 16
        /// Who may open a session; nil: the local network (`NetworkPrefix.localNetwork`). The same rule as
        /// AppleMIDI's.
        public var allowList: [NetworkPrefix]?
        /// The shared secret clients must prove they know; nil: invitations are accepted without authentication
        /// (unless `users` are set).
        public var secret: String?
        /// User accounts, name → password: a client that can authenticate as a user (capability bit 1) must name
        /// one and prove its password. With both these and a secret, such a client is asked for a user and any
        /// other for the secret; with users alone, a client that cannot is refused.
        public var users: [String: String] = [:]
        /// A session with nothing heard for this long (ns) ends, its notes released.
        public var silenceTimeoutNanos: Int64 = 30_000_000_000
        /// How long a gap waits for its retransmission before asking again (ns), and how many requests it gets
        /// before it is given up (its notes ended).
        public var retransmitTimeoutNanos: Int64 = 50_000_000
        public var retransmitAttempts = 3
        /// Wrong digests allowed before an authenticating client is sent BYE.
        public var authenticationAttempts = 3
        /// CLOCK_MONOTONIC in ns.
        public var now: @Sendable () -> Int64 = { monotonicNanoseconds() }

        public init() {}

        public func allows(_ host: String) -> Bool { NetworkPrefix.allows(host, under: allowList) }

        /// The options `settings` set over these: the allow list, the secret and the users.
        public func applying(_ settings: NetworkMIDISettings) -> Options {
            var options = self
            options.allowList = settings.allow
            options.secret = settings.secret
            options.users = settings.users
            return options
        }

        /// Whether a client must authenticate at all.
        var needsAuthentication: Bool { secret != nil || !users.isEmpty }
    }

    /// One session's counters as the control thread reads them. Threads: a value.
    public struct SessionStatus: Equatable, Sendable {
        public var source: MIDISource
        /// The client's UMP endpoint name from its invitation.
        public var peerName: String
        /// `192.168.1.5:5673`.
        public var peer: String
        /// UMP data commands taken, copies skipped (forward error correction), retransmit requests sent, gaps
        /// filled by retransmission, commands given up as lost, UMP messages that became nothing.
        public var commands = 0
        public var duplicates = 0
        public var retransmitRequests = 0
        public var recoveredByRetransmit = 0
        public var lostCommands = 0
        public var ignoredMessages = 0
    }

    public let options: Options
    public let socket: NetworkMIDI2Socket
    private let receiver: any MIDIReceiver
    private let thread = NetworkThread()
    private let shared = Mutex(Shared())

    /// What the two threads share. Threads: the control and network threads, under `shared`'s lock.
    private struct Shared {
        var notices: [MIDIInputNotice] = []
        var statuses: [SessionStatus?] = []
    }

    /// The network thread's own.
    private var sessions: [Session?]
    private var buffer = [UInt8](repeating: 0, count: NetworkMIDILimits.maximumPacketBytes)
    private var nextSourceNumber: UInt16 = firstSourceNumber
    private var lastRefusal: (host: String, at: Int64)?
    private var random = SystemRandomNumberGenerator()

    /// Session sources count from here: AppleMIDI's count from 1, and the two hosts can run side by side.
    static let firstSourceNumber: UInt16 = 0x8000

    public init(socket: NetworkMIDI2Socket, receiver: any MIDIReceiver, options: Options = Options()) {
        self.socket = socket
        self.receiver = receiver
        self.options = options
        sessions = [Session?](repeating: nil, count: max(1, options.sessionCap))
        shared.withLock { $0.statuses = [SessionStatus?](repeating: nil, count: max(1, options.sessionCap)) }
    }

    deinit { stop() }

    /// The UDP port and the endpoint name, for advertising the host (mDNS `_midi2._udp`, its TXT record).
    public var port: UInt16 { socket.port }
    public var endpointName: String { options.name }

    public var isStarted: Bool { thread.isStarted }

    public func start() throws(AppleMIDIHostError) {
        guard !thread.isStarted else { return }
        shared.withLock { $0.notices.append(.networkMIDI2Listening(address: socket.description)) }
        try thread.start("Network MIDI 2.0") { self.run() }
    }

    /// Stops the thread: every session is sent BYE and its notes are released.
    public func stop() { thread.stop() }

    public func takeNotices() -> [MIDIInputNotice] {
        shared.withLock { shared in
            defer { shared.notices.removeAll(keepingCapacity: true) }
            return shared.notices
        }
    }

    public var sessionStatuses: [SessionStatus] { shared.withLock { $0.statuses.compactMap { $0 } } }

    // MARK: - The network thread

    /// One client's session. Threads: the network thread.
    private struct Session {
        enum State {
            /// Sent "authentication required" (for the shared secret, or for a user when `asUser`) with this nonce;
            /// `failures` wrong digests so far.
            case authenticating(nonce: [UInt8], failures: Int, asUser: Bool)
            case established
        }

        var status: SessionStatus
        var peer: PeerAddress
        var state: State
        var lastHeard: Int64
        var tracker = UMPSequenceTracker()
        var decoder = UMPDecoder()
        var responder: UMPStreamResponder
        /// The sequence number of the next UMP data command we send (stream answers).
        var sendSequence: UInt16 = 0
        /// The last `sentHistory` UMP data commands we sent, oldest first: resent when the client asks
        /// (retransmit request), and the two before each new one ride along as its forward error correction.
        var sent: [(sequence: UInt16, words: [UInt32])] = []

        /// Our numbers start over at 0 (a session reset, a client that invited again): what was kept under the old
        /// ones is no longer what those numbers mean.
        mutating func startSendingOver() {
            sendSequence = 0
            sent.removeAll()
        }

        /// Numbers new UMP data commands (one datagram's), keeps them, and returns them after copies of the last
        /// `forwardErrorCopies` sent before (none when there is nothing new).
        mutating func send(_ batch: [[UInt32]]) -> [NetworkMIDI2Command] {
            guard !batch.isEmpty else { return [] }
            var commands = sent.suffix(NetworkMIDI2Host.forwardErrorCopies).map {
                NetworkMIDI2Command.umpData(sequence: $0.sequence, words: $0.words)
            }
            for words in batch {
                commands.append(.umpData(sequence: sendSequence, words: words))
                sent.append((sendSequence, words))
                sendSequence &+= 1
            }
            if sent.count > NetworkMIDI2Host.sentHistory { sent.removeFirst(sent.count - NetworkMIDI2Host.sentHistory) }
            return commands
        }

        /// What a retransmit request from `sequence` for `count` commands (0: all kept) gets: the commands, or an
        /// error naming the first that cannot be sent (reason 1: no longer kept; 0: never sent).
        func resend(from sequence: UInt16, count: UInt16) -> [NetworkMIDI2Command] {
            // Distances from the oldest kept, modulo 2^16 as the numbers wrap.
            guard let oldest = sent.first?.sequence else { return [.retransmitError(reason: 0, sequence: sequence)] }
            let offset = Int(sequence &- oldest)
            guard offset < sent.count else {
                // Ahead of the newest (never sent) or behind the oldest kept (a number that wrapped past it).
                let behind = Int(oldest &- sequence) <= Int(UInt16.max) / 2
                return [.retransmitError(reason: behind ? 1 : 0, sequence: sequence)]
            }
            let end = count == 0 ? sent.count : min(sent.count, offset + Int(count))
            return sent[offset..<end].map { .umpData(sequence: $0.sequence, words: $0.words) }
        }
        var lastArrival: Int64 = .min

        var isEstablished: Bool {
            if case .established = state { return true }
            return false
        }
    }

    private func run() {
        var fds = [pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)]
        while !thread.isStopping {
            let gapOpen = sessions.contains { $0?.tracker.hasGap == true }
            if poll(&fds, 1, gapOpen ? 10 : 100) > 0, fds[0].revents & Int16(POLLIN) != 0 { drain() }
            housekeeping(options.now())
        }
        for index in sessions.indices {
            guard let session = sessions[index] else { continue }
            send([.bye(reason: NetworkMIDI2Command.ByeReason.userTerminated, text: "")], to: session.peer)
            end(index, now: options.now(), reason: "ended as Aulos stopped")
        }
    }

    private func drain() {
        while let (bytes, from) = PeerAddress.receive(on: socket.fd, into: &buffer) {
            // Not ours (another protocol on the port), or cut off: nothing to answer.
            guard NetworkMIDI2Datagram.hasSignature(bytes), let datagram = try? NetworkMIDI2Datagram(parsing: bytes)
            else { continue }
            handle(datagram, from: from)
        }
    }

    private func index(of peer: PeerAddress) -> Int? { sessions.firstIndex { $0?.peer == peer } }

    private func handle(_ datagram: NetworkMIDI2Datagram, from peer: PeerAddress) {
        let now = options.now()
        var replies: [NetworkMIDI2Command] = []
        if let index = index(of: peer) { sessions[index]!.lastHeard = now }
        for packet in datagram.packets {
            let command: NetworkMIDI2Command
            do { command = try NetworkMIDI2Command(packet) } catch {
                replies.append(.nak(reason: NetworkMIDI2Command.NAKReason.malformed, header: packet.header, text: ""))
                continue
            }
            handle(command, packet: packet, from: peer, now: now, replies: &replies)
        }
        // A gap this datagram opened is asked for once the whole datagram is read (its FEC copies come first).
        if let index = index(of: peer) { flushRequest(index, now: now, replies: &replies) }
        if !replies.isEmpty { send(replies, to: peer) }
    }

    private func handle(
        _ command: NetworkMIDI2Command, packet: NetworkMIDI2CommandPacket, from peer: PeerAddress, now: Int64,
        replies: inout [NetworkMIDI2Command]
    ) {
        let index = index(of: peer)
        switch command {
        case .invitation(let name, _, let capabilities):
            invite(name: name, capabilities: capabilities, from: peer, now: now, replies: &replies)
        case .invitationWithAuthentication(let digest):
            authenticate(digest, user: nil, at: index, from: peer, now: now, packet: packet, replies: &replies)
        case .invitationWithUserAuthentication(let digest, let user):
            authenticate(digest, user: user, at: index, from: peer, now: now, packet: packet, replies: &replies)
        case .ping(let id):
            if options.allows(peer.host) { replies.append(.pingReply(id: id)) }
        case .bye:
            replies.append(.byeReply)
            if let index { end(index, now: now, reason: "said goodbye") }
        case .umpData(let sequence, let words):
            guard let index, sessions[index]!.isEstablished else {
                // No text: an answer to a stranger is never larger than what it sent.
                replies.append(.bye(reason: NetworkMIDI2Command.ByeReason.sessionNotEstablished, text: ""))
                return
            }
            let outcome = sessions[index]!.tracker.receive(sequence, words, now: now)
            apply(outcome, index, now: now, replies: &replies)
        case .retransmitError:
            guard let index else { return }
            apply(sessions[index]!.tracker.retransmitFailed(), index, now: now, replies: &replies)
        case .retransmitRequest(let sequence, let count):
            if let index { replies += sessions[index]!.resend(from: sequence, count: count) }
        case .sessionReset:
            guard let index, sessions[index]!.isEstablished else {
                replies.append(.nak(reason: NetworkMIDI2Command.NAKReason.notExpected, header: packet.header, text: ""))
                return
            }
            // The peer starts its numbers over, maybe after losing its state: what it held is ended too.
            sessions[index]!.tracker.reset()
            sessions[index]!.startSendingOver()
            releaseNotes(index, now: now)
            replies.append(.sessionResetReply)
        case .unknown:
            replies.append(.nak(reason: NetworkMIDI2Command.NAKReason.notSupported, header: packet.header, text: ""))
        case .invitationAccepted, .invitationPending, .authenticationRequired, .userAuthenticationRequired,
            .pingReply, .sessionResetReply, .nak, .byeReply:
            break  // answers to what a host never sends, or nothing to do
        }
    }

    private func invite(
        name: String, capabilities: UInt8, from peer: PeerAddress, now: Int64, replies: inout [NetworkMIDI2Command]
    ) {
        guard options.allows(peer.host) else {
            replies.append(.bye(reason: NetworkMIDI2Command.ByeReason.notAccepted, text: "not allowed"))
            noteRefusal(name, from: peer, now: now, reason: rule)
            return
        }
        if let index = index(of: peer) {
            // A repeated invitation (our reply was lost): answered again as the session stands. After UMP data it
            // is a client that started over from the same port: its numbers start over too, and what it held ends.
            if sessions[index]!.isEstablished && sessions[index]!.tracker.delivered > 0 {
                sessions[index]!.tracker.reset()
                sessions[index]!.startSendingOver()
                releaseNotes(index, now: now)
            }
            replies.append(reply(for: sessions[index]!, state: 0))
            return
        }
        guard let free = sessions.firstIndex(where: { $0 == nil }) else {
            replies.append(.bye(reason: NetworkMIDI2Command.ByeReason.tooManySessions, text: "too many sessions"))
            return
        }
        // The method the client can answer: a user when there are users and it can name one, else the secret.
        let asUser = !options.users.isEmpty && capabilities & Self.canAuthenticateAsUser != 0
        let bySecret = options.secret != nil && capabilities & Self.canAuthenticate != 0
        if options.needsAuthentication && !asUser && !bySecret {
            let needed = options.secret == nil ? "a user name and password" : "a shared secret"
            replies.append(
                .bye(reason: NetworkMIDI2Command.ByeReason.noMatchingAuthentication, text: "\(needed) is needed"))
            noteRefusal(name, from: peer, now: now, reason: "cannot authenticate; \(needed) is needed")
            return
        }
        let number = nextSourceNumber
        nextSourceNumber = nextSourceNumber == UInt16.max ? Self.firstSourceNumber : nextSourceNumber + 1
        let status = SessionStatus(
            source: .network(number), peerName: name.isEmpty ? "MIDI 2.0 \(peer.host)" : name,
            peer: peer.description)
        let state: Session.State =
            options.needsAuthentication ? .authenticating(nonce: newNonce(), failures: 0, asUser: asUser) : .established
        let session = Session(
            status: status, peer: peer, state: state, lastHeard: now,
            responder: UMPStreamResponder(endpointName: options.name, productInstanceId: options.productInstanceId))
        sessions[free] = session
        if session.isEstablished {
            publish(status, at: free, notice: .connected(Self.portName(status)))
        } else {
            sessions[free]!.status = status
        }
        replies.append(reply(for: session, state: 0))
    }

    /// A client's answer to "authentication required": `digest` is SHA-256 of the nonce and the secret, or with
    /// `user` of the nonce, the user name and its password (each as UTF-8, in that order).
    private func authenticate(
        _ digest: [UInt8], user: String?, at index: Int?, from peer: PeerAddress, now: Int64,
        packet: NetworkMIDI2CommandPacket, replies: inout [NetworkMIDI2Command]
    ) {
        // Only the method this session was asked for: the other is not one it offered.
        guard let index, case .authenticating(let nonce, let failures, let asUser) = sessions[index]!.state,
            asUser == (user != nil)
        else {
            replies.append(.nak(reason: NetworkMIDI2Command.NAKReason.notExpected, header: packet.header, text: ""))
            return
        }
        // An unknown user costs the same work as a wrong password and gets the same answer (state 1, not
        // amidi2net's "user not found"): which names exist is not told to whoever asks.
        let password = user.map { options.users[$0] } ?? options.secret
        let expected = SHA256.digest(nonce + Array((user ?? "").utf8) + Array((password ?? "").utf8))
        let matches = Self.constantTimeEqual(digest, expected)
        if password != nil && matches {
            sessions[index]!.state = .established
            let status = sessions[index]!.status
            publish(status, at: index, notice: .connected(Self.portName(status)))
            replies.append(reply(for: sessions[index]!, state: 0))
        } else if failures + 1 >= options.authenticationAttempts {
            let name = sessions[index]!.status.peerName
            sessions[index] = nil
            let what = user == nil ? "secret" : "user name or password"
            replies.append(.bye(reason: NetworkMIDI2Command.ByeReason.authenticationFailed, text: "wrong \(what)"))
            noteRefusal(
                name, from: peer, now: now,
                reason: user == nil ? "the shared secret did not match" : "the user name or password did not match")
        } else {
            sessions[index]!.state = .authenticating(nonce: newNonce(), failures: failures + 1, asUser: asUser)
            replies.append(reply(for: sessions[index]!, state: 1))
        }
    }

    /// The invitation reply a session's state calls for: accepted, or authentication required (state 0 first, 1
    /// after a wrong digest).
    private func reply(for session: Session, state: UInt8) -> NetworkMIDI2Command {
        switch session.state {
        case .established: .invitationAccepted(name: options.name, productInstanceId: options.productInstanceId)
        case .authenticating(let nonce, _, let asUser):
            asUser
                ? .userAuthenticationRequired(
                    nonce: nonce, state: state, name: options.name, productInstanceId: options.productInstanceId)
                : .authenticationRequired(
                    nonce: nonce, state: state, name: options.name, productInstanceId: options.productInstanceId)
        }
    }

    /// Plays what the tracker released, ends the notes first when it gave a gap up.
    private func apply(
        _ outcome: UMPSequenceTracker.Outcome, _ index: Int, now: Int64, replies: inout [NetworkMIDI2Command]
    ) {
        if outcome.gaveUp { releaseNotes(index, now: now) }
        if let request = outcome.request {
            replies.append(.retransmitRequest(sequence: request.sequence, count: request.count))
            sessions[index]!.status.retransmitRequests += 1
        }
        var answers: [[UInt32]] = []
        let source = sessions[index]!.status.source
        let arrival = max(now, sessions[index]!.lastArrival)
        sessions[index]!.lastArrival = arrival
        var events: [UMPEvent] = []
        for words in outcome.deliver {
            // A command whose words end inside a message: that message is cut off and dropped, the rest played.
            for message in UMPMessage.wholeMessages(words[...]) {
                sessions[index]!.decoder.decode(message, into: &events)
            }
        }
        for event in events {
            switch event {
            case .channel(let message): receiver.receive(message, from: source, arrivalNanos: arrival)
            case .system(let message): receiver.receive(system: message, from: source, arrivalNanos: arrival)
            case .stream(let words): answers += sessions[index]!.responder.answer(words)
            }
        }
        replies += sessions[index]!.send(answers)
        updateStatus(index)
    }

    /// Asks for a gap the datagram just read left open.
    private func flushRequest(_ index: Int, now: Int64, replies: inout [NetworkMIDI2Command]) {
        guard sessions[index] != nil, let request = sessions[index]!.tracker.requestNewGap(now: now) else { return }
        replies.append(.retransmitRequest(sequence: request.sequence, count: request.count))
        sessions[index]!.status.retransmitRequests += 1
        updateStatus(index)
    }

    private func updateStatus(_ index: Int) {
        guard let session = sessions[index] else { return }
        let status = Self.counted(session)
        if session.isEstablished { publish(status, at: index) } else { sessions[index]!.status = status }
    }

    /// A session's status with its tracker's and decoder's counters.
    private static func counted(_ session: Session) -> SessionStatus {
        var status = session.status
        status.commands = session.tracker.delivered
        status.duplicates = session.tracker.duplicates
        status.recoveredByRetransmit = session.tracker.recoveredByRetransmit
        status.lostCommands = session.tracker.lost
        status.ignoredMessages = session.decoder.ignored
        return status
    }

    private func housekeeping(_ now: Int64) {
        for index in sessions.indices {
            guard let session = sessions[index] else { continue }
            if now - session.lastHeard > options.silenceTimeoutNanos {
                send([.bye(reason: NetworkMIDI2Command.ByeReason.timeout, text: "")], to: session.peer)
                let seconds = Double(options.silenceTimeoutNanos) / 1e9
                let shown = seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
                end(index, now: now, reason: "silent for \(shown) s")
                continue
            }
            let outcome = sessions[index]!.tracker.tick(
                now: now, timeout: options.retransmitTimeoutNanos, attempts: options.retransmitAttempts)
            guard outcome.request != nil || outcome.gaveUp else { continue }
            var replies: [NetworkMIDI2Command] = []
            apply(outcome, index, now: now, replies: &replies)
            if !replies.isEmpty { send(replies, to: session.peer) }
        }
    }

    /// Ends the notes a session holds (a lost note-off, a reset) and forgets them in its decoder.
    private func releaseNotes(_ index: Int, now: Int64) {
        let source = sessions[index]!.status.source
        _ = receiver.sourceEnded(source, arrivalNanos: max(now, sessions[index]!.lastArrival))
        sessions[index]!.decoder.reset()
    }

    private func end(_ index: Int, now: Int64, reason: String) {
        guard let session = sessions[index] else { return }
        sessions[index] = nil
        guard session.isEstablished else { return }  // never connected: nothing played, nothing to say
        let released = receiver.sourceEnded(session.status.source, arrivalNanos: max(now, session.lastArrival))
        let status = Self.counted(session)
        var port = Self.portName(status)
        port.portName += " " + reason + " after " + Self.summary(status)
        shared.withLock {
            $0.statuses[index] = nil
            $0.notices.append(.disconnected(port, releasedNotes: released))
        }
    }

    /// `12 UMP commands, 1 lost`, with retransmissions when there were any.
    static func summary(_ status: SessionStatus) -> String {
        var text = "\(status.commands) UMP command\(status.commands == 1 ? "" : "s"), \(status.lostCommands) lost"
        if status.recoveredByRetransmit > 0 { text += ", \(status.recoveredByRetransmit) gaps retransmitted" }
        return text
    }

    static func portName(_ status: SessionStatus) -> MIDIPortName {
        MIDIPortName(
            client: MIDIPortName.networkClientBase + Int(status.source.networkSession ?? 0), port: 0,
            clientName: status.peerName, portName: "Network MIDI 2.0 \(status.peer)")
    }

    private var rule: String { options.allowList == nil ? "not on the local network" : "not in the allow list" }

    /// Says once a minute per address that a client was refused (a client repeats its invitation).
    private func noteRefusal(_ name: String, from peer: PeerAddress, now: Int64, reason: String) {
        if let last = lastRefusal, last.host == peer.host, now - last.at < 60_000_000_000 { return }
        lastRefusal = (peer.host, now)
        let port = MIDIPortName(
            client: MIDIPortName.networkClientBase, port: 0, clientName: name.isEmpty ? "MIDI 2.0 \(peer.host)" : name,
            portName: "Network MIDI 2.0 \(peer.description)")
        shared.withLock { $0.notices.append(.connectFailed(port, reason: "\(reason); answered BYE (network-midi)")) }
    }

    private func newNonce() -> [UInt8] {
        (0..<NetworkMIDI2Command.nonceBytes).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    /// How many of its own UMP data commands a session keeps for retransmit requests, and how many of them go
    /// before a new one as forward error correction. Aulos sends few (stream answers), so a small history reaches
    /// back far in time.
    static let sentHistory = 64
    static let forwardErrorCopies = 2

    /// The invitation's capability bits (M2-124-UM's invitation command, as remembered): bit 0 the client can answer
    /// "authentication required" (the shared secret), bit 1 "user authentication required".
    static let canAuthenticate: UInt8 = 0x01
    static let canAuthenticateAsUser: UInt8 = 0x02

    /// Compares digests without stopping at the first difference (no timing hint about the secret).
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private func publish(_ status: SessionStatus, at index: Int, notice: MIDIInputNotice? = nil) {
        sessions[index]!.status = status
        shared.withLock {
            $0.statuses[index] = status
            if let notice { $0.notices.append(notice) }
        }
    }

    private func send(_ commands: [NetworkMIDI2Command], to peer: PeerAddress) {
        // A datagram stays under a typical MTU: long answer lists go out in several.
        var batch: [NetworkMIDI2Command] = []
        var size = 4
        func flush() {
            guard !batch.isEmpty else { return }
            peer.send(NetworkMIDI2Datagram(batch).bytes, on: socket.fd)
            batch.removeAll()
            size = 4
        }
        for command in commands {
            let length = 4 + command.packet.payload.count * 4
            if size + length > 1_400 { flush() }
            batch.append(command)
            size += length
        }
        flush()
    }
}
