import AulosCore
import AulosMIDI
import AulosPlayback
import AulosRig
import AulosTestSupport
import Testing

/// MIDI through LV2 plugins in a part: an insert that takes MIDI (eg-midigate) hears the part's notes at
/// their frames; a MIDI effect (eg-fifths) before the synth plays into it; both render without allocating;
/// plugins in the wrong place are one-line errors.
@Suite struct LV2MIDIEffectRenderTests {
    static let part = "name: R\nparts:\n  - name: Lead\n    instrument: synth\n    channels: [1]\n"
    static let midigate = "lv2:http://lv2plug.in/plugins/eg-midigate"
    static let fifths = "lv2:http://lv2plug.in/plugins/eg-fifths"

    static func render(_ yaml: String, score: String) throws -> [Float] {
        var options = PlaybackOptions()
        options.rig = try Rig(yaml: yaml)
        options.tail = 0
        return try renderedSamples(Array(score.utf8), named: "midi.score", options)
    }

    static func energy(_ samples: ArraySlice<Float>) -> Double {
        samples.reduce(0.0) { $0 + Double($1) * Double($1) }
    }

    /// eg-midigate passes its input only while a note is held: as an insert it opens on the part's note
    /// (beats 1–2, frames 24,000–48,000) and closes at its note-off, while the synth's release rings on.
    @Test func midigateAsAnInsertOpensOnTheNotes() throws {
        let score = "0b tempo 120\n1b note C4 1b vel=110\n3b end\n"
        let plain = try Self.render(Self.part, score: score)
        let gated = try Self.render(
            Self.part + "    effects:\n      - unit: \(Self.midigate)\n", score: score)
        let held = (2 * 25_000)..<(2 * 47_000)
        let released = (2 * 48_200)..<(2 * 60_000)
        #expect(Self.energy(gated[held]) > 0.5 * Self.energy(plain[held]), "the gate stayed shut")
        #expect(Self.energy(plain[released]) > 1e-3, "the synth's release is what the gate must cut")
        #expect(Self.energy(gated[released]) < 1e-9 && Self.energy(gated[..<(2 * 24_000)]) == 0)
    }

    /// eg-fifths before the synth: a C4 plays as C4 and G4 — the same samples as the synth playing both.
    @Test func fifthsBeforeASynthAddsFifths() throws {
        let withFifths = try Self.render(
            Self.part + "    midi-effects:\n      - unit: \(Self.fifths)\n",
            score: "0b tempo 120\n0.5b note C4 1b vel=100\n2b end\n")
        let both = try Self.render(
            Self.part, score: "0b tempo 120\n0.5b note C4 1b vel=100\n0.5b note G4 1b vel=100\n2b end\n")
        let alone = try Self.render(Self.part, score: "0b tempo 120\n0.5b note C4 1b vel=100\n2b end\n")
        #expect(withFifths.contains { $0 != 0 } && withFifths.count == both.count)
        let largest = zip(withFifths, both).map { abs($0 - $1) }.max() ?? 1
        #expect(largest < 1e-6, "largest difference from C4 + G4: \(largest)")
        #expect(withFifths != alone)
    }

    @Test func midiEffectsAreReadAndWrittenBack() throws {
        let rig = try Rig(
            yaml: Self.part + "    midi-effects:\n      - unit: \(Self.fifths)\n    effects:\n"
                + "      - unit: \(Self.midigate)\n")
        #expect(rig.parts[0].midiEffects.map(\.kind) == [.lv2("http://lv2plug.in/plugins/eg-fifths")])
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
    }

    @Test(arguments: [
        (
            "    midi-effects:\n      - unit: reverb\n",
            "test.yaml:7: parts[0].midi-effects[0]: reverb is an audio effect: it goes in effects:, midi-effects: "
                + "takes LV2 MIDI effects"
        ),
        (
            "    midi-effects:\n      - unit: \(midigate)\n",
            "test.yaml:7: parts[0].midi-effects[0]: Example MIDI Gate is not a MIDI effect (MIDI in and out, no "
                + "audio; aulos units --matching 'aumf' lists them): it goes in effects:"
        ),
    ])
    func misplacedPluginsAreOneLineErrors(_ yaml: String, _ expected: String) {
        do {
            _ = try Rig(yaml: Self.part + yaml, file: "test.yaml")
            Issue.record("expected an error")
        } catch {
            #expect(error.message.contains(expected) && !error.message.contains("\n"), "\(error.message)")
        }
    }

    @Test func aMIDIEffectAsTheInstrumentIsRefused() throws {
        let rig = try Rig(yaml: "name: R\nparts:\n  - name: Lead\n    instrument: \(Self.fifths)\n")
        do {
            _ = try PlaybackRig(rig)
            Issue.record("expected an error")
        } catch let error as RigError {
            let expected =
                "part 'Lead': Example Fifths is a MIDI effect (MIDI in and out, no audio): put it in the part's "
                + "midi-effects:, before an instrument"
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    /// A part with eg-fifths before the synth and eg-midigate after it renders 3,000 cycles of 64 frames with
    /// notes all along, and not one heap allocation on the render thread.
    @Test func midiThroughPluginsAllocatesNothing() throws {
        var rig = try Rig(
            yaml: Self.part + "    midi-effects:\n      - unit: \(Self.fifths)\n    effects:\n"
                + "      - unit: \(Self.midigate)\n")
        rig.slice = 64
        let playback = try PlaybackRig(rig)
        defer { playback.close() }
        try playback.graph.start()
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat, maximumFrames: 64)
        for cycle in 0..<3_200 {
            if cycle % 16 == 0 {
                let note = UInt8(48 + (cycle / 16) % 24)
                let at = Int64(cycle * 64 + 9)
                playback.scheduler.schedule(.noteOn(channel: 0, note: note, velocity: 100), at: at, destination: 0)
                playback.scheduler.schedule(.noteOff(channel: 0, note: note, velocity: 0), at: at + 700, destination: 0)
            }
            #expect(harness.renderSlice(64, counting: cycle >= 200) == 0)
        }
        try expectNoAllocations(harness.allocations)
    }
}
