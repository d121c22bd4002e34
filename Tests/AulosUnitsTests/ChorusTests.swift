import AulosCore
import AulosGraph
import AulosTestSupport
import AulosUnits
import Testing

/// The chorus and flanger: their delays exact, their stereo width real, and every change smooth.
@Suite struct ChorusTests {
    typealias Chorus = ChorusUnit

    @Test(arguments: [(0, 480), (1, 48)])
    func theSweepCentresOnItsDelayExactly(mode: Int, frames: Int) throws {
        // Depth 0: one voice reads at exactly the mode's delay (10 ms chorus, 1 ms flanger).
        let rig = try EffectRig(Chorus.componentDescription, signal: 2) { unit in
            try unit.setParameter(Chorus.Parameter.mode.id, value: Float(mode))
            try unit.setParameter(Chorus.Parameter.depth.id, value: 0)
            try unit.setParameter(Chorus.Parameter.voices.id, value: 1)
            try unit.setParameter(Chorus.Parameter.mix.id, value: 100)
        }
        let output = rig.harness.render(2_000, slice: 256)
        for channel in output {
            #expect(channel[frames] == 1)
            #expect(channel.indices.filter { abs(channel[$0]) > 1e-6 } == [frames])
        }
    }

    @Test func widthDecorrelatesTheSides() throws {
        func sides(width: Float) throws -> (left: [Float], right: [Float]) {
            let rig = try EffectRig(Chorus.componentDescription, signal: 3) { unit in
                try unit.setParameter(Chorus.Parameter.width.id, value: width)
                try unit.setParameter(Chorus.Parameter.mix.id, value: 100)
            }
            let output = rig.harness.render(48_000, slice: 256)
            return (output[0], output[1])
        }
        let narrow = try sides(width: 0)
        #expect(narrow.left == narrow.right)
        let wide = try sides(width: 1)
        let difference = zip(wide.left, wide.right).map { abs($0 - $1) }.max()!
        #expect(difference > 0.05)
    }

    @Test func changesMidNoteNeverClick() throws {
        let rig = try EffectRig(Chorus.componentDescription, signal: -440)
        var output = rig.render(24_000, slice: 256)
        for (change, preset) in (Chorus().factoryPresets + Chorus().factoryPresets).enumerated() {
            try rig.effect.set(.presentPreset, preset)
            if change % 3 == 2 { try rig.effect.setParameter(Chorus.Parameter.voices.id, value: Float(1 + change % 4)) }
            output += rig.render(9_000, slice: 256)
        }
        // A chorus bends the pitch by design (depth × rate): up to 4 % for these presets.
        let worst = worstStepOverSlopeBound(output, frequency: 440, from: 24_000, margin: 1.5)
        #expect(worst.ratio <= 1, "a step \(worst.ratio)× the slope bound at frame \(worst.at)")
    }

    @Test func outputIsIndependentOfSliceSize() throws {
        func render(_ slice: Int) throws -> [[Float]] {
            let rig = try EffectRig(Chorus.componentDescription, signal: 3, maximumFramesPerSlice: 4096) { unit in
                try unit.set(.presentPreset, Chorus().factoryPresets[3])
            }
            return rig.harness.render(48_000, slice: slice)
        }
        let reference = try render(256)
        for slice in [16, 64, 1000, 4096] { #expect(try render(slice) == reference, "slice \(slice)") }
    }

    @Test func renderingWhileParametersMoveAllocatesNothing() throws {
        let rig = try EffectRig(Chorus.componentDescription, signal: -440)
        for cycle in 0..<10_000 {
            if cycle % 25 == 0 {
                try rig.effect.setParameter(Chorus.Parameter.rate.id, value: Float(cycle % 50) / 10 + 0.1)
                try rig.effect.setParameter(Chorus.Parameter.voices.id, value: Float(1 + cycle / 25 % 4))
                try rig.effect.setParameter(Chorus.Parameter.mode.id, value: Float(cycle / 500 % 2))
            }
            rig.harness.renderSlice(64, counting: true)
        }
        try expectNoAllocations(rig.harness.allocations)
    }
}
