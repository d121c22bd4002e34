import AulosCore
import AulosRig
import AulosTestSupport
import AulosUnits
import Testing

/// A synth part's `drum-channels:` says where its drum kit plays (channel 10 unless it says otherwise), and
/// its first channel is the one whose program changes show in its parameters.
@Suite struct PartDrumChannelsTests {
    func property(_ unit: AudioUnit, _ id: PropertyID) throws -> UInt32? {
        try unit.getProperty(id, scope: .global, element: 0) as? UInt32
    }

    @Test func partsChooseTheirDrumChannels() throws {
        let rig = try Rig(
            yaml: "parts:\n  - instrument: synth\n    channels: [3, 4, 16]\n    drum-channels: [16]\n"
                + "  - instrument: synth\n    channels: [10]\n    drum-channels: []\n"
                + "  - instrument: synth\n    channels: [5]\n")
        #expect(rig.parts.map(\.drumChannels) == [[16], [], nil])
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
        let playback = try PlaybackRig(rig, fileSample: .float32)
        defer { playback.close() }
        let synths = playback.instruments.map { $0 as! OscillatorSynthUnit }
        #expect(try synths.map { try property($0, OscillatorSynthUnit.drumChannelsProperty) } == [1 << 15, 0, 1 << 9])
        #expect(try synths.map { try property($0, OscillatorSynthUnit.baseChannelProperty) } == [2, 9, 4])
    }

    @Test(arguments: [
        (
            "parts:\n  - instrument: synth\n    drum-channels: [17]\n",
            "test.yaml:3: parts[0].drum-channels: 17 is outside 1…16"
        ),
        (
            "parts:\n  - instrument: sampler\n    drum-channels: [10]\n",
            "test.yaml:3: parts[0].drum-channels: goes with a synth part"
        ),
    ])
    func badDrumChannelsAreOneLine(_ yaml: String, _ expected: String) {
        do {
            _ = try Rig(yaml: yaml, file: "test.yaml")
            Issue.record("expected an error")
        } catch {
            #expect(error.message.hasPrefix(expected), "\(error.message)")
        }
    }
}
