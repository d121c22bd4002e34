/// Aulos as the AppleMIDI *initiator* towards one configured peer: the invitation on the peer's control port, then
/// on its data port, the clock synchronisation that the initiator leads, retries with backoff when the peer does
/// not answer or declines, and a new invitation after the session ends. A state machine without sockets or a
/// clock of its own: the host's network thread feeds it the time (CLOCK_MONOTONIC in ns) and the peer's packets,
/// and carries out what it returns (packets to send, a session to open, a clock sample, a line for the log).
///
/// The steps (Apple's protocol, brief §1.2–1.7):
/// 1. IN on the peer's control port (from Aulos's control socket). Unanswered, it is sent again after 1 s, then
///    2, 4, 8, 16 and 30 s (`Timing`), the same token each time, each withdrawn with BY first (a peer whose OK was
///    lost would otherwise hold the session and may ignore the repeat); the log says so once.
/// 2. On OK: IN on the data port (control port + 1, from the data socket). Unanswered within the current delay,
///    the half-open session is withdrawn (BY on the control port) and the invitation starts over after the delay.
/// 3. On the data port's OK the session is open (`Action.open`): CK0 at once and a few more quickly
///    (`Timing.initialSyncs`), then one every `Timing.syncIntervalNanos`; each CK1 that answers the latest CK0 is
///    answered with CK2 and becomes a clock sample (`Action.clockSample`).
/// 4. NO on either port: the log says so (once while the peer keeps declining) and a new invitation follows after
///    the delay, which doubles as for an unanswered one. A session that opens resets the delay to 1 s.
/// 5. The session ends when the host says so (`ended`: the peer's BY, silence, Aulos stopping); unless Aulos is
///    stopping, a new invitation (a new token) follows after `Timing.reinviteNanos`.
///
/// Threads: a value, owned by the host's network thread.
public struct AppleMIDIInvitation: Sendable {
    /// How long the initiator waits and how often it synchronises, in ns. Threads: a value.
    public struct Timing: Equatable, Sendable {
        /// The first wait for an answer (and the first delay after a NO); it doubles after each failure.
        public var firstRetryNanos: Int64 = 1_000_000_000
        /// The longest wait between invitations.
        public var maximumRetryNanos: Int64 = 30_000_000_000
        /// After a session ends (the peer's BY, silence), the new invitation follows this much later.
        public var reinviteNanos: Int64 = 5_000_000_000
        /// CK exchanges started quickly once the session opens (the first at once), so the clock model has several
        /// samples before the first events matter.
        public var initialSyncs = 3
        /// The time between those first CK0s.
        public var initialSyncIntervalNanos: Int64 = 250_000_000
        /// Then one CK exchange this often (Apple's initiators: about every 10 s).
        public var syncIntervalNanos: Int64 = 10_000_000_000

        public init() {}
    }

    /// Where the invitation stands. Threads: a value.
    public enum Phase: Equatable, Sendable {
        /// Waiting until `nextAttemptNanos` to invite (at start, after a failure, after a session).
        case waiting
        /// IN sent on the control port, no answer yet.
        case invitingControl
        /// OK from the control port; IN sent on the data port, no answer yet.
        case invitingData
        /// OK from both ports: the session is open and the clock is being synchronised.
        case connected
        /// Aulos stopped: nothing more is sent.
        case stopped
    }

    /// What the host is to do. Threads: a value.
    public enum Action: Equatable, Sendable {
        /// Send this on Aulos's control socket to the peer's control port.
        case sendControl(AppleMIDIPacket)
        /// Send this on Aulos's data socket to the peer's data port.
        case sendData(AppleMIDIPacket)
        /// The session is open: the peer's name (from its OK) and the SSRC its data port answered with (the one its
        /// RTP-MIDI and CK carry). The host gives it a session slot; with none free it calls `ended`.
        case open(name: String?, ssrc: UInt32)
        /// A complete CK exchange (t1 and t3 ours, t2 the peer's), for the session's clock model.
        case clockSample(AppleMIDIClockSample)
        /// One line for the log, to follow the peer's address (`AppleMIDI 192.168.1.5:5004 …`).
        case notice(String)
    }

    /// Why the log last spoke, so that a peer that keeps failing the same way is said once. Threads: a value.
    enum Outcome: Equatable, Sendable { case unanswered, dataUnanswered, declined, noRoom }

    /// The peer as the log names it: `AppleMIDI 192.168.1.5:5004`.
    public let peer: String
    /// Aulos's SSRC (the same in every session) and the name its IN carries.
    public let ssrc: UInt32
    public let name: String
    public let timing: Timing
    /// The most sessions the host holds, for the notice when none is free.
    public let sessionCap: Int

    public private(set) var phase: Phase = .waiting
    /// The token of the invitation under way (OK, NO and the peer's BY echo it).
    public private(set) var token: UInt32 = 0
    /// When the next invitation goes (waiting), or when the one sent counts as unanswered (inviting).
    public private(set) var nextAttemptNanos: Int64
    /// The current wait: `firstRetryNanos`, doubling to `maximumRetryNanos`.
    public private(set) var retryNanos: Int64
    /// The name and SSRC from the control port's OK.
    private var peerName: String?
    /// CK exchanges started and completed in this session.
    public private(set) var syncsStarted = 0
    public private(set) var syncsCompleted = 0
    /// The t1 of the latest CK0, until its CK1 comes.
    private var pendingSync: UInt64?
    private var nextSyncNanos: Int64 = 0
    private var lastSaid: Outcome?

    /// The first invitation goes at the first `tick`.
    public init(peer: String, ssrc: UInt32, name: String, timing: Timing = Timing(), sessionCap: Int = 16, now: Int64) {
        self.peer = peer
        self.ssrc = ssrc
        self.name = name
        self.timing = timing
        self.sessionCap = sessionCap
        nextAttemptNanos = now
        retryNanos = timing.firstRetryNanos
    }

    /// Whether the peer has accepted at least on its control port, so that it holds a session to end with BY.
    public var peerHoldsSession: Bool { phase == .invitingData || phase == .connected }

    /// What is due at `now`: an invitation, a repeated one, a withdrawal, a CK0. `hasRoom`: a session slot is free
    /// (without one nobody is invited, and the log says so once).
    public mutating func tick(now: Int64, hasRoom: Bool) -> [Action] {
        switch phase {
        case .stopped:
            return []
        case .waiting:
            guard now >= nextAttemptNanos else { return [] }
            guard hasRoom else {
                return say(
                    .noRoom,
                    "is not invited: all \(sessionCap) network MIDI sessions are taken; it is invited when one ends")
            }
            token = UInt32.random(in: 1...UInt32.max)
            phase = .invitingControl
            nextAttemptNanos = now + retryNanos
            return [.sendControl(invitation)]
        case .invitingControl:
            guard now >= nextAttemptNanos else { return [] }
            // Unanswered: the same IN again, and a longer wait for it.
            retryNanos = min(retryNanos * 2, timing.maximumRetryNanos)
            nextAttemptNanos = now + retryNanos
            // BY first: a peer whose OK was lost holds the session and, as pymidi's server does, may ignore an IN
            // for it; after the BY it takes the IN as new.
            return say(.unanswered, "does not answer the invitation on its control port; " + lessOften)
                + [.sendControl(bye), .sendControl(invitation)]
        case .invitingData:
            guard now >= nextAttemptNanos else { return [] }
            // Half open: withdrawn, and the whole invitation again after the wait.
            let said = say(
                .dataUnanswered,
                "accepted the invitation on its control port but does not answer on its data port; " + lessOften)
            return said + [.sendControl(bye)] + backOff(now)
        case .connected:
            guard now >= nextSyncNanos else { return [] }
            let t1 = Self.ticks(now)
            pendingSync = t1
            syncsStarted += 1
            nextSyncNanos =
                now + (syncsStarted < timing.initialSyncs ? timing.initialSyncIntervalNanos : timing.syncIntervalNanos)
            return [.sendData(.clockSync(AppleMIDIClockSync(ssrc: ssrc, count: 0, timestamp1: t1)))]
        }
    }

    /// A session packet from the peer's control port (`onData` false) or data port, at `now`. OK and NO count only
    /// with this invitation's token; CK1 only when it answers the latest CK0; the peer's BY (before the session
    /// opened: after that the host ends the session and calls `ended`) starts over.
    public mutating func received(_ packet: AppleMIDIPacket, onData: Bool, now: Int64) -> [Action] {
        switch (packet, phase) {
        case (.accept(let answer), .invitingControl) where !onData && answer.initiatorToken == token:
            peerName = answer.name
            phase = .invitingData
            nextAttemptNanos = now + retryNanos
            return [.sendData(invitation)]
        case (.accept(let answer), .invitingData) where onData && answer.initiatorToken == token:
            phase = .connected
            retryNanos = timing.firstRetryNanos
            lastSaid = nil
            syncsStarted = 0
            syncsCompleted = 0
            pendingSync = nil
            nextSyncNanos = now
            return [.open(name: peerName ?? answer.name, ssrc: answer.ssrc)] + tick(now: now, hasRoom: true)
        case (.reject(let answer), .invitingControl), (.reject(let answer), .invitingData):
            guard answer.initiatorToken == token else { return [] }
            let withdrawal: [Action] = phase == .invitingData ? [.sendControl(bye)] : []
            let port = onData ? "data" : "control"
            let named = answer.name.map { ", as \"\($0)\"" } ?? ""
            let said = say(
                .declined,
                "declined the invitation (NO on its \(port) port\(named)); it is invited again in "
                    + "\(Self.seconds(retryNanos)), " + lessOften)
            return said + withdrawal + backOff(now)
        case (.bye(let bye), .invitingData):
            // Before the session opened there is no session for the host to end; a Mac's BY carries token 0.
            guard bye.initiatorToken == token || bye.initiatorToken == 0 else { return [] }
            return backOff(now)
        case (.clockSync(let sync), .connected) where onData && sync.count == 1:
            let t3 = Self.ticks(now)
            guard let t1 = pendingSync, sync.timestamp1 == t1,
                let sample = AppleMIDIClockSample(timestamp1: t1, timestamp2: sync.timestamp2, timestamp3: t3)
            else { return [] }
            pendingSync = nil
            syncsCompleted += 1
            let answer = AppleMIDIClockSync(
                ssrc: ssrc, count: 2, timestamp1: t1, timestamp2: sync.timestamp2, timestamp3: t3)
            return [.sendData(.clockSync(answer)), .clockSample(sample)]
        default:
            return []
        }
    }

    /// The host ended the session at `now` (the peer's BY, silence, no slot for it): `sayGoodbye` sends BY first (a
    /// peer that still holds the session, as pymidi's server does, would otherwise ignore the next invitation). A
    /// new invitation follows after `Timing.reinviteNanos`.
    public mutating func ended(now: Int64, sayGoodbye: Bool) -> [Action] {
        guard phase != .stopped, phase != .waiting else { return [] }
        let goodbye: [Action] = sayGoodbye && peerHoldsSession ? [.sendControl(bye)] : []
        phase = .waiting
        retryNanos = timing.firstRetryNanos
        nextAttemptNanos = now + timing.reinviteNanos
        pendingSync = nil
        return goodbye
    }

    /// Aulos stops: BY to a peer that accepted, and nothing more.
    public mutating func stop() -> [Action] {
        let goodbye: [Action] = peerHoldsSession ? [.sendControl(bye)] : []
        phase = .stopped
        return goodbye
    }

    // MARK: -

    private var invitation: AppleMIDIPacket {
        .invitation(AppleMIDIExchange(initiatorToken: token, ssrc: ssrc, name: name))
    }

    private var bye: AppleMIDIPacket { .bye(AppleMIDIExchange(initiatorToken: token, ssrc: ssrc)) }

    private var lessOften: String {
        "inviting again less often (up to every \(Self.seconds(timing.maximumRetryNanos)))"
    }

    /// Back to waiting after a failure: the next invitation after the current wait, which then doubles.
    private mutating func backOff(_ now: Int64) -> [Action] {
        phase = .waiting
        nextAttemptNanos = now + retryNanos
        retryNanos = min(retryNanos * 2, timing.maximumRetryNanos)
        return []
    }

    /// The notice, unless the last one said the same.
    private mutating func say(_ outcome: Outcome, _ text: String) -> [Action] {
        guard lastSaid != outcome else { return [] }
        lastSaid = outcome
        return [.notice(text)]
    }

    /// CLOCK_MONOTONIC in AppleMIDI's 100 µs ticks, as the responder's CK1 gives them.
    static func ticks(_ nanos: Int64) -> UInt64 { UInt64(max(0, nanos) / 100_000) }

    /// `30 s`, `1.5 s`.
    static func seconds(_ nanos: Int64) -> String {
        let value = Double(nanos) / 1e9
        return (value == value.rounded() ? String(Int(value)) : String(value)) + " s"
    }
}
