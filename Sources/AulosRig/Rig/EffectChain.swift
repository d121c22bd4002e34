import AulosCore
import AulosLV2
import AulosUnits

/// An effect unit as a rig names it: one of Aulos's own (`reverb`, `chorus`, `delay`) or an installed LV2
/// effect (`lv2:URI`).
///
/// Threads: a value.
public enum EffectKind: Hashable, Sendable {
    case reverb, chorus, delay
    case lv2(String)

    /// Aulos's own effects, in the order help and errors list them.
    public static let builtIn: [EffectKind] = [.reverb, .chorus, .delay]

    /// The name a rig file writes: "reverb", or "lv2:" and the plugin's URI.
    public var name: String {
        switch self {
        case .reverb: "reverb"
        case .chorus: "chorus"
        case .delay: "delay"
        case .lv2(let uri): "lv2:" + uri
        }
    }

    /// The kind a rig file names (built-in names in any case), or nil.
    public init?(name: String) {
        if name.hasPrefix("lv2:"), name.dropFirst(4).contains(":") {
            self = .lv2(String(name.dropFirst(4)))
            return
        }
        guard let match = Self.builtIn.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = match
    }

    /// The component a graph builds for this kind (an LV2 plugin's as the catalog describes it; `.any`
    /// for a URI not installed, which the graph then refuses).
    public var componentDescription: ComponentDescription {
        switch self {
        case .reverb: ReverbUnit.componentDescription
        case .chorus: ChorusUnit.componentDescription
        case .delay: DelayUnit.componentDescription
        case .lv2(let uri): LV2World.shared.info(uri)?.componentDescription ?? .any
        }
    }

    /// A fresh unit of this kind (control thread): what a rig builds, and what the reader checks presets
    /// and parameters against. An LV2 plugin that is not installed, or cannot be hosted, is an error.
    public func makeUnit() throws(RigError) -> AudioUnit {
        switch self {
        case .reverb: return ReverbUnit()
        case .chorus: return ChorusUnit()
        case .delay: return DelayUnit()
        case .lv2(let uri):
            let unit: LV2Unit
            do { unit = try LV2Unit(uri: uri) } catch { throw RigError(error.detail) }
            guard unit.inputBusCount >= 1 else {
                let type = unit.componentDescription.type
                throw RigError("\(unit.name) takes no audio in, so it cannot be an effect (it is \(type))")
            }
            return unit
        }
    }

    /// A fresh LV2 MIDI effect of this kind (control thread): what a part's `midi-effects` builds. Anything
    /// but an installed plugin with MIDI in and out and no audio is an error saying where it goes instead.
    public func makeMIDIEffect() throws(RigError) -> LV2Unit {
        guard case .lv2(let uri) = self else {
            throw RigError("\(name) is an audio effect: it goes in effects:, midi-effects: takes LV2 MIDI effects")
        }
        let unit: LV2Unit
        do { unit = try LV2Unit(uri: uri) } catch { throw RigError(error.detail) }
        guard unit.componentDescription.type == .musicEffect else {
            let place = unit.componentDescription.type == .musicDevice ? "instrument:" : "effects:"
            throw RigError(
                "\(unit.name) is not a MIDI effect (MIDI in and out, no audio; aulos units --matching 'aumf' "
                    + "lists them): it goes in \(place)")
        }
        return unit
    }
}

/// An effect in a rig: its unit, a factory preset, then parameter values by name (`decay-time: 2.5`).
///
/// Threads: a value.
public struct EffectSpec: Equatable, Sendable {
    public var kind: EffectKind
    public var preset: String?
    /// Parameter values in the order written, by the parameter's name (any case, spaces or dashes).
    public var parameters: [(name: String, value: Float)]
    public var source = SourceLocation.none

    public init(kind: EffectKind, preset: String? = nil, parameters: [(name: String, value: Float)] = []) {
        self.kind = kind
        self.preset = preset
        self.parameters = parameters
    }

    public static func == (a: EffectSpec, b: EffectSpec) -> Bool {
        a.kind == b.kind && a.preset == b.preset && a.parameters.elementsEqual(b.parameters) { $0 == $1 }
    }

    /// Spelling-insensitive names: "Decay Time", "decay-time" and "decay_time" are one parameter, and an
    /// LV2 label's punctuation does not count ("Frequency [Hz]" is "frequency-hz", as listings write it).
    static func normalized(_ text: some StringProtocol) -> String { LV2Unit.comparable(text) }

    /// The unit's parameter called `name`, or an error listing the names it has.
    public static func parameter(named name: String, in unit: AudioUnit) throws(RigError) -> ParameterInfo {
        // An LV2 plugin's parameters also go by their port symbols (`vcf_freq`).
        if let plugin = unit as? LV2Unit,
            let port = plugin.plugin.ports.first(where: { $0.symbol == name && $0.kind == .control && $0.isInput }),
            let info = try? plugin.parameterInfo(ParameterID(UInt32(port.index)))
        {
            return info
        }
        let list = (try? unit.get(.parameterList, scope: .global)) ?? []
        let infos = list.compactMap { try? unit.parameterInfo($0) }
        if let info = infos.first(where: { normalized($0.name) == normalized(name) }) { return info }
        // A label the plugin gives more than one port names none of them.
        if let plugin = unit as? LV2Unit,
            let shared = plugin.ambiguousLabels.first(where: { $0.name == normalized(name) })
        {
            throw RigError(
                "\(unit.name) has \(shared.ports.count) parameters called '\(name)': name one by its symbol ("
                    + shared.ports.map { "\($0.symbol) for '\($0.name)'" }.joined(separator: ", ") + ")")
        }
        // Short names: the first or last word of one parameter's name ("mix" for Dry/Wet Mix, "decay" for
        // Decay Time), when no other parameter shares it.
        let words = infos.filter { info in
            let parts = info.name.split { $0 == " " || $0 == "/" }
            return [parts.first, parts.last].compactMap { $0 }.contains { normalized($0) == normalized(name) }
        }
        if words.count == 1 { return words[0] }
        throw RigError(
            "\(unit.name) has no parameter '\(name)' (it has \(infos.map { dashed($0.name) }.joined(separator: ", ")))")
    }

    /// A parameter's name as rig files write it: "Decay Time" → "decay-time", "Gain (gain_l)" →
    /// "gain-gain-l" (one dash between words, whatever punctuation was there).
    public static func dashed(_ name: String) -> String {
        name.lowercased().split { !($0.isLetter || $0.isNumber) }.joined(separator: "-")
    }

    /// Sets up `unit` as this spec says: the preset first, then each parameter (checked against its range).
    public func apply(to unit: AudioUnit) throws(RigError) {
        // Errors name a built-in effect as the rig does, a plugin by its own name.
        let called: String
        if case .lv2 = kind { called = unit.name } else { called = kind.name }
        if let preset {
            guard let match = unit.factoryPresets.first(where: { Self.normalized($0.name) == Self.normalized(preset) })
            else {
                throw RigError(
                    "\(called) has no preset '\(preset)' (it has "
                        + "\(unit.factoryPresets.map(\.name).joined(separator: ", ")))")
            }
            do { try unit.applyPreset(match) } catch { throw RigError(error.detail) }
        }
        for (name, value) in parameters { try Self.set(name, to: value, on: unit, called: called) }
    }

    /// Sets `unit`'s parameter called `name` (a name, or an LV2 port symbol) to `value`, checked against
    /// its range; errors name the unit as `called`.
    static func set(_ name: String, to value: Float, on unit: AudioUnit, called: String) throws(RigError) {
        let info = try parameter(named: name, in: unit)
        guard (info.minValue...info.maxValue).contains(value) else {
            let range = "\(info.minValue.clean)…\(info.maxValue.clean)"
            throw RigError("\(called) \(dashed(info.name)) must be \(range), not \(value.clean)")
        }
        do { try unit.setParameter(info.id, value: value) } catch { throw RigError(error.detail) }
    }
}

/// A return bus: what parts send to by name, its effects in order, then on to the master at its level.
/// A return that follows a MIDI controller (CC 91, the General MIDI reverb send, or CC 93, the chorus send)
/// takes from each part what each of its MIDI channels sends by that controller, times the part's send
/// level (1 unless the part names this return): `aulos render song.mid` hears a file's CC 91 as FluidSynth
/// does.
///
/// Threads: a value.
public struct ReturnBus: Equatable, Sendable {
    public var name: String
    public var effects: [EffectSpec]
    /// The return's fader into the master (0…2).
    public var level: Float = 1
    /// The controller whose per-channel value the parts send by: 91, 93 or none.
    public var controller: UInt8?
    public var source = SourceLocation.none

    /// The controllers a return may follow.
    public static let sendControllers: [UInt8] = [91, 93]

    /// The returns a rig plays with when none is given (`aulos render song.mid`, `aulos play`): General
    /// MIDI's reverb on CC 91 and chorus on CC 93, voiced and levelled like FluidSynth's defaults — the
    /// levels make the wet/dry energy ratio of a GM file match `fluidsynth -F`'s (docs/performance.md).
    public static var generalMIDI: [ReturnBus] {
        var reverb = ReturnBus(name: "reverb", effects: [EffectSpec(kind: .reverb, preset: "FluidSynth")])
        reverb.controller = 91
        reverb.level = generalMIDIReverbLevel
        var chorus = ReturnBus(name: "chorus", effects: [EffectSpec(kind: .chorus, preset: "FluidSynth")])
        chorus.controller = 93
        chorus.level = generalMIDIChorusLevel
        return [reverb, chorus]
    }
    static let generalMIDIReverbLevel: Float = 0.246
    static let generalMIDIChorusLevel: Float = 1.38

    public init(name: String, effects: [EffectSpec]) {
        self.name = name
        self.effects = effects
    }
}
