import AulosRig
import AulosUnits

/// What `parts` answers: the playing rig's parts, returns and output with every control a panel shows,
/// each with its range and current value, named as `set` takes it.
///
/// Threads: made on the control thread, then a value.
public struct PanelParts: Encodable, Sendable {
    struct Control: Encodable {
        var target: String
        var min: Float
        var max: Float
        var value: Float
        /// EQ targets take a preset's index; `eqPresets` names them.
        var isEQ: Bool
    }

    /// A preset an instrument offers, by the bank and program that choose it.
    struct Preset: Encodable {
        var bank: Int
        var program: Int
        var name: String
    }

    struct Group: Encodable {
        var kind: String
        var name: String
        var channels: [Int]
        var instrument: String?
        /// What each channel plays now (the status carries the same, as it changes).
        var programs: [ServiceStatus.ChannelProgram]
        /// The synth's or an LV2 plugin's presets (a sampler's are its font's: `fonts`).
        var presets: [Preset]?
        var controls: [Control]
    }

    var rig: String
    var rigs: [String]
    var activeRig: Int
    var groups: [Group]
    var eqPresets: [String]
    /// The active rig's snapshots, by name (recalled with `snapshot NAME`).
    var snapshots: [String]

    init(_ rig: PlaybackRig, active: Int) {
        self.rig = rig.set.entries[active].rig.name
        rigs = rig.set.entries.map(\.rig.name)
        activeRig = active
        let programs = Dictionary(grouping: ControlExecutor.programs(of: rig, active), by: \.part)
        var presets: [String: [Preset]] = [:]
        for loaded in rig.parts where loaded.rigIndex == active && loaded.part.instrument != .sampler {
            let offered = loaded.instrument.factoryPresets
            guard !offered.isEmpty else { continue }
            presets[loaded.part.name] = offered.map {
                Preset(bank: Int($0.number) / 128, program: Int($0.number) % 128, name: $0.name)
            }
        }
        groups = rig.targetGroups(ofRig: active).map { group in
            Group(
                kind: group.kind.rawValue, name: group.name, channels: group.channels, instrument: group.instrument,
                programs: group.kind == .part ? programs[group.name] ?? [] : [],
                presets: group.kind == .part ? presets[group.name] : nil,
                controls: group.targets.compactMap { target in
                    guard let value = try? target.current() else { return nil }
                    let isEQ = if case .eqPreset = target.kind { true } else { false }
                    return Control(
                        target: target.name, min: target.range.lowerBound, max: target.range.upperBound, value: value,
                        isEQ: isEQ)
                })
        }
        eqPresets = IPodEQUnit.curves.map(\.name)
        snapshots = rig.set.entries[active].rig.snapshots.map(\.name)
    }
}
