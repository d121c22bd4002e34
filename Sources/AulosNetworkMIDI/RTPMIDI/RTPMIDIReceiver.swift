import AulosMIDI

/// What the receiver of one RTP-MIDI stream holds per channel (RFC 4696 §7, Figure 10): which notes sound and
/// since which packet, controller values with their toggle and command counts, program and bank, pitch wheel.
/// It is what the repairs are computed against.
///
/// Threads: a value.
public struct RTPMIDIChannelState: Equatable, Sendable {
    /// Per note, the velocity of the note-on sounding; 0 when the note is off.
    public internal(set) var noteVelocity = [UInt8](repeating: 0, count: 128)
    /// Per note, the extended sequence number of the packet whose note-on is sounding.
    var noteSequence = [UInt64](repeating: 0, count: 128)
    /// Per controller, the last value, or nil before any.
    public internal(set) var controllers = [UInt8?](repeating: nil, count: 128)
    /// Per controller, off↔on toggles since the session started, mod 64 (chapter C's toggle tool).
    var toggleCounts = [UInt8](repeating: 0, count: 128)
    /// Per controller, control changes since the session started, mod 64 (chapter C's count tool).
    var commandCounts = [UInt8](repeating: 0, count: 128)
    public internal(set) var program: UInt8?
    public internal(set) var bankMSB: UInt8?
    public internal(set) var bankLSB: UInt8?
    public internal(set) var pitchWheel: UInt16 = 8192

    /// The notes sounding, ascending.
    public var soundingNotes: [UInt8] { (0..<128).filter { noteVelocity[$0] != 0 }.map(UInt8.init) }

    /// Follows one channel message the synth is given.
    mutating func apply(_ message: ChannelMessage, sequence: UInt64) {
        switch message.command {
        case 0x90 where message.data2 > 0:
            noteVelocity[Int(message.data1)] = message.data2
            noteSequence[Int(message.data1)] = sequence
        case 0x80, 0x90:
            noteVelocity[Int(message.data1)] = 0
        case 0xB0:
            setController(message.data1, message.data2)
            switch message.data1 {
            case 120, 123...127:
                // All Sound Off, All Notes Off and the mode messages end every note (they are not N-active after).
                noteVelocity = [UInt8](repeating: 0, count: 128)
            case 121:
                // Reset All Controllers, as RP-15 lists them: the wheel centred, modulation and pedals off,
                // expression full.
                pitchWheel = 8192
                for (controller, value) in [(1, 0), (11, 127), (64, 0), (65, 0), (66, 0), (67, 0)]
                where
                    controllers[controller] != nil
                {
                    setController(UInt8(controller), UInt8(value), counted: false)
                }
            default: break
            }
        case 0xC0:
            program = message.data1
            bankMSB = controllers[0]
            bankLSB = controllers[32]
        case 0xE0:
            pitchWheel = UInt16(message.data2) << 7 | UInt16(message.data1)
        default: break
        }
    }

    private mutating func setController(_ number: UInt8, _ value: UInt8, counted: Bool = true) {
        let index = Int(number)
        if (controllers[index] ?? 0 >= 64) != (value >= 64) { toggleCounts[index] = (toggleCounts[index] + 1) & 0x3F }
        if counted { commandCounts[index] = (commandCounts[index] + 1) & 0x3F }
        controllers[index] = value
    }
}

/// A MIDI message of a received packet at its time: the packet's RTP timestamp plus the deltas before it.
///
/// Threads: a value.
public struct RTPMIDIEvent: Equatable, Sendable {
    /// In the sender's RTP clock (10 kHz in AppleMIDI sessions), mod 2³².
    public var timestamp: UInt32
    public var message: MIDIMessage

    public init(timestamp: UInt32, message: MIDIMessage) {
        self.timestamp = timestamp
        self.message = message
    }
}

/// What one packet gave the receiver.
///
/// Threads: a value.
public struct RTPMIDIReception: Equatable, Sendable {
    /// How the packet's sequence number follows the ones before. Threads: a value.
    public enum Continuity: Equatable, Sendable {
        /// The stream's first packet (RFC 6295 §4: handled as if it ended a loss).
        case first
        case inOrder
        /// `packets` packets were lost just before this one.
        case loss(packets: Int)
        /// Older than (or the same as) one already received: ignored, "a safe option" (§4).
        case outOfOrder
    }

    /// How a loss was repaired. Threads: a value.
    public enum Repair: Equatable, Sendable {
        /// Nothing to repair (no loss), or the packet was ignored.
        case none
        /// From the packet's recovery journal.
        case journal
        /// The journal was absent, malformed, enhanced or did not cover the loss: every note the stream held was
        /// ended and its sustain released, the safe fallback (brief §2.10).
        case releasedAll
    }

    public var continuity: Continuity
    public var repair: Repair
    /// Messages that repair a loss, to be played before `events`, at the packet's timestamp.
    public var repairs: [ChannelMessage]
    /// The packet's own commands in order (SysEx whole once reassembled; segments never appear here).
    public var events: [RTPMIDIEvent]
}

/// The receiving side of one RTP-MIDI stream as a pure value: it orders packets by sequence number, keeps the
/// state the stream built, and on a loss turns the next packet's recovery journal into the MIDI 1.0 messages
/// that put things right — note-offs for notes the journal says ended, note-ons it recommends, controller,
/// sustain, program and pitch-wheel updates (RFC 4696 §7, RFC 6295 §4 and App. A). Every repair compares with
/// the state first, so applying a journal whose elements were already received changes nothing: that is why the
/// S bits (which only allow skipping work after a single loss) are not needed for correctness and are ignored.
///
/// Threads: a value (the network thread keeps one per session).
public struct RTPMIDIReceiver: Sendable {
    public private(set) var channels = [RTPMIDIChannelState](repeating: RTPMIDIChannelState(), count: 16)
    /// The extended (cycle-counting) sequence number of the newest packet received; nil before the first.
    public private(set) var highestSequence: UInt64?
    /// Packets lost since the stream began (gaps in the sequence numbers).
    public private(set) var lostPackets = 0
    /// Packets ignored as older than one already received.
    public private(set) var outOfOrderPackets = 0
    public private(set) var sysEx: RTPMIDISysExAssembler

    public init(maximumSysExBytes: Int = NetworkMIDILimits.maximumSysExBytes) {
        sysEx = RTPMIDISysExAssembler(maximumBytes: maximumSysExBytes)
    }

    /// The highest sequence number received in order, as receiver feedback (RS) reports it.
    public var feedbackSequenceNumber: UInt16? { highestSequence.map { UInt16(truncatingIfNeeded: $0) } }

    /// Takes one packet: the repairs its journal calls for (after a loss), then its own commands.
    public mutating func receive(_ packet: RTPMIDIPacket) -> RTPMIDIReception {
        let sequence = packet.header.sequenceNumber
        let continuity: RTPMIDIReception.Continuity
        let extended: UInt64
        if let highest = highestSequence {
            let step = Int64(Int16(bitPattern: sequence &- UInt16(truncatingIfNeeded: highest)))
            guard step > 0 else {
                outOfOrderPackets += 1
                return RTPMIDIReception(continuity: .outOfOrder, repair: .none, repairs: [], events: [])
            }
            extended = highest &+ UInt64(step)
            continuity = step == 1 ? .inOrder : .loss(packets: Int(step - 1))
        } else {
            extended = UInt64(sequence)
            continuity = .first
        }
        var repair = RTPMIDIReception.Repair.none
        var repairs: [ChannelMessage] = []
        if continuity != .inOrder {
            if case .loss(let count) = continuity {
                lostPackets += count
                sysEx.reset()  // a segment may have been in the lost packets
            }
            let covered: Bool
            if let journal = packet.journal, let highest = highestSequence {
                // Covered when checkpoint ≤ highest received + 1, mod 2¹⁶ (§5).
                let next = UInt16(truncatingIfNeeded: highest) &+ 1
                covered = Int16(bitPattern: journal.checkpointSequenceNumber &- next) <= 0
            } else {
                covered = packet.journal != nil
            }
            if let journal = packet.journal, covered, !journal.enhancedChapterC {
                repair = .journal
                repairs = applyJournal(journal, sequence: extended)
            } else if continuity != .first {
                repair = .releasedAll
                repairs = releaseAll(sequence: extended)
            }
        }
        highestSequence = extended
        var events: [RTPMIDIEvent] = []
        for (timed, time) in zip(packet.section.commands, packet.section.commandTimes) {
            let timestamp = packet.header.timestamp &+ time
            switch timed.command {
            case .message(let message):
                if let channelMessage = ChannelMessage(message) {
                    channels[Int(channelMessage.channel)].apply(channelMessage, sequence: extended)
                }
                events.append(RTPMIDIEvent(timestamp: timestamp, message: message))
            case .sysEx(let segment):
                if let whole = sysEx.add(segment) { events.append(RTPMIDIEvent(timestamp: timestamp, message: whole)) }
            case .undefined:
                break
            }
        }
        return RTPMIDIReception(continuity: continuity, repair: repair, repairs: repairs, events: events)
    }

    /// Ends every note the stream holds and releases its sustain pedals: for a loss the journal cannot repair,
    /// and for a session that ends or goes silent (RFC 6295 §4: no indefinite artifacts).
    public mutating func releaseAll() -> [ChannelMessage] {
        releaseAll(sequence: highestSequence ?? 0)
    }

    private mutating func releaseAll(sequence: UInt64) -> [ChannelMessage] {
        var out: [ChannelMessage] = []
        for channel in 0..<16 {
            let number = UInt8(channel)
            for note in channels[channel].soundingNotes {
                out.append(.noteOff(channel: number, note: note))
            }
            for pedal: UInt8 in [64, 66] where channels[channel].controllers[Int(pedal)] ?? 0 >= 64 {
                out.append(.controlChange(channel: number, controller: pedal, value: 0))
            }
        }
        for message in out { channels[Int(message.channel)].apply(message, sequence: sequence) }
        return out
    }

    private mutating func applyJournal(_ journal: RecoveryJournal, sequence: UInt64) -> [ChannelMessage] {
        // The checkpoint as an extended sequence number, placed just before this packet.
        let checkpointStep = UInt64(UInt16(truncatingIfNeeded: sequence) &- journal.checkpointSequenceNumber)
        let checkpoint = sequence >= checkpointStep ? sequence - checkpointStep : 0
        var out: [ChannelMessage] = []
        for channelJournal in journal.channels {
            let channel = channelJournal.channel
            var state = channels[Int(channel)]
            func emit(_ message: ChannelMessage) {
                out.append(message)
                state.apply(message, sequence: sequence)
            }
            if let chapter = channelJournal.program {
                let bankDiffers =
                    chapter.hasBank && (state.bankMSB != chapter.bankMSB || state.bankLSB != chapter.bankLSB)
                if bankDiffers {
                    emit(.controlChange(channel: channel, controller: 0, value: chapter.bankMSB))
                    emit(.controlChange(channel: channel, controller: 32, value: chapter.bankLSB))
                }
                if bankDiffers || state.program != chapter.program {
                    emit(ChannelMessage(status: 0xC0 | channel, data1: chapter.program))
                }
            }
            if let chapter = channelJournal.controllers, !channelJournal.enhancedChapterC {
                for log in chapter.logs {
                    out.append(contentsOf: state.repair(log, channel: channel, sequence: sequence))
                }
            }
            if let chapter = channelJournal.pitchWheel, state.pitchWheel != chapter.value {
                emit(
                    ChannelMessage(
                        status: 0xE0 | channel, data1: UInt8(chapter.value & 0x7F), data2: UInt8(chapter.value >> 7)))
            }
            if let chapter = channelJournal.notes {
                // OFFBITS first (RFC 4696 §7.2): the note-off a lost packet carried is played now.
                for note in chapter.offNotes where state.noteVelocity[Int(note)] != 0 {
                    emit(.noteOff(channel: channel, note: note))
                }
                for log in chapter.logs where log.velocity != 0 {
                    let index = Int(log.note)
                    if state.noteVelocity[index] == 0 {
                        // A lost note-on: played only when the sender says it is not stale (Y = 1).
                        if log.play { emit(.noteOn(channel: channel, note: log.note, velocity: log.velocity)) }
                    } else if state.noteVelocity[index] != log.velocity || state.noteSequence[index] < checkpoint {
                        // The note sounding is not the one the journal logs: a note-off/note-on pair was lost.
                        emit(.noteOff(channel: channel, note: log.note))
                        if log.play { emit(.noteOn(channel: channel, note: log.note, velocity: log.velocity)) }
                    }
                }
            }
            channels[Int(channel)] = state
        }
        return out
    }
}

extension RTPMIDIChannelState {
    /// The messages that bring one controller to what a chapter C log says, applied to this state.
    mutating func repair(_ log: ChapterC.Log, channel: UInt8, sequence: UInt64) -> [ChannelMessage] {
        var out: [ChannelMessage] = []
        func emit(_ value: UInt8) {
            let message = ChannelMessage.controlChange(channel: channel, controller: log.controller, value: value)
            out.append(message)
            apply(message, sequence: sequence)
        }
        let index = Int(log.controller)
        switch log.tool {
        case .value(let value):
            if controllers[index] != value { emit(value) }
        case .toggle(let count):
            guard toggleCounts[index] != count else { break }
            // The count's parity is the pedal's state (the count starts at 0 with the pedal up).
            let targetOn = count & 1 == 1
            let isOn = controllers[index] ?? 0 >= 64
            switch (isOn, targetOn) {
            case (true, false): emit(0)
            case (false, true): emit(127)
            case (true, true):
                // An off and an on were both lost: lift and press again, so notes released meanwhile are damped
                // (RFC 4696 §7.3), rather than left ringing.
                emit(0)
                emit(127)
            case (false, false): break  // nothing audible was lost
            }
            toggleCounts[index] = count
        case .count(let count):
            guard commandCounts[index] != count else { break }
            // Controllers coded by count ignore their value (All Notes Off and the like): send it once, value 0.
            emit(0)
            commandCounts[index] = count
        }
        return out
    }
}
