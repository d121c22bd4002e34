import AulosMIDI
import AulosTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Scala scales and keyboard mappings: 12-EDO as a .scl is today's tuning, 19-EDO and a moved reference
/// key are exact, ratios are just intervals, and malformed files are one line naming the line.
@Suite struct TuningTests {
    static let twelve =
        "! 12-EDO\n12 tone equal temperament\n12\n!\n" + (1...11).map { "\($0)00.0\n" }.joined() + "2/1\n"

    static func cents(_ a: Double, _ b: Double) -> Double { abs(a - b) * 100 }

    @Test func twelveToneEqualTemperamentIsTodaysTuning() throws {
        let table = try TuningTable(scale: ScalaScale(text: Self.twelve))
        for key in 0..<128 {
            #expect(Self.cents(table.pitches[key]!, Double(key)) < 0.1, "key \(key)")
        }
        #expect(abs(table.frequency(of: 69)! - 440) < 1e-9)
    }

    @Test func nineteenEqualIsExact() throws {
        let scale = try ScalaScale(
            text: "19-EDO\n 19\n" + (1...18).map { String(format: "%.6f\n", Double($0) * 1200 / 19) }.joined() + "2/1\n"
        )
        let table = try TuningTable(scale: scale)
        // Key 69 is A440; each key above is one 19th of an octave higher.
        for key in 0..<128 {
            let expected = 69 + Double(key - 69) * 12 / 19
            #expect(Self.cents(table.pitches[key]!, expected) < 0.1, "key \(key)")
        }
    }

    /// A .kbm that puts the tonic on key 62 and tunes key 62 itself to 293.66 Hz, with a 7-key pattern
    /// (white keys only: black keys silent) and the octave at degree 7 of a just major scale.
    @Test func aKeyboardMappingMovesTheReferenceAndLeavesKeysOut() throws {
        let just = try ScalaScale(text: "just major\n7\n9/8\n5/4\n4/3\n3/2\n5/3\n15/8\n2/1\n")
        let mapping = try KeyboardMapping(
            text: "! white keys\n12\n0\n127\n62\n62\n293.66\n7\n0\nx\n1\nx\n2\n3\nx\n4\nx\n5\nx\n6\n")
        let table = try TuningTable(scale: just, mapping: mapping)
        #expect(abs(table.frequency(of: 62)! - 293.66) < 1e-9)
        #expect(table.pitches[63] == nil)
        // Key 66 plays degree 2 (5/4 above the tonic); key 74 is the octave; key 57 (62 − 5) is degree 4
        // (3/2) of the repeat below: 3/4 of the tonic.
        #expect(abs(table.frequency(of: 66)! - 293.66 * 5 / 4) < 1e-6)
        #expect(abs(table.frequency(of: 74)! - 293.66 * 2) < 1e-6)
        #expect(abs(table.frequency(of: 57)! - 293.66 * 3 / 4) < 1e-6)
    }

    @Test(arguments: [
        ("", "scale: empty"),
        ("desc\n", "scale: no note count after the description (line 1)"),
        ("desc\nseven\n", "scale:2: the number of notes must be 0…4096, not 'seven'"),
        ("desc\n2\n100.0\n", "scale: 2 notes announced, 1 found"),
        (
            "desc\n1\n-3/2\n",
            "scale:3: '-3/2' is not a pitch (cents like 701.955, or a ratio like 3/2); a ratio must be positive"
        ),
        ("desc\n1\n3/0\n", "scale:3: '3/0' is not a pitch"),
        ("desc\n1\nabc\n", "scale:3: 'abc' is not a pitch"),
        ("desc\n99999999\n", "scale:2: the number of notes must be 0…4096"),
    ])
    func malformedScalesAreOneLine(_ text: String, _ expected: String) {
        #expect(throws: TuningError.self) { try ScalaScale(text: text) }
        do { _ = try ScalaScale(text: text) } catch {
            #expect(error.message.hasPrefix(expected), "\(error.message)")
            #expect(!error.message.contains("\n"))
        }
    }

    @Test(arguments: [
        ("12\n0\n127\n60\n69\nfour-forty\n12\n", "keymap:6: the reference frequency must be a positive number of Hz"),
        ("200\n", "keymap:1: the map size must be 0…128, not '200'"),
        ("12\n0\n127\n60\n", "keymap: ends before the reference note"),
        ("1\n0\n127\n60\n69\n440\n1\ny\n", "keymap:8: a mapping entry is a scale degree or x, not 'y'"),
        ("0\n100\n50\n60\n69\n440\n12\n", "keymap:3: the last MIDI note must be 100…127, not '50'"),
    ])
    func malformedMappingsAreOneLine(_ text: String, _ expected: String) {
        do {
            _ = try KeyboardMapping(text: text)
            Issue.record("expected an error")
        } catch {
            #expect(error.message.hasPrefix(expected), "\(error.message)")
        }
    }

    /// The scales in presets/tunings all read; the 12-EDO one is equal temperament exactly, and the just
    /// scale's fifth above middle C is a pure 3/2.
    @Test func theBundledScalesRead() throws {
        let folder = TestFiles.repositoryRoot + "/presets/tunings"
        let names = [
            "12-edo", "19-edo", "24-edo", "31-edo", "just-12", "meantone-12", "pythagorean-12",
        ]
        for name in names {
            let table = try TuningTable.load(scale: "\(folder)/\(name).scl")
            #expect(table.pitches.allSatisfy { $0 != nil }, "\(name)")
        }
        let twelve = try TuningTable.load(scale: folder + "/12-edo.scl")
        #expect(zip(twelve.pitches, TuningTable.equal.pitches).allSatisfy { abs($0! - $1!) < 1e-9 })
        let just = try TuningTable.load(scale: folder + "/just-12.scl")
        #expect(abs(just.frequency(of: 67)! / just.frequency(of: 60)! - 1.5) < 1e-12)
    }

    /// MIDI Tuning Standard messages: single-note changes (real-time; with a bank, real-time and not), the
    /// bulk dump of 128 keys (7F 7F 7F: unchanged), and what is not one.
    @Test func tuningStandardMessagesAreRead() {
        let change = MIDITuningMessage.KeyChange(key: 61, semitone: 61, fraction: 0x2000)
        #expect(MIDITuningMessage.keyChanges([0x7F, 0x00, 0x08, 0x02, 0x05, 0x01, 61, 61, 0x40, 0x00]) == [change])
        #expect(
            MIDITuningMessage.keyChanges([0x7F, 0x00, 0x08, 0x07, 0x00, 0x05, 0x01, 61, 61, 0x40, 0x00]) == [change])
        #expect(
            MIDITuningMessage.keyChanges([0x7E, 0x00, 0x08, 0x07, 0x00, 0x05, 0x01, 61, 61, 0x40, 0x00]) == [change])
        #expect(change.pitch == 61.5)
        var bulk: [UInt8] = [0x7E, 0x7F, 0x08, 0x01, 0x00] + Array("Aulos test      ".utf8)
        for key in 0..<128 { bulk += key == 3 ? [0x7F, 0x7F, 0x7F] : [UInt8(key), 0, 0] }
        bulk.append(0)  // checksum (not checked: devices disagree on it)
        let dump = MIDITuningMessage.keyChanges(bulk)
        #expect(dump?.count == 127 && dump?.contains { $0.key == 3 } == false)
        #expect(MIDITuningMessage.keyChanges([0x7E, 0x7F, 0x09, 0x01]) == nil, "a GM reset")
        #expect(MIDITuningMessage.keyChanges([0x7F, 0x00, 0x08, 0x02, 0x05, 0x02, 61, 61, 0]) == nil, "too short")
        #expect(MIDITuningMessage.keyChanges(Array(bulk.dropLast())) == nil, "a dump one byte short")
    }

    @Test func anUnmappedReferenceKeyIsAnError() throws {
        let mapping = try KeyboardMapping(text: "2\n0\n127\n60\n61\n440\n0\n0\nx\n")
        #expect(throws: TuningError.self) { try TuningTable(scale: ScalaScale(text: Self.twelve), mapping: mapping) }
    }
}
