import AulosCore

/// The units Aulos ships, registered under Core Audio's codes where they are carried over.
public enum BuiltInUnits {
    public static let components: [Component] = [
        Component(GenericOutputUnit.componentDescription, name: "Apple: AUGenericOutput") { GenericOutputUnit() },
        Component(FormatConverterUnit.componentDescription, name: "Apple: AUConverter") { FormatConverterUnit() },
        Component(ToneGeneratorUnit.componentDescription, name: "Aulos: Tone Generator") { ToneGeneratorUnit() },
        Component(OscillatorSynthUnit.componentDescription, name: "Aulos: Oscillator Synth") { OscillatorSynthUnit() },
        Component(MultichannelMixerUnit.componentDescription, name: "Apple: AUMultiChannelMixer") { MultichannelMixerUnit() },
        Component(IPodEQUnit.componentDescription, name: "Apple: AUiPodEQ") { IPodEQUnit() },
        Component(ParametricEQUnit.componentDescription, name: "Aulos: Parametric EQ") { ParametricEQUnit() },
    ]

    /// A registry holding every built-in unit.
    public static func registry() -> ComponentRegistry {
        let registry = ComponentRegistry()
        for component in components { registry.register(component) }
        return registry
    }
}
