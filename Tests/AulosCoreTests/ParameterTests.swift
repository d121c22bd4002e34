import AulosCore
import AulosTestSupport
import AulosUnits
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct ParameterTests {
    let value = ParameterProbeUnit.value

    func probe(smoothed: Bool = true, initial: Float = 0) throws -> ParameterProbeUnit {
        let unit = ParameterProbeUnit(smoothed: smoothed)
        try unit.setParameter(value, value: initial)
        try unit.initialize()
        return unit
    }

    @Test func infoDescribesTheParameter() throws {
        let tone = ToneGeneratorUnit()
        let info = try tone.parameterInfo(ToneGeneratorUnit.Parameter.frequency)
        #expect(info.name == "Frequency" && info.unit == .hertz && info.defaultValue == 440)
        #expect(info.minValue == 1 && info.maxValue == 20_000)
        #expect(
            try tone.get(.parameterList) == [ToneGeneratorUnit.Parameter.frequency, ToneGeneratorUnit.Parameter.level])
        #expect(try tone.get(.parameterList, scope: .input) == [])
        #expect(try tone.getParameter(ToneGeneratorUnit.Parameter.frequency) == 440)
    }

    @Test func badParameterAddressesAndValuesHaveTheirOwnErrors() {
        let tone = ToneGeneratorUnit()
        expectError(.invalidParameter) { try tone.setParameter(ParameterID(42), value: 1) }
        expectError(.invalidScope) { try tone.setParameter(ToneGeneratorUnit.Parameter.level, scope: .input, value: 1) }
        expectError(.invalidElement) { try tone.setParameter(ToneGeneratorUnit.Parameter.level, element: 1, value: 1) }
        expectError(.invalidParameterValue) { try tone.setParameter(ToneGeneratorUnit.Parameter.level, value: 1.5) }
        expectError(.invalidParameterValue) { try tone.setParameter(ToneGeneratorUnit.Parameter.level, value: .nan) }
        expectError(.invalidParameter) { _ = try tone.parameterInfo(ParameterID(42)) }
    }

    @Test func scheduledChangeLandsOnItsExactFrame() throws {
        let unit = try probe(smoothed: true, initial: 1)
        try unit.setParameter(value, value: 5, bufferOffset: 37)
        let out = try renderUnit(unit, frames: 128, buffers: RenderBuffers(.canonical(channels: 1, sampleRate: 48_000)))
        #expect(out[36] == 1)
        #expect(out[37] == 5)
        #expect(out[127] == 5)
        #expect(try unit.getParameter(value) == 5)
    }

    @Test func eventsBeyondTheSliceWaitForTheirSlice() throws {
        let unit = try probe(smoothed: false)
        try unit.scheduleParameters([.immediate(value, scope: .global, element: 0, offset: 300, value: -2)])
        let buffers = RenderBuffers(.canonical(channels: 1, sampleRate: 48_000))
        var rendered: [Float] = []
        for slice in 0..<4 { rendered += try renderUnit(unit, frames: 128, at: Int64(slice * 128), buffers: buffers) }
        #expect(rendered[299] == 0)
        #expect(rendered[300] == -2)
        #expect(rendered[511] == -2)
    }

    @Test func rampsRunLinearlyFromStartToEnd() throws {
        let unit = try probe(smoothed: true)
        try unit.scheduleParameters([
            .ramp(value, scope: .global, element: 0, startOffset: 10, duration: 100, from: 0, to: 1)
        ])
        let out = try renderUnit(unit, frames: 256, buffers: RenderBuffers(.canonical(channels: 1, sampleRate: 48_000)))
        #expect(out[9] == 0)
        #expect(out[10] == 0)
        #expect(abs(out[60] - 0.5) < 1e-5)
        #expect(abs(out[109] - 0.99) < 1e-5)
        #expect(out[110] == 1)
        #expect(out[255] == 1)
        // Monotonic, equal steps.
        #expect((11..<110).allSatisfy { abs((out[$0] - out[$0 - 1]) - 0.01) < 1e-5 })
    }

    @Test func immediateChangesGlideWithoutZipperNoise() throws {
        let unit = try probe(smoothed: true)
        let buffers = RenderBuffers(.canonical(channels: 1, sampleRate: 48_000))
        _ = try renderUnit(unit, frames: 64, buffers: buffers)
        try unit.setParameter(value, value: 8)
        #expect(try unit.getParameter(value) == 8)
        var out: [Float] = []
        for slice in 0..<4 { out += try renderUnit(unit, frames: 128, at: Int64(64 + slice * 128), buffers: buffers) }
        // 5 ms at 48 kHz = 240 frames of equal steps, then exactly the target.
        let steps = zip(out.dropFirst(), out).map { $0 - $1 }
        #expect(steps.max()! <= 8 / 240 + 1e-5)
        #expect(out[0] == 0)
        #expect(out[239] < 8)
        #expect(out[240] == 8)
        #expect(out.last == 8)
    }

    @Test func unsmoothedParametersJump() throws {
        let unit = try probe(smoothed: false)
        let buffers = RenderBuffers(.canonical(channels: 1, sampleRate: 48_000))
        _ = try renderUnit(unit, frames: 64, buffers: buffers)
        try unit.setParameter(value, value: 3)
        let out = try renderUnit(unit, frames: 64, at: 64, buffers: buffers)
        #expect(out.allSatisfy { $0 == 3 })
    }

    @Test func schedulingWhileUninitializedAppliesTheFinalValue() throws {
        let unit = ParameterProbeUnit()
        try unit.scheduleParameters([
            .ramp(value, scope: .global, element: 0, startOffset: 10, duration: 100, from: 0, to: 4)
        ])
        #expect(try unit.getParameter(value) == 4)
    }

    @Test func toneLevelIsSampleAccurate() throws {
        let tone = ToneGeneratorUnit()
        try tone.setParameter(ToneGeneratorUnit.Parameter.level, value: 0)
        try tone.initialize()
        try tone.scheduleParameters([
            .immediate(ToneGeneratorUnit.Parameter.level, scope: .global, element: 0, offset: 37, value: 0.5)
        ])
        let out = try renderUnit(tone, frames: 128, buffers: RenderBuffers())
        #expect(out[..<37].allSatisfy { $0 == 0 })
        #expect(out[37] != 0)
        let expected = 0.5 * Float(sin(2 * Double.pi * 440 * 37 / 48_000))
        #expect(abs(out[37] - expected) < 1e-6)
    }
}

@Suite struct PresetTests {
    @Test func factoryPresetsAreListedAndSelectableWhileRendering() throws {
        let tone = ToneGeneratorUnit()
        let presets = try tone.get(.factoryPresets)
        #expect(presets.map(\.number) == [0, 1, 2])
        #expect(presets[1].name.contains("1 kHz"))
        expectError(.propertyNotInUse) { _ = try tone.get(.presentPreset) }
        #expect(try tone.propertyInfo(.presentPreset).isWritableWhileInitialized)
        var heard = 0
        tone.addPropertyListener(.presentPreset) { _, _, _, _ in heard += 1 }
        try tone.initialize()
        let buffers = RenderBuffers()
        _ = try renderUnit(tone, frames: 256, buffers: buffers)
        // The seeds' exception: PresentPreset may be set while the unit is initialized and rendering.
        try tone.set(.presentPreset, presets[1])
        #expect(try tone.get(.presentPreset) == presets[1])
        #expect(try tone.getParameter(ToneGeneratorUnit.Parameter.frequency) == 1000)
        #expect(try tone.getParameter(ToneGeneratorUnit.Parameter.level) == 0.25)
        #expect(heard == 1)
        // Other properties stay locked while initialized.
        expectError(.initialized) { try tone.set(.maximumFramesPerSlice, 64) }
        expectError(.invalidPropertyValue) { try tone.set(.presentPreset, Preset(number: 9, name: "none")) }
        expectError(.propertyNotWritable) { try tone.set(.factoryPresets, presets) }
        // After the 5 ms glide the output is the 1 kHz tone at 0.25.
        var out: [Float] = []
        for slice in 1..<8 { out += try renderUnit(tone, frames: 256, at: Int64(slice * 256), buffers: buffers) }
        let settled = out[300...]
        #expect(abs(settled.map(abs).max()! - 0.25) < 1e-3)
    }
}
