import AulosUnits
import Foundation

/// Where Aulos finds its data — synth presets, factory rigs, scores, the bundled SoundFont, the web panel's
/// page — in one place.
///
/// A data root is a folder holding `presets/`, `soundfonts/` and `web/`. In order: `$AULOS_DATA` (folders
/// separated by ':'), `<executable>/../share/aulos` (an installed aulos finds its own files wherever its
/// prefix is), the source checkout the running executable sits in (`.build/debug/aulos`, a test bundle),
/// found by walking up from the executable to a folder with `Package.swift` and `presets/rigs/`, then each
/// `$XDG_DATA_DIRS` folder's `aulos/` (`/usr/local/share:/usr/share` when unset). A checkout's build so plays
/// its own tree's presets even where a packaged aulos is installed, and an installed binary never depends on
/// the tree it was built in (nothing of that tree's path is compiled in). `$AULOS_PRESETS` (folders separated
/// by ':') comes before the roots' preset folders.
/// The sampler's font, when nothing names one, is `soundFontChoice`: a General MIDI font the user or the
/// system has installed wins over the bundled one.
///
/// Threads: any (reads the environment and the file system).
public enum SearchPaths {
    /// The data roots, most specific first, without repeats. Found once per process: the executable's place
    /// and the environment they come from do not change while it runs, and every preset, rig, tuning and font
    /// lookup goes through them (the checkout walk is a dozen file-system calls).
    public static let dataRoots: [String] = {
        let environment = ProcessInfo.processInfo.environment
        var roots = environment["AULOS_DATA"].map { $0.split(separator: ":").map(String.init) } ?? []
        let binFolder = URL(fileURLWithPath: executablePath).deletingLastPathComponent()
        roots.append(binFolder.appendingPathComponent("../share/aulos").standardized.path)
        if let checkout = checkout(containing: binFolder.path) { roots.append(checkout) }
        let xdg = environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        roots += xdg.split(separator: ":").map { String($0) + "/aulos" }
        var seen = Set<String>()
        return roots.filter { seen.insert($0).inserted }
    }()

    /// The running executable's own path, symbolic links resolved (`/proc/self/exe`: the argument vector's
    /// first word may be a bare name found through `PATH`, or a link such as `/usr/local/bin/aulos`).
    public static var executablePath: String {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        return URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath().path
    }

    /// The source checkout holding `folder`, if any: the nearest folder at or above it with `Package.swift`
    /// and `presets/rigs/` (a build folder is `<checkout>/.build/<triple>/debug`).
    static func checkout(containing folder: String) -> String? {
        var url = URL(fileURLWithPath: folder).standardized
        while url.path != "/" && !url.path.isEmpty {
            let path = url.path
            if FileManager.default.fileExists(atPath: path + "/Package.swift"),
                FileManager.default.fileExists(atPath: path + "/presets/rigs")
            {
                return path
            }
            url.deleteLastPathComponent()
        }
        return nil
    }

    /// The data root the running aulos uses: the first that has the factory rigs (`aulos --version` prints it).
    public static var dataFolder: String? {
        dataRoots.first { FileManager.default.fileExists(atPath: $0 + "/presets/rigs") }
    }

    /// The web panel's page (`index.html`, `panel.css`, `panel.js`): `web/` in the first data root that has
    /// it; in a checkout, where it is written, `Sources/AulosWeb/Panel`. Nil when none has it.
    public static var panelFolder: String? {
        dataRoots.flatMap { [$0 + "/web", $0 + "/Sources/AulosWeb/Panel"] }.first {
            FileManager.default.isReadableFile(atPath: $0 + "/index.html")
        }
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
