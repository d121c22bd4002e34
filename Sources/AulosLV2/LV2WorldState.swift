import AulosCore
import CLilv

#if canImport(Glibc)
import Glibc
#endif

/// lilv's state API, under the world's lock: a plugin's state as Turtle text (what rig files keep), the
/// port values inside a state or preset, and a state given to an instance.
///
/// Threads: control thread.
extension LV2World {
    /// The port values a state (Turtle text, or a preset's URI) holds, by port symbol.
    func portValues(state text: String) throws(AudioUnitError) -> [(symbol: String, value: Float)] {
        try withState(text) { state in Self.portValues(of: state) }
    }

    func portValues(preset uri: String) throws(AudioUnitError) -> [(symbol: String, value: Float)] {
        try withPreset(uri) { state in Self.portValues(of: state) }
    }

    /// Gives `instance` the plugin-held part of a state or preset (its port values are the caller's to set).
    func restore(
        _ state: LV2PendingState, into instance: UnsafeMutablePointer<LilvInstance>, features: LV2InstanceFeatures
    ) throws(AudioUnitError) {
        switch state {
        case .text(let text): try restore(text, into: instance, features: features)
        case .preset(let uri): try restore(preset: uri, into: instance, features: features)
        }
    }

    /// Gives `instance` the plugin-held part of a state (its port values are the caller's to set).
    func restore(
        _ text: String, into instance: UnsafeMutablePointer<LilvInstance>, features: LV2InstanceFeatures
    ) throws(AudioUnitError) {
        try withState(text) { state in lilv_state_restore(state, instance, nil, nil, 0, features.list) }
    }

    func restore(
        preset uri: String, into instance: UnsafeMutablePointer<LilvInstance>, features: LV2InstanceFeatures
    ) throws(AudioUnitError) {
        try withPreset(uri) { state in lilv_state_restore(state, instance, nil, nil, 0, features.list) }
    }

    /// The instance's state as Turtle text: the plugin's own (its state:interface, if any) and the port
    /// values given (by symbol). Files the plugin names are kept as absolute paths.
    func stateText(
        pluginURI: String, instance: UnsafeMutablePointer<LilvInstance>?, portValues: [String: Float],
        features: LV2InstanceFeatures?
    ) throws(AudioUnitError) -> String {
        // lilv warns on standard error about every absolute path it writes: kept out of the user's way.
        let (result, _) = lock.withLock { loaded in
            Self.capturingStandardError { () -> String? in
                guard let world, let plugin = plugin(pluginURI, loaded) else { return nil }
                var values = PortValueTable(values: portValues)
                return withUnsafeMutablePointer(to: &values) { table -> String? in
                    defer { table.pointee.deallocate() }
                    let state = lilv_state_new_from_instance(
                        plugin, instance, LV2URIDMap.shared.mapData, nil, nil, nil, nil,
                        { symbol, userData, size, type in
                            guard let symbol, let userData else { return nil }
                            let table = userData.assumingMemoryBound(to: PortValueTable.self)
                            return table.pointee.pointer(for: String(cString: symbol), size: size, type: type)
                        }, table, UInt32(LV2_STATE_IS_POD.rawValue | LV2_STATE_IS_PORTABLE.rawValue), features?.list)
                    defer { lilv_state_free(state) }
                    guard let state,
                        let text = lilv_state_to_string(
                            world, LV2URIDMap.shared.mapData, LV2URIDMap.shared.unmapData, state, "urn:aulos:state", nil
                        )
                    else { return nil }
                    defer { lilv_free(text) }
                    // One final newline (lilv ends with two): the same text a rig file's block gives back.
                    var result = String(cString: text)
                    while result.hasSuffix("\n") { result.removeLast() }
                    return result + "\n"
                }
            }
        }
        guard let result else {
            throw AudioUnitError(.failedInitialization, "the state of <\(pluginURI)> could not be saved")
        }
        return result
    }

    // MARK: lilv states

    private func withState<T>(_ text: String, _ body: (OpaquePointer) -> T) throws(AudioUnitError) -> T {
        // serd reports a Turtle error by printing it: kept for the one-line error instead.
        let (result, complaint): (T?, String) = lock.withLock { _ in
            guard let world else { return (nil, "") }
            let (parsed, complaint) = Self.capturingStandardError {
                lilv_state_new_from_string(world, LV2URIDMap.shared.mapData, text)
            }
            guard let state = parsed else { return (nil, complaint) }
            defer { lilv_state_free(state) }
            return (body(state), "")
        }
        guard let result else {
            // "error: (string):1:9: bad verb" → " (line 1, column 9: bad verb)"
            let parts = (complaint.split(separator: "\n").first ?? "").split(separator: ":").map {
                $0.trimmingPrefix(" ")
            }
            let reason =
                parts.count >= 5 && parts[1] == "(string)"
                ? " (line \(parts[2]), column \(parts[3]): \(parts[4...].joined(separator: ":")))" : ""
            throw AudioUnitError(.invalidPropertyValue, "not an LV2 state (Turtle, as Aulos saves it)\(reason)")
        }
        return result
    }

    private func withPreset<T>(_ uri: String, _ body: (OpaquePointer) -> T) throws(AudioUnitError) -> T {
        let result: T? = lock.withLock { _ in
            guard let world else { return nil }
            let node = lilv_new_uri(world, uri)
            defer { lilv_node_free(node) }
            guard let state = lilv_state_new_from_world(world, LV2URIDMap.shared.mapData, node) else { return nil }
            defer { lilv_state_free(state) }
            return body(state)
        }
        guard let result else { throw AudioUnitError(.invalidPropertyValue, "the LV2 preset <\(uri)> cannot be read") }
        return result
    }

    /// Restoring with no instance only reports port values: collected here.
    private static func portValues(of state: OpaquePointer) -> [(symbol: String, value: Float)] {
        var collected = CollectedValues()
        withUnsafeMutablePointer(to: &collected) { pointer in
            lilv_state_restore(
                state, nil,
                { symbol, userData, value, size, type in
                    guard let symbol, let userData, let value else { return }
                    let collected = userData.assumingMemoryBound(to: CollectedValues.self)
                    guard let number = LV2World.number(value, size: size, type: type) else { return }
                    collected.pointee.values.append((String(cString: symbol), number))
                }, pointer, 0, nil)
        }
        return collected.values
    }

    /// A port value as a float, from an atom Float, Double, Int, Long or Bool.
    static func number(_ value: UnsafeRawPointer, size: UInt32, type: UInt32) -> Float? {
        let map = LV2URIDMap.shared
        switch (type, size) {
        case (map.map(LV2URI.atomFloat), 4): return value.load(as: Float.self)
        case (map.map("http://lv2plug.in/ns/ext/atom#Double"), 8): return Float(value.load(as: Double.self))
        case (map.map(LV2URI.atomInt), 4), (map.map("http://lv2plug.in/ns/ext/atom#Bool"), 4):
            return Float(value.load(as: Int32.self))
        case (map.map("http://lv2plug.in/ns/ext/atom#Long"), 8): return Float(value.load(as: Int64.self))
        default: return nil
        }
    }
}

/// Port values collected from a state.
private struct CollectedValues {
    var values: [(String, Float)] = []
}

/// Port values handed to lilv while it saves a state: each value kept at a stable address until the
/// save is done.
private struct PortValueTable {
    var values: [String: Float]
    var storage: [String: UnsafeMutablePointer<Float>] = [:]

    mutating func pointer(for symbol: String, size: UnsafeMutablePointer<UInt32>?, type: UnsafeMutablePointer<UInt32>?)
        -> UnsafeRawPointer?
    {
        guard let value = values[symbol] else { return nil }
        let cell = storage[symbol] ?? .allocate(capacity: 1)
        cell.initialize(to: value)
        storage[symbol] = cell
        size?.pointee = 4
        type?.pointee = LV2URIDMap.shared.map(LV2URI.atomFloat)
        return UnsafeRawPointer(cell)
    }

    func deallocate() { for cell in storage.values { cell.deallocate() } }
}
