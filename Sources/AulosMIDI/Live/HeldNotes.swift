/// Which notes each MIDI source is holding (and whether its sustain pedal is down), so that when a
/// keyboard disappears mid-chord the notes it started can be released instead of sounding forever.
///
/// Notes are tracked per source and per channel; a note two keyboards hold at once is released by either
/// one's note-off (the instrument cannot tell them apart either).
///
/// Threads: owned by the MIDI thread.
public struct HeldNotes<Source: Hashable & Sendable>: Sendable {
    /// 16 channels × 128 notes as bits, plus the sustain pedal per channel.
    struct SourceState: Sendable {
        var notes = [UInt64](repeating: 0, count: 32)
        var sustain: UInt16 = 0
        var isEmpty: Bool { sustain == 0 && notes.allSatisfy { $0 == 0 } }
    }

    private var sources: [Source: SourceState] = [:]

    public init() {}

    /// Follows one message from `source`.
    public mutating func observe(_ message: MIDIMessage, from source: Source) {
        switch message.normalized {
        case .noteOn(let channel, let note, _):
            sources[source, default: SourceState()].notes[Int(channel) * 2 + Int(note >> 6)] |= 1 << UInt64(note & 63)
        case .noteOff(let channel, let note, _):
            sources[source]?.notes[Int(channel) * 2 + Int(note >> 6)] &= ~(1 << UInt64(note & 63))
        case .controlChange(let channel, 64, let value):
            if value >= 64 {
                sources[source, default: SourceState()].sustain |= 1 << UInt16(channel)
            } else {
                sources[source]?.sustain &= ~(1 << UInt16(channel))
            }
        case .controlChange(let channel, 120...127, _):  // all sound/notes off, reset controllers, mode changes
            sources[source]?.notes[Int(channel) * 2] = 0
            sources[source]?.notes[Int(channel) * 2 + 1] = 0
        case .systemReset:
            sources[source] = nil
        default:
            return
        }
        if sources[source]?.isEmpty == true { sources[source] = nil }
    }

    /// How many notes `source` holds.
    public func count(from source: Source) -> Int {
        sources[source]?.notes.reduce(0) { $0 + $1.nonzeroBitCount } ?? 0
    }

    /// Sources holding anything.
    public var activeSources: [Source] { Array(sources.keys) }

    /// Forgets `source` and returns what releases everything it held: a note-off per note, then the
    /// sustain pedal up on each channel where it was down.
    public mutating func release(_ source: Source) -> [MIDIMessage] {
        guard let state = sources.removeValue(forKey: source) else { return [] }
        var messages: [MIDIMessage] = []
        for channel in 0..<16 {
            for half in 0..<2 {
                var bits = state.notes[channel * 2 + half]
                while bits != 0 {
                    let bit = bits.trailingZeroBitCount
                    messages.append(.noteOff(channel: UInt8(channel), note: UInt8(half * 64 + bit), velocity: 64))
                    bits &= bits - 1
                }
            }
        }
        for channel in 0..<16 where state.sustain & (1 << UInt16(channel)) != 0 {
            messages.append(.controlChange(channel: UInt8(channel), controller: 64, value: 0))
        }
        return messages
    }
}
