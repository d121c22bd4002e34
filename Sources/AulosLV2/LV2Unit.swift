import AulosCore
import AulosMIDI
import CLilv

/// An LV2 plugin as an audio unit (the first cut of issue 16: instruments and effects with audio and
/// MIDI; no worker, state or presets yet, so plugins that require those are refused by name).
///
/// - Its control input ports are its parameters (ID = port index, with the port's range and default);
///   their values reach the plugin at the start of each slice (a change lands within one slice).
/// - An instrument's MIDI goes in as an atom sequence built each slice, each event at its frame offset:
///   sample-accurate as far as the plugin allows.
/// - Audio ports map to one input bus and one output bus (one or two channels each). The plugin reads
///   its input from the unit's own buffers and writes straight into the output, so a plugin that is not
///   in-place safe is never given the same buffer twice.
/// - Host features: `urid:map`, `urid:unmap`, `buf-size:boundedBlockLength` (blocks never exceed
///   MaximumFramesPerSlice).
///
/// Threads: control side as for every unit (instantiation and activation on initialize, the control
/// thread); `LV2Kernel` calls `run()` on the render thread.
public final class LV2Unit: AudioUnit, MusicDevice, @unchecked Sendable {
    public let plugin: LV2PluginInfo
    public let midiInput = MIDIEventQueue(capacity: 2048)
    public let voiceBudget = VoiceBudget()
    /// LV2 has no voice count: the host cannot see or shed a plugin's voices.
    public var polyphony: UInt32 { 0 }
    private let world: LV2World
    private let audioInputs: [Int]
    private let audioOutputs: [Int]

    /// The plugin with `uri`, or an error naming what stands in the way (unknown URI, a required feature
    /// or port type Aulos does not provide). Control thread.
    public init(uri: String, world: LV2World = .shared) throws(AudioUnitError) {
        guard let info = world.plugins.first(where: { $0.uri == uri }) else {
            throw AudioUnitError(.invalidPropertyValue, "no LV2 plugin <\(uri)> installed (see aulos units --lv2)")
        }
        let missing = info.missingFeatures.sorted()
        if !missing.isEmpty {
            throw AudioUnitError(
                .failedInitialization,
                "\(info.name) requires the LV2 feature\(missing.count == 1 ? "" : "s") "
                    + missing.map { "<\($0)>" }.joined(separator: ", ") + ", which Aulos does not provide yet")
        }
        if let port = info.unsupportedPorts.first {
            throw AudioUnitError(
                .failedInitialization,
                "\(info.name): port \(port.index) '\(port.symbol)' is \(port.kind.rawValue), which Aulos cannot connect"
            )
        }
        let inputs = info.ports.filter { $0.kind == .audio && $0.isInput }.map(\.index)
        let outputs = info.ports.filter { $0.kind == .audio && !$0.isInput }.map(\.index)
        guard inputs.count <= 2, (1...2).contains(outputs.count) else {
            throw AudioUnitError(
                .failedInitialization,
                "\(info.name) has \(inputs.count) audio inputs and \(outputs.count) outputs; "
                    + "Aulos hosts mono and stereo")
        }
        (plugin, self.world, audioInputs, audioOutputs) = (info, world, inputs, outputs)
        let parameters = info.ports.filter { $0.kind == .control && $0.isInput }.map { port in
            let minimum = port.range.minimum ?? 0
            let maximum = max(minimum, port.range.maximum ?? 1)
            return ParameterInfo(
                id: ParameterID(UInt32(port.index)), name: port.name, unit: .generic, range: minimum...maximum,
                defaultValue: min(maximum, max(minimum, port.range.defaultValue ?? minimum)))
        }
        super.init(
            description: info.componentDescription, name: info.name, inputs: inputs.isEmpty ? 0 : 1, outputs: 1,
            format: .canonical(channels: UInt32(outputs.count), sampleRate: AudioUnit.defaultSampleRate),
            parameters: parameters)
        if !inputs.isEmpty {
            try set(
                .streamFormat,
                StreamFormat.canonical(channels: UInt32(inputs.count), sampleRate: AudioUnit.defaultSampleRate),
                scope: .input)
        }
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let rate = outputFormat(0).sampleRate
        guard let instance = world.instantiate(plugin.uri, sampleRate: rate) else {
            throw AudioUnitError(.failedInitialization, "\(plugin.name) could not be instantiated at \(Int(rate)) Hz")
        }
        let frames = Int(maximumFramesPerSlice)
        let map = LV2URIDMap.shared
        let kernel = LV2Kernel(
            instance: instance, parameters: renderParameters, events: midiInput.list,
            controlPorts: plugin.ports.filter { $0.kind == .control }.map(\.index), portCount: plugin.ports.count,
            atomInputs: plugin.ports.filter { $0.kind == .atom && $0.isInput }.map(\.index),
            atomOutputs: plugin.ports.filter { $0.kind == .atom && !$0.isInput }.map(\.index),
            audioInputs: audioInputs, audioOutputs: audioOutputs, maximumFrames: frames,
            sequenceType: map.map("http://lv2plug.in/ns/ext/atom#Sequence"),
            chunkType: map.map("http://lv2plug.in/ns/ext/atom#Chunk"),
            midiType: map.map("http://lv2plug.in/ns/ext/midi#MidiEvent"),
            controlInputs: plugin.ports.filter { $0.kind == .control && $0.isInput }.map(\.index))
        lilv_instance_activate(instance)
        return UnitKernel.make(kernel, render: LV2Kernel.render) { kernel in
            lilv_instance_deactivate(kernel.instance)
            lilv_instance_free(kernel.instance)
            kernel.deallocate()
        }
    }
}
