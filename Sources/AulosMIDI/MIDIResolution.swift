/// How a MIDI 2.0 value travels with a channel message, and what it reads as on MIDI 1.0's scales.
///
/// A channel message (`ChannelMessage`, and `MIDIEvent` at the instrument) always has its MIDI 1.0 bytes, filled
/// with the value scaled down, so an instrument that knows only MIDI 1.0 (FluidSynth, LV2, SFZ) plays it as before.
/// Beside them it carries `wide`, the value at MIDI 2.0's resolution, and `resolution`, which says whether `wide`
/// means anything: an instrument that can use it (the synth) reads it through `fineValue` and `fineBend`.
///
/// `wide` by message (M2-104-UM §7.4, as remembered): a note's velocity, 16 bits (in the low half); poly and
/// channel pressure, a control change's value, 32 bits; pitch bend, 32 bits centred at 0x8000_0000. Per-note
/// messages (below) carry their 32-bit value the same way.
///
/// Threads: values and pure functions, usable anywhere (the render thread included).
public enum MIDIResolution: UInt8, BitwiseCopyable, Sendable {
    /// MIDI 1.0: the bytes are the whole message; `wide` is 0.
    case midi1 = 0
    /// MIDI 2.0: the bytes hold the value scaled down (what MIDI 1.0 instruments play), `wide` the whole value.
    case midi2 = 1
    /// A MIDI 1.0 message standing in for the per-note message just before it, for the instruments that have no
    /// per-note expression: a per-note pitch bend (or per-note controller) of a note alone on its channel, played as
    /// the channel's pitch bend (or controller). An instrument that takes per-note messages skips it, or the note
    /// would be bent twice.
    case standIn = 2

    /// Whether `wide` holds a MIDI 2.0 value. (Cases are told apart by `switch` here: the real-time checker takes
    /// the synthesized `==` for a call that may allocate.)
    @inlinable
    public var isMIDI2: Bool {
        @_noAllocation @_noLocks get {
            switch self {
            case .midi2: true
            case .midi1, .standIn: false
            }
        }
    }

    /// Whether this is a stand-in for a per-note message.
    @inlinable
    public var isStandIn: Bool {
        @_noAllocation @_noLocks get {
            switch self {
            case .standIn: true
            case .midi1, .midi2: false
            }
        }
    }
}

/// MIDI 2.0's values on MIDI 1.0's scales, with the finer steps kept as a fraction: what an instrument that can play
/// them computes with (so a MIDI 1.0 value and its MIDI 2.0 counterpart land on one scale).
///
/// The mapping is the inverse of the specification's "min-center-max" scaling up from MIDI 1.0 (M2-104-UM's
/// translation appendix, as remembered): 0 is 0, the centre (0x8000 or 0x8000_0000) is 64 and the maximum is 127,
/// linear on each side of the centre. So the centre, where pan and bend rest, is exact, and a MIDI 1.0 value v up to
/// 64 sent as MIDI 2.0 (v << 9, v << 25) reads back as v exactly; above 64 it reads back within 0.016 of a step
/// (v << 9 is 63/64 of the way from the centre to where min-center-max puts v).
///
/// Threads: pure functions.
public enum MIDI2Scale {
    /// A 16-bit velocity on the 0…127 scale.
    @inlinable @_noAllocation @_noLocks
    public static func velocity(_ value: UInt16) -> Double {
        value <= 0x8000
            ? Double(value) / 32_768 * 64 : 64 + Double(value - 0x8000) / 32_767 * 63
    }

    /// A 32-bit controller or pressure value on the 0…127 scale.
    @inlinable @_noAllocation @_noLocks
    public static func controller(_ value: UInt32) -> Double {
        value <= 0x8000_0000
            ? Double(value) / 2_147_483_648 * 64 : 64 + Double(value - 0x8000_0000) / 2_147_483_647 * 63
    }

    /// A 32-bit pitch bend as MIDI 1.0's steps from the centre: −8192 at 0, 0 at 0x8000_0000, just under +8192 at
    /// the top (MIDI 1.0's goes to +8191).
    @inlinable @_noAllocation @_noLocks
    public static func bend(_ value: UInt32) -> Double {
        (Double(value) - 2_147_483_648) / 262_144
    }
}

extension ChannelMessage {
    /// The status nibble of a per-note pitch bend (UMP's, M2-104-UM §7.4.9): `data1` the note, `wide` the 32-bit
    /// bend (centre 0x8000_0000). Below 0x80 it is no MIDI 1.0 status, so instruments that switch on the status
    /// (FluidSynth, SFZ) pass it by; the LV2 host does not hand it to a plugin.
    @inlinable public static var perNotePitchBendCommand: UInt8 { 0x60 }
    /// The status nibble of a registered per-note controller (UMP's, M2-104-UM §7.4.4): `data1` the note, `data2`
    /// the controller (1 modulation, 7 volume, 10 pan, 11 expression, 74 brightness…), `wide` its 32-bit value.
    @inlinable public static var perNoteControllerCommand: UInt8 { 0x00 }

    /// A MIDI 2.0 message: `status`, `data1` and `data2` as MIDI 1.0 plays it, `wide` the value at full resolution.
    @_noAllocation @_noLocks
    public init(midi2 status: UInt8, data1: UInt8, data2: UInt8 = 0, wide: UInt32) {
        self.init(status: status, data1: data1, data2: data2)
        resolution = .midi2
        self.wide = wide
    }

    /// MIDI 2.0's per-note pitch bend of `note` on `channel` (0…15).
    public static func perNotePitchBend(channel: UInt8, note: UInt8, value: UInt32) -> ChannelMessage {
        ChannelMessage(midi2: perNotePitchBendCommand | channel & 0x0F, data1: note, wide: value)
    }

    /// MIDI 2.0's registered per-note controller `controller` (0…127) of `note` on `channel` (0…15).
    public static func perNoteController(channel: UInt8, note: UInt8, controller: UInt8, value: UInt32)
        -> ChannelMessage
    {
        ChannelMessage(midi2: perNoteControllerCommand | channel & 0x0F, data1: note, data2: controller, wide: value)
    }

    /// A MIDI 2.0 per-note message (pitch bend or registered controller), which only instruments with per-note
    /// expression play.
    public var isPerNote: Bool {
        @_noAllocation @_noLocks get {
            resolution.isMIDI2 && (command == Self.perNotePitchBendCommand || command == Self.perNoteControllerCommand)
        }
    }

    /// This message as the MIDI 1.0 stand-in for a per-note one (see `MIDIResolution.standIn`).
    public func standingIn() -> ChannelMessage {
        var message = self
        message.resolution = .standIn
        return message
    }
}

extension MIDIEvent {
    /// The value on MIDI 1.0's 0…127 scale, fractional when it came as MIDI 2.0: a note's velocity, poly
    /// pressure's or a controller's value (`data2`), channel pressure (`data1`), a per-note controller's value.
    @inlinable
    public var fineValue: Double {
        @_noAllocation @_noLocks get {
            let command = status & 0xF0
            if !resolution.isMIDI2 { return Double(command == 0xD0 ? data1 : data2) }
            return command == 0x80 || command == 0x90
                ? MIDI2Scale.velocity(UInt16(truncatingIfNeeded: wide)) : MIDI2Scale.controller(wide)
        }
    }

    /// A pitch bend (or per-note pitch bend) as steps from the centre, −8192…8192, fractional when it came as
    /// MIDI 2.0.
    @inlinable
    public var fineBend: Double {
        @_noAllocation @_noLocks get {
            resolution.isMIDI2 ? MIDI2Scale.bend(wide) : Double(Int(data1) | Int(data2) << 7 - 8192)
        }
    }

    /// A MIDI 2.0 per-note message (see `ChannelMessage.isPerNote`).
    @inlinable
    public var isPerNote: Bool {
        @_noAllocation @_noLocks get {
            resolution.isMIDI2
                && (status & 0xF0 == ChannelMessage.perNotePitchBendCommand
                    || status & 0xF0 == ChannelMessage.perNoteControllerCommand)
        }
    }
}
