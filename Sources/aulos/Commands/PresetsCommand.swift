import ArgumentParser
import AulosCore
import AulosFluid
import AulosLV2
import AulosRig
import AulosSFZ
import AulosUnits
import Foundation

/// `aulos presets`: what there is to choose from — synth presets and parameters, EQ curves, effects, factory rigs.
struct PresetsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presets",
        abstract: "List synth presets and parameters, EQ presets, effect presets and parameters, and factory rigs.",
        discussion:
            "With --unit lv2:URI, one LV2 plugin's presets (by program number) and parameters; with --soundfont "
            + "FILE, a SoundFont's presets by bank and program; with --sfz FILE, an SFZ library's regions, key "
            + "ranges, keyswitches and the opcodes it uses that Aulos does not play.")

    @Option(name: .customLong("unit"), help: "An LV2 plugin (lv2:URI): list its presets and parameters instead.")
    var unit: String?

    @Option(
        help: ArgumentHelp(
            "A SoundFont (.sf2): list its presets by bank and program instead (what a sampler part's bank: and "
                + "program: choose)."))
    var soundfont: String?

    @Option(
        help: ArgumentHelp(
            "An SFZ library (.sfz): list its regions, keys, velocity layers, keyswitches, round robins and what "
                + "it uses that is not played, instead."))
    var sfz: String?

    func run() throws {
        if let sfz {
            // The parser's errors are already one line naming the file and line.
            do { print(try SFZLibrary.load(findingRootOf: sfz).summary()) } catch { throw CommandError(error.message) }
            return
        }
        if let unit {
            try listPlugin(unit)
            return
        }
        if let soundfont {
            try listSoundFont(soundfont)
            return
        }
        let presets = SearchPaths.synthPresets
        print("Synth presets (program: name), from presets/synth:")
        if presets.isEmpty { print("  none found (searched \(SearchPaths.presetFolders.joined(separator: ", ")))") }
        for preset in presets {
            print("  \(preset.bank == 0 ? "" : "bank \(preset.bank) ")\(preset.program): \(preset.name)")
        }
        print("Synth parameters (preset-file key, range, default):")
        for parameter in OscillatorSynthUnit.Parameter.allCases {
            // The eight modulation slots are alike: the first stands for them all.
            if parameter == .mod2Source { print("  mod2Source … mod8Via   (slots 2…8, as slot 1)") }
            if let (slot, _) = parameter.modulationField, slot > 0 { continue }
            let info = parameter.info
            let range =
                info.valueNames.isEmpty
                ? "\(info.minValue.clean)…\(info.maxValue.clean) \(info.unit.rawValue)"
                : info.valueNames.count > 20
                    // A modulation source: the named ones, then the 128 controllers.
                    ? info.valueNames.prefix(14).joined(separator: "|") + "|cc 0…cc 127"
                    : info.valueNames.joined(separator: "|")
            let value = info.valueNames.isEmpty ? info.defaultValue.clean : info.valueNames[Int(info.defaultValue)]
            print("  \(parameter.key.padding(to: 20)) \(range.padding(to: 36)) \(value)")
        }
        print("EQ presets (iPod-style, docs/eq-presets.md):")
        for (number, curve) in IPodEQUnit.curves.enumerated() { print("  \(number): \(curve.name)") }
        print("Effects for rig returns and output.effects (docs/rigs.md): presets; parameters (range, default):")
        for kind in EffectKind.builtIn {
            let unit = try kind.makeUnit()
            print("  \(kind.name): \(unit.factoryPresets.map(\.name).joined(separator: ", "))")
            let infos = ((try? unit.get(.parameterList, scope: .global)) ?? []).compactMap {
                try? unit.parameterInfo($0)
            }
            for info in infos {
                let values = info.valueNames.isEmpty ? "" : " (" + info.valueNames.joined(separator: ", ") + ")"
                print(
                    "    \(EffectSpec.dashed(info.name).padding(to: 20)) "
                        + "\(info.minValue.clean)…\(info.maxValue.clean), \(info.defaultValue.clean)\(values)")
            }
        }
        let tunings = SearchPaths.tunings
        print("Tunings (Scala scales in presets/tunings; --tuning NAME or tuning: NAME in a rig):")
        print("  " + (tunings.isEmpty ? "none found" : tunings.joined(separator: ", ")))
        let wavetables = SearchPaths.wavetables
        print("Wavetables (single cycles in presets/wavetables; wavetable: NAME on a synth part):")
        print("  " + (wavetables.isEmpty ? "none found" : wavetables.joined(separator: ", ")))
        let factory = RigLibrary.factory
        // By the name `--rig` takes; the folder they are in once (an installed aulos's, or the source tree's).
        let folder = factory.first.map { " in " + URL(fileURLWithPath: $0.path).deletingLastPathComponent().path }
        print("Rigs (--rig NAME\(folder ?? "")):")
        for rig in factory {
            let name = URL(fileURLWithPath: rig.path).deletingPathExtension().lastPathComponent
            print(
                "  \(name): \(rig.name), "
                    + (rig.rigs > 1
                        ? "a set of \(rig.rigs) rigs recalled by program change"
                        : "\(rig.parts) part\(rig.parts == 1 ? "" : "s")"))
        }
        if let font = SearchPaths.soundFont { print("Sampler SoundFont: \(font)") }
    }

    /// `--soundfont FILE`: the font's presets by bank and program, read from its headers (not loaded), and
    /// what is wrong with it but lets it play.
    private func listSoundFont(_ path: String) throws {
        let file = try SoundFontFile.inspect(path)
        let presets = file.presetsByNumber
        print("Presets of \(path) (bank and program, as a sampler part's bank: and program: choose them):")
        if presets.isEmpty { print("  none") }
        for preset in presets {
            print("  \(preset.bank == 0 ? "" : "bank \(preset.bank) ")\(preset.program): \(preset.name)")
        }
        for warning in file.warnings { print("warning: \(warning)") }
    }

    /// `--unit lv2:URI`: the plugin's presets as program numbers (what a program change selects) and its
    /// parameters as a rig's `parameters:` names them, with ranges, defaults and choices.
    private func listPlugin(_ name: String) throws {
        guard case .lv2(let uri) = EffectKind(name: name) else {
            throw ValidationError("--unit takes an LV2 plugin as lv2:URI (see aulos units --lv2), not '\(name)'")
        }
        let plugin: LV2Unit
        do { plugin = try LV2Unit(uri: uri) } catch { throw ValidationError(error.detail) }
        print("\(plugin.name) <\(uri)>, \(plugin.componentDescription)")
        let presets = plugin.factoryPresets
        // Past 128, by bank (CC 0 × 128 + CC 32, sent before the program change) and program.
        let banked = presets.count > 128
        print(
            "Presets (\(banked ? "bank and " : "")program: name; "
                + "\(banked ? "bank select and a program change select" : "a program change selects") "
                + "one)\(presets.isEmpty ? ": none" : ":")")
        for preset in presets {
            let (bank, program) = LV2Unit.bankAndProgram(preset.number)
            print("  \(bank == 0 ? "" : "bank \(bank) ")\(program): \(preset.name)")
        }
        if !plugin.plugin.properties.isEmpty {
            print("Properties (set by message; a rig part's properties:):")
            for property in plugin.plugin.properties {
                let type = property.range.split(separator: "#").last ?? ""
                print("  \(property.label.padding(to: 20)) \(type)  <\(property.uri)>")
            }
        }
        print("Parameters (name in rigs, port symbol, range, default):")
        for (_, ports) in plugin.ambiguousLabels {
            print(
                "warning: " + ports.map { "'\($0.name)' (\($0.symbol))" }.joined(separator: " and ")
                    + " read alike in a rig: each is listed with its symbol beside it; a rig names one by its symbol")
        }
        for port in plugin.plugin.ports where port.kind == .control && port.isInput {
            let info = try plugin.parameterInfo(ParameterID(UInt32(port.index)))
            let range =
                info.valueNames.isEmpty
                ? "\(info.minValue.clean)…\(info.maxValue.clean)"
                    + (info.unit == .generic ? "" : " \(info.unit.rawValue)") + (info.isLogarithmic ? " (log)" : "")
                : info.valueNames.enumerated().map { "\($0)=\($1)" }.joined(separator: " ")
            print(
                "  \(EffectSpec.dashed(info.name).padding(to: 20)) \(port.symbol.padding(to: 16)) "
                    + "\(range.padding(to: 30)) \(info.defaultValue.clean)")
        }
    }
}
