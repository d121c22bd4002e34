import AulosMIDI

/// What a MIDI 2.0 per-note message does to one synth note: its own pitch bend, and its own value of the controllers
/// that have a per-note form, in place of its channel's. MPE gives a note the same through a member channel of its
/// own; per-note messages give it to a note among others on one channel.
///
/// - Per-note pitch bend (M2-104-UM §7.4.9, as remembered: 32 bits, centre 0x8000_0000): bends the note over its
///   channel's pitch-bend range (RPN 0; ±2 semitones by default, ±48 on an MPE member channel), added to the
///   channel's bend. The specification sets per-note bend's range from the channel's Pitch Bend Sensitivity, as
///   remembered, which is also how MPE ranges a member channel's bend.
/// - Registered per-note controllers (§7.4.4): #1 modulation (the vibrato depth and the mod wheel source), #7 volume,
///   #10 pan, #11 expression and #74 brightness (the slide source) each become the note's own, on the same scale and
///   law as the channel's controller, for as long as the note sounds. The others are ignored.
///
/// A new note starts from its channel's values (nothing per-note), whatever was sent for its key before.
///
/// Threads: render thread (part of a `SynthVoice`).
struct NoteExpression: BitwiseCopyable {
    /// Whether a per-note message has set anything: a note without one plays its channel's values alone, and the
    /// control tick (every 16 frames of every voice) skips reading the note's own (3.5 % of the synth's work).
    var isSet = false
    /// Pitch bend in MIDI 1.0's steps from the centre (−8192…8192) of the channel's bend range.
    var bend = 0.0
    /// The note's own controllers on the 0…127 scale; NaN: the channel's.
    var modulation = Double.nan
    var volume = Double.nan
    var pan = Double.nan
    var expression = Double.nan
    var slide = Double.nan

    @_noAllocation @_noLocks
    init() {}

    /// The note's own value where it has one (`own`), else its channel's.
    @inline(__always) @_noAllocation @_noLocks
    func own(_ own: Double, _ channel: Double) -> Double { own.isNaN ? channel : own }

    /// Per-note pitch bend to `steps` (MIDI 1.0's steps from the centre).
    @_noAllocation @_noLocks
    mutating func set(bend steps: Double) {
        bend = steps
        isSet = true
    }

    /// Per-note controller `controller` to `value` (0…127 scale); false for one the synth does not play.
    @_noAllocation @_noLocks
    mutating func set(controller: UInt8, to value: Double) -> Bool {
        // (Literals, named in comments: a `default` beside `SynthController`'s optional patterns is matched through
        // a call the real-time checker cannot see.)
        switch controller {
        case 1: modulation = value  // modulation
        case 7: volume = value  // volume
        case 10: pan = value  // pan
        case 11: expression = value  // expression
        case 74: slide = value  // brightness: MPE's slide
        default: return false
        }
        isSet = true
        return true
    }
}

/// Per-note messages reaching the notes they name.
///
/// Threads: render thread.
extension OscillatorSynthKernel {
    /// A per-note pitch bend or registered per-note controller for the voices sounding its key on its channel
    /// (held or released; none sounding: nothing to do).
    @_noAllocation @_noLocks
    func perNote(_ event: MIDIEvent) {
        let channel = Int(event.status & 0x0F)
        let bends = event.status & 0xF0 == ChannelMessage.perNotePitchBendCommand
        let value = bends ? event.fineBend : event.fineValue
        for index in 0..<polyphony
        where voices[index].active && voices[index].note == event.data1 && Int(voices[index].channel) == channel {
            if bends {
                voices[index].expression.set(bend: value)
            } else if !voices[index].expression.set(controller: event.data2, to: value) {
                return
            }
        }
    }
}
