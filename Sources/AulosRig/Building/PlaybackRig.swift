import AulosCore
import AulosFluid
import AulosGraph
import AulosIO
import AulosLV2
import AulosMIDI
import AulosSFZ
import AulosUnits

/// The graph a rig set describes, built and initialized: each part's instrument (→ its EQ) → a mixer bus
/// → (master EQ) → (master effects) → the output. With return buses, the parts' mixer also has a send output
/// per return, each through its effects into a master mixer with the mix: parts mixer → master mixer (the
/// output volume) → master EQ → master effects → output. Every rig of a set is built up front on its own
/// mixer buses, so a program change that switches rigs changes only the routing (and the output volume and
/// master EQ, which glide): no unit is built or torn down while the audio runs, and the rig left behind
/// rings out.
///
/// MIDI reaches the instruments three ways, each a pre-render notification: a `MIDITimelinePlayer` plays a
/// known sequence (a file) by sample time, a `MIDIScheduler` takes events the control thread schedules as it
/// goes, and a live input (added by the live session) places what keyboards play. Which part hears what is
/// a `RigRouter`'s decision, made before any of them.
///
/// `aulos graph` prints it; `aulos render` pulls it offline; `aulos play` runs it on the ALSA I/O unit.
///
/// Threads: control thread.
public final class PlaybackRig {
    /// The most parts a set may hold: the router tracks each held note's parts in a 64-bit mask.
    public static let maximumParts = 64

    /// A part as built: which rig it belongs to, its units and its mixer bus.
    public struct LoadedPart {
        public var rigIndex: Int
        public var part: Rig.Part
        public var instrument: any MusicDevice
        public var eq: IPodEQUnit?
        public var bus: Element
        /// The part's insert effects, in order.
        public var effects: [AudioUnit] = []
        /// The part's MIDI effects, in order before the instrument.
        public var midiEffects: [LV2Unit] = []
        /// The part's side outputs after its EQ (JACK's per-part port, the recording tap).
        public var sideOutputs: [AudioUnit] = []
        /// Every unit the part owns, whose render time is the part's CPU load: its instrument, MIDI effects
        /// (which run inside the instrument's render, so they add nothing of their own), inserts, EQ and side
        /// outputs. Its mixer bus is the mixer's, shared by every part.
        public var units: [AudioUnit] {
            [instrument as AudioUnit] + midiEffects + effects + (eq.map { [$0] } ?? []) + sideOutputs
        }
        /// Where the part's MIDI goes: its first MIDI effect, or its instrument.
        public var midiDestination: MIDIEventQueue { midiEffects.first?.midiInput ?? instrument.midiInput }
    }

    public let set: RigSet
    /// The set as it was given, before a dry rig lost its effects and a rig's tuning went to its parts: what
    /// `liveSet` writes back.
    public let fileSet: RigSet
    /// Every parameter value as built, which `liveSet` tells a player's changes from.
    private(set) var builtValues: [UnitParameter: Float] = [:]
    /// The set as one rig: every part, the granted rate and slice, the first rig's output settings.
    public let rig: Rig
    public let graph: AudioGraph
    public let parts: [LoadedPart]
    public let instruments: [any MusicDevice]
    /// Where each part's MIDI goes, by destination index: its first MIDI effect, or its instrument.
    public var midiDestinations: [MIDIEventQueue] { parts.map(\.midiDestination) }
    /// The parts' mixer: a bus per part, and a send output per return bus.
    public let mixer: MultichannelMixerUnit
    /// The mixer whose output volume is the rig's: the master mixer when there are returns, else `mixer`.
    public let outputMixer: MultichannelMixerUnit
    /// The return buses as built, in send order (send k is the parts mixer's output k + 1), and their effects.
    public let returns: [(bus: ReturnBus, units: [AudioUnit])]
    /// The master insert chain's units, after the master EQ.
    public let masterEffects: [AudioUnit]
    /// The output stage after them: the set's gain (`output.gain`, `--gain`) and its true-peak limiter
    /// (`output.limiter`, `--no-limiter`), as the set's first rig has them.
    public let outputStage: PeakLimiterUnit
    /// Every LV2 plugin the rig plays: instruments, MIDI effects, then part, return and master effects.
    let lv2Plugins: [LV2Unit]
    /// The master EQ, once the set (or `setMasterEQ`) asked for one; `masterEQInFlow` says whether it is
    /// in the signal path now.
    public private(set) var masterEQ: IPodEQUnit?
    public private(set) var masterEQInFlow = false
    private var masterEQNode: NodeID?
    private let mixerNode: NodeID
    /// The node whose output is the whole mix (the master mixer, or the parts mixer without returns), and
    /// the node the master EQ feeds (the first master effect, or the output).
    private let mixNode: NodeID
    private let afterEQNode: NodeID
    private let outputNode: NodeID
    private let units: RigUnits
    /// Plays a file's events by sample time.
    public let timelinePlayer: MIDITimelinePlayer
    /// Takes events the control thread schedules at sample times as it goes (tests, hosts, the stop sequence).
    public let scheduler: MIDIScheduler
    public let transport: HostTransport
    /// The output format of an offline render (the Generic Output's output scope).
    public let fileFormat: StreamFormat
    /// Every rig plays in stereo.
    public static let outputChannels = 2
    /// The live session, when the rig plays to a device.
    public let session: AudioSession?
    /// Messages to send before the input's own: each sampler part's program on its channels, to that part.
    public let prelude: [TimedMIDIEvent]
    /// The parts' names in part order; a set's parts are told apart by their rig's name ("Band Piano").
    public let partNames: [String]
    /// Taps on every part's own output, when the rig was built `tappingParts`.
    public let partTaps: PartTaps?
    /// The level of what goes to the device, once `startMetering` has run.
    var outputMeter: OutputMeter?
    /// Each rig's controller mappings with their targets resolved (so a rig naming a part or parameter that
    /// does not exist fails to build, with the list of what does).
    public private(set) var controls: [[ResolvedControl]] = []

    /// A controller mapping and the target it moves.
    public struct ResolvedControl {
        public let mapping: ControlMapping
        public let target: ControlTarget
    }

    public convenience init(
        _ rig: Rig, fileSample: SampleFormat = .int16, tempoMap: [(beat: Double, bpm: Double)] = [(0, 120)],
        arpeggio: Arpeggio? = nil, session: AudioSession? = nil
    ) throws {
        try self.init(
            set: RigSet(rig), fileSample: fileSample, tempoMap: tempoMap, arpeggio: arpeggio, session: session)
    }

    /// With a `session`, the graph's head is the session's I/O unit, ALSA or JACK (live playback): the session
    /// is activated first and the whole graph runs at the granted rate with the granted period (or the
    /// session's larger slice capacity) as the slice — every unit's maximumFramesPerSlice set before
    /// initialize. Without, it is a Generic Output (offline render). With `tappingParts`, every part's own
    /// output can be recorded (`partTaps`).
    public init(
        set: RigSet, fileSample: SampleFormat = .int16, tempoMap: [(beat: Double, bpm: Double)] = [(0, 120)],
        arpeggio: Arpeggio? = nil, session: AudioSession? = nil, tappingParts: Bool = false
    ) throws {
        precondition(!set.entries.isEmpty, "a rig set has at least one rig")
        fileSet = set
        var set = set
        for index in set.entries.indices where set.entries[index].rig.dry {
            set.entries[index].rig = set.entries[index].rig.playedDry
        }
        // A rig's tuning is every synth and sampler part's that has none of its own.
        for index in set.entries.indices {
            let rig = set.entries[index].rig
            for part in rig.parts.indices where rig.parts[part].instrument != .lv2 && rig.parts[part].tuning == nil {
                set.entries[index].rig.parts[part].tuning = rig.tuning
                set.entries[index].rig.parts[part].keymap = rig.keymap
            }
        }
        let partCount = set.entries.reduce(0) { $0 + $1.rig.parts.count }
        guard partCount <= Self.maximumParts else {
            throw RigError(
                "\(partCount) parts; a rig\(set.entries.count > 1 ? " set" : "") holds at most \(Self.maximumParts)")
        }
        let effectCount = set.entries.reduce(0) { count, entry in
            count + entry.rig.parts.reduce(0) { $0 + $1.effects.count + $1.midiEffects.count }
                + entry.rig.returns.reduce(0) { $0 + $1.effects.count } + entry.rig.masterEffects.count
        }
        guard effectCount <= Rig.maximumEffects else {
            let whole = set.entries.count > 1 ? "a rig set" : "a rig"
            throw RigError("\(effectCount) effects; \(whole) holds at most \(Rig.maximumEffects)")
        }
        // Only the oscillator synth arpeggiates; accepting --arpeggio for a sampler-only rig would silently
        // render something other than what was asked for.
        if arpeggio != nil && !set.entries.contains(where: { $0.rig.parts.contains { $0.instrument == .synth } }) {
            throw RigError("--arpeggio needs a synth part: only the oscillator synth has an arpeggiator")
        }
        self.set = set
        let first = set.entries[0].rig
        var rig = Rig(name: set.name, parts: set.entries.flatMap(\.rig.parts))
        (rig.sampleRate, rig.slice, rig.volume, rig.eq, rig.controls) = (
            first.sampleRate, first.slice, first.volume, first.eq, first.controls
        )
        // LV2 parts: each plugin checked (a one-line error naming the part and what stands in the way) and
        // registered, so the graph builds it like any unit.
        let registry = UnitCatalog.registry()
        for part in set.entries.flatMap(\.rig.parts) where part.instrument == .lv2 {
            do {
                try registry.registerLV2(part.plugin ?? "")
            } catch {
                throw RigError("\(part.source.prefix)part '\(part.name)': \(error.detail)")
            }
        }
        // LV2 effects in part, return and master chains, likewise.
        let chains = set.entries.flatMap { entry in
            entry.rig.parts.flatMap(\.effects) + entry.rig.returns.flatMap(\.effects) + entry.rig.masterEffects
        }
        for spec in chains {
            guard case .lv2(let uri) = spec.kind else { continue }
            do { try registry.registerLV2(uri) } catch { throw RigError(spec.source.prefix + error.detail) }
        }
        // A live rig is headed by the session's I/O unit (ALSA, or JACK when the host chose it).
        if let session { registry.register(session.outputComponent) }
        // Parts' own outputs: where the I/O unit offers them (JACK's per-part ports), and to record them.
        registry.register(SideOutputUnit.component)
        let graph = AudioGraph(registry: registry)
        self.graph = graph
        outputNode = try graph.addNode(
            session?.outputComponent.componentDescription ?? GenericOutputUnit.componentDescription)
        mixerNode = try graph.addNode(MultichannelMixerUnit.componentDescription)
        graph.open()
        // A rig that fails to build after the session was activated must let the device go, or the rig tried
        // next (the one that played before, or the last good one) could not set its preferences.
        var built = false
        defer {
            if !built {
                try? graph.uninitialize()
                try? session?.deactivate()
            }
        }
        if let session {
            let grant = try session.activate(
                for: try graph.unit(for: outputNode) as! any LiveIOUnit, sizing: graph.units)
            rig.sampleRate = grant.sampleRate
            // Every unit is sized for the slices the I/O unit may render: the granted period, or more when the
            // driver's slice can grow while playing (JACK's buffer size, rendered in pieces of this size).
            rig.slice = max(grant.period, session.minimumSliceCapacity)
        }
        self.session = session
        self.rig = rig
        transport = HostTransport(sampleRate: rig.sampleRate, tempoMap: tempoMap)
        fileFormat = StreamFormat(
            sample: fileSample, channels: UInt32(Self.outputChannels), sampleRate: rig.sampleRate, interleaved: true)
        mixer = try graph.unit(for: mixerNode) as! MultichannelMixerUnit
        let units = RigUnits(
            graph: graph, mixer: mixer, mixerNode: mixerNode, sampleRate: rig.sampleRate, slice: rig.slice,
            hostCallbacks: transport.callbacks)
        self.units = units

        // Return buses: every rig's, by name (the first definition of a name wins), one send each.
        var returnBuses: [ReturnBus] = []
        for entry in set.entries {
            for bus in entry.rig.returns where !returnBuses.contains(where: { $0.name == bus.name }) {
                returnBuses.append(bus)
            }
        }
        // Per part, the returns of its own rig that follow CC 91/93: (send, the side bus's channel pair:
        // 0 reverb, 1 chorus). A return defined twice in a set is the first definition, controller and all.
        let partRigs = set.entries.enumerated().flatMap { index, entry in entry.rig.parts.map { _ in index } }
        // (An LV2 instrument has no per-channel sends: its part sends its own signal, see below.)
        let followedByPart = zip(partRigs, rig.parts).map { rigIndex, part in
            part.instrument == .lv2
                ? []
                : set.entries[rigIndex].rig.returns.compactMap { own -> (send: Int, pair: Int)? in
                    guard let send = returnBuses.firstIndex(where: { $0.name == own.name }),
                        let controller = returnBuses[send].controller
                    else { return nil }
                    return (send, controller == 91 ? 0 : 1)
                }
        }
        // Live input (the session names a capture device): one more mixer bus after the parts, fed by the
        // I/O unit's input callback — the seeds' I/O pass-through, mixed with the instruments. Each part
        // whose rig has returns that follow controllers has a side bus after those for its effect sends.
        let inputBus = session?.inputDevice == nil ? nil : Element(rig.parts.count)
        var nextSide = rig.parts.count + (inputBus == nil ? 0 : 1)
        let sideBuses = followedByPart.map { followed -> Element? in
            guard !followed.isEmpty else { return nil }
            defer { nextSide += 1 }
            return Element(nextSide)
        }
        try mixer.set(.elementCount, UInt32(nextSide), scope: .input)
        guard returnBuses.count <= MultichannelMixerUnit.maximumSends else {
            throw RigError(
                "\(returnBuses.count) return buses; a rig\(set.entries.count > 1 ? " set" : "") has at most "
                    + "\(MultichannelMixerUnit.maximumSends)")
        }
        if !returnBuses.isEmpty { try mixer.set(.elementCount, UInt32(1 + returnBuses.count), scope: .output) }
        try units.configure(mixer)
        try units.configure(try graph.unit(for: outputNode))
        if session == nil { try graph.unit(for: outputNode).set(.streamFormat, fileFormat, scope: .output) }

        var parts: [LoadedPart] = []
        var prelude: [TimedMIDIEvent] = []
        let io = session == nil ? nil : try graph.unit(for: outputNode) as? any LiveIOUnit
        let taps = tappingParts ? PartTaps(count: rig.parts.count) : nil
        partTaps = taps
        var partNames: [String] = []
        for (bus, part) in rig.parts.enumerated() {
            // A set's parts are told apart by their rig's name.
            let name = set.entries.count > 1 ? "\(set.entries[partRigs[bus]].rig.name) \(part.name)" : part.name
            let (loaded, programs) = try units.addPart(
                part, rigIndex: partRigs[bus], bus: Element(bus), sideBus: sideBuses[bus], arpeggio: arpeggio,
                sideOutputs: [io?.partOutput(named: name), taps?.callback(for: bus)].compactMap { $0 })
            partNames.append(name)
            for (send, pair) in followedByPart[bus] {
                try mixer.setSendSource(send, of: Element(bus), side: sideBuses[bus]!, pair: pair)
                try mixer.setParameter(
                    MultichannelMixerUnit.Parameter.sendLevel(send), scope: .input, element: Element(bus), value: 1)
            }
            parts.append(loaded)
            prelude += programs
        }
        self.parts = parts
        self.partNames = partNames
        instruments = parts.map(\.instrument)
        self.prelude = prelude
        // An LV2 part sends its own signal to the returns that follow CC 91/93, at General MIDI's default
        // send (40/127) unless it names them.
        for loaded in parts where loaded.part.instrument == .lv2 {
            for (send, bus) in returnBuses.enumerated() where bus.controller != nil {
                let level = bus.controller == 91 ? Float(ChannelEffectSends.defaultReverb) / 127 : 0
                try mixer.setParameter(
                    MultichannelMixerUnit.Parameter.sendLevel(send), scope: .input, element: loaded.bus, value: level)
            }
        }
        // Each part's sends, by return name, on its own bus.
        for loaded in parts {
            for (name, level) in loaded.part.sends {
                guard let send = returnBuses.firstIndex(where: { $0.name == name }) else {
                    throw RigError(
                        "\(loaded.part.source.prefix)part '\(loaded.part.name)': no return '\(name)' (this rig has "
                            + "\(returnBuses.isEmpty ? "no returns" : returnBuses.map(\.name).joined(separator: ", ")))"
                    )
                }
                try mixer.setParameter(
                    MultichannelMixerUnit.Parameter.sendLevel(send), scope: .input, element: loaded.bus, value: level)
            }
        }

        // Returns: send k → its effects → the master mixer's input k + 1, beside the mix on input 0.
        var builtReturns: [(bus: ReturnBus, units: [AudioUnit])] = []
        if returnBuses.isEmpty {
            (mixNode, outputMixer) = (mixerNode, mixer)
        } else {
            let masterNode = try graph.addNode(MultichannelMixerUnit.componentDescription)
            let master = try graph.unit(for: masterNode) as! MultichannelMixerUnit
            try master.set(.elementCount, UInt32(1 + returnBuses.count), scope: .input)
            try units.configure(master)
            try graph.connectNodeInput(mixerNode, sourceOutput: 0, masterNode, destinationInput: 0)
            for (index, bus) in returnBuses.enumerated() {
                let chain = try units.addChain(bus.effects, after: mixerNode, sourceOutput: Element(1 + index))
                try graph.connectNodeInput(
                    chain.last, sourceOutput: chain.lastOutput, masterNode, destinationInput: Element(1 + index))
                try master.setParameter(
                    MultichannelMixerUnit.Parameter.volume, scope: .input, element: Element(1 + index), value: bus.level
                )
                builtReturns.append((bus, chain.units))
            }
            (mixNode, outputMixer) = (masterNode, master)
        }
        returns = builtReturns
        try outputMixer.setParameter(
            MultichannelMixerUnit.Parameter.volume, scope: .output, element: 0, value: first.volume)

        // One master EQ serves every rig of the set that has one ("Flat", transparent, for those without),
        // then the first rig's master effects.
        let master =
            set.entries.contains { $0.rig.eq != nil } ? try units.addEQ(first.eq ?? "Flat", after: mixNode) : nil
        (masterEQNode, masterEQ, masterEQInFlow) = (master?.0, master?.1, master != nil)
        let masterChain = try units.addChain(first.masterEffects, after: master?.0 ?? mixNode)
        masterEffects = masterChain.units
        let effects: [AudioUnit] = parts.flatMap(\.effects) + builtReturns.flatMap(\.units) + masterEffects
        lv2Plugins =
            instruments.compactMap { $0 as? LV2Unit } + parts.flatMap(\.midiEffects)
            + effects.compactMap { $0 as? LV2Unit }
        // The output stage: the rig's gain and the true-peak limiter, last before the device or the file.
        let stageNode = try graph.addNode(PeakLimiterUnit.componentDescription)
        let stage = try graph.unit(for: stageNode) as! PeakLimiterUnit
        stage.limiting = first.limiter
        try units.configure(stage)
        try stage.setParameter(PeakLimiterUnit.Parameter.gain.id, scope: .global, element: 0, value: first.gain)
        outputStage = stage
        try graph.connectNodeInput(masterChain.last, sourceOutput: 0, stageNode, destinationInput: 0)
        afterEQNode = masterChain.first ?? stageNode
        try graph.connectNodeInput(stageNode, sourceOutput: 0, outputNode, destinationInput: 0)
        if let inputBus, let io = try graph.unit(for: outputNode) as? any LiveIOUnit {
            try io.set(.enableIO, UInt32(1), scope: .input, element: 1)
            try graph.setNodeInputCallback(mixerNode, destinationInput: inputBus, io.inputCallback)
        }
        let queues = parts.map(\.midiDestination)
        timelinePlayer = MIDITimelinePlayer(destinations: queues)
        scheduler = MIDIScheduler(destinations: queues, capacity: 16_384)
        // The transport first: units read its snapshot during the pull, and the clock output after it.
        try graph.addRenderNotify(transport.renderNotify)
        try graph.addRenderNotify(timelinePlayer.renderNotify)
        try graph.addRenderNotify(scheduler.renderNotify)
        // Samplers lock their fonts' samples in memory for live play only (an offline render has no deadline).
        for case let sampler as FluidSynthSamplerUnit in instruments { sampler.locksSampleMemory = session != nil }
        // Offline, the SFZ player waits for its streamed samples (the file is the same at any disk speed and
        // slice size); live, late data plays silence and is counted, and the render thread never waits.
        for case let player as SFZInstrumentUnit in instruments { player.waitsForData = session == nil }
        try graph.initialize()
        // Offline, an LV2 plugin's worker jobs are done inside its run: the file does not depend on how
        // fast a worker thread was.
        if session == nil {
            for plugin in lv2Plugins { plugin.worksInRender = true }
        }
        transport.play()
        for (index, entry) in set.entries.enumerated() {
            var resolved: [ResolvedControl] = []
            for mapping in entry.rig.controls {
                do {
                    resolved.append(
                        ResolvedControl(mapping: mapping, target: try target(mapping.target, preferring: index)))
                } catch {
                    let whose = mapping.source.file.isEmpty ? "rig '\(entry.rig.name)': " : mapping.source.prefix
                    throw RigError(whose + "controls: cc \(mapping.controller): " + error.message)
                }
            }
            controls.append(resolved)
        }
        try checkSnapshots()
        built = true
        builtValues = parameterValues()
    }

    // MARK: Playing

    /// Rig `index`'s output volume and master EQ (after a switch). Both glide.
    public func applyOutputSettings(ofRig index: Int) throws(AudioUnitError) {
        let entry = set.entries[index].rig
        try outputMixer.setParameter(
            MultichannelMixerUnit.Parameter.volume, scope: .output, element: 0, value: entry.volume)
        try masterEQ?.selectPreset(entry.eq ?? "Flat")
    }

    /// Carries out what the router decided besides events: a mapped controller's parameter (at `offset`
    /// frames into the next slice when rendering offline), a rig switch's output settings, or a recalled
    /// snapshot's values (its programs are the caller's to play: `programMessages(ofSnapshot:ofRig:)`).
    public func apply(_ action: RigRouter.Action, offset: UInt32 = 0) {
        switch action {
        case .control(let target, let value):
            if case .parameter(let unit, let id, let scope, let element) = target.kind {
                try? unit.setParameter(id, scope: scope, element: element, value: value, bufferOffset: offset)
            } else {
                try? target.apply(value)
            }
        case .rigSwitched(let index):
            try? applyOutputSettings(ofRig: index)
        case .snapshotRecalled(let rig, let snapshot):
            // Its values; its programs are messages for the parts, which the caller plays where MIDI goes.
            try? setValues(ofSnapshot: snapshot, ofRig: rig)
        case .songChosen:
            break  // The live session's file player's (it loads the song).
        case .retune(let part, let changes):
            guard let sampler = instruments[part] as? FluidSynthSamplerUnit else { return }
            var table = sampler.tuning ?? .equal
            for change in changes { table.pitches[Int(change.key & 0x7F)] = change.pitch }
            try? sampler.setTuning(table)
        }
    }

    /// Puts the master EQ into the signal path with `preset`, or (nil) takes it out — a graph change, which
    /// the running graph takes as one new render plan (the EQ unit stays built, so controllers mapped to
    /// it keep working when it comes back).
    public func setMasterEQ(_ preset: String?) throws {
        if let preset {
            guard IPodEQUnit.curveIndex(preset) != nil else {
                throw RigError("unknown EQ preset '\(preset)' (see aulos presets)")
            }
            if masterEQNode == nil {
                let node = try graph.addNode(IPodEQUnit.componentDescription)
                let unit = try graph.unit(for: node) as! IPodEQUnit
                try units.configure(unit)
                (masterEQNode, masterEQ) = (node, unit)
            }
            try masterEQ!.selectPreset(preset)
            guard !masterEQInFlow, let node = masterEQNode else { return }
            try graph.disconnectNodeInput(afterEQNode, destinationInput: 0)
            try graph.connectNodeInput(mixNode, sourceOutput: 0, node, destinationInput: 0)
            try graph.connectNodeInput(node, sourceOutput: 0, afterEQNode, destinationInput: 0)
        } else {
            guard masterEQInFlow, let node = masterEQNode else { return }
            try graph.disconnectNodeInput(node, destinationInput: 0)
            try graph.disconnectNodeInput(afterEQNode, destinationInput: 0)
            try graph.connectNodeInput(mixNode, sourceOutput: 0, afterEQNode, destinationInput: 0)
        }
        masterEQInFlow = preset != nil
        try graph.update()
    }

    /// A controller target by name (`aulos set`, MIDI-learn, a rig's controls), preferring rig `rigIndex`'s
    /// parts.
    public func target(_ name: String, preferring rigIndex: Int = 0) throws(RigError) -> ControlTarget {
        try ControlTarget.resolve(name, in: self, preferring: rigIndex)
    }

    /// `UNIT.PARAMETER` among the parts of rig `rigIndex` alone (and the returns and output): what a request
    /// from a player names, who hears only the rig playing. (A rig's controls may name another rig's parts:
    /// `target(_:preferring:)`.)
    public func target(_ name: String, inRig rigIndex: Int) throws(RigError) -> ControlTarget {
        try ControlTarget.resolve(name, in: self, preferring: rigIndex, onlyThere: true)
    }

    /// Voices sounding across every instrument part.
    public var activeVoices: Int { instruments.reduce(0) { $0 + $1.voiceBudget.active } }

    /// Voices ended early under overload, across every instrument.
    public var voicesShed: Int { instruments.reduce(0) { $0 + $1.voiceBudget.shed } }

    /// Each SFZ part's streaming counters (voices, late voices, streamed bytes), in part order; empty when no
    /// part plays an SFZ library.
    public var sampleStreaming: [SampleStreamingStatus] {
        parts.compactMap { loaded in
            guard let player = loaded.instrument as? SFZInstrumentUnit else { return nil }
            let status = player.status
            return SampleStreamingStatus(
                rig: loaded.rigIndex, part: loaded.part.name, voices: status.activeVoices,
                underruns: status.underruns, lateFrames: status.lateFrames, streamedBytes: status.streamedBytes,
                preloadedBytes: status.preloadedBytes, droppedRequests: status.droppedRequests)
        }
    }

    /// What is wrong with the rig's sounds but lets it play (a SoundFont with broken samples; an LV2 plugin
    /// that does not promise a real-time-safe run(), or that produced NaN or infinity), once each.
    public var warnings: [String] {
        var seen: [String] = []
        for case let sampler as FluidSynthSamplerUnit in parts.map(\.instrument) {
            for warning in sampler.soundFontWarnings where !seen.contains(warning) { seen.append(warning) }
        }
        // An SFZ library's opcodes and headers it does not play, once each (the library names them).
        for case let player as SFZInstrumentUnit in parts.map(\.instrument) {
            for warning in player.libraryWarnings where !seen.contains(warning) { seen.append(warning) }
        }
        let plugins = lv2Plugins
        for plugin in plugins where !plugin.plugin.isHardRealTimeCapable {
            let warning = "\(plugin.name) is not hard-real-time capable: its run() may block or allocate (xruns)"
            if !seen.contains(warning) { seen.append(warning) }
        }
        for plugin in plugins where plugin.nonFiniteSamples > 0 {
            seen.append(
                "\(plugin.name) produced \(plugin.nonFiniteSamples) samples of NaN or infinity, played as silence")
        }
        // Every unit's output is guarded by the render plan (see `RenderPlan.guardOutput`).
        for unit in graph.units where unit.guardedSamples > 0 {
            seen.append(
                "\(unit.name) produced NaN, infinity or more than +60 dBFS in \(unit.guardedSamples) samples, each "
                    + "such slice played as silence")
        }
        return seen
    }

    /// Samplers that were sent notes and made no sound at all: a SoundFont whose samples cannot sound for
    /// what was played. One line each, after playing.
    public var silentSamplers: [String] {
        parts.compactMap { loaded in
            guard let sampler = loaded.instrument as? FluidSynthSamplerUnit, sampler.playedNotes > 0,
                sampler.audibleSlices == 0
            else { return nil }
            let font = (sampler.soundFontPath ?? "").split(separator: "/").last.map(String.init) ?? "its SoundFont"
            let notes = sampler.playedNotes == 1 ? "1 note" : "\(sampler.playedNotes) notes"
            return "part '\(loaded.part.name)' played \(notes) on \(font) and made no sound: "
                + "the font has no sample that sounds for them"
        }
    }

    /// Loads the SFZ libraries `set`'s parts play (`SFZLibraryCache.preload`) so that building it waits for
    /// none: a live reload calls it while the old rig still plays, then builds the new rig and lets go
    /// (`SFZLibraryCache.releasePreloaded`). A library unchanged on disk is the one already playing.
    public static func preloadSampleLibraries(of set: RigSet) {
        let paths = set.entries.flatMap { entry in
            entry.rig.parts.compactMap { $0.instrument == .sfz ? $0.library : nil }
        }
        if !paths.isEmpty { SFZLibraryCache.shared.preload(paths) }
    }

    /// After the build: the preloaded libraries are the new rig's units' to keep (or free).
    public static func releasePreloadedSampleLibraries() { SFZLibraryCache.shared.releasePreloaded() }

    public func close() {
        try? graph.stop()
        try? graph.uninitialize()
        try? session?.deactivate()
    }
}
