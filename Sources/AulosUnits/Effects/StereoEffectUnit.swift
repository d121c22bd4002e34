import AulosCore
import AulosDSP

/// What Aulos's time-based effects (reverb, chorus, delay) share: stereo in and out, processed in place in
/// the canonical format at up to 192 kHz, and factory presets that set parameters (so a preset change
/// glides like any parameter change, and the mix is left as the user set it unless a preset names it).
///
/// Threads: control side as for every unit.
public class StereoEffectUnit: AudioUnit, @unchecked Sendable {
    /// Preset names and the parameter values each sets, in preset-number order.
    let presetTable: [(name: String, values: [(ParameterID, Float)])]
    private var selected: Int?

    init(
        description: ComponentDescription, name: String, parameters: [ParameterInfo],
        presets: [(name: String, values: [(ParameterID, Float)])]
    ) {
        presetTable = presets
        super.init(description: description, name: name, inputs: 1, outputs: 1, parameters: parameters)
    }

    public override var factoryPresets: [Preset] {
        presetTable.enumerated().map { Preset(number: Int32($0.offset), name: $0.element.name) }
    }

    public override var currentPreset: Preset? {
        selected.map { Preset(number: Int32($0), name: presetTable[$0].name) }
    }

    public override func applyPreset(_ preset: Preset) throws(AudioUnitError) {
        guard presetTable.indices.contains(Int(preset.number)) else {
            throw AudioUnitError(.invalidPropertyValue, "\(name) has no preset number \(preset.number)")
        }
        for (parameter, value) in presetTable[Int(preset.number)].values {
            try setParameter(parameter, scope: .global, element: 0, value: value)
        }
        selected = Int(preset.number)
    }

    /// A delay line per channel, each long enough for `seconds` at the rate in use, over one allocation the
    /// kernel's release frees (`memory`). (A new rate re-initializes the unit: sized for 192 kHz, a rig of a
    /// thousand delays at 48 kHz took 2.1 GB.)
    static func stereoDelayLines(seconds: Double, sampleRate: Double) -> (
        left: DelayLine, right: DelayLine, memory: UnsafeMutablePointer<Float>
    ) {
        let used = DelayLine.capacity(
            forDelay: Int(seconds * min(sampleRate, FeedbackDelayNetwork.maximumSampleRate)) + 2)
        let allocated = used
        let memory = UnsafeMutablePointer<Float>.allocate(capacity: 2 * allocated)
        return (
            DelayLine(buffer: memory, capacity: used), DelayLine(buffer: memory + allocated, capacity: used), memory
        )
    }

    /// The input format, once checked: the same on both sides, stereo, canonical, and at a rate the effects'
    /// memory is sized for.
    func checkedStereoFormat() throws(AudioUnitError) -> StreamFormat {
        let input = inputFormat(0)
        guard input == outputFormat(0), input.channelsPerFrame == 2, input.isCanonical else {
            throw AudioUnitError(.formatNotSupported, "\(name) needs the same stereo non-interleaved format in and out")
        }
        guard input.sampleRate <= FeedbackDelayNetwork.maximumSampleRate else {
            throw AudioUnitError(
                .formatNotSupported,
                "\(name) runs at up to \(Int(FeedbackDelayNetwork.maximumSampleRate)) Hz, not \(input.sampleRate)")
        }
        return input
    }
}

extension Dictionary where Value == Float, Key: RawRepresentable, Key.RawValue == UInt32 {
    /// A preset's values keyed by a unit's `Parameter` enum, as parameter IDs.
    var parameterValues: [(ParameterID, Float)] { map { (ParameterID($0.key.rawValue), $0.value) } }
}
