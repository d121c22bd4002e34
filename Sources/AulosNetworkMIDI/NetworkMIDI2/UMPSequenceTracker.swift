/// One session's incoming UMP data commands put back in order by their 16-bit sequence numbers: each number is
/// taken once (a sender's forward error correction repeats its previous commands in every datagram, so copies
/// are skipped), a command after a gap is held back until the gap is filled — by a later datagram's FEC copies or
/// by retransmission — and a gap that is not filled in time is given up: the caller ends the session's notes
/// (a lost note-off must not leave one sounding) and the held commands play on.
///
/// The sequence rules are M2-124-UM's (UMP data command §6.16, retransmit request §6.11, as remembered: numbers
/// count up by one per command and wrap at 16 bits; a receiver asks for a missing number and how many follow).
/// Bounded: at most `NetworkMIDILimits.maximumPendingUMPCommands` commands are held back; a wider gap is given up
/// at once.
///
/// Threads: the network thread that owns the session.
public struct UMPSequenceTracker: Sendable {
    /// The next sequence number to deliver; nil before the first command (any number may start a session).
    public private(set) var expected: UInt16?
    /// Commands after a gap, waiting for it (sorted by their distance from `expected`).
    public private(set) var pending: [(sequence: UInt16, words: [UInt32])] = []
    /// When the current gap was first seen and last asked for, and how many requests it has had.
    public private(set) var gapSince: Int64?
    public private(set) var lastRequest: Int64 = 0
    public private(set) var requests = 0

    /// Counters: commands delivered, copies skipped (FEC or repeats), gaps filled after a retransmit request,
    /// commands given up as lost.
    public private(set) var delivered = 0
    public private(set) var duplicates = 0
    public private(set) var recoveredByRetransmit = 0
    public private(set) var lost = 0

    /// What the caller should do after a command or a tick. Threads: a value.
    public struct Outcome: Sendable {
        /// Commands to play now, in order.
        public var deliver: [[UInt32]] = []
        /// Ask the peer to resend `count` commands from `sequence`.
        public var request: (sequence: UInt16, count: UInt16)?
        /// A gap was given up: end the session's notes before playing `deliver`.
        public var gaveUp = false

        public init() {}
    }

    public init() {}

    /// Takes one UMP data command.
    public mutating func receive(_ sequence: UInt16, _ words: [UInt32], now: Int64) -> Outcome {
        var outcome = Outcome()
        guard let next = expected else {
            expected = sequence &+ 1
            delivered += 1
            outcome.deliver.append(words)
            return outcome
        }
        let distance = Int16(bitPattern: sequence &- next)
        if distance < 0 || pending.contains(where: { $0.sequence == sequence }) {
            duplicates += 1
            return outcome
        }
        if distance == 0 {
            let filledGap = gapSince != nil
            expected = next &+ 1
            delivered += 1
            outcome.deliver.append(words)
            drain(into: &outcome)
            if filledGap && requests > 0 && gapSince == nil { recoveredByRetransmit += 1 }
            return outcome
        }
        // After a gap: held back (the caller asks for the gap after the datagram: `requestNewGap`).
        pending.append((sequence, words))
        pending.sort { Int16(bitPattern: $0.sequence &- next) < Int16(bitPattern: $1.sequence &- next) }
        if pending.count > NetworkMIDILimits.maximumPendingUMPCommands { return giveUp(outcome) }
        if gapSince == nil {
            gapSince = now
            requests = 0
        }
        return outcome
    }

    /// After a whole datagram: a gap it opened and did not fill is asked for now (a sender may put its FEC copies
    /// after the new command, so a gap is only real once the datagram is read).
    public mutating func requestNewGap(now: Int64) -> (sequence: UInt16, count: UInt16)? {
        guard gapSince != nil, requests == 0 else { return nil }
        requests = 1
        lastRequest = now
        return missing
    }

    /// After `timeout` ns without the gap filled, asks again, up to `attempts` requests; then gives up.
    public mutating func tick(now: Int64, timeout: Int64, attempts: Int) -> Outcome {
        guard gapSince != nil, now - lastRequest >= timeout else { return Outcome() }
        if requests >= attempts { return giveUp(Outcome()) }
        requests += 1
        lastRequest = now
        var outcome = Outcome()
        outcome.request = missing
        return outcome
    }

    /// The peer cannot resend (Retransmit Error): the gap is given up now.
    public mutating func retransmitFailed() -> Outcome {
        gapSince == nil ? Outcome() : giveUp(Outcome())
    }

    /// The peer starts its numbers over (Session Reset): anything held back is dropped.
    public mutating func reset() {
        expected = nil
        pending.removeAll()
        gapSince = nil
        requests = 0
    }

    /// Whether a gap is open (the network thread then wakes more often, to time it).
    public var hasGap: Bool { gapSince != nil }

    /// The first missing number and how many are missing before the first held-back command.
    private var missing: (sequence: UInt16, count: UInt16)? {
        guard let next = expected, let first = pending.first else { return nil }
        return (next, first.sequence &- next)
    }

    /// Plays what follows `expected` without a hole; the gap closes when nothing is left held back.
    private mutating func drain(into outcome: inout Outcome) {
        while let first = pending.first, first.sequence == expected {
            pending.removeFirst()
            expected = first.sequence &+ 1
            delivered += 1
            outcome.deliver.append(first.words)
        }
        // A hole further on keeps the gap open: the next tick asks for it.
        if pending.isEmpty { gapSince = nil }
    }

    /// Skips every hole: the missing commands are counted lost and the held ones delivered in order.
    private mutating func giveUp(_ start: Outcome) -> Outcome {
        var outcome = start
        outcome.gaveUp = true
        for (sequence, words) in pending {
            if let next = expected { lost += Int(UInt16(sequence &- next)) }
            expected = sequence &+ 1
            delivered += 1
            outcome.deliver.append(words)
        }
        pending.removeAll()
        gapSince = nil
        requests = 0
        return outcome
    }
}
