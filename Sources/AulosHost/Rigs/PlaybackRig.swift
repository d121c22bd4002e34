import AulosALSA
import AulosCore
import AulosFluid
import AulosGraph
import AulosMIDI
import AulosUnits
import Glibc

/// The graph a rig set describes, built and initialized: each part's instrument (→ its EQ) → a mixer bus
/// → (master EQ) → the output, with one MIDI scheduler as the graph's render notify and a `RigRouter`
/// deciding which parts hear what. Every rig of a set is built up front on its own mixer buses, so a
/// program change that switches rigs changes only the routing (and the output volume and master EQ, which
/// glide): no unit is built or torn down while the audio runs, and the rig left behind rings out.
/// `aulos graph` prints it; `aulos render` pulls it; `aulos play` runs it on the ALSA I/O unit.
///
/// Threads: control thread (the router is also used from the MIDI thread).
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
    }

    public let set: RigSet
    /// The set as one rig: every part, the granted rate and slice, the first rig's output settings.
    public let rig: Rig
    public let graph: AudioGraph
    public let parts: [LoadedPart]
    public let instruments: [any MusicDevice]
    public let mixer: MultichannelMixerUnit
    /// The master EQ, once the set (or `setMasterEQ`) asked for one; `masterEQInFlow` says whether it is
    /// in the signal path now.
    public private(set) var masterEQ: IPodEQUnit?
    public private(set) var masterEQInFlow = false
    private var masterEQNode: NodeID?
    private let mixerNode: NodeID
    private let outputNode: NodeID
    /// Sets a new unit up like the rest of the rig (slice, host callbacks, formats).
    private let configureUnit: (AudioUnit) throws -> Void
    public let scheduler: MIDIScheduler
    public let transport: HostTransport
    public let fileFormat: StreamFormat
    /// The live session, when the rig plays to a device.
    public let session: AudioSession?
    /// Messages to send before the input's own: each sampler part's program on its channels, to that part.
    public let prelude: [(ScheduledMessage, UInt16)]
    public private(set) var router: RigRouter!

    public convenience init(_ rig: Rig, fileSample: SampleFormat = .int16, tempoMap: [(beat: Double, bpm: Double)] = [(0, 120)],
                            arpeggio: Arpeggio? = nil, session: AudioSession? = nil) throws {
        try self.init(set: RigSet(rig), fileSample: fileSample, tempoMap: tempoMap, arpeggio: arpeggio, session: session)
    }

    /// With a `session`, the graph's head is the ALSA I/O unit (live playback): the session is activated
    /// first and the whole graph runs at the granted rate with the granted period as the slice — every
    /// unit's maximumFramesPerSlice set before initialize. Without, it is a Generic Output (offline render).
    public init(set: RigSet, fileSample: SampleFormat = .int16, tempoMap: [(beat: Double, bpm: Double)] = [(0, 120)],
                arpeggio: Arpeggio? = nil, session: AudioSession? = nil) throws {
        precondition(!set.entries.isEmpty, "a rig set has at least one rig")
        guard set.entries.reduce(0, { $0 + $1.rig.parts.count }) <= Self.maximumParts else {
            throw AudioUnitError(.invalidPropertyValue, "a rig set holds at most \(Self.maximumParts) parts")
        }
        self.set = set
        var rig = Rig(name: set.name, parts: set.entries.flatMap(\.rig.parts))
        let first = set.entries[0].rig
        rig.sampleRate = first.sampleRate
        rig.slice = first.slice
        rig.volume = first.volume
        rig.eq = first.eq
        rig.controls = first.controls
        let graph = AudioGraph(registry: HostComponents.registry())
        self.graph = graph
        let outputNode = try graph.addNode(session == nil ? GenericOutputUnit.componentDescription : ALSAOutputUnit.componentDescription)
        graph.open()
        if let session {
            let grant = try session.activate(for: try graph.unit(for: outputNode) as! ALSAOutputUnit, sizing: graph.units)
            rig.sampleRate = grant.sampleRate
            rig.slice = grant.period
        }
        self.session = session
        self.rig = rig
        transport = HostTransport(sampleRate: rig.sampleRate, tempoMap: tempoMap)
        let processing = StreamFormat.canonical(channels: 2, sampleRate: rig.sampleRate)
        fileFormat = StreamFormat(sample: fileSample, channels: 2, sampleRate: rig.sampleRate, interleaved: true)
        let mixerNode = try graph.addNode(MultichannelMixerUnit.componentDescription)
        self.mixerNode = mixerNode
        self.outputNode = outputNode
        let callbacks = transport.callbacks
        let slice = rig.slice
        configureUnit = { unit in
            try unit.set(.maximumFramesPerSlice, slice)
            try unit.set(.hostCallbacks, callbacks)
            if unit.inputBusCount > 0 && !(unit is MultichannelMixerUnit) { try unit.set(.streamFormat, processing, scope: .input) }
            try unit.set(.streamFormat, processing, scope: .output)
        }
        let configure = configureUnit
        /// An iPod-style EQ set to `preset`, fed by `source`: a part's or the master EQ.
        func insertEQ(_ preset: String, after source: NodeID) throws -> (NodeID, IPodEQUnit) {
            let eqNode = try graph.addNode(IPodEQUnit.componentDescription)
            let unit = try graph.unit(for: eqNode) as! IPodEQUnit
            try configure(unit)
            try unit.selectPreset(preset)
            try graph.connectNodeInput(source, sourceOutput: 0, eqNode, destinationInput: 0)
            return (eqNode, unit)
        }
        mixer = try graph.unit(for: mixerNode) as! MultichannelMixerUnit
        // Live input (the session names a capture device): one more mixer bus after the parts, fed by the
        // I/O unit's input callback — the seeds' I/O pass-through, mixed with the instruments.
        let inputBus = session?.inputDevice == nil ? nil : Element(rig.parts.count)
        try mixer.set(.elementCount, UInt32(rig.parts.count + (inputBus == nil ? 0 : 1)), scope: .input)
        try configure(mixer)
        try configure(try graph.unit(for: outputNode))
        if session == nil { try graph.unit(for: outputNode).set(.streamFormat, fileFormat, scope: .output) }
        try mixer.setParameter(MultichannelMixerUnit.Parameter.volume, scope: .output, element: 0, value: first.volume)

        // Only the oscillator synth arpeggiates; accepting --arpeggio for a sampler-only rig would
        // silently render something other than what was asked for.
        if arpeggio != nil && !rig.parts.contains(where: { $0.instrument == .synth }) {
            throw AudioUnitError(.invalidPropertyValue, "--arpeggio needs a synth part: only the oscillator synth has an arpeggiator")
        }
        var parts: [LoadedPart] = []
        var prelude: [(ScheduledMessage, UInt16)] = []
        let partRigs = set.entries.enumerated().flatMap { index, entry in entry.rig.parts.map { _ in index } }
        for (bus, part) in rig.parts.enumerated() {
            let description = part.instrument == .synth ? OscillatorSynthUnit.componentDescription : FluidSynthSamplerUnit.componentDescription
            let node = try graph.addNode(description)
            let instrument = try graph.unit(for: node) as! any MusicDevice
            try configure(instrument)
            switch instrument {
            case let synth as OscillatorSynthUnit:
                let choice = part.preset ?? part.program.map(String.init) ?? "String Ensemble"
                if !synth.presets.isEmpty {
                    try synth.selectPreset(choice)
                } else if part.preset != nil || part.program != nil {
                    // Asked for a sound we cannot load: say so rather than play the bare default patch.
                    throw AudioUnitError(.invalidFile, "no synth presets found, so preset '\(choice)' cannot be selected "
                        + "(searched \(SynthPresetLibrary.searchPaths.joined(separator: ", ")); set AULOS_PRESETS)")
                }
                try synth.setProperty(OscillatorSynthUnit.polyphonyProperty, scope: .global, element: 0, value: UInt32(64))
                if let arpeggio {
                    try synth.setParameter(OscillatorSynthUnit.Parameter.arpMode.id, value: Float(arpeggio.mode.rawValue))
                    try synth.setParameter(OscillatorSynthUnit.Parameter.arpRate.id, value: Float(arpeggio.rate.rawValue))
                }
            case let sampler as FluidSynthSamplerUnit:
                guard let font = part.soundFont ?? sampler.soundFontPath ?? SoundFontLocator.defaultPath else {
                    throw AudioUnitError(.invalidFile, "no SoundFont found for part '\(part.name)'; give one (searched \(SoundFontLocator.searchPaths.joined(separator: ", ")))")
                }
                try sampler.loadSoundFont(font)
                if let program = part.program {
                    for channel in part.channels where channel != 10 {
                        prelude.append((ScheduledMessage(sampleTime: 0, message: .programChange(channel: UInt8(channel - 1), program: UInt8(program))),
                                        UInt16(bus)))
                    }
                }
            default:
                break
            }
            let (source, eq) = try part.eq.map { eq in try insertEQ(eq, after: node) } ?? (node, nil)
            try graph.connectNodeInput(source, sourceOutput: 0, mixerNode, destinationInput: Element(bus))
            try mixer.setParameter(MultichannelMixerUnit.Parameter.volume, scope: .input, element: Element(bus), value: part.volume)
            try mixer.setParameter(MultichannelMixerUnit.Parameter.pan, scope: .input, element: Element(bus), value: part.pan)
            try mixer.setParameter(MultichannelMixerUnit.Parameter.enable, scope: .input, element: Element(bus), value: part.enabled ? 1 : 0)
            parts.append(LoadedPart(rigIndex: partRigs[bus], part: part, instrument: instrument, eq: eq, bus: Element(bus)))
        }
        // One master EQ serves every rig of the set that has one ("Flat", transparent, for those without).
        let masterPreset = set.entries.contains { $0.rig.eq != nil } ? first.eq ?? "Flat" : nil
        let master = try masterPreset.map { eq in try insertEQ(eq, after: mixerNode) }
        masterEQ = master?.1
        masterEQNode = master?.0
        masterEQInFlow = master != nil
        try graph.connectNodeInput(master?.0 ?? mixerNode, sourceOutput: 0, outputNode, destinationInput: 0)
        if let inputBus, let io = try graph.unit(for: outputNode) as? ALSAOutputUnit {
            try io.set(.enableIO, UInt32(1), scope: .input, element: 1)
            try graph.setNodeInputCallback(mixerNode, destinationInput: inputBus, io.inputCallback)
        }
        self.parts = parts
        instruments = parts.map(\.instrument)
        self.prelude = prelude
        scheduler = MIDIScheduler(destinations: instruments.map(\.midiInput), capacity: 16_384)
        try graph.addRenderNotify(transport.renderNotify)
        try graph.addRenderNotify(scheduler.renderNotify)
        try graph.initialize()
        router = try RigRouter(set: set, rig: self)
        transport.play()
    }

    /// Rig `index`'s output volume and master EQ (control thread, after a switch). Both glide.
    public func applyOutputSettings(ofRig index: Int) throws(AudioUnitError) {
        let entry = set.entries[index].rig
        try mixer.setParameter(MultichannelMixerUnit.Parameter.volume, scope: .output, element: 0, value: entry.volume)
        try masterEQ?.selectPreset(entry.eq ?? "Flat")
    }

    /// Carries out what the router decided besides events: a mapped controller's parameter (at `offset`
    /// frames into the next slice when rendering offline) or a rig switch's output settings. Control thread.
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
        }
    }

    /// Puts the master EQ into the signal path with `preset`, or (nil) takes it out — a graph change, which
    /// the running graph takes as one new render plan (the EQ unit stays built, so controllers mapped to
    /// it keep working when it comes back). Control thread.
    public func setMasterEQ(_ preset: String?) throws {
        if let preset {
            guard IPodEQCurves.index(of: preset) != nil else {
                throw AudioUnitError(.invalidPropertyValue, "unknown EQ preset '\(preset)' (see aulos presets)")
            }
            if masterEQNode == nil {
                let node = try graph.addNode(IPodEQUnit.componentDescription)
                let unit = try graph.unit(for: node) as! IPodEQUnit
                try configureUnit(unit)
                masterEQNode = node
                masterEQ = unit
            }
            try masterEQ!.selectPreset(preset)
            guard !masterEQInFlow, let node = masterEQNode else { return }
            try graph.disconnectNodeInput(outputNode, destinationInput: 0)
            try graph.connectNodeInput(mixerNode, sourceOutput: 0, node, destinationInput: 0)
            try graph.connectNodeInput(node, sourceOutput: 0, outputNode, destinationInput: 0)
        } else {
            guard masterEQInFlow, let node = masterEQNode else { return }
            try graph.disconnectNodeInput(node, destinationInput: 0)
            try graph.disconnectNodeInput(outputNode, destinationInput: 0)
            try graph.connectNodeInput(mixerNode, sourceOutput: 0, outputNode, destinationInput: 0)
        }
        masterEQInFlow = preset != nil
        try graph.update()
    }

    /// A controller target by name (`aulos set`, MIDI-learn), preferring the active rig's parts.
    public func target(_ name: String) throws(AudioUnitError) -> ControlTarget {
        try ControlTarget.resolve(name, in: self, preferring: router.activeRig)
    }

    public func close() {
        try? graph.stop()
        try? graph.uninitialize()
        try? session?.deactivate()
    }
}

/// Keeps the render inside its period under overload: when the I/O thread's DSP load passes 80 %, every
/// instrument's voice limit drops to three quarters of what it sounds (the instruments shed the excess,
/// released and oldest voices first); below 50 % the limits climb back an eighth at a time. Acting on the
/// smoothed load before a slice runs late is what keeps an xrun from happening at all.
///
/// Threads: the control thread (its 20 ms tick); the limits are atomics the render thread reads.
public struct OverloadGovernor {
    static let shedAbove = 0.80
    static let restoreBelow = 0.50

    /// AULOS_NO_SHEDDING=1 turns shedding off, for measuring what it prevents (scripts/overload-test.sh).
    let enabled = getenv("AULOS_NO_SHEDDING") == nil

    public init() {}

    public mutating func update(load: Double, instruments: [any MusicDevice]) {
        guard enabled else { return }
        for instrument in instruments {
            let budget = instrument.voiceBudget
            let ceiling = Int(instrument.polyphony)
            if load > Self.shedAbove {
                budget.limit = max(4, min(budget.limit, ceiling, budget.active) * 3 / 4)
            } else if load < Self.restoreBelow && budget.limit < ceiling {
                let raised = budget.limit + max(1, budget.limit / 8)
                budget.limit = raised >= ceiling ? Int.max : raised
            }
        }
    }
}

extension PlaybackRig {
    /// Voices ended early under overload, across every instrument.
    public var voicesShed: Int { instruments.reduce(0) { $0 + $1.voiceBudget.shed } }
}
