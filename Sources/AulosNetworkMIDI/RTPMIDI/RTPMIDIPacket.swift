/// An RTP-MIDI packet (RFC 6295): the RTP header, the MIDI command section and, when J = 1, the recovery journal.
///
/// Threads: a value.
public struct RTPMIDIPacket: Equatable, Sendable {
    public var header: RTPHeader
    public var section: RTPMIDICommandSection
    /// The journal when J = 1 and it reads; nil otherwise.
    public var journal: RecoveryJournal?
    /// Why a journal announced by J = 1 did not read (pymidi's client sends J = 1 with no journal at all). The
    /// packet's commands still count; only a loss before it cannot be repaired from this journal.
    public var journalError: NetworkMIDIError?

    public init(header: RTPHeader, commands: [RTPMIDITimedCommand], journal: RecoveryJournal? = nil) {
        self.header = header
        section = RTPMIDICommandSection(commands: commands, hasJournal: journal != nil)
        self.journal = journal
        journalError = nil
    }

    /// Reads a packet. The header and the command section must be whole and well formed, or this throws with
    /// one line saying what is wrong; a malformed journal only sets `journalError`. Never traps.
    public init(parsing bytes: [UInt8]) throws(NetworkMIDIError) {
        guard bytes.count <= NetworkMIDILimits.maximumPacketBytes else {
            throw .tooLarge(
                what: "RTP-MIDI packet of \(bytes.count) bytes", limit: NetworkMIDILimits.maximumPacketBytes)
        }
        let (header, payload) = try RTPHeader.read(bytes)
        self.header = header
        var reader = WireReader(bytes, from: payload.lowerBound, end: payload.upperBound)
        section = try RTPMIDICommandSection(reading: &reader)
        journal = nil
        journalError = nil
        guard section.hasJournal else { return }
        do {
            journal = try RecoveryJournal(reading: &reader)
        } catch {
            journalError = error
        }
    }

    /// The packet's bytes: header, command section (J set when there is a journal), journal.
    public func encoded() throws(NetworkMIDIError) -> [UInt8] {
        var out: [UInt8] = []
        header.append(to: &out)
        var section = section
        section.hasJournal = journal != nil
        out.append(contentsOf: try section.encoded())
        if let journal { out.append(contentsOf: try journal.encoded()) }
        guard out.count <= NetworkMIDILimits.maximumPacketBytes else {
            throw .tooLarge(what: "RTP-MIDI packet bytes", limit: NetworkMIDILimits.maximumPacketBytes)
        }
        return out
    }
}
