import AulosCore

/// The units Aulos ships, registered as Aulos's (`Auls`); the ones that reimplement a Core Audio unit answer
/// to its description too (an alias), so `auou/genr/appl` still finds the Generic Output.
public enum BuiltInUnits {
    public static let components: [Component] = [
        Component(
            GenericOutputUnit.componentDescription, aliases: [GenericOutputUnit.coreAudioAlias],
            name: "Aulos: Generic Output"
        ) { GenericOutputUnit() },
        Component(
            FormatConverterUnit.componentDescription, aliases: [FormatConverterUnit.coreAudioAlias],
            name: "Aulos: Converter"
        ) { FormatConverterUnit() },
        Component(ToneGeneratorUnit.componentDescription, name: "Aulos: Tone Generator") { ToneGeneratorUnit() },
        Component(OscillatorSynthUnit.componentDescription, name: "Aulos: Oscillator Synth") { OscillatorSynthUnit() },
        Component(
            MultichannelMixerUnit.componentDescription, aliases: [MultichannelMixerUnit.coreAudioAlias],
            name: "Aulos: Multichannel Mixer"
        ) { MultichannelMixerUnit() },
        Component(IPodEQUnit.componentDescription, aliases: [IPodEQUnit.coreAudioAlias], name: "Aulos: iPod EQ") {
            IPodEQUnit()
        },
        Component(ParametricEQUnit.componentDescription, name: "Aulos: Parametric EQ") { ParametricEQUnit() },
        Component(ReverbUnit.componentDescription, name: "Aulos: Reverb") { ReverbUnit() },
        Component(ChorusUnit.componentDescription, name: "Aulos: Chorus") { ChorusUnit() },
        Component(DelayUnit.componentDescription, name: "Aulos: Delay") { DelayUnit() },
        Component(PeakLimiterUnit.componentDescription, name: "Aulos: Peak Limiter") { PeakLimiterUnit() },
    ]

    /// A registry holding every built-in unit.
    public static func registry() -> ComponentRegistry {
        let registry = ComponentRegistry()
        for component in components { registry.register(component) }
        return registry
    }
}
