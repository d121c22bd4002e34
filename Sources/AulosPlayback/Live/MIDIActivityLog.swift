import AulosCore
import AulosMIDI

/// The last 32 channel messages that came in, for the panel's MIDI activity log: written by whoever
/// receives MIDI (the MIDI thread, the control socket) into a fixed ring that never grows, read and
/// formatted on the control thread.
///
/// Threads: `record` from the MIDI or control thread; `entries` on the control thread. One lock, never
/// taken on the render thread.
final class MIDIActivityLog: @unchecked Sendable {
    struct Entry {
        var sequence = 0
        var message = ChannelMessage(status: 0x80, data1: 0)
        var source = MIDISource.file
    }

    static let capacity = 32
    /// The ring and how many messages were ever recorded (the last one's sequence number).
    private let state = Locked((ring: [Entry](repeating: Entry(), count: MIDIActivityLog.capacity), count: 0))

    func record(_ message: ChannelMessage, from source: MIDISource) {
        state.withLock {
            $0.count += 1
            $0.ring[$0.count % Self.capacity] = Entry(sequence: $0.count, message: message, source: source)
        }
    }

    /// The entries still in the ring, oldest first, each as text (`ch 1 note on 60 100 · source 20:0`).
    func entries() -> [(sequence: Int, text: String)] {
        state.withLock { $0.ring }.filter { $0.sequence > 0 }.sorted { $0.sequence < $1.sequence }.map { entry in
            (entry.sequence, Self.describe(entry.message) + " · " + Self.describe(entry.source))
        }
    }

    static func describe(_ message: ChannelMessage) -> String {
        let channel = "ch \(message.status & 0x0F + 1) "
        let (d1, d2) = (message.data1, message.data2)
        if message.isPerNote {
            // MIDI 2.0's per-note messages, with their value on the scales the others show.
            return message.command == ChannelMessage.perNotePitchBendCommand
                ? channel + "note \(d1) bend \(Int(MIDI2Scale.bend(message.wide)))"
                : channel + "note \(d1) cc \(d2) \(Int(MIDI2Scale.controller(message.wide)))"
        }
        switch message.status & 0xF0 {
        case 0x90 where d2 > 0: return channel + "note on \(d1) \(d2)"
        case 0x80, 0x90: return channel + "note off \(d1)"
        case 0xA0: return channel + "poly pressure \(d1) \(d2)"
        case 0xB0: return channel + "cc \(d1) \(d2)"
        case 0xC0: return channel + "program \(d1)"
        case 0xD0: return channel + "pressure \(d1)"
        default: return channel + "bend \(Int(d2) << 7 | Int(d1) - 8192)"
        }
    }

    static func describe(_ source: MIDISource) -> String {
        if source == .controlSocket { return "control" }
        if let session = source.networkSession { return "network \(session)" }
        return source == .file ? "file" : "port \(source.rawValue >> 8):\(source.rawValue & 0xFF)"
    }
}
