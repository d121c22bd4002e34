import ArgumentParser
import AulosCore
import AulosRig
import AulosUnits

/// `aulos presets`: what there is to choose from — synth presets and parameters, EQ curves, effects, factory rigs.
struct PresetsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presets",
        abstract: "List synth presets and parameters, EQ presets, effect presets and parameters, and factory rigs.")

    func run() throws {
        let presets = SearchPaths.synthPresets
        print("Synth presets (program: name), from presets/synth:")
        if presets.isEmpty { print("  none found (searched \(SearchPaths.presetFolders.joined(separator: ", ")))") }
        for preset in presets { print("  \(preset.program): \(preset.name)") }
        print("Synth parameters (preset-file key, range, default):")
        for parameter in OscillatorSynthUnit.Parameter.allCases {
            let info = parameter.info
            let range =
                info.valueNames.isEmpty
                ? "\(info.minValue.clean)…\(info.maxValue.clean) \(info.unit.rawValue)"
                : info.valueNames.joined(separator: "|")
            let value = info.valueNames.isEmpty ? info.defaultValue.clean : info.valueNames[Int(info.defaultValue)]
            print("  \(parameter.key.padding(to: 20)) \(range.padding(to: 36)) \(value)")
        }
        print("EQ presets (iPod-style, docs/eq-presets.md):")
        for (number, curve) in IPodEQUnit.curves.enumerated() { print("  \(number): \(curve.name)") }
        print("Effects for rig returns and output.effects (docs/rigs.md): presets; parameters (range, default):")
        for kind in EffectKind.allCases {
            let unit = kind.makeUnit()
            print("  \(kind.rawValue): \(unit.factoryPresets.map(\.name).joined(separator: ", "))")
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
        print("Rigs (presets/rigs):")
        for rig in RigLibrary.factory {
            print(
                "  \(rig.path): \(rig.name), "
                    + (rig.rigs > 1
                        ? "a set of \(rig.rigs) rigs recalled by program change"
                        : "\(rig.parts) part\(rig.parts == 1 ? "" : "s")"))
        }
        if let font = SearchPaths.soundFont { print("Sampler SoundFont: \(font)") }
    }
}
