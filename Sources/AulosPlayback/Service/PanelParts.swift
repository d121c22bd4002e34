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

    struct Group: Encodable {
        var kind: String
        var name: String
        var channels: [Int]
        var instrument: String?
        /// The program the rig starts the part on (bank 0), if it names one.
        var program: Int?
        var controls: [Control]
    }

    var rig: String
    var rigs: [String]
    var activeRig: Int
    var groups: [Group]
    var eqPresets: [String]

    init(_ rig: PlaybackRig, active: Int) {
        self.rig = rig.set.entries[active].rig.name
        rigs = rig.set.entries.map(\.rig.name)
        activeRig = active
        let programs = Dictionary(
            rig.parts.filter { $0.rigIndex == active }.map { ($0.part.name, $0.part.program) },
            uniquingKeysWith: { a, _ in a })
        groups = rig.targetGroups(ofRig: active).map { group in
            Group(
                kind: group.kind.rawValue, name: group.name, channels: group.channels, instrument: group.instrument,
                program: programs[group.name] ?? nil,
                controls: group.targets.compactMap { target in
                    guard let value = try? target.current() else { return nil }
                    let isEQ = if case .eqPreset = target.kind { true } else { false }
                    return Control(
                        target: target.name, min: target.range.lowerBound, max: target.range.upperBound, value: value,
                        isEQ: isEQ)
                })
        }
        eqPresets = IPodEQUnit.curves.map(\.name)
    }
}
