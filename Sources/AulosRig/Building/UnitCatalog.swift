import AulosALSA
import AulosCore
import AulosFluid
import AulosUnits

/// Every unit a host built on Aulos can instantiate: the built-in units (the synth with the factory
/// presets), the FluidSynth sampler with the default SoundFont, and the ALSA I/O unit — each in its own
/// module because only AulosFluid may import libfluidsynth and only AulosALSA alsa-lib.
///
/// Threads: control side.
public enum UnitCatalog {
    public static func registry() -> ComponentRegistry {
        let registry = BuiltInUnits.registry()
        registry.register(
            Component(OscillatorSynthUnit.componentDescription, name: "Aulos: Oscillator Synth") {
                OscillatorSynthUnit(presets: SearchPaths.synthPresets)
            })
        registry.register(
            Component(FluidSynthSamplerUnit.componentDescription, name: "Aulos: FluidSynth Sampler") {
                FluidSynthSamplerUnit(soundFont: SearchPaths.soundFont)
            })
        registry.register(Component(ALSAOutputUnit.componentDescription, name: "Aulos: ALSA I/O") { ALSAOutputUnit() })
        return registry
    }
}
