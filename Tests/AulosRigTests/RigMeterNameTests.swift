import Testing

@testable import AulosRig

/// A meter names its part; where two rigs of a set each have a part of that name, it names the rig too
/// (`aulos status` and the panel showed two identical "part Bass" rows).
@Suite struct RigMeterNameTests {
    @Test func partsSharingANameAcrossRigsAreToldApart() throws {
        let band = try Rig(
            yaml: "name: Band\nparts:\n  - name: Bass\n    instrument: synth\n    channels: [2]\n"
                + "  - name: Keys\n    instrument: synth\n    channels: [1]\n")
        let duo = try Rig(yaml: "name: Duo\nparts:\n  - name: Bass\n    instrument: synth\n    channels: [2]\n")
        let set = RigSet(
            name: "Set", controlChannel: 16,
            entries: [.init(bank: 0, program: 0, rig: band), .init(bank: 0, program: 1, rig: duo)])
        let playback = try PlaybackRig(set: set, fileSample: .float32)
        defer { playback.close() }
        let names = playback.meters.map(\.name).filter { $0.hasPrefix("part ") }
        #expect(names == ["part Bass (Band)", "part Keys", "part Bass (Duo)"], "\(names)")
    }
}
