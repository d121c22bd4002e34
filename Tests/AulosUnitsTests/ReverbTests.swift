import AulosCore
import AulosDSP
import AulosGraph
import AulosTestSupport
import AulosUnits
import Testing

/// The reverb as a unit in a graph: presets, parameters, tail time, slicing, changes mid-note and the
/// render thread's rules.
@Suite struct ReverbTests {
    typealias Reverb = ReverbUnit

    @Test func presetsAreListedAndSetEveryParameterButTheMix() throws {
        let unit = Reverb()
        #expect(unit.factoryPresets.map(\.name) == ["Room", "Hall", "Plate", "Chamber", "Cathedral", "FluidSynth"])
        try unit.set(.presentPreset, unit.factoryPresets[4])
        #expect(try unit.getParameter(Reverb.Parameter.decay.id) == 6.5)
        #expect(try unit.getParameter(Reverb.Parameter.mix.id) == 100)
        #expect(unit.currentPreset?.name == "Cathedral")
        // TailTime: pre-delay plus the time to fall 90 dB.
        let tail: Double = try unit.get(.tailTime)
        #expect(abs(tail - (0.045 + 6.5 * 1.5)) < 1e-6)
        expectError(.invalidPropertyValue) { try unit.set(.presentPreset, Preset(number: 99, name: "?")) }
    }

    /// The FluidSynth preset decays as FluidSynth 2.3's default reverb measured on `fluidsynth -F` renders
    /// (RT60 0.96 s, flat across frequency) and is as wide (L/R correlation about 0.6).
    @Test func theFluidSynthPresetDecaysLikeFluidSynthsDefaultReverb() throws {
        let rig = try EffectRig(Reverb.componentDescription, signal: 2) { unit in
            try unit.set(.presentPreset, Reverb().factoryPresets[5])
        }
        let response = rig.harness.render(96_000, slice: 256)
        let decay = reverberationTime(zip(response[0], response[1]).map { $0 + $1 })
        #expect(abs(decay - 0.96) / 0.96 < 0.1, "RT60 \(decay) s")
        let width = correlation(response[0], response[1])
        #expect(abs(width - 0.6) < 0.2, "L/R correlation \(width)")
    }

    @Test func outOfRangeValuesFailWithTheParameterName() throws {
        let unit = Reverb()
        do {
            try unit.setParameter(Reverb.Parameter.decay.id, value: 100)
            Issue.record("a 100-second decay was accepted")
        } catch {
            #expect(error.message.contains("Decay Time"), "\(error.message)")
        }
    }

    /// Bit-identical output for slices of 16 to 4096 frames.
    @Test func outputIsIndependentOfSliceSize() throws {
        func render(_ slice: Int) throws -> [[Float]] {
            let rig = try EffectRig(Reverb.componentDescription, signal: 3, maximumFramesPerSlice: 4096) { unit in
                try unit.set(.presentPreset, Reverb().factoryPresets[1])
            }
            return rig.harness.render(48_000, slice: slice)
        }
        let reference = try render(256)
        for slice in [16, 64, 1000, 4096] { #expect(try render(slice) == reference, "slice \(slice)") }
    }

    /// A 440 Hz sine through the reverb while presets and parameters change mid-note. Whatever the reverb
    /// does to its level, its output is still a 440 Hz signal, so no sample may step further than a 440 Hz
    /// sine of the local amplitude can move in one sample (2π·440/48000 of it; 1.3× for the modulation's
    /// slight pitch wobble). A click would.
    @Test func changesMidNoteNeverClick() throws {
        let rig = try EffectRig(Reverb.componentDescription, signal: -440)
        try rig.effect.setParameter(Reverb.Parameter.mix.id, value: 50)
        var output = rig.render(24_000, slice: 256)
        for change in 0..<12 {
            if change % 2 == 0 {
                try rig.effect.set(.presentPreset, Reverb().factoryPresets[change / 2])
            } else {
                try rig.effect.setParameter(Reverb.Parameter.mix.id, value: Float(change * 8))
                try rig.effect.setParameter(Reverb.Parameter.width.id, value: Float(change % 3) / 2)
                try rig.effect.setParameter(Reverb.Parameter.preDelay.id, value: Float(change * 30))
            }
            output += rig.render(6_000, slice: 256)
        }
        let worst = worstStepOverSlopeBound(output, frequency: 440, from: 24_000)
        #expect(worst.ratio <= 1, "a step \(worst.ratio)× the slope bound at frame \(worst.at)")
    }

    @Test func dryWetMixAtZeroIsTheInput() throws {
        let rig = try EffectRig(Reverb.componentDescription, signal: 3) { unit in
            try unit.setParameter(Reverb.Parameter.mix.id, value: 0)
        }
        let processed = rig.render(8_000)
        let straight = try EffectRig(FormatConverterUnit.componentDescription, signal: 3).render(8_000)
        #expect(processed == straight)
    }

    @Test func renderingWhileParametersMoveAllocatesNothing() throws {
        let rig = try EffectRig(Reverb.componentDescription, signal: -440)
        for cycle in 0..<10_000 {
            if cycle % 25 == 0 {
                try rig.effect.setParameter(Reverb.Parameter.decay.id, value: Float(1 + cycle % 7))
                try rig.effect.setParameter(Reverb.Parameter.size.id, value: Float(cycle % 150) / 100 + 0.5)
                try rig.effect.setParameter(Reverb.Parameter.mix.id, value: Float(cycle % 100))
            }
            rig.harness.renderSlice(64, counting: true)
        }
        try expectNoAllocations(rig.harness.allocations)
    }

    @Test func stereoCanonicalFormatsOnly() throws {
        let unit = Reverb()
        try unit.set(.streamFormat, StreamFormat.canonical(channels: 1, sampleRate: 48_000), scope: .input)
        try unit.set(.streamFormat, StreamFormat.canonical(channels: 1, sampleRate: 48_000), scope: .output)
        expectError(.formatNotSupported) { try unit.initialize() }
    }
}
