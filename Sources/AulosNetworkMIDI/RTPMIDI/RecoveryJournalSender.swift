import AulosMIDI

/// The sending side's journal (RFC 6295 §4, App. A; brief §2.8): it remembers, per channel, what the messages
/// sent since the checkpoint changed — program and bank (chapter P), controllers (C: the toggle tool for the
/// switch pedals 64–69, the count tool for 120–127, the value tool for the rest), pitch wheel (W), notes (N) —
/// and builds the journal each outgoing packet carries. Receiver feedback (RS) moves the checkpoint forward and
/// drops what the receiver confirmed, so the journal stays short (the closed-loop policy, App. C.2.2.2).
///
/// Threads: a value (kept per session by the thread that sends).
public struct RecoveryJournalSender: Sendable {
    /// A note-on older than this (in RTP ticks, 10 kHz: 100 ms) is logged with Y = 0, "stale, do not play".
    public var staleAfterTicks: UInt32

    /// The first packet the journal covers, as an extended sequence number.
    public private(set) var checkpoint: UInt64
    private var channels = [SentChannel](repeating: SentChannel(), count: 16)

    public init(firstSequence: UInt64, staleAfterTicks: UInt32 = 1_000) {
        checkpoint = firstSequence
        self.staleAfterTicks = staleAfterTicks
    }

    /// Records a channel message sent in the packet `sequence` (extended: it never wraps), at `timestamp`.
    public mutating func record(_ message: ChannelMessage, sequence: UInt64, timestamp: UInt32) {
        channels[Int(message.channel)].record(message, sequence: sequence, timestamp: timestamp)
    }

    /// Receiver feedback: the receiver has every packet up to `sequenceNumber`. The checkpoint moves to the
    /// packet after it and what came before is forgotten. The 16-bit number is taken as the nearest packet after
    /// the last one confirmed (a peer more than 32,767 packets behind would be misread: RS comes every second).
    public mutating func acknowledge(_ sequenceNumber: UInt16) {
        let confirmed = checkpoint &- 1
        let step = Int64(Int16(bitPattern: sequenceNumber &- UInt16(truncatingIfNeeded: confirmed)))
        guard step > 0 else { return }
        checkpoint = confirmed &+ UInt64(step) &+ 1
        for index in channels.indices { channels[index].forget(before: checkpoint) }
    }

    /// The journal for the packet `sequence` sent at `timestamp`: every channel with something in the history,
    /// S = 0 on what the packet just before it carried (App. A.1).
    public func journal(forSequence sequence: UInt64, timestamp: UInt32) -> RecoveryJournal {
        var journals: [ChannelJournal] = []
        for (index, channel) in channels.enumerated() {
            if let journal = channel.journal(
                channel: UInt8(index), previous: sequence &- 1, timestamp: timestamp, staleAfter: staleAfterTicks)
            {
                journals.append(journal)
            }
        }
        return RecoveryJournal(
            checkpointSequenceNumber: UInt16(truncatingIfNeeded: checkpoint), channels: journals,
            singlePacketLoss: journals.allSatisfy(\.singlePacketLoss))
    }
}

/// What one channel's sent messages left in the checkpoint history.
///
/// Threads: a value.
private struct SentChannel: Sendable {
    /// A value with the packet that last set it, so feedback can forget it. Threads: a value.
    struct Stamped<Value: Sendable>: Sendable {
        var value: Value
        var sequence: UInt64
    }

    var program: Stamped<ChapterP>?
    /// Bank select since the last program change (CC 0, CC 32) and whether CC 121 came after it.
    var bankMSB: UInt8?
    var bankLSB: UInt8 = 0
    var resetAfterBank = false
    /// Controller logs in the order last changed (oldest first, as chapter C wants them).
    var controllers: [Stamped<ChapterC.Log>] = []
    var controllerValues = [UInt8](repeating: 0, count: 128)
    var toggleCounts = [UInt8](repeating: 0, count: 128)
    var commandCounts = [UInt8](repeating: 0, count: 128)
    var pitchWheel: Stamped<UInt16>?
    /// Notes whose last command was a note-on: velocity and time.
    var notesOn: [UInt8: (velocity: UInt8, sequence: UInt64, timestamp: UInt32)] = [:]
    /// Notes whose last command was a note-off, and its packet.
    var notesOff: [UInt8: UInt64] = [:]

    mutating func record(_ message: ChannelMessage, sequence: UInt64, timestamp: UInt32) {
        switch message.command {
        case 0x90 where message.data2 > 0:
            notesOn[message.data1] = (message.data2, sequence, timestamp)
            notesOff[message.data1] = nil
        case 0x80, 0x90:
            notesOn[message.data1] = nil
            notesOff[message.data1] = sequence
        case 0xB0:
            recordController(message.data1, message.data2, sequence: sequence)
        case 0xC0:
            program = Stamped(
                value: ChapterP(
                    program: message.data1, bankMSB: bankMSB, bankLSB: bankLSB, resetBetween: resetAfterBank),
                sequence: sequence)
            bankMSB = nil
            bankLSB = 0
            resetAfterBank = false
        case 0xE0:
            pitchWheel = Stamped(value: UInt16(message.data2) << 7 | UInt16(message.data1), sequence: sequence)
        default: break
        }
    }

    private mutating func recordController(_ number: UInt8, _ value: UInt8, sequence: UInt64) {
        let index = Int(number)
        if (controllerValues[index] >= 64) != (value >= 64) { toggleCounts[index] = (toggleCounts[index] + 1) & 0x3F }
        commandCounts[index] = (commandCounts[index] + 1) & 0x3F
        controllerValues[index] = value
        let tool: ChapterC.Tool =
            switch number {
            case 64...69: .toggle(toggleCounts[index])
            case 120...127: .count(commandCounts[index])
            default: .value(value)
            }
        controllers.removeAll { $0.value.controller == number }
        controllers.append(Stamped(value: ChapterC.Log(controller: number, tool: tool), sequence: sequence))
        switch number {
        case 0: bankMSB = value
        case 32: bankLSB = value
        case 121:
            if bankMSB != nil { resetAfterBank = true }
            pitchWheel = nil  // reset to centre: chapter W codes only commands after a reset (A.5)
        case 120, 123...127:
            // Notes before these are not N-active: the count log of the controller repairs them instead.
            notesOn.removeAll()
            notesOff.removeAll()
        default: break
        }
    }

    mutating func forget(before checkpoint: UInt64) {
        if let stamped = program, stamped.sequence < checkpoint { program = nil }
        controllers.removeAll { $0.sequence < checkpoint }
        if let stamped = pitchWheel, stamped.sequence < checkpoint { pitchWheel = nil }
        notesOn = notesOn.filter { $0.value.sequence >= checkpoint }
        notesOff = notesOff.filter { $0.value >= checkpoint }
    }

    func journal(channel: UInt8, previous: UInt64, timestamp: UInt32, staleAfter: UInt32) -> ChannelJournal? {
        var journal = ChannelJournal(channel: channel)
        if let stamped = program {
            var chapter = stamped.value
            chapter.singlePacketLoss = stamped.sequence != previous
            journal.program = chapter
        }
        if !controllers.isEmpty {
            let logs = controllers.map { stamped in
                var log = stamped.value
                log.singlePacketLoss = stamped.sequence != previous
                return log
            }
            journal.controllers = ChapterC(logs: logs, singlePacketLoss: logs.allSatisfy(\.singlePacketLoss))
        }
        if let stamped = pitchWheel {
            journal.pitchWheel = ChapterW(value: stamped.value, singlePacketLoss: stamped.sequence != previous)
        }
        if !notesOn.isEmpty || !notesOff.isEmpty {
            // Oldest first (App. A.1).
            let logs = notesOn.sorted { ($0.value.sequence, $0.key) < ($1.value.sequence, $1.key) }.map { note, on in
                ChapterN.Log(
                    note: note, velocity: on.velocity, play: timestamp &- on.timestamp <= staleAfter,
                    singlePacketLoss: on.sequence != previous)
            }
            journal.notes = ChapterN(
                logs: logs, offNotes: Array(notesOff.keys), offBitsSinglePacketLoss: !notesOff.values.contains(previous)
            )
        }
        let parts: [Bool?] = [
            journal.program?.singlePacketLoss, journal.controllers?.singlePacketLoss,
            journal.pitchWheel?.singlePacketLoss,
            journal.notes.map { $0.offBitsSinglePacketLoss && $0.logs.allSatisfy(\.singlePacketLoss) },
        ]
        guard parts.contains(where: { $0 != nil }) else { return nil }
        journal.singlePacketLoss = parts.allSatisfy { $0 ?? true }
        return journal
    }
}
