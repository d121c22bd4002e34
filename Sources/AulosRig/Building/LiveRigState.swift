import AulosCore
import AulosLV2
import AulosMIDI
import AulosUnits

/// One parameter of one of a playing rig's units, at a scope and element.
///
/// Threads: a value.
struct UnitParameter: Hashable {
    let unit: ObjectIdentifier
    let scope: Scope
    let element: Element
    let id: ParameterID

    init(_ unit: AudioUnit, _ id: ParameterID, scope: Scope = .global, element: Element = 0) {
        (self.unit, self.scope, self.element, self.id) = (ObjectIdentifier(unit), scope, element, id)
    }
}

/// The playing rig written back as rig files (`aulos save`, a reload that keeps what the player set): the
/// rig files as loaded, with every value a player changed since the rig was built put in its place — a
/// part's volume, pan, mute, sends and EQ, its instrument's and effects' parameters, what each channel
/// plays, the returns' levels and effects, the active rig's output volume and master EQ, the tempo, the
/// controllers learned — and each LV2 plugin's preset, parameters and state as the plugin holds them.
/// Only what changed is written, so a saved file reads like the file it came from.
///
/// Threads: control thread.
extension PlaybackRig {
    /// The parameter values `liveSet` compares with: every instrument's and effect's global parameters, the
    /// parts' mixer buses (volume, pan, enable and each send), the returns' levels and the output volume.
    func parameterValues() -> [UnitParameter: Float] {
        var values: [UnitParameter: Float] = [:]
        func read(_ unit: AudioUnit, _ id: ParameterID, scope: Scope = .global, element: Element = 0) {
            if let value = try? unit.getParameter(id, scope: scope, element: element) {
                values[UnitParameter(unit, id, scope: scope, element: element)] = value
            }
        }
        let effects = parts.flatMap(\.effects) + returns.flatMap(\.units) + masterEffects
        for unit in instruments.map({ $0 as AudioUnit }) + effects {
            for id in (try? unit.get(.parameterList, scope: .global)) ?? [] { read(unit, id) }
        }
        typealias Mixer = MultichannelMixerUnit.Parameter
        for loaded in parts {
            for id in [Mixer.volume, Mixer.pan, Mixer.enable] + returns.indices.map(Mixer.sendLevel) {
                read(mixer, id, scope: .input, element: loaded.bus)
            }
        }
        if outputMixer !== mixer {
            for index in returns.indices { read(outputMixer, Mixer.volume, scope: .input, element: Element(1 + index)) }
        }
        read(outputMixer, Mixer.volume, scope: .output)
        return values
    }

    /// The set as it plays now, as rig files would give it back (see the type's comment). `activeRig` is the
    /// rig whose output volume and master EQ play; `learned` the controllers MIDI-learn mapped; `tempo` the
    /// transport's.
    public func liveSet(activeRig: Int, learned: [ControlMapping], tempo: Double) throws -> RigSet {
        var set = fileSet
        let now = parameterValues()
        func changed(_ unit: AudioUnit, _ id: ParameterID, scope: Scope = .global, element: Element = 0) -> Float? {
            let key = UnitParameter(unit, id, scope: scope, element: element)
            guard let value = now[key], let built = builtValues[key], value != built else { return nil }
            return value
        }
        /// `unit`'s global parameters that differ from `baseline` (else from the values as built), by the names
        /// rig files give them.
        func changedParameters(of unit: AudioUnit, against baseline: [ParameterID: Float]? = nil) -> [(String, Float)] {
            ((try? unit.get(.parameterList, scope: .global)) ?? []).compactMap { id in
                let key = UnitParameter(unit, id)
                let before = baseline != nil ? baseline![id] : builtValues[key]
                guard let info = try? unit.parameterInfo(id), let value = now[key], let before, value != before else {
                    return nil
                }
                return (EffectSpec.dashed(info.name), value)
            }
        }
        typealias Mixer = MultichannelMixerUnit.Parameter
        for index in set.entries.indices {
            var rig = set.entries[index].rig
            for (partIndex, loaded) in parts.filter({ $0.rigIndex == index }).enumerated() {
                var part = rig.parts[partIndex]
                if let plugin = loaded.instrument as? LV2Unit {
                    try Self.takeLiveState(of: plugin, into: &part)
                } else {
                    let baseline = Self.takeLivePrograms(of: loaded, into: &part)
                    for (name, value) in changedParameters(of: loaded.instrument, against: baseline) {
                        part.parameters[name] = value
                    }
                }
                if let value = changed(mixer, Mixer.volume, scope: .input, element: loaded.bus) { part.volume = value }
                if let value = changed(mixer, Mixer.pan, scope: .input, element: loaded.bus) { part.pan = value }
                if let value = changed(mixer, Mixer.enable, scope: .input, element: loaded.bus) {
                    part.enabled = value >= 0.5
                }
                for (send, entry) in returns.enumerated()
                where rig.returns.contains(where: { $0.name == entry.bus.name }) {
                    if let value = changed(mixer, Mixer.sendLevel(send), scope: .input, element: loaded.bus) {
                        part.sends[entry.bus.name] = value
                    }
                }
                if let eq = loaded.eq?.currentPreset?.name, eq != part.eq { part.eq = eq }
                for (effect, unit) in loaded.effects.enumerated() {
                    for (name, value) in changedParameters(of: unit) { part.effects[effect].setParameter(name, value) }
                }
                rig.parts[partIndex] = part
            }
            for (send, entry) in returns.enumerated() {
                guard let own = rig.returns.firstIndex(where: { $0.name == entry.bus.name }) else { continue }
                if outputMixer !== mixer,
                    let level = changed(outputMixer, Mixer.volume, scope: .input, element: Element(1 + send))
                {
                    rig.returns[own].level = level
                }
                for (effect, unit) in entry.units.enumerated() where effect < rig.returns[own].effects.count {
                    for (name, value) in changedParameters(of: unit) {
                        rig.returns[own].effects[effect].setParameter(name, value)
                    }
                }
            }
            if index == 0 {
                for (effect, unit) in masterEffects.enumerated() where effect < rig.masterEffects.count {
                    for (name, value) in changedParameters(of: unit) {
                        rig.masterEffects[effect].setParameter(name, value)
                    }
                }
                if tempo != (rig.tempo ?? 120) { rig.tempo = tempo }
            }
            if index == activeRig {
                if let volume = try? outputMixer.getParameter(Mixer.volume, scope: .output), volume != rig.volume {
                    rig.volume = volume
                }
                let eq = masterEQInFlow ? masterEQ?.currentPreset?.name : nil
                if eq != rig.eq && !(eq == "Flat" && rig.eq == nil) { rig.eq = eq }
                for mapping in learned {
                    // A learned mapping replaces the rig's own for that controller and channel, as it does live.
                    rig.controls.removeAll { $0.controller == mapping.controller && $0.channel == mapping.channel }
                    rig.controls.append(mapping)
                }
            }
            set.entries[index].rig = rig
        }
        return set
    }

    /// An LV2 part's preset, parameters that differ from their defaults and state, as the plugin holds them.
    static func takeLiveState(of plugin: LV2Unit, into part: inout Rig.Part) throws {
        part.preset = plugin.currentPreset?.name
        part.parameters = [:]
        for port in plugin.plugin.ports where port.kind == .control && port.isInput {
            let id = ParameterID(UInt32(port.index))
            let (value, info) = (try plugin.getParameter(id), try plugin.parameterInfo(id))
            if value != info.defaultValue { part.parameters[port.symbol] = value }
        }
        part.state = plugin.plugin.hasStateInterface ? try plugin.lv2State() : nil
    }

    /// What each channel of a synth or sampler part plays now, against what it starts on: a synth's first
    /// channel that plays another preset becomes the part's `preset:` (and the parameters are then compared
    /// with that preset's, which the program change loaded: the baseline returned), any other channel that
    /// differs goes in `programs:`.
    static func takeLivePrograms(of loaded: LoadedPart, into part: inout Rig.Part) -> [ParameterID: Float]? {
        var baseline: [ParameterID: Float]?
        let synth = loaded.instrument as? OscillatorSynthUnit
        let base = part.channels.min() ?? 1
        part.programs = [:]
        for channel in part.channels {
            guard let now = loaded.instrument.midiInput.program(onChannel: channel - 1) else { continue }
            let chosen = now
            if let synth, channel == base {
                let number = now.bank * 128 + now.program
                guard number != Int(synth.currentPreset?.number ?? -1),
                    let preset = synth.presets.first(where: { $0.bank * 128 + $0.program == number })
                else { continue }
                part.preset = preset.name
                part.program = nil
                baseline = preset.values
                continue
            }
            if chosen != startingProgram(of: loaded, channel: channel) { part.programs[channel] = chosen }
        }
        return baseline
    }

    /// What channel `channel` of a part plays before any program change: the synth's preset, the sampler's
    /// `bank:`/`program:` (FluidSynth's drum bank 128 on channel 10, which the rig's program does not reach).
    static func startingProgram(of loaded: LoadedPart, channel: Int) -> Rig.Program? {
        if let synth = loaded.instrument as? OscillatorSynthUnit {
            guard let number = synth.currentPreset.map({ Int($0.number) }) else { return nil }
            return Rig.Program(bank: number / 128, program: number % 128)
        }
        if channel == 10 { return Rig.Program(bank: 128, program: 0) }
        return Rig.Program(bank: loaded.part.bank ?? 0, program: loaded.part.program ?? 0)
    }
}

extension EffectSpec {
    /// Sets parameter `name` (as rig files spell it), replacing the value the spec gave it, else appended.
    mutating func setParameter(_ name: String, _ value: Float) {
        if let index = parameters.firstIndex(where: { EffectSpec.dashed($0.name) == name }) {
            parameters[index].value = value
        } else {
            parameters.append((name, value))
        }
    }
}

extension RigSet {
    /// This set (a rig file read again) with what a player changed live kept: each value of `live` (the set
    /// as it played, `PlaybackRig.liveSet`) wherever this file still says what `was` (the file as it was
    /// read before) said — so a reload keeps the knobs moved on the panel unless the file itself changed
    /// them. Rigs, parts and returns are matched by name, effects by place and kind.
    public func keepingLiveState(_ live: RigSet, was: RigSet) -> RigSet {
        var set = self
        for index in set.entries.indices {
            let name = set.entries[index].rig.name
            guard let before = was.entries.first(where: { $0.rig.name == name })?.rig,
                let played = live.entries.first(where: { $0.rig.name == name })?.rig
            else { continue }
            set.entries[index].rig.keepLiveState(played, was: before)
        }
        return set
    }
}

extension Rig {
    /// `now` unless the file changed it (`now` differs from `was`), else what played.
    fileprivate static func kept<Value: Equatable>(_ now: Value, was: Value, played: Value) -> Value {
        now == was ? played : now
    }

    /// The values of a dictionary kept one by one.
    fileprivate static func kept<Key: Hashable, Value: Equatable>(
        _ now: [Key: Value], was: [Key: Value], played: [Key: Value]
    ) -> [Key: Value] {
        var result = now
        for key in Set(now.keys).union(was.keys).union(played.keys) where now[key] == was[key] {
            result[key] = played[key]
        }
        return result
    }

    fileprivate mutating func keepLiveState(_ played: Rig, was: Rig) {
        volume = Self.kept(volume, was: was.volume, played: played.volume)
        eq = Self.kept(eq, was: was.eq, played: played.eq)
        tempo = Self.kept(tempo, was: was.tempo, played: played.tempo)
        controls = Self.kept(controls, was: was.controls, played: played.controls)
        masterEffects.keepLiveState(played.masterEffects, was: was.masterEffects)
        for index in returns.indices {
            let name = returns[index].name
            guard let before = was.returns.first(where: { $0.name == name }),
                let after = played.returns.first(where: { $0.name == name })
            else { continue }
            returns[index].level = Self.kept(returns[index].level, was: before.level, played: after.level)
            returns[index].effects.keepLiveState(after.effects, was: before.effects)
        }
        for index in parts.indices {
            let name = parts[index].name
            guard let before = was.parts.first(where: { $0.name == name }),
                let after = played.parts.first(where: { $0.name == name }),
                before.instrument == parts[index].instrument, before.plugin == parts[index].plugin
            else { continue }
            var part = parts[index]
            part.volume = Self.kept(part.volume, was: before.volume, played: after.volume)
            part.pan = Self.kept(part.pan, was: before.pan, played: after.pan)
            part.enabled = Self.kept(part.enabled, was: before.enabled, played: after.enabled)
            part.eq = Self.kept(part.eq, was: before.eq, played: after.eq)
            part.preset = Self.kept(part.preset, was: before.preset, played: after.preset)
            part.program = Self.kept(part.program, was: before.program, played: after.program)
            part.state = Self.kept(part.state, was: before.state, played: after.state)
            part.sends = Self.kept(part.sends, was: before.sends, played: after.sends)
            part.parameters = Self.kept(part.parameters, was: before.parameters, played: after.parameters)
            let channels = Set(part.channels)
            part.programs = Self.kept(part.programs, was: before.programs, played: after.programs)
                .filter { channels.contains($0.key) }
            part.effects.keepLiveState(after.effects, was: before.effects)
            parts[index] = part
        }
    }
}

extension [EffectSpec] {
    /// Each effect's parameters kept as `Rig.keepLiveState` keeps values, where the chain is the same units
    /// in the same places as before and as played.
    fileprivate mutating func keepLiveState(_ played: [EffectSpec], was: [EffectSpec]) {
        guard count == was.count, count == played.count,
            indices.allSatisfy({ self[$0].kind == was[$0].kind && self[$0].kind == played[$0].kind })
        else { return }
        for index in indices {
            func values(_ spec: EffectSpec) -> [String: Float] {
                Dictionary(spec.parameters.map { (EffectSpec.dashed($0.name), $0.value) }) { _, last in last }
            }
            let kept = Rig.kept(values(self[index]), was: values(was[index]), played: values(played[index]))
            for (name, value) in kept.sorted(by: { $0.key < $1.key }) { self[index].setParameter(name, value) }
            self[index].parameters.removeAll { kept[EffectSpec.dashed($0.name)] == nil }
        }
    }
}
