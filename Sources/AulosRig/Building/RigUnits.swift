import AulosCore
import AulosFluid
import AulosGraph
import AulosLV2
import AulosMIDI
import AulosSFZ
import AulosUnits
import Foundation

/// Adds units to a playback rig's graph, each set up like the rest of the rig (slice, host callbacks,
/// processing format): the parts' instruments with their sounds and EQs on their mixer buses, and EQs.
///
/// Threads: control thread.
struct RigUnits {
    let graph: AudioGraph
    let mixer: MultichannelMixerUnit
    let mixerNode: NodeID
    let sampleRate: Double
    let slice: UInt32
    let hostCallbacks: HostCallbackInfo

    /// Sets a unit up like the rest of the rig: the slice, the host callbacks and the processing format.
    func configure(_ unit: AudioUnit) throws {
        let processing = StreamFormat.canonical(channels: 2, sampleRate: sampleRate)
        try unit.set(.maximumFramesPerSlice, slice)
        try unit.set(.hostCallbacks, hostCallbacks)
        if unit.inputBusCount > 0 && !(unit is MultichannelMixerUnit) {
            try unit.set(.streamFormat, processing, scope: .input)
        }
        // Every output: a mixer's sends as well as its mix (each keeps its channel count).
        for element in 0..<unit.outputBusCount {
            let channels = unit.outputFormat(element).channelsPerFrame
            try unit.set(
                .streamFormat, StreamFormat.canonical(channels: channels, sampleRate: sampleRate), scope: .output,
                element: Element(element))
        }
    }

    /// An iPod-style EQ set to `preset`, fed by `source`: a part's or the master EQ.
    func addEQ(_ preset: String, after source: NodeID) throws -> (NodeID, IPodEQUnit) {
        let node = try graph.addNode(IPodEQUnit.componentDescription)
        let unit = try graph.unit(for: node) as! IPodEQUnit
        try configure(unit)
        try unit.selectPreset(preset)
        try graph.connectNodeInput(source, sourceOutput: 0, node, destinationInput: 0)
        return (node, unit)
    }

    /// An effect chain fed by output `sourceOutput` of `source`: each effect built, set up as its spec says
    /// and connected after the one before. Returns the first node (nil for an empty chain), the last node
    /// (`source` itself for an empty chain) and the units in order.
    func addChain(_ specs: [EffectSpec], after source: NodeID, sourceOutput: Element = 0) throws -> (
        first: NodeID?, last: NodeID, lastOutput: Element, units: [AudioUnit]
    ) {
        var (last, lastOutput) = (source, sourceOutput)
        var first: NodeID?
        var units: [AudioUnit] = []
        for spec in specs {
            let node = try graph.addNode(spec.kind.componentDescription)
            let unit = try graph.unit(for: node)
            try configure(unit)
            do {
                try spec.apply(to: unit)
            } catch {
                throw RigError(spec.source.prefix + error.message)
            }
            try graph.connectNodeInput(last, sourceOutput: lastOutput, node, destinationInput: 0)
            (last, lastOutput) = (node, 0)
            first = first ?? node
            units.append(unit)
        }
        return (first, last, lastOutput, units)
    }

    /// One part: its instrument with its sound, its EQ, a Side Output for each of `sideOutputs`, its mixer
    /// bus set to the part's volume, pan and state — and, given a `sideBus`, the instrument's effect-send
    /// output (its MIDI channels weighed by CC 91/93) on that mixer input. Returns the part and, for a
    /// sampler with a program, that program on each of its channels.
    func addPart(
        _ part: Rig.Part, rigIndex: Int, bus: Element, sideBus: Element?, arpeggio: Arpeggio?,
        sideOutputs: [RenderCallbackStruct] = []
    ) throws -> (
        PlaybackRig.LoadedPart, [TimedMIDIEvent]
    ) {
        let description: ComponentDescription
        switch part.instrument {
        case .synth: description = OscillatorSynthUnit.componentDescription
        case .sampler: description = FluidSynthSamplerUnit.componentDescription
        case .sfz: description = SFZInstrumentUnit.componentDescription
        case .lv2:
            // Registered (and checked) by PlaybackRig before the graph was made.
            description = LV2World.shared.info(part.plugin ?? "")?.componentDescription ?? .any
        }
        let node = try graph.addNode(description)
        let instrument = try graph.unit(for: node) as! any MusicDevice
        try configure(instrument)
        let programs: [TimedMIDIEvent]
        do {
            programs = try loadSound(of: part, into: instrument, bus: bus, arpeggio: arpeggio)
        } catch let error as AudioUnitError where !part.source.file.isEmpty || part.instrument == .lv2 {
            // An LV2 part is named even from the command line (--instrument lv2:URI): its plugin is what
            // can fail there, and the rest of the message is the plugin's.
            throw RigError("\(part.source.prefix)part '\(part.name)': \(error.detail)")
        } catch let error as RigError where !part.source.file.isEmpty || part.instrument == .lv2 {
            throw RigError("\(part.source.prefix)part '\(part.name)': \(error.message)")
        }
        // MIDI effects before the instrument: the part's MIDI reaches the first, each plays into the next,
        // the last into the instrument.
        let midiEffects = try addMIDIEffects(part.midiEffects, before: instrument)
        // Insert effects, then the EQ: the instrument's effect-send output (below) leaves before them.
        let chain = try addChain(part.effects, after: node)
        // An insert that takes MIDI hears what the instrument hears, at its frames.
        var heard = instrument.midiInput
        for case let plugin as LV2Unit in chain.units where plugin.takesMIDI {
            heard.setMirror(plugin.midiInput)
            heard = plugin.midiInput
        }
        var (source, eq) = try part.eq.map { preset in try addEQ(preset, after: chain.last) } ?? (chain.last, nil)
        var sides: [AudioUnit] = []
        for sideOutput in sideOutputs {
            // The part's own output (JACK's per-part ports, its recording tap): what it sends into the mix,
            // before volume and pan.
            let node = try graph.addNode(SideOutputUnit.componentDescription)
            let side = try graph.unit(for: node) as! SideOutputUnit
            side.callback = sideOutput
            try configure(side)
            try graph.connectNodeInput(source, sourceOutput: 0, node, destinationInput: 0)
            source = node
            sides.append(side)
        }
        try graph.connectNodeInput(source, sourceOutput: 0, mixerNode, destinationInput: bus)
        if let sideBus {
            try instrument.enableEffectSendOutput()
            try mixer.set(
                .streamFormat,
                StreamFormat.canonical(channels: UInt32(ChannelEffectSends.sendChannels), sampleRate: sampleRate),
                scope: .input, element: sideBus)
            try graph.connectNodeInput(node, sourceOutput: 1, mixerNode, destinationInput: sideBus)
        }
        try mixer.setParameter(MultichannelMixerUnit.Parameter.volume, scope: .input, element: bus, value: part.volume)
        try mixer.setParameter(MultichannelMixerUnit.Parameter.pan, scope: .input, element: bus, value: part.pan)
        try mixer.setParameter(
            MultichannelMixerUnit.Parameter.enable, scope: .input, element: bus, value: part.enabled ? 1 : 0)
        return (
            PlaybackRig.LoadedPart(
                rigIndex: rigIndex, part: part, instrument: instrument, eq: eq, bus: bus, effects: chain.units,
                midiEffects: midiEffects, sideOutputs: sides),
            programs
        )
    }

    /// A part's MIDI effects, each set up as its spec says and initialized, chained in order into
    /// `instrument`. Not graph nodes: each runs when what it plays into begins its slice (`MIDIEventFeed`).
    func addMIDIEffects(_ specs: [EffectSpec], before instrument: any MusicDevice) throws -> [LV2Unit] {
        var units: [LV2Unit] = []
        for spec in specs {
            let unit = try spec.kind.makeMIDIEffect()
            try configure(unit)
            do { try spec.apply(to: unit) } catch { throw RigError(spec.source.prefix + error.message) }
            units.append(unit)
        }
        for (index, unit) in units.enumerated() {
            try unit.playMIDI(into: index + 1 < units.count ? units[index + 1].midiInput : instrument.midiInput)
            try unit.initialize()
        }
        return units
    }

    /// The part's sound: the synth's preset (and arpeggiator), the sampler's SoundFont and program (the
    /// program returned as events for the part's channels), or an LV2 plugin's preset, state and parameters.
    func loadSound(of part: Rig.Part, into instrument: any MusicDevice, bus: Element, arpeggio: Arpeggio?) throws
        -> [TimedMIDIEvent]
    {
        var programs: [TimedMIDIEvent] = []
        switch instrument {
        case let synth as OscillatorSynthUnit:
            let choice = part.preset ?? part.program.map(String.init) ?? "String Ensemble"
            if !synth.presets.isEmpty {
                try synth.selectPreset(choice)
            } else if part.preset != nil || part.program != nil {
                // Asked for a sound we cannot load: say so rather than play the bare default patch.
                throw RigError(
                    "no synth presets found, so preset '\(choice)' cannot be selected "
                        + "(searched \(SearchPaths.presetFolders.joined(separator: ", ")); set AULOS_PRESETS)")
            }
            try synth.setProperty(
                OscillatorSynthUnit.polyphonyProperty, scope: .global, element: 0, value: UInt32(part.polyphony ?? 64))
            // The part's first channel is the one whose program changes the unit's parameters show.
            try synth.setProperty(
                OscillatorSynthUnit.baseChannelProperty, scope: .global, element: 0,
                value: UInt32((part.channels.min() ?? 1) - 1))
            if let wavetable = part.wavetable {
                try synth.setWavetable(
                    try WavetableFile.load(wavetable, cycle: part.wavetableCycle ?? 2048, sampleRate: sampleRate))
            }
            if let mpe = part.mpe {
                try synth.setProperty(
                    OscillatorSynthUnit.mpeZonesProperty, scope: .global, element: 0,
                    value: UInt32(mpe.lower | mpe.upper << 8))
            }
            let drums = part.drumChannels ?? [10]
            try synth.setProperty(
                OscillatorSynthUnit.drumChannelsProperty, scope: .global, element: 0,
                value: drums.reduce(UInt32(0)) { $0 | 1 << UInt32($1 - 1) })
            if let scale = part.tuning { try synth.setTuning(try tuningTable(scale, part.keymap)) }
            if let arpeggio {
                try synth.setParameter(OscillatorSynthUnit.Parameter.arpMode.id, value: Float(arpeggio.mode.rawValue))
                try synth.setParameter(OscillatorSynthUnit.Parameter.arpRate.id, value: Float(arpeggio.rate.rawValue))
            }
        case let sampler as FluidSynthSamplerUnit:
            guard let font = part.soundFont ?? sampler.soundFontPath ?? SearchPaths.soundFont else {
                throw RigError(
                    "no SoundFont found for part '\(part.name)'; give one with soundfont: (searched "
                        + "\(SearchPaths.soundFonts.joined(separator: ", ")))")
            }
            if let polyphony = part.polyphony {
                try sampler.setProperty(
                    FluidSynthSamplerUnit.polyphonyProperty, scope: .global, element: 0, value: UInt32(polyphony))
            }
            try sampler.loadSoundFont(font)
            if let scale = part.tuning { try sampler.setTuning(try tuningTable(scale, part.keymap)) }
            if let program = part.program {
                for channel in part.channels where channel != 10 {
                    if let bank = part.bank {
                        programs.append(
                            TimedMIDIEvent(
                                sampleTime: 0, destination: UInt16(bus),
                                message: ChannelMessage(
                                    status: 0xB0 | UInt8(channel - 1), data1: 0, data2: UInt8(bank))))
                    }
                    programs.append(
                        TimedMIDIEvent(
                            sampleTime: 0, destination: UInt16(bus),
                            message: ChannelMessage(status: 0xC0 | UInt8(channel - 1), data1: UInt8(program))))
                }
            }
        case let player as SFZInstrumentUnit:
            guard let library = part.library else {
                throw RigError("part '\(part.name)' plays an SFZ library: give its path as instrument: sfz:PATH")
            }
            if let polyphony = part.polyphony {
                try player.setProperty(
                    SFZInstrumentUnit.polyphonyProperty, scope: .global, element: 0, value: UInt32(polyphony))
            }
            try player.loadLibrary(library)
            // A program chooses among the library's loprog/hiprog regions: sent to the part's channels.
            if let program = part.program {
                for channel in part.channels {
                    programs.append(
                        TimedMIDIEvent(
                            sampleTime: 0, destination: UInt16(bus),
                            message: ChannelMessage(status: 0xC0 | UInt8(channel - 1), data1: UInt8(program))))
                }
            }
        case let plugin as LV2Unit:
            try loadSound(of: part, into: plugin)
        default:
            break
        }
        noteStartingPrograms(of: part, instrument)
        if !(instrument is LV2Unit) {
            // After the preset: the values a player moved away from it (`aulos save`).
            for (name, value) in part.parameters.sorted(by: { $0.key < $1.key }) {
                try EffectSpec.set(name, to: value, on: instrument, called: "part '\(part.name)':")
            }
            // Channels playing something else than the part starts on, each by its own bank and program.
            for (channel, chosen) in part.programs.sorted(by: { $0.key < $1.key }) {
                for message in chosen.messages(onChannel: channel) {
                    programs.append(TimedMIDIEvent(sampleTime: 0, destination: UInt16(bus), message: message))
                }
            }
        }
        return programs
    }

    /// What each of the part's channels plays before any program change reaches it, for the panel's menus
    /// and `aulos save` (`ChannelPrograms`): the synth's preset, FluidSynth's defaults (bank 0 program 0,
    /// the drum bank 128 on channel 10), an LV2 plugin's preset. The rig's own program goes as events, and is
    /// noted when the instrument takes them.
    private func noteStartingPrograms(of part: Rig.Part, _ instrument: any MusicDevice) {
        var choice: (Int) -> ChannelPrograms.Choice?
        switch instrument {
        case is FluidSynthSamplerUnit:
            choice = { ChannelPrograms.Choice(bank: $0 == 10 ? 128 : 0, program: 0) }
        case let synth as OscillatorSynthUnit:
            let number = Int(synth.currentPreset?.number ?? -1)
            let drums = part.drumChannels ?? [10]
            choice = {
                number < 0 || drums.contains($0)
                    ? nil : ChannelPrograms.Choice(bank: number / 128, program: number % 128)
            }
        default:
            let number = Int(instrument.currentPreset?.number ?? -1)
            choice = { _ in number < 0 ? nil : ChannelPrograms.Choice(bank: number / 128, program: number % 128) }
        }
        for channel in part.channels {
            if let chosen = choice(channel) { instrument.midiInput.noteProgram(chosen, onChannel: channel - 1) }
        }
    }

    /// An LV2 part: its preset, then its saved state, then its parameter values (by name or port symbol),
    /// then the plugin instantiated, so a plugin that cannot be is reported against its part; then its
    /// properties, sent by message.
    func loadSound(of part: Rig.Part, into plugin: LV2Unit) throws {
        if part.program != nil {
            throw RigError("an LV2 part takes preset: (one of its presets by name), not program:")
        }
        if plugin.componentDescription.type == .musicEffect {
            throw RigError(
                "\(plugin.name) is a MIDI effect (MIDI in and out, no audio): put it in the part's midi-effects:, "
                    + "before an instrument")
        }
        if let preset = part.preset { try plugin.applyPreset(try plugin.preset(named: preset)) }
        if let state = part.state { try plugin.restoreLV2State(state) }
        for (name, value) in part.parameters.sorted(by: { $0.key < $1.key }) {
            try EffectSpec.set(name, to: value, on: plugin, called: plugin.name)
        }
        try plugin.initialize()
        // Properties go by message, at the plugin's first run.
        for (name, text) in part.properties.sorted(by: { $0.key < $1.key }) {
            try plugin.setProperty(name, text: text)
        }
    }

    /// A part's Scala scale and mapping as a tuning table: files, or bundled tunings by name (errors name
    /// the file and line).
    func tuningTable(_ scale: String, _ keymap: String?) throws(RigError) -> TuningTable {
        let scalePath = SearchPaths.tuningFile(scale, suffix: ".scl")
        // Something by that name that cannot be followed (a symbolic link in a loop, or to nothing) is read,
        // so the error says why, rather than "no tuning".
        var link = stat()
        let present = lstat(scalePath, &link) == 0
        if !scale.contains("/") && !present {
            let bundled = SearchPaths.tunings
            throw RigError(
                "no tuning '\(scale)': give a .scl file"
                    + (bundled.isEmpty ? "" : " or one of \(bundled.joined(separator: ", ")) (aulos presets)"))
        }
        do {
            return try TuningTable.load(
                scale: scalePath,
                keymap: keymap.map { SearchPaths.tuningFile($0, suffix: ".kbm") })
        } catch {
            throw RigError(error.message)
        }
    }
}
