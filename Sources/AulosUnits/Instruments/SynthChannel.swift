import AulosCore
import AulosDSP
import AulosMIDI

/// Controller state of one MIDI channel, and which patch it plays. Values are on MIDI 1.0's scales (0…127, bend
/// −8192…8192), as doubles: a MIDI 2.0 message's finer value lands between the steps (`MIDIEvent.fineValue`), and a
/// MIDI 1.0 value is the integer it always was, so MIDI 1.0 plays to the bit as before.
///
/// Threads: the render thread reads and writes it (a plain value in the kernel's memory); the control thread
/// makes it at initialize.
struct SynthChannel: BitwiseCopyable {
    var bend = 0.0  // −8192…8192
    var bendRange: Double = 2  // semitones (RPN 0)
    var modulation = 0.0
    var sustain = false
    var volume = 100.0
    var expression = 127.0
    var pan = 64.0
    var numbers = ParameterNumberTracker()
    /// Channel pressure (aftertouch).
    var pressure = 0.0
    /// Bank select MSB (CC 0), for the next program change.
    var bank: UInt8 = 0
    /// The preset this channel chose by program change and plays from its own patch; −1 while it plays the
    /// unit's parameters (every channel until its first program change, and always the base channel).
    var program: Int16 = -1
    /// This channel's LFO (its patch sets the rate), kept across slices, and its completed cycles (for
    /// sample and hold).
    var lfoPhase = 0.0
    var lfoValue = 0.0
    var lfoCycle: Int64 = 0
    /// The pitch of the last note started here (a glide's starting point), NaN before the first.
    var lastPitch = Double.nan

    /// Reset All Controllers (CC 121): the controllers return to their defaults; the patch, the bank, the
    /// bend range and the LFO stay (RP-015).
    @_noAllocation @_noLocks
    mutating func resetControllers() {
        var fresh = SynthChannel()
        fresh.bendRange = bendRange
        fresh.bank = bank
        fresh.program = program
        fresh.lfoPhase = lfoPhase
        fresh.lfoValue = lfoValue
        fresh.lfoCycle = lfoCycle
        fresh.lastPitch = lastPitch
        self = fresh
    }
}

/// The kinds of channel message (a status byte's high nibble), as an enum in this file so the render-side
/// checker sees them. Any thread.
enum ChannelMessageKind: UInt8 {
    case noteOff = 0x80
    case noteOn = 0x90
    case polyPressure = 0xA0
    case controlChange = 0xB0
    case programChange = 0xC0
    case channelPressure = 0xD0
    case pitchBend = 0xE0
}

/// The controllers a synth channel answers: `MIDIController`'s numbers, as an enum here because the render-side
/// checker cannot see another module's `static let` (a lazily initialized global to it). Any thread.
enum SynthController: UInt8 {
    case bankSelect = 0
    case modulationWheel = 1
    case volume = 7
    case pan = 10
    case expression = 11
    case sustain = 64
    /// Sound controller 5 (brightness), which MPE calls slide: a modulation source of its own.
    case slide = 74
    case allSoundOff = 120
    case resetAllControllers = 121
    case allNotesOff = 123
    case omniOff, omniOn, monoOn, polyOn

    /// Where `slide`'s value is among a channel's 128 controller values.
    static var slideIndex: Int { @inline(__always) @_noAllocation @_noLocks get { Int(Self.slide.rawValue) } }
}

/// A MIDI channel's messages: routing an event to notes, drums or the arpeggiator, controllers and RPNs,
/// MPE zones, program changes.
///
/// Threads: render thread.
extension OscillatorSynthKernel {
    @_noAllocation @_noLocks
    func handle(_ event: MIDIEvent) {
        // MIDI 2.0's per-note pitch bend and controllers play on their note; the MIDI 1.0 stand-in that follows
        // one (a channel bend or controller, for instruments without per-note expression) would play it twice.
        if event.isPerNote {
            perNote(event)
            return
        }
        if event.resolution.isStandIn { return }
        // A MIDI Tuning Standard key change: the key and semitone, then the fraction completes it.
        if event.status == MIDITuningMessage.keyStatus {
            pendingKeyTuning.pointee = UInt16(event.data1) << 8 | UInt16(event.data2)
            return
        }
        if event.status == MIDITuningMessage.fractionStatus {
            let pending = pendingKeyTuning.pointee
            if pending != 0xFFFF {
                let fraction = Double(UInt16(event.data1) << 7 | UInt16(event.data2)) / 16_384
                keyPitches[Int(pending >> 8) & 0x7F] = Double(pending & 0xFF) + fraction
                pendingKeyTuning.pointee = 0xFFFF
            }
            return
        }
        let channel = Int(event.status & 0x0F)
        let kind = ChannelMessageKind(rawValue: event.status & 0xF0)
        // Velocity, pressure or the controller's value, at MIDI 2.0's resolution when the event has it.
        let value = event.fineValue
        if drumChannels & (1 << UInt16(channel)) != 0 {
            switch kind {
            case .noteOn? where event.data2 > 0:
                drumNoteOn(event.data1, velocity: Float(value), channel: channel)
                return
            case .noteOff?, .noteOn?, .programChange?: return  // drums are one-shots; the kit is the only program
            default: break
            }
        }
        // The arpeggiator plays the unit's patch: it takes the keys of channels that play it.
        let arpeggiating =
            controls.pointee.arpMode.isOn && hostSlice.pointee.valid && channels[channel].program < 0
        switch kind {
        case .noteOn? where event.data2 > 0 && arpeggiating:
            arpeggiatorKeyDown(event.data1, velocity: Float(value), channel: channel)
        case .noteOff? where arpeggiating, .noteOn? where arpeggiating: arpeggiatorKeyUp(event.data1)
        case .noteOn? where event.data2 > 0: noteOn(event.data1, velocity: Float(value), channel: channel)
        case .noteOff?: noteOff(event.data1, velocity: Float(value), channel: channel)
        case .noteOn?: noteOff(event.data1, velocity: 64, channel: channel)  // velocity 0: a note-off
        case .controlChange?: controlChange(event.data1, event.data2, fine: value, channel: channel)
        case .programChange?: programChange(Int(event.data1), channel: owner(channel))
        case .pitchBend?:
            channels[channel].bend = event.fineBend
        case .polyPressure?:
            for index in 0..<polyphony
            where voices[index].active && voices[index].note == event.data1 && Int(voices[index].channel) == channel {
                voices[index].pressure = Float(value)
            }
        case .channelPressure?:
            channels[channel].pressure = value
        case nil: break
        }
    }

    /// Whether a channel message on `channel` reaches a voice on `voiceChannel`: its own channel's, or its
    /// MPE zone manager's (which speaks for the whole zone).
    @inline(__always) @_noAllocation @_noLocks
    func reaches(_ voiceChannel: UInt8, from channel: Int) -> Bool {
        Int(voiceChannel) == channel || Int(zoneOf[Int(voiceChannel)]) == channel
    }

    /// Controller `controller` to `value`; `fine` is the same on the 0…127 scale, finer when it came as MIDI 2.0,
    /// which the continuous controllers (modulation, volume, pan, expression, the modulation matrix's) take. The
    /// switches, bank select, RPNs and the effect sends take the 7 bits.
    @_noAllocation @_noLocks
    func controlChange(_ controller: UInt8, _ value: UInt8, fine: Double, channel: Int) {
        sends?.controlChange(controller, value, channel: channel)
        controllerValues[128 * channel + Int(controller & 0x7F)] = Float(fine)
        if let change = channels[channel].numbers.handle(controller: controller, value: value) {
            if change.isRegistered && change.parameter == 0 {
                // RPN 0, pitch-bend sensitivity: MSB semitones, LSB cents. On an MPE member channel it sets
                // every member of the zone, as the MPE specification has it.
                let range = Double(change.value >> 7) + Double(change.value & 0x7F) / 100
                if isMember(channel) {
                    let manager = Int(zoneOf[channel])
                    for member in 0..<16 where isMember(member) && Int(zoneOf[member]) == manager {
                        channels[member].bendRange = range
                    }
                } else {
                    channels[channel].bendRange = range
                }
            } else if change.isRegistered && change.parameter == 6 && (channel == 0 || channel == 15) {
                // RPN 6 on channel 1 or 16: the MPE Configuration Message, MSB the zone's member channels.
                configureZone(lower: channel == 0, members: Int(change.value >> 7))
            }
            return
        }
        switch SynthController(rawValue: controller) {
        case .modulationWheel?: channels[channel].modulation = fine
        case .volume?: channels[channel].volume = fine
        case .pan?: channels[channel].pan = fine
        case .expression?: channels[channel].expression = fine
        case .sustain?:
            let down = value >= 64
            channels[channel].sustain = down
            if !down {
                for index in 0..<(polyphony)
                where voices[index].active && voices[index].sustained && reaches(voices[index].channel, from: channel)
                    && !channels[Int(voices[index].channel)].sustain && !channels[owner(channel)].sustain
                {
                    releaseVoice(index)
                }
            }
        case .allSoundOff?:  // fade everything on the channel now
            for index in 0..<Self.drumVoiceCount
            where drumVoices[index].active && Int(drumVoices[index].channel) == channel {
                drumVoices[index].fadeStep = 1 / Self.fadeFrames
            }
            for index in 0..<(polyphony + Self.fadeSlots)
            where voices[index].active && reaches(voices[index].channel, from: channel) {
                if !voices[index].fading {
                    voices[index].fading = true
                    voices[index].fadeGain = 1
                    voices[index].fadeStep = 1 / Self.fadeFrames
                }
            }
            noteStackCount[channel] = 0
        case .resetAllControllers?:
            channels[channel].resetControllers()
            for index in 0..<polyphony
            where voices[index].active && voices[index].sustained && reaches(voices[index].channel, from: channel) {
                releaseVoice(index)
            }
        case .allNotesOff?, .omniOff?, .omniOn?, .monoOn?, .polyOn?:  // (the mode messages imply all notes off)
            for index in 0..<polyphony
            where voices[index].active && !voices[index].fading && reaches(voices[index].channel, from: channel) {
                releaseVoice(index)
            }
            noteStackCount[channel] = 0
        case .bankSelect?:
            channels[channel].bank = value
        case .slide?, nil:
            break
        }
    }

    /// Sets the lower (manager channel 1) or upper (manager channel 16) MPE zone to `members` member
    /// channels (0: off). The other zone shrinks if they would overlap; the zone's members bend ±48
    /// semitones and its manager ±2 from now on (the specification's defaults).
    @_noAllocation @_noLocks
    func configureZone(lower: Bool, members: Int) {
        let count = max(0, min(15, members))
        let (this, other) = lower ? (0, 1) : (1, 0)
        mpeMembers[this] = count
        if mpeMembers[other] > 14 - count { mpeMembers[other] = max(0, 14 - count) }
        for channel in 0..<16 { zoneOf[channel] = -1 }
        if mpeMembers[0] > 0 {
            for channel in 0...mpeMembers[0] { zoneOf[channel] = 0 }
        }
        if mpeMembers[1] > 0 {
            for channel in (15 - mpeMembers[1])...15 { zoneOf[channel] = 15 }
        }
        guard count > 0 else { return }
        let manager = lower ? 0 : 15
        for channel in 0..<16 where Int(zoneOf[channel]) == manager {
            channels[channel].bendRange = channel == manager ? 2 : 48
        }
    }

    /// Program change, here on the render thread: the preset at the channel's bank and `program` (bank 0's
    /// when that bank has none). On the base channel it loads the unit's parameters; on any other channel it
    /// becomes that channel's own patch. A program no preset answers leaves the channel as it was.
    @_noAllocation @_noLocks
    func programChange(_ program: Int, channel: Int) {
        var row = presetRows[Int(channels[channel].bank) * 128 + program]
        if row < 0 { row = presetRows[program] }
        guard row >= 0 else { return }
        let values = presetValues + Int(row) * Self.parameterCount
        if channel == baseChannel {
            for slot in 0..<Self.parameterCount { parameters.setFromRender(slot, values[slot]) }
            readControls()
            channels[channel].program = -1
        } else {
            readControls(from: values, into: channelControls + channel)
            channels[channel].program = Int16(program)
        }
    }
}
