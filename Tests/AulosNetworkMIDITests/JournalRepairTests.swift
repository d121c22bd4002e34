import AulosMIDI
import Testing

@testable import AulosNetworkMIDI

/// A sender and a receiver joined by a "network" that drops the packets a test names: the sender records what
/// it sends in its journal, every packet is encoded and parsed, so repairs are checked through the wire format.
struct LossyStream {
    var sender = RecoveryJournalSender(firstSequence: 100)
    var receiver = RTPMIDIReceiver()
    var sequence: UInt64 = 100
    var timestamp: UInt32 = 1_000

    /// Sends `messages` in one packet; returns what the receiver got, or nil when the packet is dropped.
    @discardableResult
    mutating func send(_ messages: [ChannelMessage], drop: Bool = false, acknowledge: Bool = false) throws
        -> RTPMIDIReception?
    {
        let journal = sender.journal(forSequence: sequence, timestamp: timestamp)
        for message in messages { sender.record(message, sequence: sequence, timestamp: timestamp) }
        let header = RTPHeader(sequenceNumber: UInt16(truncatingIfNeeded: sequence), timestamp: timestamp, ssrc: 42)
        let packet = RTPMIDIPacket(
            header: header, commands: messages.map { RTPMIDITimedCommand(.message($0.message)) }, journal: journal)
        let bytes = try packet.encoded()
        sequence += 1
        timestamp &+= 100
        guard !drop else { return nil }
        let reception = receiver.receive(try RTPMIDIPacket(parsing: bytes))
        if acknowledge, let fed = receiver.feedbackSequenceNumber { sender.acknowledge(fed) }
        return reception
    }
}

@Suite struct JournalRepairTests {
    private let c4 = ChannelMessage.noteOn(channel: 0, note: 60, velocity: 100)

    /// The case: the packet with the note-off is dropped; the next packet's journal ends the note.
    @Test func droppedNoteOffIsRepaired() throws {
        var stream = LossyStream()
        let first = try #require(try stream.send([c4]))
        #expect(first.continuity == .first && first.repairs.isEmpty)
        #expect(stream.receiver.channels[0].soundingNotes == [60])
        try stream.send([.noteOff(channel: 0, note: 60)], drop: true)
        let next = try #require(try stream.send([.noteOn(channel: 0, note: 64, velocity: 90)]))
        #expect(next.continuity == .loss(packets: 1) && next.repair == .journal)
        #expect(next.repairs == [.noteOff(channel: 0, note: 60)])
        #expect(next.events == [RTPMIDIEvent(timestamp: 1_200, message: .noteOn(channel: 0, note: 64, velocity: 90))])
        #expect(stream.receiver.channels[0].soundingNotes == [64])
        #expect(stream.receiver.lostPackets == 1)
    }

    /// A journal that tells the receiver only what it already has changes nothing (every repair compares with
    /// the state first): the packet lost here carried no MIDI.
    @Test func journalOfWhatArrivedChangesNothing() throws {
        var stream = LossyStream()
        for message in [
            c4, .controlChange(channel: 0, controller: 64, value: 127), .noteOff(channel: 0, note: 60),
            .controlChange(channel: 0, controller: 7, value: 30), .noteOn(channel: 0, note: 62, velocity: 5),
            .controlChange(channel: 0, controller: 64, value: 0), ChannelMessage(status: 0xC0, data1: 9),
        ] {
            #expect(try stream.send([message])?.repairs == [])
        }
        try stream.send([], drop: true)
        let next = try #require(try stream.send([]))
        #expect(next.repair == .journal && next.repairs == [])
    }

    /// A lost note-on is played when the journal recommends it (Y = 1), not when it is stale (Y = 0).
    @Test func lostNoteOnPlaysUnlessStale() throws {
        var stream = LossyStream()
        try stream.send([])
        try stream.send([c4], drop: true)
        let fresh = try #require(try stream.send([]))
        #expect(fresh.repairs == [c4])
        var stale = LossyStream()
        stale.sender.staleAfterTicks = 50  // packets are 100 ticks apart
        try stale.send([])
        try stale.send([c4], drop: true)
        #expect(try stale.send([])?.repairs == [])
        #expect(stale.receiver.channels[0].soundingNotes.isEmpty)
    }

    /// Note-off and note-on of the same note both lost: the sounding note is an older one (it came before the
    /// checkpoint, which receiver feedback moved), so it is ended and struck again.
    @Test func lostNoteOffAndNoteOnPair() throws {
        var stream = LossyStream()
        try stream.send([c4], acknowledge: true)
        try stream.send([], acknowledge: true)
        try stream.send([.noteOff(channel: 0, note: 60), c4], drop: true)
        let next = try #require(try stream.send([]))
        #expect(next.repairs == [.noteOff(channel: 0, note: 60), c4])
    }

    /// The sustain pedal through chapter C's toggle tool: a lost release is released; a lost release and press
    /// (on → off → on) lifts and presses again, so notes released meanwhile are damped.
    @Test func sustainPedal() throws {
        let down = ChannelMessage.controlChange(channel: 3, controller: 64, value: 127)
        let up = ChannelMessage.controlChange(channel: 3, controller: 64, value: 0)
        var stream = LossyStream()
        try stream.send([down])
        try stream.send([up], drop: true)
        #expect(try stream.send([])?.repairs == [up])
        #expect(stream.receiver.channels[3].controllers[64] == 0)

        var twice = LossyStream()
        try twice.send([down])
        try twice.send([up], drop: true)
        try twice.send([.controlChange(channel: 3, controller: 64, value: 100)], drop: true)
        #expect(try twice.send([])?.repairs == [up, down])

        // Pressed while lost, and lost again on release: nothing audible to do.
        var quiet = LossyStream()
        try quiet.send([])
        try quiet.send([down], drop: true)
        try quiet.send([up], drop: true)
        #expect(try quiet.send([])?.repairs == [])
    }

    @Test func controllerProgramAndBend() throws {
        var stream = LossyStream()
        try stream.send([.controlChange(channel: 1, controller: 7, value: 100)])
        try stream.send(
            [
                .controlChange(channel: 1, controller: 7, value: 30),
                .controlChange(channel: 1, controller: 0, value: 1),
                .controlChange(channel: 1, controller: 32, value: 2), ChannelMessage(status: 0xC1, data1: 5),
                ChannelMessage(status: 0xE1, data1: 0x10, data2: 0x60),
                .controlChange(channel: 1, controller: 123, value: 0),
            ], drop: true)
        let next = try #require(try stream.send([]))
        #expect(
            next.repairs == [
                // Chapter P first: bank select MSB and LSB, then the program.
                .controlChange(channel: 1, controller: 0, value: 1),
                .controlChange(channel: 1, controller: 32, value: 2),
                ChannelMessage(status: 0xC1, data1: 5),
                // Chapter C: the value tool for 7 (0 and 32 are already right), the count tool for All Notes Off.
                .controlChange(channel: 1, controller: 7, value: 30),
                .controlChange(channel: 1, controller: 123, value: 0),
                // Chapter W.
                ChannelMessage(status: 0xE1, data1: 0x10, data2: 0x60),
            ])
        let state = stream.receiver.channels[1]
        #expect(state.program == 5 && state.bankMSB == 1 && state.bankLSB == 2 && state.pitchWheel == 0x60 << 7 | 0x10)
    }

    /// With no journal, or one whose checkpoint is newer than anything received, the receiver cannot know what
    /// it missed: it ends every note and releases the pedal.
    @Test func uncoveredLossReleasesEverything() throws {
        var receiver = RTPMIDIReceiver()
        func packet(_ sequence: UInt16, _ commands: [MIDIMessage], journal: RecoveryJournal? = nil) -> RTPMIDIPacket {
            RTPMIDIPacket(
                header: RTPHeader(sequenceNumber: sequence, timestamp: 0, ssrc: 1),
                commands: commands.map { RTPMIDITimedCommand(.message($0)) }, journal: journal)
        }
        _ = receiver.receive(
            packet(
                10,
                [.noteOn(channel: 2, note: 50, velocity: 80), .controlChange(channel: 2, controller: 64, value: 127)]))
        let noJournal = receiver.receive(packet(12, [.noteOn(channel: 4, note: 70, velocity: 1)]))
        #expect(noJournal.repair == .releasedAll)
        #expect(
            noJournal.repairs == [.noteOff(channel: 2, note: 50), .controlChange(channel: 2, controller: 64, value: 0)])
        // Checkpoint 20 > highest (12) + 1: not covered.
        let tooNew = receiver.receive(packet(15, [], journal: RecoveryJournal(checkpointSequenceNumber: 20)))
        #expect(tooNew.repair == .releasedAll && tooNew.repairs == [.noteOff(channel: 4, note: 70)])
        // Checkpoint 16 = highest + 1 is covered (an empty journal: nothing to do).
        let covered = receiver.receive(packet(17, [], journal: RecoveryJournal(checkpointSequenceNumber: 16)))
        #expect(covered.repair == .journal && covered.repairs.isEmpty)
        #expect(receiver.releaseAll().isEmpty)
    }

    /// Sequence numbers wrap at 2¹⁶; an older or repeated packet is ignored.
    @Test func orderAndWrapAround() {
        var receiver = RTPMIDIReceiver()
        func packet(_ sequence: UInt16) -> RTPMIDIPacket {
            RTPMIDIPacket(
                header: RTPHeader(sequenceNumber: sequence, timestamp: 0, ssrc: 1),
                commands: [RTPMIDITimedCommand(.message(.noteOn(channel: 0, note: 1, velocity: 1)))])
        }
        #expect(receiver.receive(packet(65_534)).continuity == .first)
        #expect(receiver.receive(packet(65_535)).continuity == .inOrder)
        #expect(receiver.receive(packet(0)).continuity == .inOrder)
        #expect(receiver.highestSequence == 65_536)
        let old = receiver.receive(packet(65_535))
        #expect(old.continuity == .outOfOrder && old.events.isEmpty)
        #expect(receiver.receive(packet(0)).continuity == .outOfOrder)
        #expect(receiver.receive(packet(3)).continuity == .loss(packets: 2))
        #expect(receiver.feedbackSequenceNumber == 3 && receiver.outOfOrderPackets == 2)
    }

    /// The Mac capture after notes 48 and 53 were struck in packet 17013: packets 17014–17017 were lost and the
    /// journal (checkpoint 17014) says 48, 53 and 55 are off.
    @Test func macJournalRepairs() throws {
        var receiver = RTPMIDIReceiver()
        _ = receiver.receive(
            RTPMIDIPacket(
                header: RTPHeader(sequenceNumber: 17013, timestamp: 0, ssrc: 0x47D8_1096),
                commands: [
                    RTPMIDITimedCommand(.message(.noteOn(channel: 0, note: 48, velocity: 30))),
                    RTPMIDITimedCommand(.message(.noteOn(channel: 0, note: 53, velocity: 30))),
                ]))
        let reception = receiver.receive(try RTPMIDIPacket(parsing: MacCaptures.single))
        #expect(reception.continuity == .loss(packets: 4) && reception.repair == .journal)
        #expect(reception.repairs == [.noteOff(channel: 0, note: 48), .noteOff(channel: 0, note: 53)])
        #expect(
            reception.events == [
                RTPMIDIEvent(timestamp: 1_268_723_766, message: .noteOn(channel: 0, note: 48, velocity: 38))
            ])
    }

    /// A SysEx split over packets is whole when they all arrive, and dropped when one between is lost.
    @Test func sysExAcrossPackets() throws {
        var receiver = RTPMIDIReceiver()
        func packet(_ sequence: UInt16, _ segment: RTPMIDISysExSegment) -> RTPMIDIPacket {
            RTPMIDIPacket(
                header: RTPHeader(sequenceNumber: sequence, timestamp: 7, ssrc: 1),
                commands: [RTPMIDITimedCommand(delta: 2, .sysEx(segment))])
        }
        _ = receiver.receive(packet(1, RTPMIDISysExSegment(head: 0xF0, data: [1, 2], tail: 0xF0)))
        _ = receiver.receive(packet(2, RTPMIDISysExSegment(head: 0xF7, data: [3], tail: 0xF0)))
        let end = receiver.receive(packet(3, RTPMIDISysExSegment(head: 0xF7, data: [4], tail: 0xF7)))
        #expect(end.events == [RTPMIDIEvent(timestamp: 9, message: .systemExclusive([1, 2, 3, 4]))])
        _ = receiver.receive(packet(4, RTPMIDISysExSegment(head: 0xF0, data: [1, 2], tail: 0xF0)))
        let cut = receiver.receive(packet(6, RTPMIDISysExSegment(head: 0xF7, data: [4], tail: 0xF7)))
        #expect(cut.events.isEmpty && receiver.sysEx.dropped == 2)
    }

    /// Receiver feedback trims the journal to what came after the acknowledged packet.
    @Test func feedbackTrimsTheSendersJournal() {
        var sender = RecoveryJournalSender(firstSequence: 65_534)
        sender.record(c4, sequence: 65_534, timestamp: 0)
        sender.record(.controlChange(channel: 9, controller: 7, value: 1), sequence: 65_535, timestamp: 0)
        sender.record(.noteOff(channel: 0, note: 60), sequence: 65_536, timestamp: 0)
        let full = sender.journal(forSequence: 65_537, timestamp: 0)
        #expect(full.checkpointSequenceNumber == 65_534 && full.channels.map(\.channel) == [0, 9])
        // The packet just before (65,536) carried the note-off: S = 0 on its OFFBITS and everything above.
        #expect(!full.singlePacketLoss && full.channels[0].notes?.offBitsSinglePacketLoss == false)
        #expect(full.channels[1].singlePacketLoss)
        sender.acknowledge(65_535)
        let trimmed = sender.journal(forSequence: 65_537, timestamp: 0)
        #expect(trimmed.checkpointSequenceNumber == 0 && trimmed.channels.map(\.channel) == [0])
        #expect(trimmed.channels[0].notes == ChapterN(offNotes: [60], offBitsSinglePacketLoss: false))
        sender.acknowledge(0)
        #expect(sender.journal(forSequence: 65_537, timestamp: 0).channels.isEmpty)
    }
}
