import AulosMIDI

/// What one UMP message becomes for Aulos: a channel message, a system message (SysEx whole), or a UMP stream
/// message for the session to answer (`UMPStreamResponder`). Threads: a value.
public enum UMPEvent: Equatable, Sendable {
    case channel(ChannelMessage)
    case system(MIDIMessage)
    case stream([UInt32])
}

/// Turns one session's Universal MIDI Packets into Aulos's channel messages: MIDI 1.0 channel voice in UMP (type
/// 0x2) as the MIDI 1.0 it is; MIDI 2.0 channel voice (type 0x4) at full resolution beside its MIDI 1.0 form
/// (`MIDIResolution`); system common and real-time (0x1); SysEx7 (0x3) reassembled; stream messages (0xF) handed on
/// to be answered; utility (0x0: NOOP, JR clock and timestamps), SysEx8 and mixed data (0x5), flex data (0xD) and
/// reserved types counted in `ignored`. All 16 groups play the same 16 channels (Aulos has one set of channels).
///
/// MIDI 2.0 (M2-104-UM §7.4 for the message layouts, the translation appendix for the MIDI 1.0 form, as
/// remembered; no copy of the specification is on this machine). Each message keeps its whole value in `wide`
/// (the instruments that can play it do: the synth), and its MIDI 1.0 bytes are the value scaled down
/// (`UMPScaling`), which is what FluidSynth, LV2 and SFZ play:
/// - note on/off: the note, velocity's top 7 bits (a note-on's never 0), `wide` the 16-bit velocity; the
///   attribute is dropped.
/// - poly and channel pressure, control change: the top 7 bits of the 32-bit value, `wide` the value.
/// - pitch bend: the top 14 bits, `wide` the 32-bit value.
/// - program change: with the bank-valid flag (option bit 0), CC 0 (bank MSB) and CC 32 (bank LSB) first; MIDI
///   1.0, which holds all of it.
/// - registered / assignable controller (RPN / NRPN): CC 101/100 (99/98) with bank and index, then data entry CC 6
///   and CC 38 with the value's top 14 bits (MIDI 1.0: what Aulos's parameters need, such as the bend range's
///   semitones and cents). Relative ones have no MIDI 1.0 form and are ignored.
/// - per-note pitch bend and registered per-note controllers: a per-note message of their own (status 0x6n and
///   0x0n below MIDI 1.0's, `ChannelMessage.perNotePitchBend` and `perNoteController`), which the router sends
///   where the note went and the synth plays on that note alone. For the instruments with no per-note
///   expression, when the note is the only one this session holds on its channel, a stand-in follows
///   (`MIDIResolution.standIn`): the channel's pitch bend (top 14 bits), or for registered per-note controller N
///   of 1, 2, 7, 8, 10, 11, 70–79 CC N (top 7 bits) — MPE's member-channel way. With other notes on the channel
///   those instruments get nothing, rather than bend notes it was not meant for. Per-note controllers above 127,
///   assignable per-note controllers and per-note management are ignored.
///
/// Bounded: a SysEx over `NetworkMIDILimits.maximumSysExBytes` is dropped whole; the note table is 16 × 128 bits.
///
/// Threads: the network thread that owns the session.
public struct UMPDecoder: Sendable {
    /// Messages read that became nothing (see above), for the session's counters.
    public private(set) var ignored = 0
    /// The notes this session holds, a 128-bit set per channel: whether a per-note message can have a stand-in.
    private var held = [UInt64](repeating: 0, count: 32)
    private var sysEx: [UInt8] = []
    private var sysExOpen = false
    private var sysExTooLong = false

    public init() {}

    /// The registered per-note controllers that have a MIDI 1.0 controller of the same number.
    static let perNoteControllers: Set<UInt8> = [1, 2, 7, 8, 10, 11, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79]

    /// Decodes one whole message (as `UMPMessage.split` cuts them), appending what it becomes.
    public mutating func decode(_ message: ArraySlice<UInt32>, into events: inout [UMPEvent]) {
        guard let first = message.first, message.count == UMPMessage.wordCount(first) else {
            ignored += 1
            return
        }
        let words = Array(message)
        switch UMPMessage.type(first) {
        case UMPMessage.MessageType.system: system(first, into: &events)
        case UMPMessage.MessageType.midi1ChannelVoice:
            let status = UInt8(first >> 16 & 0xFF)
            guard (0x80...0xEF).contains(status) else {
                ignored += 1
                return
            }
            emit(ChannelMessage(status: status, data1: UInt8(first >> 8 & 0x7F), data2: UInt8(first & 0x7F)), &events)
        case UMPMessage.MessageType.data64: sysEx7(words, into: &events)
        case UMPMessage.MessageType.midi2ChannelVoice: midi2(words, into: &events)
        case UMPMessage.MessageType.stream: events.append(.stream(words))
        default: ignored += 1
        }
    }

    /// Forgets the notes held (the session's notes were ended for it) and any SysEx under way.
    public mutating func reset() {
        held = [UInt64](repeating: 0, count: 32)
        sysEx.removeAll(keepingCapacity: false)
        sysExOpen = false
    }

    // MARK: - Message types

    private mutating func system(_ word: UInt32, into events: inout [UMPEvent]) {
        let data1 = UInt8(word >> 8 & 0x7F)
        let data2 = UInt8(word & 0x7F)
        let message: MIDIMessage? =
            switch UInt8(word >> 16 & 0xFF) {
            case 0xF1: .timeCodeQuarterFrame(data1)
            case 0xF2: .songPosition(UInt16(data2) << 7 | UInt16(data1))
            case 0xF3: .songSelect(data1)
            case 0xF6: .tuneRequest
            case 0xF8: .timingClock
            case 0xFA: .start
            case 0xFB: .continue
            case 0xFC: .stop
            case 0xFE: .activeSensing
            case 0xFF: .systemReset
            default: nil
            }
        if let message { events.append(.system(message)) } else { ignored += 1 }
    }

    /// SysEx7 (M2-104-UM §7.7): word 0 holds the status (0 whole, 1 start, 2 continue, 3 end) and the byte count
    /// (0–6) in its second byte, then 2 data bytes; word 1 holds 4 more.
    private mutating func sysEx7(_ words: [UInt32], into events: inout [UMPEvent]) {
        let status = UInt8(words[0] >> 20 & 0xF)
        let count = Int(words[0] >> 16 & 0xF)
        let all: [UInt8] = [
            UInt8(words[0] >> 8 & 0xFF), UInt8(words[0] & 0xFF), UInt8(words[1] >> 24), UInt8(words[1] >> 16 & 0xFF),
            UInt8(words[1] >> 8 & 0xFF), UInt8(words[1] & 0xFF),
        ]
        guard count <= 6, status <= 3 else {
            sysExOpen = false
            ignored += 1
            return
        }
        let bytes = all.prefix(count)
        if status == 0 || status == 1 {
            sysEx.removeAll(keepingCapacity: true)
            sysExOpen = true
            sysExTooLong = false
        }
        // A continuation or end with no start is a SysEx whose beginning was lost: dropped.
        guard sysExOpen else {
            ignored += 1
            return
        }
        if bytes.contains(where: { $0 > 0x7F }) || sysEx.count + count > NetworkMIDILimits.maximumSysExBytes - 2 {
            sysExTooLong = true
        } else if !sysExTooLong {
            sysEx.append(contentsOf: bytes)
        }
        guard status == 0 || status == 3 else { return }
        sysExOpen = false
        if sysExTooLong {
            ignored += 1
        } else {
            events.append(.system(.systemExclusive(sysEx)))
        }
        sysEx.removeAll(keepingCapacity: false)
    }

    /// MIDI 2.0 channel voice (M2-104-UM §7.4): word 0 is type, group, status and channel, then two bytes whose
    /// meaning depends on the status (note and attribute type; controller index; bank and index); word 1 the data.
    private mutating func midi2(_ words: [UInt32], into events: inout [UMPEvent]) {
        let status = UInt8(words[0] >> 20 & 0xF)
        let channel = UInt8(words[0] >> 16 & 0xF)
        let byte3 = UInt8(words[0] >> 8 & 0xFF)
        let byte4 = UInt8(words[0] & 0xFF)
        let note = byte3 & 0x7F
        let data = words[1]
        switch status {
        case 0x8:
            let velocity = UInt16(data >> 16)
            emit(
                ChannelMessage(
                    midi2: 0x80 | channel, data1: note, data2: UMPScaling.sevenBits(velocity), wide: UInt32(velocity)),
                &events)
        case 0x9:
            let velocity = UInt16(data >> 16)
            emit(
                ChannelMessage(
                    midi2: 0x90 | channel, data1: note, data2: UMPScaling.noteOnVelocity(velocity),
                    wide: UInt32(velocity)),
                &events)
        case 0xA:
            emit(
                ChannelMessage(midi2: 0xA0 | channel, data1: note, data2: UMPScaling.sevenBits(data), wide: data),
                &events)
        case 0xB:
            emit(
                ChannelMessage(midi2: 0xB0 | channel, data1: byte3, data2: UMPScaling.sevenBits(data), wide: data),
                &events)
        case 0xC:
            if byte4 & 0x01 != 0 {
                emit(.controlChange(channel: channel, controller: 0, value: UInt8(data >> 8 & 0x7F)), &events)
                emit(.controlChange(channel: channel, controller: 32, value: UInt8(data & 0x7F)), &events)
            }
            emit(ChannelMessage(status: 0xC0 | channel, data1: UInt8(data >> 24 & 0x7F)), &events)
        case 0xD:
            emit(ChannelMessage(midi2: 0xD0 | channel, data1: UMPScaling.sevenBits(data), wide: data), &events)
        case 0xE:
            emit(pitchBend(channel, data), &events)
        case 0x2, 0x3:
            // Registered (RPN) or assignable (NRPN) controller: byte 3 the bank, byte 4 the index.
            let (msb, lsb): (UInt8, UInt8) = status == 0x2 ? (101, 100) : (99, 98)
            let value = UMPScaling.fourteenBits(data)
            emit(.controlChange(channel: channel, controller: msb, value: byte3 & 0x7F), &events)
            emit(.controlChange(channel: channel, controller: lsb, value: byte4 & 0x7F), &events)
            emit(.controlChange(channel: channel, controller: 6, value: UInt8(value >> 7)), &events)
            emit(.controlChange(channel: channel, controller: 38, value: UInt8(value & 0x7F)), &events)
        case 0x6:
            emit(.perNotePitchBend(channel: channel, note: note, value: data), &events)
            if isAlone(note, on: channel) { emit(pitchBend(channel, data).standingIn(), &events) }
        case 0x0 where byte4 < 0x80:
            emit(.perNoteController(channel: channel, note: note, controller: byte4, value: data), &events)
            if Self.perNoteControllers.contains(byte4) && isAlone(note, on: channel) {
                let value = UMPScaling.sevenBits(data)
                emit(
                    ChannelMessage(midi2: 0xB0 | channel, data1: byte4, data2: value, wide: data).standingIn(), &events)
            }
        default:
            // Relative controllers (0x4, 0x5), registered per-note controllers above 127, assignable per-note
            // controllers (0x1), per-note management (0xF), reserved statuses.
            ignored += 1
        }
    }

    /// A MIDI 2.0 pitch bend: the top 14 bits as MIDI 1.0's LSB and MSB, the 32 bits beside them.
    private func pitchBend(_ channel: UInt8, _ value: UInt32) -> ChannelMessage {
        let bend = UMPScaling.fourteenBits(value)
        return ChannelMessage(midi2: 0xE0 | channel, data1: UInt8(bend & 0x7F), data2: UInt8(bend >> 7), wide: value)
    }

    /// Whether `note` is the one note this session holds on `channel`.
    private func isAlone(_ note: UInt8, on channel: UInt8) -> Bool {
        let index = Int(channel) * 2
        let bit = Int(note & 63)
        let (mine, other) = note < 64 ? (held[index], held[index + 1]) : (held[index + 1], held[index])
        return other == 0 && mine == UInt64(1) << UInt64(bit)
    }

    private mutating func emit(_ message: ChannelMessage, _ events: inout [UMPEvent]) {
        let index = Int(message.channel) * 2 + Int(message.data1 >> 6)
        let bit = UInt64(1) << UInt64(message.data1 & 63)
        if message.isNoteOn { held[index] |= bit } else if message.isNoteOff { held[index] &= ~bit }
        events.append(.channel(message))
    }
}
