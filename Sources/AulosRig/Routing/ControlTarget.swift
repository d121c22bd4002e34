import AulosCore
import AulosMIDI
import AulosUnits
import Synchronization

/// A named thing a controller, `aulos set` or MIDI-learn can change: `PART.PARAMETER` (a part's mixer bus
/// `volume`, `pan`, `enabled`, its `eq` preset, or any parameter of its instrument by name, such as
/// `lead.cutoff` or `piano.gain`), `RETURN.level` or any parameter of a return's effects (`hall.decay`,
/// `echo.feedback`), `output.volume` or `output.eq`. Names ignore case, spaces, '-' and '_'.
///
/// Threads: resolved on the control thread; a resolved target is applied from the MIDI thread
/// (parameters: one atomic store) or the control thread (EQ presets: property sets).
public struct ControlTarget: @unchecked Sendable {
    public enum Kind {
        case parameter(AudioUnit, ParameterID, Scope, Element)
        case eqPreset(IPodEQUnit)
    }

    /// The canonical name (`Lead.Cutoff`).
    public let name: String
    public let kind: Kind
    /// The value range CC 0…127 sweeps by default, and `aulos set` accepts.
    public let range: ClosedRange<Float>

    /// The value for a controller position, between `minimum` and `maximum` (default: the whole range).
    func value(controller: UInt8, minimum: Float?, maximum: Float?) -> Float {
        let low = minimum ?? range.lowerBound
        let high = maximum ?? range.upperBound
        return min(range.upperBound, max(range.lowerBound, low + (high - low) * Float(controller) / 127))
    }

    /// Sets the target now (an EQ preset by its index, rounded). Parameters land with the unit's glide.
    public func apply(_ value: Float) throws(AudioUnitError) {
        switch kind {
        case .parameter(let unit, let id, let scope, let element):
            try unit.setParameter(
                id, scope: scope, element: element, value: min(range.upperBound, max(range.lowerBound, value)))
        case .eqPreset(let eq):
            try eq.selectPreset(String(Int(value.rounded())))
        }
    }

    /// The current value (an EQ preset's index).
    public func current() throws(AudioUnitError) -> Float {
        switch kind {
        case .parameter(let unit, let id, let scope, let element):
            try unit.getParameter(id, scope: scope, element: element)
        case .eqPreset(let eq): Float(eq.currentPreset?.number ?? 0)
        }
    }

    /// The target as the routing kernel moves it: a parameter's value cell (one atomic store, on any
    /// thread), or none for an EQ preset (the control thread selects it). `index` is the target's place in
    /// the router's table.
    func routed(minimum: Float? = nil, maximum: Float? = nil, index: Int) -> RoutedControl {
        var cell: UnsafeMutablePointer<Atomic<UInt32>>?
        if case .parameter(let unit, let id, let scope, let element) = kind {
            cell = try? unit.parameterCell(id, scope: scope, element: element)
        }
        return RoutedControl(cell: cell, range: range, minimum: minimum, maximum: maximum, target: Int32(index))
    }

    static func normalized(_ text: some StringProtocol) -> String {
        String(text.lowercased().filter { $0 != " " && $0 != "-" && $0 != "_" })
    }

    /// Finds `UNIT.PARAMETER` in a playing rig: parts of rig `preferring` first (a rig's controls name its
    /// own parts), then — unless `onlyThere` — any rig's. The error lists what exists.
    static func resolve(
        _ text: String, in rig: PlaybackRig, preferring rigIndex: Int, onlyThere: Bool = false
    ) throws(RigError) -> ControlTarget {
        guard let dot = text.lastIndex(of: "."), dot != text.startIndex, text.index(after: dot) != text.endIndex else {
            throw RigError(
                "'\(text)' is not UNIT.PARAMETER (for example output.volume or "
                    + "\(rig.parts.first?.part.name ?? "part").volume)"
            )
        }
        let unitName = normalized(text[..<dot])
        let parameterName = normalized(text[text.index(after: dot)...])
        let mixer = rig.mixer
        if unitName == "output" || unitName == "master" {
            switch parameterName {
            case "volume":
                return ControlTarget(
                    name: "output.volume",
                    kind: .parameter(rig.outputMixer, MultichannelMixerUnit.Parameter.volume, .output, 0), range: 0...2)
            case "eq":
                guard let eq = rig.masterEQ else {
                    throw RigError("output.eq: this rig has no master EQ (give the rig an output eq)")
                }
                return ControlTarget(
                    name: "output.eq", kind: .eqPreset(eq), range: 0...Float(IPodEQUnit.curves.count - 1))
            default:
                throw RigError("output has volume and eq, not '\(text[text.index(after: dot)...])'")
            }
        }
        let candidates = rig.parts.filter { normalized($0.part.name) == unitName }
        if candidates.isEmpty, let index = rig.returns.firstIndex(where: { normalized($0.bus.name) == unitName }) {
            return try returnTarget(index, text[text.index(after: dot)...], in: rig)
        }
        guard let loaded = candidates.first(where: { $0.rigIndex == rigIndex }) ?? (onlyThere ? nil : candidates.first)
        else {
            let names =
                rig.parts.filter { $0.rigIndex == rigIndex }.map(\.part.name) + rig.returns.map(\.bus.name) + ["output"]
            let elsewhere = candidates.first.map { other in
                "; '\(other.part.name)' is in rig \(other.rigIndex + 1), \(rig.set.entries[other.rigIndex].rig.name): "
                    + "choose that rig first"
            }
            throw RigError(
                "no part '\(text[..<dot])' (this rig has \(names.joined(separator: ", "))\(elsewhere ?? ""))")
        }
        let name = loaded.part.name
        let bus = loaded.bus
        switch parameterName {
        case "volume":
            return ControlTarget(
                name: "\(name).volume", kind: .parameter(mixer, MultichannelMixerUnit.Parameter.volume, .input, bus),
                range: 0...2)
        case "pan":
            return ControlTarget(
                name: "\(name).pan", kind: .parameter(mixer, MultichannelMixerUnit.Parameter.pan, .input, bus),
                range: -1...1)
        case "enabled", "enable":
            return ControlTarget(
                name: "\(name).enabled", kind: .parameter(mixer, MultichannelMixerUnit.Parameter.enable, .input, bus),
                range: 0...1)
        case _
        where parameterName.hasPrefix("send")
            && rig.returns.contains(where: { "send" + normalized($0.bus.name) == parameterName }):
            let send = rig.returns.firstIndex { "send" + normalized($0.bus.name) == parameterName }!
            return ControlTarget(
                name: "\(name).send-\(rig.returns[send].bus.name)",
                kind: .parameter(mixer, MultichannelMixerUnit.Parameter.sendLevel(send), .input, bus), range: 0...1)
        case "eq":
            guard let eq = loaded.eq else {
                throw RigError("\(name).eq: part '\(name)' has no EQ (give it an eq in the rig)")
            }
            return ControlTarget(name: "\(name).eq", kind: .eqPreset(eq), range: 0...Float(IPodEQUnit.curves.count - 1))
        default:
            let unit: AudioUnit = loaded.instrument
            let list = (try? unit.get(.parameterList, scope: .global)) ?? []
            for id in list {
                guard let info = try? unit.parameterInfo(id) else { continue }
                if normalized(info.name) == parameterName || String(id.rawValue) == parameterName {
                    return ControlTarget(
                        name: "\(name).\(normalized(info.name))", kind: .parameter(unit, id, .global, 0),
                        range: info.minValue...info.maxValue)
                }
            }
            // Then the part's insert effects, the first that has the parameter (`Lead.decay-time`).
            for effect in loaded.effects {
                guard let info = try? EffectSpec.parameter(named: String(text[text.index(after: dot)...]), in: effect)
                else { continue }
                return ControlTarget(
                    name: "\(name).\(EffectSpec.dashed(info.name))", kind: .parameter(effect, info.id, .global, 0),
                    range: info.minValue...info.maxValue)
            }
            let names = parameterNames(of: loaded, in: rig)
            throw RigError(
                "part '\(name)' has no parameter '\(text[text.index(after: dot)...])' (it has "
                    + "\(names.joined(separator: ", ")))"
            )
        }
    }

    /// Every parameter name part `loaded` answers to: its bus, its EQ, its sends, its instrument's
    /// parameters, its insert effects' parameters.
    static func parameterNames(of loaded: PlaybackRig.LoadedPart, in rig: PlaybackRig) -> [String] {
        ["volume", "pan", "enabled"] + (loaded.eq == nil ? [] : ["eq"])
            + rig.returns(ofRig: loaded.rigIndex).map { "send-" + $0.bus.name }
            + effectParameterNames([loaded.instrument], dashed: false) + effectParameterNames(loaded.effects)
    }

    /// The parameter names of `units`, as targets spell them.
    static func effectParameterNames(_ units: [AudioUnit], dashed: Bool = true) -> [String] {
        units.flatMap { unit in
            ((try? unit.get(.parameterList, scope: .global)) ?? []).compactMap { try? unit.parameterInfo($0) }
                .map { dashed ? EffectSpec.dashed($0.name) : normalized($0.name) }
        }
    }

    /// Return `index`'s `level` (its fader into the master) or a parameter of one of its effects, the first
    /// effect that has it (`hall.decay`, `hall.mix`).
    static func returnTarget(_ index: Int, _ parameter: Substring, in rig: PlaybackRig) throws(RigError)
        -> ControlTarget
    {
        let entry = rig.returns[index]
        let name = entry.bus.name
        if ["level", "volume"].contains(normalized(parameter)) {
            return ControlTarget(
                name: "\(name).level",
                kind: .parameter(rig.outputMixer, MultichannelMixerUnit.Parameter.volume, .input, Element(1 + index)),
                range: 0...2)
        }
        for unit in entry.units {
            guard let info = try? EffectSpec.parameter(named: String(parameter), in: unit) else { continue }
            return ControlTarget(
                name: "\(name).\(EffectSpec.dashed(info.name))", kind: .parameter(unit, info.id, .global, 0),
                range: info.minValue...info.maxValue)
        }
        let names = ["level"] + effectParameterNames(entry.units)
        throw RigError("return '\(name)' has no parameter '\(parameter)' (it has \(names.joined(separator: ", ")))")
    }
}
