import AulosCore
import AulosTestSupport
import AulosUnits
import Testing

/// Every time-based effect stops computing once its input has been silent past its tail (−140 dB): the
/// output is then exactly zero and flagged silent, it starts again with the next sample, and none of it
/// depends on the slice size.
@Suite struct TailRestTests {
    static var cases: [(String, ComponentDescription, (AudioUnit) throws -> Void)] {
        [
            (
                "reverb", ReverbUnit.componentDescription,
                { try $0.setParameter(ReverbUnit.Parameter.decay.id, value: 0.3) }
            ),
            (
                "chorus", ChorusUnit.componentDescription,
                { try $0.setParameter(ChorusUnit.Parameter.feedback.id, value: 50) }
            ),
            (
                "delay", DelayUnit.componentDescription,
                { unit in
                    try unit.setParameter(DelayUnit.Parameter.time.id, value: 40)
                    try unit.setParameter(DelayUnit.Parameter.feedback.id, value: 50)
                }
            ),
        ]
    }

    @Test(arguments: 0..<3) func restsAfterItsTailWhateverTheSliceSize(_ index: Int) throws {
        let (name, description, configure) = Self.cases[index]
        func render(_ slice: Int) throws -> [Float] {
            let rig = try EffectRig(description, signal: 4, maximumFramesPerSlice: 4096, configure: configure)
            return rig.harness.render(4 * 96_000, slice: slice)[0]
        }
        let reference = try render(256)
        for slice in [16, 1000, 4096] { #expect(try render(slice) == reference, "\(name), slice \(slice)") }
        // Each burst (a quarter second) rings on after it, then the output is exactly silent until the next.
        for burst in 0..<4 {
            let start = burst * 96_000
            #expect(reference[(start + 12_000)..<(start + 12_100)].contains { $0 != 0 }, "\(name): the tail")
            #expect(reference[(start + 90_000)..<(start + 96_000)].allSatisfy { $0 == 0 }, "\(name): resting")
            #expect(reference[start..<(start + 4_800)].contains { $0 != 0 }, "\(name): awake again")
        }
    }

    @Test func aRestingEffectFlagsItsOutputSilent() throws {
        let rig = try EffectRig(ReverbUnit.componentDescription, signal: 0) { unit in
            try unit.setParameter(ReverbUnit.Parameter.decay.id, value: 0.1)
        }
        rig.harness.renderSlice(256)
        #expect(!rig.harness.lastFlags.contains(.outputIsSilence), "not yet: the rest time has not passed")
        for _ in 0..<200 { rig.harness.renderSlice(256) }
        #expect(rig.harness.lastFlags.contains(.outputIsSilence))
    }
}
