import AulosCore
import AulosMIDI
import AulosPlayback
import AulosTestSupport
import Testing

/// MIDI Tuning Standard messages in a file reach the synth at their frame: a key change alters what the
/// key plays, a change to "no change" (7F 7F 7F) leaves the file as it was.
@Suite struct TuningStandardRenderTests {
    /// A real-time single-note change of key 60 to (`semitone`, `msb`, `lsb`), then key 60 struck.
    static func file(change: (UInt8, UInt8, UInt8)?) -> [UInt8] {
        var events: [(tick: Int, event: StandardMIDIFile.Event)] = []
        if let (semitone, msb, lsb) = change {
            events.append((0, .midi(.systemExclusive([0x7F, 0x7F, 0x08, 0x02, 0x00, 0x01, 60, semitone, msb, lsb]))))
        }
        events += [
            (10, .midi(.noteOn(channel: 0, note: 60, velocity: 100))),
            (960, .midi(.noteOff(channel: 0, note: 60, velocity: 0))),
        ]
        return StandardMIDIFile.encode(tracks: [events], ticksPerQuarterNote: 480)
    }

    static func render(_ bytes: [UInt8]) throws -> [Float] {
        var options = PlaybackOptions()
        options.dry = true
        options.tail = 0.5
        return try renderedSamples(bytes, named: "mts.mid", options)
    }

    @Test func aFilesTuningMessageRetunesTheSynth() throws {
        let plain = try Self.render(Self.file(change: nil))
        #expect(plain.contains { $0 != 0 })
        #expect(try Self.render(Self.file(change: (60, 0x20, 0))) != plain, "a quarter tone up")
        #expect(try Self.render(Self.file(change: (60, 0, 0))) == plain, "to where it is already")
        #expect(try Self.render(Self.file(change: (0x7F, 0x7F, 0x7F))) == plain, "no change")
    }
}
