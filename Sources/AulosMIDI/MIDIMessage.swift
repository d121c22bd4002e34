/// A MIDI 1.0 message. Channels are 0...15 (displayed 1...16 by people), data values 0...127.
///
/// Threads: a value; control and MIDI-input threads build and parse these. The render thread sees only
/// `MIDIEvent` (three bytes and an offset), never this enum, because system-exclusive data is an array.
public enum MIDIMessage: Equatable, Hashable, Sendable, CustomStringConvertible {
    case noteOff(channel: UInt8, note: UInt8, velocity: UInt8)
    /// A note-on with velocity 0 means note-off (MIDI 1.0); `normalized` turns it into one.
    case noteOn(channel: UInt8, note: UInt8, velocity: UInt8)
    case polyPressure(channel: UInt8, note: UInt8, pressure: UInt8)
    case controlChange(channel: UInt8, controller: UInt8, value: UInt8)
    case programChange(channel: UInt8, program: UInt8)
    case channelPressure(channel: UInt8, pressure: UInt8)
    /// 14-bit value, 0...16383; 8192 is centre.
    case pitchBend(channel: UInt8, value: UInt16)
    /// The bytes between F0 and F7 (both excluded).
    case systemExclusive([UInt8])
    case timeCodeQuarterFrame(UInt8)
    /// 14-bit count of MIDI beats (sixteenth notes) since the start of the song.
    case songPosition(UInt16)
    case songSelect(UInt8)
    case tuneRequest
    case timingClock
    case start
    case `continue`
    case stop
    case activeSensing
    case systemReset

    /// A channel message from its status and data bytes; nil for a status that is not a channel message
    /// or data bytes above 127.
    public init?(status: UInt8, data1: UInt8, data2: UInt8 = 0) {
        guard status >= 0x80, status < 0xF0, data1 < 0x80, data2 < 0x80 else { return nil }
        let channel = status & 0x0F
        switch status & 0xF0 {
        case 0x80: self = .noteOff(channel: channel, note: data1, velocity: data2)
        case 0x90: self = .noteOn(channel: channel, note: data1, velocity: data2)
        case 0xA0: self = .polyPressure(channel: channel, note: data1, pressure: data2)
        case 0xB0: self = .controlChange(channel: channel, controller: data1, value: data2)
        case 0xC0: self = .programChange(channel: channel, program: data1)
        case 0xD0: self = .channelPressure(channel: channel, pressure: data1)
        default: self = .pitchBend(channel: channel, value: UInt16(data1) | UInt16(data2) << 7)
        }
    }

    /// Note-on with velocity 0 becomes note-off with velocity 64 (the value MIDI 1.0 recommends).
    public var normalized: MIDIMessage {
        if case .noteOn(let channel, let note, 0) = self { return .noteOff(channel: channel, note: note, velocity: 64) }
        return self
    }

    /// The channel of a channel message.
    public var channel: UInt8? {
        switch self {
        case .noteOff(let c, _, _), .noteOn(let c, _, _), .polyPressure(let c, _, _), .controlChange(let c, _, _),
            .programChange(let c, _), .channelPressure(let c, _), .pitchBend(let c, _):
            return c
        default:
            return nil
        }
    }

    /// The three bytes an instrument receives (Core Audio's MusicDeviceMIDIEvent status/data1/data2), for
    /// channel messages; nil for system messages.
    public var channelBytes: (status: UInt8, data1: UInt8, data2: UInt8)? {
        switch self {
        case .noteOff(let c, let n, let v): (0x80 | c, n, v)
        case .noteOn(let c, let n, let v): (0x90 | c, n, v)
        case .polyPressure(let c, let n, let p): (0xA0 | c, n, p)
        case .controlChange(let c, let n, let v): (0xB0 | c, n, v)
        case .programChange(let c, let p): (0xC0 | c, p, 0)
        case .channelPressure(let c, let p): (0xD0 | c, p, 0)
        case .pitchBend(let c, let v): (0xE0 | c, UInt8(v & 0x7F), UInt8(v >> 7 & 0x7F))
        default: nil
        }
    }

    /// The message as it travels on a MIDI cable (no running status).
    public var bytes: [UInt8] {
        if let (status, data1, data2) = channelBytes {
            return status & 0xF0 == 0xC0 || status & 0xF0 == 0xD0 ? [status, data1] : [status, data1, data2]
        }
        switch self {
        case .systemExclusive(let data): return [0xF0] + data + [0xF7]
        case .timeCodeQuarterFrame(let value): return [0xF1, value]
        case .songPosition(let beats): return [0xF2, UInt8(beats & 0x7F), UInt8(beats >> 7 & 0x7F)]
        case .songSelect(let song): return [0xF3, song]
        case .tuneRequest: return [0xF6]
        case .timingClock: return [0xF8]
        case .start: return [0xFA]
        case .continue: return [0xFB]
        case .stop: return [0xFC]
        case .activeSensing: return [0xFE]
        case .systemReset: return [0xFF]
        default: return []
        }
    }

    public var description: String {
        switch self {
        case .noteOff(let c, let n, let v): "note-off ch\(c + 1) \(n) vel \(v)"
        case .noteOn(let c, let n, let v): "note-on ch\(c + 1) \(n) vel \(v)"
        case .polyPressure(let c, let n, let p): "poly-pressure ch\(c + 1) \(n) \(p)"
        case .controlChange(let c, let n, let v): "CC ch\(c + 1) #\(n) = \(v)"
        case .programChange(let c, let p): "program ch\(c + 1) \(p)"
        case .channelPressure(let c, let p): "channel-pressure ch\(c + 1) \(p)"
        case .pitchBend(let c, let v): "pitch-bend ch\(c + 1) \(Int(v) - 8192)"
        case .systemExclusive(let d): "sysex (\(d.count) bytes)"
        case .timeCodeQuarterFrame(let v): "MTC quarter frame \(v)"
        case .songPosition(let b): "song position \(b)"
        case .songSelect(let s): "song select \(s)"
        case .tuneRequest: "tune request"
        case .timingClock: "clock"
        case .start: "start"
        case .continue: "continue"
        case .stop: "stop"
        case .activeSensing: "active sensing"
        case .systemReset: "reset"
        }
    }
}

/// Controller numbers an instrument acts on (MIDI 1.0 and General MIDI).
public enum MIDIController {
    public static let bankSelect: UInt8 = 0
    public static let modulationWheel: UInt8 = 1
    public static let dataEntry: UInt8 = 6
    public static let volume: UInt8 = 7
    public static let pan: UInt8 = 10
    public static let expression: UInt8 = 11
    public static let bankSelectLSB: UInt8 = 32
    public static let dataEntryLSB: UInt8 = 38
    public static let sustain: UInt8 = 64
    public static let dataIncrement: UInt8 = 96
    public static let dataDecrement: UInt8 = 97
    public static let nrpnLSB: UInt8 = 98
    public static let nrpnMSB: UInt8 = 99
    public static let rpnLSB: UInt8 = 100
    public static let rpnMSB: UInt8 = 101
    public static let allSoundOff: UInt8 = 120
    public static let resetAllControllers: UInt8 = 121
    public static let allNotesOff: UInt8 = 123
}
