import AulosCore
import AulosRig
import AulosTestSupport
import AulosUnits
import Testing

/// A synth part's `mpe:` sets its zones; it is read back, and a bad layout is one line.
@Suite struct PartMPETests {
    @Test(arguments: [
        ("lower", MPELayout(lower: 15, upper: 0), UInt32(15)),
        ("upper 5", MPELayout(lower: 0, upper: 5), UInt32(5 << 8)),
        ("lower 7, upper 7", MPELayout(lower: 7, upper: 7), UInt32(7 | 7 << 8)),
        ("off", MPELayout(lower: 0, upper: 0), UInt32(0)),
    ])
    func partsSetTheirZones(_ text: String, _ layout: MPELayout, _ property: UInt32) throws {
        let rig = try Rig(yaml: "parts:\n  - instrument: synth\n    mpe: \(text)\n")
        #expect(rig.parts[0].mpe == layout)
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
        let playback = try PlaybackRig(rig, fileSample: .float32)
        defer { playback.close() }
        let synth = playback.instruments[0]
        #expect(
            try synth.getProperty(OscillatorSynthUnit.mpeZonesProperty, scope: .global, element: 0) as? UInt32
                == property)
    }

    @Test(arguments: [
        (
            "parts:\n  - instrument: synth\n    mpe: lower 16\n",
            "test.yaml:3: parts[0].mpe: 'lower 16' is not an MPE layout"
        ),
        (
            "parts:\n  - instrument: synth\n    mpe: lower 8, upper 8\n",
            "test.yaml:3: parts[0].mpe: MPE zones of 8 and 8"
        ),
        ("parts:\n  - instrument: sampler\n    mpe: lower\n", "test.yaml:3: parts[0].mpe: goes with a synth part"),
    ])
    func badLayoutsAreOneLine(_ yaml: String, _ expected: String) {
        do {
            _ = try Rig(yaml: yaml, file: "test.yaml")
            Issue.record("expected an error")
        } catch {
            #expect(error.message.hasPrefix(expected), "\(error.message)")
        }
    }
}
