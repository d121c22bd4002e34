import AulosALSA
import AulosCore
import AulosFluid
import AulosUnits

/// Every unit the host knows: the built-in units plus the FluidSynth sampler (which lives in its own
/// layer because only AulosFluid may import libfluidsynth).
public enum HostComponents {
    public static func registry() -> ComponentRegistry {
        let registry = BuiltInUnits.registry()
        registry.register(Component(FluidSynthSamplerUnit.componentDescription, name: "Aulos: FluidSynth Sampler") {
            FluidSynthSamplerUnit(soundFont: SoundFontLocator.defaultPath)
        })
        registry.register(Component(ALSAOutputUnit.componentDescription, name: "Aulos: ALSA I/O") { ALSAOutputUnit() })
        return registry
    }
}

/// Where the sampler finds a SoundFont when none is named.
public enum SoundFontLocator {
    /// `$AULOS_SOUNDFONT`, then AulosGM.sf2 in `<executable>/../share/aulos/soundfonts`,
    /// `/usr/local/share/aulos/soundfonts`, `/usr/share/aulos/soundfonts` and the source tree's
    /// `soundfonts/`, then Debian's `/usr/share/sounds/sf2/default-GM.sf2`.
    public static var searchPaths: [String] {
        var paths: [String] = []
        if let env = getenv("AULOS_SOUNDFONT") { paths.append(String(cString: env)) }
        if let executable = CommandLine.arguments.first, let slash = executable.lastIndex(of: "/") {
            paths.append(String(executable[..<slash]) + "/../share/aulos/soundfonts/AulosGM.sf2")
        }
        paths += ["/usr/local/share/aulos/soundfonts/AulosGM.sf2", "/usr/share/aulos/soundfonts/AulosGM.sf2"]
        var source = #filePath
        for _ in 0..<3 { source = String(source[..<source.lastIndex(of: "/")!]) }
        paths.append(source + "/soundfonts/AulosGM.sf2")
        paths.append("/usr/share/sounds/sf2/default-GM.sf2")
        return paths
    }

    public static var defaultPath: String? {
        searchPaths.first { access($0, R_OK) == 0 }
    }
}

#if canImport(Glibc)
import Glibc
#endif
