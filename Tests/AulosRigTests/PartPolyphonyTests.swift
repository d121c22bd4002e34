import AulosCore
import AulosFluid
import AulosRig
import AulosTestSupport
import AulosUnits
import Testing

/// A part's `polyphony:` sizes its instrument's voices; it is read back, and out of range is one line.
@Suite struct PartPolyphonyTests {
    @Test func partsSetTheirInstrumentsPolyphony() throws {
        let rig = try Rig(
            yaml: "parts:\n  - instrument: synth\n    channels: [1]\n    polyphony: 8\n"
                + "  - instrument: sampler\n    channels: [2]\n    polyphony: 32\n")
        #expect(rig.parts.map(\.polyphony) == [8, 32])
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
        let playback = try PlaybackRig(rig, fileSample: .float32)
        defer { playback.close() }
        #expect((playback.instruments[0] as! OscillatorSynthUnit).polyphony == 8)
        let sampler = playback.instruments[1] as! FluidSynthSamplerUnit
        #expect(
            try sampler.getProperty(FluidSynthSamplerUnit.polyphonyProperty, scope: .global, element: 0) as? UInt32
                == 32)
    }

    @Test(arguments: [
        ("parts:\n  - instrument: synth\n    polyphony: 0\n", "test.yaml:3: parts[0].polyphony: 0 is outside 1…4096"),
        (
            "parts:\n  - instrument: sampler\n    polyphony: 8\n",
            "test.yaml:3: parts[0].polyphony: 8 is outside 16…4096"
        ),
        (
            "parts:\n  - instrument: lv2:http://drobilla.net/plugins/mda/JX10\n    polyphony: 8\n",
            "test.yaml:3: parts[0].polyphony: goes with the synth or the sampler"
        ),
    ])
    func outOfRangeIsOneLine(_ yaml: String, _ expected: String) {
        do {
            _ = try Rig(yaml: yaml, file: "test.yaml")
            Issue.record("expected an error")
        } catch {
            #expect(error.message.hasPrefix(expected), "\(error.message)")
        }
    }
}
