import AulosCore

/// A sine-wave generator (`augn/tone/Auls`): the simplest source that exercises the parameter machinery.
/// Frequency and level are real-time parameters: set them while rendering (they glide, no zipper noise) or
/// schedule them sample-exactly, including linear ramps, which is enough to play a melody with envelopes.
/// Later issues add real instruments; this unit stays as a test-signal source.
///
/// Threads: control side as for every unit; `ToneGeneratorKernel` runs on the render thread.
public final class ToneGeneratorUnit: AudioUnit, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(
        type: .generator, subtype: "tone", manufacturer: .aulos)

    public enum Parameter {
        public static let frequency = ParameterID(0)
        public static let level = ParameterID(1)
    }

    public static let parameterInfos = [
        ParameterInfo(id: Parameter.frequency, name: "Frequency", unit: .hertz, range: 1...20_000, defaultValue: 440),
        ParameterInfo(id: Parameter.level, name: "Level", unit: .linearGain, range: 0...1, defaultValue: 0.25),
    ]

    public init() {
        super.init(
            description: Self.componentDescription, name: "Aulos: Tone Generator", inputs: 0, outputs: 1,
            parameters: Self.parameterInfos)
    }

    /// Standard test signals. Choosing one while rendering is allowed (Core Audio's PresentPreset
    /// exception): it sets the parameters, which glide to the new values.
    public static let presets: [(preset: Preset, frequency: Float, level: Float)] = [
        (Preset(number: 0, name: "A440 reference, -6 dBFS"), 440, 0.5),
        (Preset(number: 1, name: "1 kHz test tone, -12 dBFS"), 1000, 0.25),
        (Preset(number: 2, name: "Middle C, -12 dBFS"), 261.625_58, 0.25),
    ]

    private var selectedPreset: Preset?

    public override var factoryPresets: [Preset] { Self.presets.map(\.preset) }
    public override var currentPreset: Preset? { selectedPreset }

    public override func applyPreset(_ preset: Preset) throws(AudioUnitError) {
        guard let entry = Self.presets.first(where: { $0.preset.number == preset.number }) else {
            throw AudioUnitError(.invalidPropertyValue, "\(name) has no preset number \(preset.number)")
        }
        try setParameter(Parameter.frequency, value: entry.frequency)
        try setParameter(Parameter.level, value: entry.level)
        selectedPreset = entry.preset
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let format = outputFormat(0)
        let phase = UnsafeMutablePointer<Double>.allocate(capacity: 1)
        phase.initialize(to: 0)
        let kernel = ToneGeneratorKernel(
            parameters: renderParameters, phase: phase, inverseSampleRate: 1 / format.sampleRate,
            channels: Int(format.channelsPerFrame))
        return UnitKernel.make(kernel, render: ToneGeneratorKernel.render) { $0.phase.deallocate() }
    }
}

/// Render side of the tone generator. Renders in segments split at scheduled parameter events, so an event
/// at offset k changes the output first at frame k.
///
/// Threads: render thread only. Holds no class references.
struct ToneGeneratorKernel {
    let parameters: ParameterKernel
    let phase: UnsafeMutablePointer<Double>
    let inverseSampleRate: Double
    let channels: Int

    static let render: KernelRenderFunction = { state, _, flags, _, _, frameCount, ioData in
        state.assumingMemoryBound(to: ToneGeneratorKernel.self).pointee.render(
            flags: flags, frameCount: Int(frameCount), ioData: ioData)
    }

    @_noAllocation @_noLocks
    func render(
        flags: UnsafeMutablePointer<RenderActionFlags>, frameCount: Int, ioData: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        let frequencySlot = 0
        let levelSlot = 1
        let left = ioData.pointee.floatChannel(0)
        parameters.beginSlice()
        var frame = 0
        var silent = true
        while frame < frameCount {
            parameters.applyEvents(dueAt: frame)
            let end = parameters.nextEventOffset(after: frame, frameCount: frameCount)
            var p = phase.pointee
            for index in frame..<end {
                let frequency = Double(parameters.next(frequencySlot))
                let level = parameters.next(levelSlot)
                if level != 0 { silent = false }
                left[index] = level * Float(sine(p))
                p += frequency * inverseSampleRate
                if p >= 1 { p -= 1 }
            }
            phase.pointee = p
            frame = end
        }
        parameters.endSlice(frameCount: frameCount)
        for channel in 1..<max(1, channels) {
            UnsafeMutableRawPointer(ioData.pointee.floatChannel(channel)).copyMemory(
                from: left, byteCount: frameCount * 4)
        }
        if silent { flags.pointee.insert(.outputIsSilence) }
        return 0
    }
}

/// sin(2π·phase) for phase in [0, 1), to within 2e-7: odd polynomial on a quarter wave (no libm call,
/// which the real-time checker cannot see into).
@inline(__always) @_noAllocation @_noLocks
func sine(_ phase: Double) -> Double {
    // Fold into [-0.25, 0.25] where sin is odd and monotonic.
    var x = phase
    if x > 0.75 { x -= 1 } else if x > 0.25 { x = 0.5 - x }
    let t = x * 2 * Double.pi
    let t2 = t * t
    // Taylor terms to t^13: error below 1e-9 on |t| ≤ π/2.
    return t
        * (1 + t2
            * (-1.0 / 6 + t2
                * (1.0 / 120 + t2
                    * (-1.0 / 5040 + t2
                        * (1.0 / 362_880
                            + t2 * (-1.0 / 39_916_800 + t2 * (1.0 / 6_227_020_800)))))))
}
