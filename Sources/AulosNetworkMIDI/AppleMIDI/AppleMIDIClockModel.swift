/// One complete CK exchange reduced to what it tells: the round trip and how far apart the two clocks are.
/// t1 is the initiator's time when it sent CK0, t2 the responder's when it answered CK1, t3 the initiator's when
/// CK1 came back, all in 100 µs ticks (brief §1.7). Pure arithmetic, wrapping rather than trapping on absurd input.
///
/// Threads: a value.
public struct AppleMIDIClockSample: Equatable, Sendable {
    /// t3 − t1, in ticks: the initiator's round trip.
    public var roundTripTicks: Int64
    /// Apple's offset estimate ((t1 + t3) / 2) − t2: initiator clock minus responder clock, so that
    /// initiator time ≈ responder time + offset.
    public var initiatorMinusResponderTicks: Int64
    /// t3, the initiator's time of the sample (the x axis of the drift fit).
    public var initiatorTime: Int64

    /// Nil when t3 comes before t1 (a clock that went backwards, or a forged packet): such a sample says nothing.
    public init?(timestamp1: UInt64, timestamp2: UInt64, timestamp3: UInt64) {
        let t1 = Int64(bitPattern: timestamp1)
        let t2 = Int64(bitPattern: timestamp2)
        let t3 = Int64(bitPattern: timestamp3)
        let roundTrip = t3 &- t1
        guard roundTrip >= 0 else { return nil }
        roundTripTicks = roundTrip
        // t1 + (t3 − t1) / 2 rather than (t1 + t3) / 2: the same value without overflowing for large clocks.
        initiatorMinusResponderTicks = t1 &+ roundTrip / 2 &- t2
        initiatorTime = t3
    }

    /// The sample a CK2 carries (for a responder), or a CK1 with the time it arrived (for an initiator).
    public init?(_ sync: AppleMIDIClockSync, arrival: UInt64? = nil) {
        self.init(timestamp1: sync.timestamp1, timestamp2: sync.timestamp2, timestamp3: arrival ?? sync.timestamp3)
    }
}

/// The peer's clock as seen from ours, from the CK exchanges of one session: the offset comes from the sample
/// with the smallest round trip (the one least delayed by queues), samples slower than twice that minimum are
/// discarded, and the drift is a least-squares slope of the offset over time. It converts a peer timestamp
/// (RTP or CK, 100 µs ticks) into local ticks; placing that on a frame is the session's business (part 2).
///
/// Threads: a value (the network thread keeps one per session).
public struct AppleMIDIClockModel: Equatable, Sendable {
    /// Which side of the exchange this end is: it decides the sign of the offset. Threads: a value.
    public enum Role: Sendable { case initiator, responder }

    public let role: Role
    /// How many samples are kept (the oldest go first): enough for a drift fit over a few minutes at one
    /// exchange every 10 s, and a fixed size so a session's memory is bounded.
    public let capacity: Int
    public private(set) var samples: [AppleMIDIClockSample] = []

    public init(role: Role, capacity: Int = 16) {
        self.role = role
        self.capacity = max(1, capacity)
    }

    /// Adds a sample, keeping at most `capacity`.
    public mutating func add(_ sample: AppleMIDIClockSample) {
        samples.append(sample)
        if samples.count > capacity { samples.removeFirst(samples.count - capacity) }
    }

    /// The smallest round trip seen, in ticks; nil before the first sample.
    public var minimumRoundTripTicks: Int64? { samples.map(\.roundTripTicks).min() }

    /// The one-way latency estimate: half the smallest round trip, in ticks.
    public var oneWayLatencyTicks: Int64? { minimumRoundTripTicks.map { $0 / 2 } }

    /// The samples the model trusts: those within twice the minimum round trip (queueing made the others late).
    public var acceptedSamples: [AppleMIDIClockSample] {
        guard let minimum = minimumRoundTripTicks else { return [] }
        let bound = max(minimum * 2, minimum + 1)  // a zero minimum would otherwise accept only itself
        return samples.filter { $0.roundTripTicks <= bound }
    }

    /// What to add to a peer time to get the local time, in ticks, from the best sample.
    public var peerToLocalTicks: Int64? {
        guard let best = samples.min(by: { $0.roundTripTicks < $1.roundTripTicks }) else { return nil }
        // initiator ≈ responder + offset: the initiator adds it to a responder time, the responder subtracts it.
        return role == .initiator ? best.initiatorMinusResponderTicks : 0 &- best.initiatorMinusResponderTicks
    }

    /// A peer time in local ticks; nil before the first sample.
    public func localTicks(fromPeer peerTicks: UInt64) -> Int64? {
        peerToLocalTicks.map { Int64(bitPattern: peerTicks) &+ $0 }
    }

    /// How fast the offset moves, in parts per million of elapsed initiator time (a least-squares slope over
    /// the accepted samples); nil with fewer than two samples at distinct times.
    public var driftPartsPerMillion: Double? {
        let points = acceptedSamples
        guard points.count >= 2, let origin = points.first?.initiatorTime else { return nil }
        // Relative to the first sample, so the squares stay exact in a Double for ticks near 2^53.
        let xs = points.map { Double($0.initiatorTime &- origin) }
        let ys = points.map { Double($0.initiatorMinusResponderTicks &- points[0].initiatorMinusResponderTicks) }
        let n = Double(points.count)
        let meanX = xs.reduce(0, +) / n
        let meanY = ys.reduce(0, +) / n
        var numerator = 0.0
        var denominator = 0.0
        for (x, y) in zip(xs, ys) {
            numerator += (x - meanX) * (y - meanY)
            denominator += (x - meanX) * (x - meanX)
        }
        guard denominator > 0 else { return nil }
        return numerator / denominator * 1_000_000
    }
}
