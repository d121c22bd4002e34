import AulosCore
import AulosDSP

/// A parametric equalizer (`aufx/pmeq/Auls`): N bands (a property, 1…16, default 4), each a bell, low or
/// high shelf, low- or high-pass with Frequency, Gain, Q and Bypass as real-time parameters. Parameter IDs
/// are band × 8 + k (k: 0 type, 1 frequency, 2 gain, 3 Q, 4 bypass). Changes glide (5 ms) and the filters are
/// redesigned every 16 frames of absolute time while anything moves, so output does not depend on slicing.
///
/// Threads: control side as for every unit; `ParametricEQKernel` runs on the render thread.
public final class ParametricEQUnit: AudioUnit, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(type: .effect, subtype: "pmeq", manufacturer: .aulos)
    public static let bandCountProperty = PropertyID(rawValue: 64301)

    public enum Field: UInt32, CaseIterable, Sendable {
        case type = 0
        case frequency, gain, q, bypass
    }

    public static func parameter(band: Int, _ field: Field) -> ParameterID {
        ParameterID(UInt32(band) * 8 + field.rawValue)
    }

    public private(set) var bandCount = 4

    public init(bands: Int = 4) {
        bandCount = bands
        super.init(
            description: Self.componentDescription, name: "Aulos: Parametric EQ", inputs: 1, outputs: 1,
            parameters: Self.definitions(bands: bands))
    }

    static func definitions(bands: Int) -> [ParameterInfo] {
        (0..<bands).flatMap { band -> [ParameterInfo] in
            let defaultFrequency = Float(100 * Double(1 << min(band, 7)) * 1.0)
            return [
                ParameterInfo(
                    id: parameter(band: band, .type), name: "Band \(band + 1) Type", unit: .indexed, range: 0...4,
                    defaultValue: 0,
                    valueNames: ["bell", "lowshelf", "highshelf", "lowpass", "highpass"]),
                ParameterInfo(
                    id: parameter(band: band, .frequency), name: "Band \(band + 1) Frequency", unit: .hertz,
                    range: 20...20_000, defaultValue: min(16_000, defaultFrequency)),
                ParameterInfo(
                    id: parameter(band: band, .gain), name: "Band \(band + 1) Gain", unit: .decibels, range: -24...24,
                    defaultValue: 0),
                ParameterInfo(
                    id: parameter(band: band, .q), name: "Band \(band + 1) Q", unit: .generic, range: 0.1...18,
                    defaultValue: 0.707),
                ParameterInfo(
                    id: parameter(band: band, .bypass), name: "Band \(band + 1) Bypass", unit: .boolean, range: 0...1,
                    defaultValue: 0),
            ]
        }
    }

    public override var stateProperties: [String: String] {
        super.stateProperties.merging(["bands": String(bandCount)]) { $1 }
    }

    public override func restoreStateProperties(_ properties: [String: String]) throws(AudioUnitError) {
        try super.restoreStateProperties(properties)
        if let text = properties["bands"], let count = UInt32(text), Int(count) != bandCount {
            try setProperty(Self.bandCountProperty, scope: .global, element: 0, value: count)
        }
    }

    public override func customPropertyInfo(_ id: PropertyID, scope: Scope, element: Element) throws(AudioUnitError)
        -> PropertyInfo?
    {
        guard id == Self.bandCountProperty else { return nil }
        try requireScope(id, scope, element, [.global])
        return PropertyInfo(dataSize: 4, isWritable: true)
    }

    public override func customGetProperty(_ id: PropertyID, scope: Scope, element: Element) throws(AudioUnitError)
        -> Any?
    {
        id == Self.bandCountProperty ? UInt32(bandCount) : nil
    }

    public override func customSetProperty(_ id: PropertyID, scope: Scope, element: Element, value: Any)
        throws(AudioUnitError) -> Bool
    {
        guard id == Self.bandCountProperty else { return false }
        guard let count = value as? UInt32, (1...16).contains(count) else {
            throw AudioUnitError(.invalidPropertyValue, "the parametric EQ has 1…16 bands")
        }
        bandCount = Int(count)
        rebuildParameters(Self.definitions(bands: bandCount))
        return true
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let input = inputFormat(0)
        guard input == outputFormat(0) else {
            throw AudioUnitError(.formatNotSupported, "\(name) needs the same format on input and output")
        }
        let channels = Int(input.channelsPerFrame)
        let filters = UnsafeMutablePointer<Biquad>.allocate(capacity: channels * bandCount)
        filters.initialize(repeating: Biquad(), count: channels * bandCount)
        let designed = UnsafeMutablePointer<Float>.allocate(capacity: bandCount * 5)
        designed.initialize(repeating: .nan, count: bandCount * 5)
        let kernel = ParametricEQKernel(
            parameters: renderParameters, filters: filters, designed: designed, bands: bandCount,
            channels: channels, sampleRate: input.sampleRate)
        return UnitKernel.make(kernel, render: ParametricEQKernel.render) { kernel in
            kernel.filters.deallocate()
            kernel.designed.deallocate()
        }
    }
}

/// Render side of the parametric EQ.
///
/// Threads: render thread only.
struct ParametricEQKernel {
    let parameters: ParameterKernel
    let filters: UnsafeMutablePointer<Biquad>
    /// The parameter values each band was last designed with (type, frequency, gain, Q, bypass).
    let designed: UnsafeMutablePointer<Float>
    let bands: Int
    let channels: Int
    let sampleRate: Double

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, _, frameCount, io in
        state.assumingMemoryBound(to: ParametricEQKernel.self).pointee
            .render(inputs: inputs, flags: flags, timeStamp: timeStamp, frameCount: Int(frameCount), io: io)
    }

    /// Redesigns the bands whose parameters moved. Slot of band b, field k = b × 5 + k (definition order).
    @_noAllocation @_noLocks
    func redesign() {
        for band in 0..<bands {
            var changed = false
            for field in 0..<5 where parameters.value(band * 5 + field) != designed[band * 5 + field] {
                designed[band * 5 + field] = parameters.value(band * 5 + field)
                changed = true
            }
            guard changed else { continue }
            let bypass = designed[band * 5 + 4] >= 0.5
            let kind = Int(designed[band * 5])
            let coefficients =
                bypass
                ? BiquadCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)
                : BiquadCoefficients.design(
                    kind == 1
                        ? .lowShelf : kind == 2 ? .highShelf : kind == 3 ? .lowPass : kind == 4 ? .highPass : .bell,
                    frequency: Double(designed[band * 5 + 1]), gain: Double(designed[band * 5 + 2]),
                    q: Double(designed[band * 5 + 3]), sampleRate: sampleRate)
            for channel in 0..<channels { filters[channel * bands + band].setCoefficients(coefficients) }
        }
    }

    @_noAllocation @_noLocks
    func render(
        inputs: UnsafeRawPointer, flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>,
        frameCount: Int, io: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        let status = RenderInputs.pullInPlace(
            inputs, flags: flags, timeStamp: timeStamp, frameCount: frameCount, into: io)
        if status != 0 { return status }
        parameters.beginSlice()
        let start = timeStamp.pointee.sampleTime
        var frame = 0
        while frame < frameCount {
            parameters.applyEvents(dueAt: frame)
            let intoTick = Int((start + Int64(frame)) & 15)
            if intoTick == 0 || frame == 0 { redesign() }
            let end = min(parameters.nextEventOffset(after: frame, frameCount: frameCount), frame + 16 - intoTick)
            for channel in 0..<channels {
                BiquadBank.process(
                    filters + channel * bands, count: bands, samples: io.pointee.floatChannel(channel), from: frame,
                    to: end)
            }
            parameters.advanceAll(by: end - frame)
            frame = end
        }
        parameters.endSlice(frameCount: frameCount)
        return 0
    }
}
