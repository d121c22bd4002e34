import AulosCore
import CLilv

/// An LV2 unit's presets and state.
///
/// - The plugin's LV2 presets are the unit's factory presets, numbered in label order; a MIDI program
///   change selects preset bank × 128 + n, the bank set by bank select (the render thread passes it up;
///   `applyProgramRequests` applies it on the control thread, so it takes effect from the next slice).
/// - Its state (the plugin's own, through `state:interface`, and its port values) is Turtle text, as
///   lilv writes it: saved with the unit's state (`saveState()`, the `lv2State` property) and in rig files.
/// - A state or preset restored before the plugin has an instance waits for it; one restored while it
///   runs goes straight in if the plugin declares `state:threadSafeRestore`; otherwise (LV2 forbids
///   restore() beside run()) a new instance takes it and replaces the running one at the next slice
///   (`LV2InstanceSet`), the old one freed off the render thread.
///
/// Threads: control thread.
extension LV2Unit {
    var lv2Presets: [Preset] { plugin.presets.enumerated().map { Preset(number: Int32($0), name: $1.label) } }

    /// A preset's number as bank select and program change reach it: bank (CC 0 × 128 + CC 32) and program.
    public static func bankAndProgram(_ number: Int32) -> (bank: Int, program: Int) {
        (Int(number) / 128, Int(number) % 128)
    }

    func applyLV2Preset(_ preset: Preset) throws(AudioUnitError) {
        guard plugin.presets.indices.contains(Int(preset.number)) else {
            throw AudioUnitError(.invalidPropertyValue, "\(name) has no preset number \(preset.number)")
        }
        let uri = plugin.presets[Int(preset.number)].uri
        try setPortValues(try world.portValues(preset: uri))
        if plugin.hasStateInterface { try restoreOwnState(.preset(uri)) }
        selectedPreset = preset
    }

    /// The preset named `name` (any case), or an error listing the names there are.
    public func preset(named name: String) throws(AudioUnitError) -> Preset {
        if let match = factoryPresets.first(where: { $0.name.lowercased() == name.lowercased() }) { return match }
        let names = factoryPresets.map(\.name)
        throw AudioUnitError(
            .invalidPropertyValue,
            "\(self.name) has no preset '\(name)'"
                + (names.isEmpty
                    ? " (it has none)"
                    : " (it has \(names.prefix(12).joined(separator: ", "))"
                        + (names.count > 12 ? ", … \(names.count) in all)" : ")")))
    }

    /// Program changes the plugin's MIDI carried since the last call: the last one selects its preset,
    /// number bank × 128 + program (a plugin with more than 128 presets is reached by bank select).
    /// (Also frees an instance the render thread let go of since.)
    public func applyProgramRequests() {
        instances?.collectRetired()
        var last: UInt32?
        while let program = programRequests.pop() { last = program }
        guard let last, Int(last) < plugin.presets.count else { return }
        try? applyPreset(Preset(number: Int32(last), name: plugin.presets[Int(last)].label))
    }

    /// The plugin's state as Turtle: its own state (if it keeps any) and its port values.
    public func lv2State() throws(AudioUnitError) -> String {
        var values: [String: Float] = [:]
        for port in plugin.ports where port.kind == .control && port.isInput {
            values[port.symbol] = try getParameter(ParameterID(UInt32(port.index)))
        }
        let newest = instances?.newest
        return try world.stateText(
            pluginURI: plugin.uri, instance: newest?.instance, portValues: values, features: newest?.features)
    }

    /// Puts back a state `lv2State()` gave: port values as parameters, the plugin's own part into its
    /// instance (now, in a new instance that takes over, or when it is made).
    public func restoreLV2State(_ text: String) throws(AudioUnitError) {
        let values = try world.portValues(state: text)
        if plugin.hasStateInterface { try restoreOwnState(.text(text)) }
        try setPortValues(values)
    }

    /// The plugin-held part of a state or preset: into the running instance if the plugin allows it, else
    /// through a new instance that takes over; before initialization, kept for the first instance.
    func restoreOwnState(_ state: LV2PendingState) throws(AudioUnitError) {
        guard let instances else {
            pendingState = state
            return
        }
        if plugin.restoresStateWhileRunning {
            try world.restore(state, into: instances.newest.instance, features: instances.newest.features)
        } else {
            try takeOver(restoring: state)
        }
    }

    /// The plugin's own state among the unit's saved properties, when it keeps one (its port values are
    /// saved as parameters already).
    var lv2StateProperties: [String: String] {
        guard plugin.hasStateInterface, let text = try? lv2State() else { return [:] }
        return [Self.stateProperty: text]
    }

    static var stateProperty: String { "lv2State" }

    private func setPortValues(_ values: [(symbol: String, value: Float)]) throws(AudioUnitError) {
        for (symbol, value) in values {
            guard let port = plugin.ports.first(where: { $0.symbol == symbol && $0.kind == .control && $0.isInput })
            else { continue }
            let info = try parameterInfo(ParameterID(UInt32(port.index)))
            try setParameter(info.id, value: min(info.maxValue, max(info.minValue, value)))
        }
    }
}

/// A state waiting for, or handed to, an instance: Turtle text (saved state) or an installed preset's URI.
enum LV2PendingState: Sendable {
    case text(String)
    case preset(String)
}
