import AulosUnits
import Foundation

/// Where Aulos finds its data — synth presets, factory rigs, scores, the bundled SoundFont — in one place.
///
/// A data root is a folder holding `presets/` and `soundfonts/`: in order, `<executable>/../share/aulos`
/// (an installed aulos finds its own files), `/usr/local/share/aulos`, `/usr/share/aulos`, and the source
/// tree (so a checkout works without installing). `$AULOS_PRESETS` (folders separated by ':') comes before
/// the roots' preset folders. The sampler's font, when nothing names one, is `soundFontChoice`: a General
/// MIDI font the user or the system has installed wins over the bundled one.
///
/// Threads: any (reads the environment and the file system).
public enum SearchPaths {
    /// The data roots, most specific first.
    public static var dataRoots: [String] {
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        let installed = executable.deletingLastPathComponent().appendingPathComponent("../share/aulos").standardized
            .path
        // This file is Sources/AulosRig/Files/SearchPaths.swift: four folders up is the source tree.
        var source = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { source.deleteLastPathComponent() }
        return [installed, "/usr/local/share/aulos", "/usr/share/aulos", source.path]
    }

    /// Folders that may hold `synth/*.json`, `rigs/*.yaml` and `scores/`.
    public static var presetFolders: [String] {
        let environment =
            ProcessInfo.processInfo.environment["AULOS_PRESETS"].map { $0.split(separator: ":").map(String.init) } ?? []
        return environment + dataRoots.map { $0 + "/presets" }
    }

    /// A tuning file as a rig or `--tuning` names it: the path itself when it is a file, else a bundled
    /// one by name in a preset folder's `tunings/` (`19-edo` or `19-edo.scl`), else the path as given (so
    /// the error names what was asked for).
    public static func tuningFile(_ name: String, suffix: String) -> String {
        presetFile(name, folder: "tunings", suffix: suffix)
    }

    /// The bundled tunings (`.scl` names without the suffix), from the first preset folder that has any.
    public static var tunings: [String] { bundledNames(folder: "tunings", suffix: ".scl") }

    /// A wavetable as a rig names it: a file, or a bundled one by name in a preset folder's `wavetables/`
    /// (`analog-morph`), else the name as given.
    public static func wavetableFile(_ name: String) -> String {
        presetFile(name, folder: "wavetables", suffix: ".wav")
    }

    /// A rig or set as `--rig` names it: a file, or a factory one by name in a preset folder's `rigs/`
    /// (`band`, `stage.yaml`), else the name as given (so the error names what was asked for).
    public static func rigFile(_ name: String) -> String {
        presetFile(name, folder: "rigs", suffix: ".yaml")
    }

    /// The factory rigs and sets (names without `.yaml`), from the first preset folder that has any.
    public static var rigs: [String] { bundledNames(folder: "rigs", suffix: ".yaml") }

    /// The bundled wavetables (names without `.wav`), from the first preset folder that has any.
    public static var wavetables: [String] { bundledNames(folder: "wavetables", suffix: ".wav") }

    /// `name` itself when it is a file or a path, else `folder/name[suffix]` in the first preset folder
    /// that has it, else `name`.
    static func presetFile(_ name: String, folder: String, suffix: String) -> String {
        if FileManager.default.fileExists(atPath: name) || name.contains("/") { return name }
        let file = name.hasSuffix(suffix) ? name : name + suffix
        for root in presetFolders where FileManager.default.isReadableFile(atPath: root + "/" + folder + "/" + file) {
            return root + "/" + folder + "/" + file
        }
        return name
    }

    /// The files ending in `suffix` in the first preset folder's `folder` that has any, without it, sorted.
    static func bundledNames(folder: String, suffix: String) -> [String] {
        for root in presetFolders {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: root + "/" + folder)) ?? [])
                .filter { $0.hasSuffix(suffix) }.map { String($0.dropLast(suffix.count)) }.sorted()
            if !names.isEmpty { return names }
        }
        return []
    }

    /// The first preset folder that has synth presets; nil when none has.
    public static var presetFolder: String? {
        presetFolders.first { folder in
            (try? FileManager.default.contentsOfDirectory(atPath: folder + "/synth"))?.contains {
                $0.hasSuffix(".json")
            } ?? false
        }
    }

    /// The factory synth presets (loaded once; a broken file is reported on stderr once and skipped, so one
    /// bad file cannot take the instrument down).
    public static let synthPresets: [SynthPreset] =
        presetFolder.map { SynthPresetLibrary.loadSkippingBroken(from: $0 + "/synth") } ?? []

    /// Where the sampler looks for a SoundFont when neither `--soundfont` nor the rig names one, in order,
    /// each with why it is there — the order a FluidSynth user expects: `$AULOS_SOUNDFONT`, the user's own
    /// General MIDI font, the system's (Debian's `default-GM.sf2` alternative, which `fluidsynth` plays: FluidR3
    /// or TimGM6mb when installed), then the bundled `AulosGM.sf2`.
    public static var soundFontCandidates: [(path: String, reason: String)] {
        let environment = ProcessInfo.processInfo.environment
        var candidates: [(String, String)] = []
        if let chosen = environment["AULOS_SOUNDFONT"] { candidates.append((chosen, "$AULOS_SOUNDFONT")) }
        let home = environment["HOME"].map { $0 + "/.local/share" }
        if let data = environment["XDG_DATA_HOME"] ?? home {
            for name in ["sf2/default-GM.sf2", "sf3/default-GM.sf3"] {
                candidates.append((data + "/sounds/" + name, "your General MIDI font"))
            }
        }
        for name in ["sf2/default-GM.sf2", "sf3/default-GM.sf3"] {
            candidates.append(("/usr/share/sounds/" + name, "the system's General MIDI font"))
        }
        candidates += bundledSoundFonts.map { ($0, "the bundled font: no General MIDI font is installed") }
        return candidates
    }

    /// Where the bundled `AulosGM.sf2` may be: in each data root.
    public static var bundledSoundFonts: [String] { dataRoots.map { $0 + "/soundfonts/AulosGM.sf2" } }

    /// The bundled font, when one is readable (`make demo` renders with it: deterministic).
    public static var bundledSoundFont: String? {
        bundledSoundFonts.first { FileManager.default.isReadableFile(atPath: $0) }
    }

    /// Where the sampler looks for a SoundFont when none is named, in order.
    public static var soundFonts: [String] { soundFontCandidates.map(\.path) }

    /// The first readable SoundFont of `soundFonts`, and why it is the one.
    public static var soundFontChoice: (path: String, reason: String)? {
        soundFontCandidates.first { FileManager.default.isReadableFile(atPath: $0.path) && !isDirectory($0.path) }
    }

    /// The first readable SoundFont of `soundFonts`.
    public static var soundFont: String? { soundFontChoice?.path }

    private static func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
    }

    /// The built-in demo piece (`presets/scores/demo.score`), played by `aulos render` and `aulos play
    /// --demo` without an input.
    public static var demoScore: String? {
        presetFolders.map { $0 + "/scores/demo.score" }.first { FileManager.default.isReadableFile(atPath: $0) }
    }
}
