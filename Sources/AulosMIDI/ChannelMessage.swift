import AulosRealtime
import Glibc

/// A channel message as the three bytes an instrument receives (Core Audio's MusicDeviceMIDIEvent
/// status/data1/data2): the one shape a channel message has from the moment it is read — from the ALSA
/// sequencer, a MIDI file or the control socket — through routing to the render-side event list. Program
/// change and channel pressure leave `data2` at 0; pitch bend is `data1` LSB, `data2` MSB. A message that came as
/// MIDI 2.0 also carries its value at full resolution (`resolution`, `wide`: see `MIDIResolution`), and MIDI 2.0's
/// per-note messages are channel messages of their own statuses (`isPerNote`).
///
/// Threads: a plain value, usable anywhere (the render thread included).
public struct ChannelMessage: BitwiseCopyable, Hashable, Sendable, CustomStringConvertible {
    public var status: UInt8
    public var data1: UInt8
    public var data2: UInt8
    /// Whether `wide` holds a MIDI 2.0 value (and whether this message stands in for a per-note one).
    public var resolution = MIDIResolution.midi1
    /// The MIDI 2.0 value, when `resolution` says there is one (0 otherwise).
    public var wide: UInt32 = 0

    /// A MIDI 1.0 message. The data bytes are kept to 7 bits; `status` must be 0x80…0xEF.
    @_noAllocation @_noLocks
    public init(status: UInt8, data1: UInt8, data2: UInt8 = 0) {
        self.status = status
        self.data1 = data1 & 0x7F
        self.data2 = data2 & 0x7F
    }

    /// The channel message `message` is; nil for a system message.
    public init?(_ message: MIDIMessage) {
        guard let (status, data1, data2) = message.channelBytes else { return nil }
        self.init(status: status, data1: data1, data2: data2)
    }

    public static func noteOn(channel: UInt8, note: UInt8, velocity: UInt8) -> ChannelMessage {
        ChannelMessage(status: 0x90 | channel & 0x0F, data1: note, data2: velocity)
    }

    public static func noteOff(channel: UInt8, note: UInt8, velocity: UInt8 = 64) -> ChannelMessage {
        ChannelMessage(status: 0x80 | channel & 0x0F, data1: note, data2: velocity)
    }

    public static func controlChange(channel: UInt8, controller: UInt8, value: UInt8) -> ChannelMessage {
        ChannelMessage(status: 0xB0 | channel & 0x0F, data1: controller, data2: value)
    }

    /// 0…15.
    public var channel: UInt8 {
        @_noAllocation @_noLocks get { status & 0x0F }
    }
    /// The message kind without its channel: 0x80 note-off, 0x90 note-on, 0xA0 poly pressure, 0xB0 control
    /// change, 0xC0 program change, 0xD0 channel pressure, 0xE0 pitch bend.
    public var command: UInt8 {
        @_noAllocation @_noLocks get { status & 0xF0 }
    }
    /// A note-on that strikes (velocity above 0).
    public var isNoteOn: Bool {
        @_noAllocation @_noLocks get { command == 0x90 && data2 > 0 }
    }
    /// A note-off, or a note-on with velocity 0 (which means note-off in MIDI 1.0).
    public var isNoteOff: Bool {
        @_noAllocation @_noLocks get { command == 0x80 || (command == 0x90 && data2 == 0) }
    }
    public var isControlChange: Bool {
        @_noAllocation @_noLocks get { command == 0xB0 }
    }
    public var isProgramChange: Bool {
        @_noAllocation @_noLocks get { command == 0xC0 }
    }

    /// A note-on with velocity 0 as the note-off it means (velocity 64, as MIDI 1.0 recommends).
    public var normalized: ChannelMessage {
        command == 0x90 && data2 == 0 ? .noteOff(channel: channel, note: data1) : self
    }

    /// The same message on another note (transposition keeps the kind, the other byte and the MIDI 2.0 value).
    @_noAllocation @_noLocks
    public func withNote(_ note: UInt8) -> ChannelMessage {
        var message = self
        message.data1 = note & 0x7F
        return message
    }

    /// The message as the enum the parser and files use (for reading and printing, not for routing).
    public var message: MIDIMessage {
        MIDIMessage(status: status, data1: data1, data2: data2)
            ?? .noteOff(channel: channel, note: data1, velocity: data2)
    }

    public var description: String {
        guard isPerNote else { return message.description }
        let what = command == Self.perNotePitchBendCommand ? "per-note pitch-bend" : "per-note CC #\(data2)"
        return "\(what) ch\(channel + 1) \(data1) = 0x\(String(wide, radix: 16))"
    }
}

/// Where a live MIDI message came from — a keyboard (its sequencer address), a program, the control socket,
/// a file — so the notes one source holds can be released when it goes away. An opaque number: the
/// sequencer encodes client and port; `file` and `controlSocket` are reserved.
///
/// Threads: a plain value.
public struct MIDISource: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Events read from a MIDI file or score (offline and file playback).
    public static let file = MIDISource(rawValue: 0)
    /// Events sent through the control socket (`aulos` … `midi`, the web panel).
    public static let controlSocket = MIDISource(rawValue: 0xFFFF_FFFF)

    /// Network MIDI session `number` (1…65535, counted from its host's start): above the sequencer's
    /// client:port space and below JACK's and the control socket's.
    public static func network(_ number: UInt16) -> MIDISource {
        MIDISource(rawValue: networkBase | UInt32(number))
    }

    /// The network session this source is, if it is one.
    public var networkSession: UInt16? {
        rawValue & 0xFFFF_0000 == Self.networkBase ? UInt16(truncatingIfNeeded: rawValue) : nil
    }

    static let networkBase: UInt32 = 0x4E4D_0000  // "NM"

    public var description: String { "source \(rawValue)" }
}

/// Whoever takes live MIDI from an input (the ALSA sequencer's MIDI thread; the control socket): channel
/// messages, system messages (transport, clock, SysEx), and the end of a source whose held notes must be
/// released. Times are CLOCK_MONOTONIC nanoseconds of arrival.
///
/// Threads: called on the input's thread (the MIDI thread), and on the control thread for MIDI sent through
/// the control socket; an implementation serializes the two itself.
public protocol MIDIReceiver: AnyObject, Sendable {
    func receive(_ message: ChannelMessage, from source: MIDISource, arrivalNanos: Int64)
    /// A message to be heard at `scheduledNanos` (CLOCK_MONOTONIC), which may be ahead of now: a network
    /// session's event, placed by its sender's clock plus a playout latency. Unlike an arrival time it is
    /// not in order with other sources'.
    func receive(_ message: ChannelMessage, from source: MIDISource, scheduledNanos: Int64)
    /// A message its driver already routed and placed on its frame, inside its cycle (JACK MIDI): for the
    /// receiver's records (the panel's activity log), not to be played again.
    func heard(_ message: ChannelMessage, from source: MIDISource)
    func receive(system message: MIDIMessage, from source: MIDISource, arrivalNanos: Int64)
    /// `source` is gone (unplugged, disconnected, the input stopping): release what it holds. Returns how
    /// many notes were released.
    @discardableResult
    func sourceEnded(_ source: MIDISource, arrivalNanos: Int64) -> Int
}

extension MIDIReceiver {
    public func heard(_ message: ChannelMessage, from source: MIDISource) {}
    /// A receiver that keeps no time of its own takes a scheduled message as it takes any other.
    public func receive(_ message: ChannelMessage, from source: MIDISource, scheduledNanos: Int64) {
        receive(message, from: source, arrivalNanos: scheduledNanos)
    }
}
