/// One network MIDI session as the status shows it (`aulos status`, the panel): who, where, and how its packets
/// fared. A live MIDI input that has sessions reports them (`LiveMIDISource.networkSessions`); the playback
/// layer needs no network module for it. Threads: a value.
public struct NetworkSessionCounters: Equatable, Sendable {
    /// The peer's session name and its control address (`192.168.1.5:5004`).
    public var peerName: String
    public var address: String
    /// The protocol (`AppleMIDI`).
    public var kind: String
    /// Packets read, missing from the sequence numbers, and losses put right from the recovery journal.
    public var packets: Int
    public var lost: Int
    public var repaired: Int
    /// How late the last packet arrived after the time it carries, on our clock (ms); nil while placed by arrival.
    public var latencyMs: Double?
    /// The best clock-synchronisation round trip (ms); nil before the first exchange.
    public var clockRoundTripMs: Double?

    public init(
        peerName: String, address: String, kind: String, packets: Int, lost: Int, repaired: Int, latencyMs: Double?,
        clockRoundTripMs: Double?
    ) {
        self.peerName = peerName
        self.address = address
        self.kind = kind
        self.packets = packets
        self.lost = lost
        self.repaired = repaired
        self.latencyMs = latencyMs
        self.clockRoundTripMs = clockRoundTripMs
    }
}
