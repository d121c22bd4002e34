import AulosCore
import AulosMIDI
import AulosRealtime
import CLilv

/// An LV2 plugin as an audio unit: an instrument (`aumu`), a MIDI effect (`aumf`) or an effect (`aufx`).
///
/// - Its control input ports are its parameters (ID = port index, with the port's range, default, unit,
///   toggle/enumeration and logarithmic hints). Values reach the plugin at the start of each slice; a
///   scheduled change (`setParameter` at an offset) splits the plugin's run at its frame.
/// - An instrument's MIDI goes in as an atom sequence built each run, each event at its frame offset:
///   sample-accurate as far as the plugin allows. A plugin that takes `time:Position` gets the host's
///   beat, tempo, meter and transport (the HostCallbacks property) when they change (`LV2TimePosition`).
/// - Audio ports pair into stereo buses in port order: bus 0 is what chains connect; a sidechain or a
///   second input pair is input bus 1, and so on (unconnected buses are silence); extra output pairs are
///   further output buses. A mono port hears both channels mixed, or feeds both; a plugin without audio
///   outputs (a MIDI or control plugin) renders flagged silence. So any plugin fits a stereo chain.
/// - Host features: see `LV2InstanceFeatures`. Presets and state: see LV2UnitState.swift.
///
/// Threads: control side as for every unit (instantiation, state and activation on initialize, the
/// control thread); `LV2Kernel` calls `run()` on the render thread; a plugin's worker has its own thread.
public final class LV2Unit: AudioUnit, MusicDevice, @unchecked Sendable {
    public let plugin: LV2PluginInfo
    public let midiInput = MIDIEventQueue(capacity: 2048)
    public let voiceBudget = VoiceBudget()
    /// LV2 has no voice count: the host cannot see or shed a plugin's voices.
    public var polyphony: UInt32 { 0 }
    let world: LV2World
    private let audioInputs: [Int]
    private let audioOutputs: [Int]
    /// The instances made while initialized (the running one, one about to take over, one let go of),
    /// and the render side's shape, to connect a new instance to the same buffers.
    var instances: LV2InstanceSet?
    var renderSide: LV2Kernel?
    /// One float per port the kernel's control ports read and write (latency and meters are read here).
    var controlValues: UnsafeMutablePointer<Float>?
    /// State restored before the plugin had an instance: given to the next instance before it runs.
    var pendingState: LV2PendingState?
    /// The preset selected last (by number), and the program changes the render thread passes up.
    var selectedPreset: Preset?
    /// (Made once every check has passed: an init that throws earlier leaves nothing to free.)
    let programRequests: SPSCRing<UInt32>
    /// patch:Set messages on their way to the plugin's next run (`setProperty`).
    let propertyMessages: SPSCByteRing
    /// As a MIDI effect: the input of what it plays into (`playMIDI(into:)`).
    private(set) var midiOutput: MIDIEventQueue?
    /// The sample rate the parameters of `lv2:sampleRate` ports are reckoned in hertz at.
    var parameterRate: Double

    /// The plugin with `uri`, or an error naming what stands in the way (unknown URI, a broken bundle, a
    /// required feature or port type Aulos does not provide). Control thread.
    public init(uri: String, world: LV2World = .shared) throws(AudioUnitError) {
        let info: LV2PluginInfo
        switch world.lookUp(uri) {
        case .success(let found)?: info = found
        case .failure(let broken)?: throw AudioUnitError(.failedInitialization, broken.message)
        case nil:
            throw AudioUnitError(.invalidPropertyValue, "no LV2 plugin <\(uri)> installed (see aulos units --lv2)")
        }
        let missing = info.missingFeatures.sorted()
        if !missing.isEmpty {
            throw AudioUnitError(
                .failedInitialization,
                "\(info.name) requires the LV2 feature\(missing.count == 1 ? "" : "s") "
                    + missing.map { "<\($0)>" }.joined(separator: ", ") + ", which Aulos does not provide")
        }
        if let port = info.unsupportedPorts.first {
            throw AudioUnitError(
                .failedInitialization,
                "\(info.name): port \(port.index) '\(port.symbol)' is \(port.kind.rawValue), which Aulos cannot connect"
            )
        }
        if info.atomBufferSize > LV2PluginInfo.maximumAtomBufferSize {
            throw AudioUnitError(
                .failedInitialization,
                "\(info.name) asks for \(info.atomBufferSize)-byte atom buffers (rsz:minimumSize); Aulos gives at most "
                    + "\(LV2PluginInfo.maximumAtomBufferSize) (1 MiB)")
        }
        let inputs = info.ports.filter { $0.kind == .audio && $0.isInput }.map(\.index)
        let outputs = info.ports.filter { $0.kind == .audio && !$0.isInput }.map(\.index)
        (plugin, self.world, audioInputs, audioOutputs) = (info, world, inputs, outputs)
        programRequests = SPSCRing<UInt32>(minimumCapacity: 64)
        propertyMessages = SPSCByteRing(minimumCapacity: 1 << 16)
        parameterRate = AudioUnit.defaultSampleRate
        // Stereo buses of port pairs (a sidechain is input bus 1, a second output pair output bus 1).
        let inputBuses = (inputs.count + 1) / 2
        super.init(
            description: info.componentDescription, name: info.name, inputs: inputBuses,
            outputs: max(1, (outputs.count + 1) / 2),
            format: .canonical(channels: 2, sampleRate: AudioUnit.defaultSampleRate),
            parameters: Self.parameters(of: info, sampleRate: AudioUnit.defaultSampleRate))
        // Hertz follow the rate the unit is given (before it is initialized), as the plugin will reckon them.
        for property in [PropertyID.streamFormat, .sampleRate] {
            addPropertyListener(property) { unit, _, scope, element in
                if scope == .output && element == 0 { (unit as? LV2Unit)?.followSampleRate() }
            }
        }
        for bus in 0..<inputBuses {
            try set(
                .streamFormat, StreamFormat.canonical(channels: 2, sampleRate: AudioUnit.defaultSampleRate),
                scope: .input, element: Element(bus))
        }
    }

    deinit {
        programRequests.deallocate()
        propertyMessages.deallocate()
    }

    /// The plugin's control inputs as parameters. Labels two ports share (upstream's: 23 plugins have
    /// some, x42's and Calf's stereo pairs among them) are made unambiguous with the symbol beside them
    /// ("Gain (gain_l)"); a rig names such a port by its symbol (`ambiguousLabels`).
    static func parameters(of info: LV2PluginInfo, sampleRate: Double) -> [ParameterInfo] {
        let ambiguous = Set(ambiguousLabels(of: info).map(\.name))
        return info.ports.filter { $0.kind == .control && $0.isInput }.map { port in
            var parameter = parameter(port, sampleRate: sampleRate)
            if ambiguous.contains(comparable(port.name)) { parameter.name = "\(port.name) (\(port.symbol))" }
            return parameter
        }
    }

    /// Names more than one control input's label reads as (compared as rigs compare names, `comparable`:
    /// "Inner stiffness 1 +" and "… 1 -" are one), each with those ports, in port order.
    public var ambiguousLabels: [(name: String, ports: [LV2PluginInfo.Port])] { Self.ambiguousLabels(of: plugin) }

    static func ambiguousLabels(of info: LV2PluginInfo) -> [(name: String, ports: [LV2PluginInfo.Port])] {
        var byName: [String: [LV2PluginInfo.Port]] = [:]
        var order: [String] = []
        for port in info.ports where port.kind == .control && port.isInput {
            let name = comparable(port.name)
            if byName[name] == nil { order.append(name) }
            byName[name, default: []].append(port)
        }
        return order.compactMap { name in byName[name]!.count > 1 ? (name, byName[name]!) : nil }
    }

    /// A label as rigs compare names: its letters and digits, in lower case ("Frequency [Hz]" and
    /// "frequency-hz" are one).
    public static func comparable(_ label: some StringProtocol) -> String {
        String(label.lowercased().filter { $0.isLetter || $0.isNumber })
    }

    /// A control input port as a parameter: its range and default, its unit, a toggle as a switch, an
    /// enumeration whose values are 0, 1, 2… as an indexed parameter with its labels. Not smoothed: the
    /// plugin smooths its own controls (or means them to jump), and runs are split at scheduled changes.
    /// An `lv2:sampleRate` port's bounds are multiples of the sample rate (LV2 core: "any specified bounds
    /// should be interpreted as multiples of the sample rate", as LADSPA's hint was): its range is that
    /// times `sampleRate`, in hertz; its value is hertz as it is, to the plugin as to a rig (swh's code
    /// computes its filters from fc and fs), and so is its default (swh's and fomp's 440).
    public static func parameter(_ port: LV2PluginInfo.Port, sampleRate: Double) -> ParameterInfo {
        let hints = port.hints
        let scale = hints.isSampleRate ? Float(sampleRate) : 1
        let minimum = (port.range.minimum ?? 0) * scale
        let maximum = max(minimum, (port.range.maximum ?? 1) * scale)
        let defaultValue = port.range.defaultValue ?? minimum
        let labels = hints.scalePoints
        let indexed = hints.isEnumeration && !labels.isEmpty && labels.enumerated().allSatisfy { Float($0) == $1.value }
        let measured: ParameterUnit =
            switch hints.isSampleRate ? "hz" : hints.unit {
            case "hz": .hertz
            case "db": .decibels
            case "s": .seconds
            case "ms": .milliseconds
            case "pc": .percent
            case "cent": .cents
            case "frame": .sampleFrames
            default: .generic
            }
        let unit: ParameterUnit = hints.isToggle ? .boolean : indexed ? .indexed : measured
        var info = ParameterInfo(
            id: ParameterID(UInt32(port.index)), name: port.name, unit: unit, range: minimum...maximum,
            defaultValue: min(maximum, max(minimum, defaultValue)), isSmoothed: false,
            valueNames: indexed ? labels.map(\.label) : [])
        info.isLogarithmic = hints.isLogarithmic
        return info
    }

    /// Rendering offline: the plugin's worker jobs are done at once inside its run, so the render does not
    /// depend on the worker thread's timing. Set before rendering starts (control thread).
    public var worksInRender = false {
        didSet { instances?.newest.features.worker.shared.pointee.synchronous = worksInRender }
    }

    /// Jobs the plugin's worker thread has done for its running instance (0 for a plugin without one).
    public var workerJobs: Int { instances?.newest.features.worker.jobsOnThread ?? 0 }

    /// Samples of NaN or infinity the plugin produced since it was initialized, which the unit silenced.
    public var nonFiniteSamples: Int { renderSide?.nonFiniteSamples.pointee ?? 0 }

    /// The plugin's latency (its latency port, read after its last run), in seconds.
    public override var latency: Double {
        guard let controlValues, let port = plugin.ports.first(where: \.reportsLatency) else { return 0 }
        return Double(controlValues[port.index]) / outputFormat(0).sampleRate
    }

    /// A control output port's value after the plugin's last run (a meter, a gain reduction), or nil for
    /// a port that is not a control output or a plugin not initialized.
    public func controlOutput(_ index: Int) -> Float? {
        guard let controlValues,
            plugin.ports.contains(where: { $0.index == index && $0.kind == .control && !$0.isInput })
        else { return nil }
        return controlValues[index]
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let rate = outputFormat(0).sampleRate
        let frames = Int(maximumFramesPerSlice)
        let pullStorage = AudioBufferListStorage(
            format: .canonical(channels: 2, sampleRate: rate), maximumFrames: maximumFramesPerSlice)
        retainForKernel(pullStorage)
        // Saved state first, before the plugin runs (its own part: port values were set as parameters).
        let first = try makeInstance(restoring: pendingState)
        pendingState = nil
        let instances = LV2InstanceSet(first: first)
        let map = LV2URIDMap.shared
        let kernel = LV2Kernel(
            instances: instances.slot, parameters: renderParameters, events: midiInput.list,
            controlPorts: plugin.ports.filter { $0.kind == .control }.map(\.index), portCount: plugin.ports.count,
            atomInputs: plugin.ports.filter { $0.kind == .atom && $0.isInput }.map(\.index),
            atomOutputs: plugin.ports.filter { $0.kind == .atom && !$0.isInput }.map(\.index),
            audioInputs: audioInputs, audioOutputs: audioOutputs, maximumFrames: frames, pullList: pullStorage.list,
            sequenceType: map.map(LV2URI.atomSequence), chunkType: map.map(LV2URI.atomChunk),
            midiType: map.map(LV2URI.midiEvent),
            controlInputs: plugin.ports.filter { $0.kind == .control && $0.isInput }.map(\.index),
            // A MIDI effect passes program changes on to the instrument it plays.
            programsSelectPresets: !plugin.presets.isEmpty && midiOutput == nil, programRequests: programRequests,
            timePosition: plugin.ports.contains(where: \.followsTime)
                ? hostCallbackInfo.map { LV2TimePosition(host: $0, keys: .init(map: map), sampleRate: rate) } : nil,
            propertyMessages: propertyMessages, midiOutput: midiOutput?.list, atomCapacity: plugin.atomBufferSize,
            atomOutputCapacity: plugin.atomOutputSize)
        lilv_instance_activate(first.instance)
        (self.instances, renderSide, controlValues) = (instances, kernel, kernel.controlValues)
        let made = UnitKernel.make(kernel, render: LV2Kernel.render) { kernel in
            instances.freeAll()
            kernel.deallocate()
        }
        // A MIDI effect runs when what it plays into begins its slice.
        midiOutput?.setFeed(MIDIEventFeed(function: LV2Kernel.feedMIDI, context: made.state))
        return made
    }

    /// Makes this plugin a MIDI effect playing into `destination` (the next MIDI effect's or the
    /// instrument's input): it runs as that begins each slice, and the MIDI it writes lands there at its
    /// frames. Set before initialize (control thread).
    public func playMIDI(into destination: MIDIEventQueue) throws(AudioUnitError) {
        guard !isInitialized else {
            throw AudioUnitError(.initialized, "\(name): a MIDI effect's destination is set before it is initialized")
        }
        guard plugin.ports.contains(where: { $0.carriesMIDI && !$0.isInput }) else {
            throw AudioUnitError(.invalidPropertyValue, "\(name) has no MIDI output, so it cannot be a MIDI effect")
        }
        midiOutput = destination
    }

    /// Whether the plugin takes MIDI (an atom input carrying MIDI events): an insert effect that does hears
    /// its part's MIDI.
    public var takesMIDI: Bool { plugin.ports.contains { $0.carriesMIDI && $0.isInput } }

    /// A new instance at the unit's rate and slice size with its own features (and worker), `state`
    /// given to it if any, its worker started. Not connected or activated. Control thread.
    func makeInstance(restoring state: LV2PendingState?) throws(AudioUnitError) -> LV2InstanceRecord {
        let rate = outputFormat(0).sampleRate
        let features = LV2InstanceFeatures(
            pluginName: plugin.name, sampleRate: rate, maximumFrames: Int(maximumFramesPerSlice),
            sequenceSize: plugin.atomBufferSize,
            directory: world.stateDirectory + "/" + plugin.componentDescription.subtype.description)
        let instance: UnsafeMutablePointer<LilvInstance>
        do {
            instance = try world.instantiate(plugin.uri, sampleRate: rate, features: features)
        } catch {
            throw AudioUnitError(
                .failedInitialization, "\(plugin.name) could not be instantiated at \(Int(rate)) Hz\(error.detail)")
        }
        if let state {
            do { try world.restore(state, into: instance, features: features) } catch {
                lilv_instance_free(instance)
                throw error
            }
        }
        features.worker.shared.pointee.synchronous = worksInRender
        features.worker.start(instance: instance)
        return LV2InstanceRecord(instance: instance, features: features)
    }

    /// While it plays: a new instance with `state` takes over from the running one at the start of the
    /// next slice (`LV2InstanceSet`). Control thread.
    func takeOver(restoring state: LV2PendingState) throws(AudioUnitError) {
        guard let instances, let renderSide else { return }
        let record = try makeInstance(restoring: state)
        renderSide.connectFixedPorts(record.instance)
        lilv_instance_activate(record.instance)
        instances.publish(record)
    }

    /// One of the plugin's writable properties, by URI or label (any case), or an error listing them.
    public func property(named name: String) throws(AudioUnitError) -> LV2PluginInfo.PropertyInfo {
        let lowercased = name.lowercased()
        if let property = plugin.properties.first(where: { $0.uri == name || $0.label.lowercased() == lowercased }) {
            return property
        }
        let known = plugin.properties.map(\.label)
        throw AudioUnitError(
            .invalidProperty,
            "\(self.name) has no property '\(name)'"
                + (known.isEmpty ? " (it takes none)" : " (it has \(known.joined(separator: ", ")))"))
    }

    /// `setProperty` with the value as text (a rig file's), read as the property's type.
    public func setProperty(_ name: String, text: String) throws(AudioUnitError) {
        let property = try self.property(named: name)
        guard let value = LV2PropertyValue(text, range: property.range) else {
            let type = property.range.split(separator: "#").last ?? "a value"
            throw AudioUnitError(.invalidPropertyValue, "\(self.name) \(property.label) takes \(type), not '\(text)'")
        }
        try setProperty(property.uri, to: value)
    }

    /// Sets one of the plugin's writable properties (`plugin.properties`, by URI or label) with a patch:Set
    /// message at the start of its next run — as a plugin's own UI would; a plugin may hand the work to its
    /// worker (eg-sampler loads the sample there). Control thread.
    public func setProperty(_ name: String, to value: LV2PropertyValue) throws(AudioUnitError) {
        let property = try self.property(named: name)
        let message = LV2PropertyMessage.patchSet(
            property: LV2URIDMap.shared.map(property.uri), value: value, map: LV2URIDMap.shared)
        guard message.count + 8 <= plugin.atomBufferSize - LV2Kernel.midiRoom - 16 else {
            throw AudioUnitError(.invalidPropertyValue, "\(self.name) \(property.label): the value is too long")
        }
        guard message.withUnsafeBytes({ propertyMessages.write($0.baseAddress, size: $0.count) }) else {
            throw AudioUnitError(
                .cannotDoInCurrentContext, "\(self.name): too many property changes waiting (is the unit rendering?)")
        }
    }

    // Presets and state (LV2UnitState.swift): overrides live in the class body.
    public override var factoryPresets: [Preset] { lv2Presets }
    public override var currentPreset: Preset? { selectedPreset }
    public override func applyPreset(_ preset: Preset) throws(AudioUnitError) { try applyLV2Preset(preset) }
    public override var stateProperties: [String: String] {
        super.stateProperties.merging(lv2StateProperties) { $1 }
    }
    public override func restoreStateProperties(_ properties: [String: String]) throws(AudioUnitError) {
        try super.restoreStateProperties(properties)
        if let text = properties[Self.stateProperty] { try restoreLV2State(text) }
    }

    public override func willUninitialize() throws(AudioUnitError) {
        midiOutput?.setFeed(nil)
        (instances, renderSide, controlValues) = (nil, nil, nil)
    }
}
