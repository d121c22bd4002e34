import AulosCore
import AulosFluid
import AulosLV2
import AulosSFZ
import AulosUnits

/// Every unit a host built on Aulos can instantiate: the built-in units (the synth with the factory
/// presets), the FluidSynth sampler with the default SoundFont (its own module: only AulosFluid may
/// import libfluidsynth) and the SFZ player (its own module, AulosSFZ; a part gives it its library). The I/O
/// unit of a driver is the host's to register (the CLI registers ALSA's): the rig layer imports no driver.
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
        registry.register(
            Component(SFZInstrumentUnit.componentDescription, name: "Aulos: SFZ Player") { SFZInstrumentUnit() })
        return registry
    }
}

extension ComponentRegistry {
    /// Registers the LV2 plugin at `uri` (discovered by lilv, loaded on first use) after checking Aulos can
    /// host it: the unit is built once here, so the factory the graph calls cannot fail later.
    func registerLV2(_ uri: String) throws(AudioUnitError) {
        let checked = try LV2Unit(uri: uri)
        register(
            Component(checked.componentDescription, name: checked.name) {
                // Checked above against the same (process-wide) plugin list: cannot fail.
                try! LV2Unit(uri: uri)
            })
    }
}
