/// Every size the network MIDI readers accept, in one place: a peer on the network is untrusted, so each
/// structure it can make us hold or walk has a ceiling, and input beyond it is an error, never a bigger buffer.
///
/// Threads: constants.
public enum NetworkMIDILimits {
    /// The largest datagram read (a UDP payload cannot exceed 65,507 bytes on IPv4; 64 KiB covers IPv6 too).
    public static let maximumPacketBytes = 65_536
    /// The longest session name kept from IN/OK/NO/BY: longer names are cut (at a character boundary) rather
    /// than refused, since Apple's documentation sets no limit and a name is only shown to the user.
    public static let maximumNameBytes = 255
    /// The most commands one RTP-MIDI command section may carry. The 12-bit LEN allows a 4,095-byte list, which
    /// holds about 2,048 one-byte real-time commands with one-byte deltas; a section with more commands than this
    /// is refused, so one datagram never becomes more events than a session's buffers are sized for.
    public static let maximumCommandsPerPacket = 1_024
    /// The largest System Exclusive message reassembled from segments (F0…F0, F7…F0, F7…F7), its F0 and F7
    /// included; a longer one is dropped whole (a synth must act as if a cut SysEx never came, RFC 6295 §3.2).
    public static let maximumSysExBytes = 65_536
    /// Channel journals in one recovery journal: TOTCHAN is 4 bits, so at most 16, and each channel once.
    public static let maximumChannelJournals = 16
    /// The most command packets one Network MIDI 2.0 datagram may carry (a 64 KiB datagram could frame 16,383
    /// empty ones); more is refused, so one datagram never becomes more work than a few UMP data commands with
    /// their forward error correction copies.
    public static let maximumCommandPackets = 1_024
    /// Network MIDI 2.0 UMP data commands held back per session after a gap, waiting for the missing ones
    /// (retransmission); a longer gap gives up at once (the session's notes are ended).
    public static let maximumPendingUMPCommands = 64
}
