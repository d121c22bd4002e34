/// Everything needed to put a unit back as it was (Core Audio's ClassInfo): which component it is, every
/// parameter value on every element, the selected preset, and the unit-specific properties that shape it
/// (a SoundFont path, a band count, a polyphony…). Codable, so a host can store it as a file.
public struct UnitClassInfo: Codable, Equatable, Sendable {
    public struct ParameterValue: Codable, Equatable, Sendable {
        public var id: UInt32
        public var scope: String
        public var element: UInt32
        public var value: Float
    }

    /// `type/subtype/manufacturer`.
    public var component: String
    public var name: String
    public var version: UInt32
    public var properties: [String: String]
    public var preset: Int32?
    public var parameters: [ParameterValue]
}

extension ParameterStore {
    /// Every (parameter, scope, element) with its value, in storage order.
    func allValues() -> [(ParameterID, Scope, Element, Float)] {
        var result: [(ParameterID, Scope, Element, Float)] = []
        for info in definitions {
            var element: Element = 0
            while let slot = try? slot(info.id, scope: info.scope, element: element) {
                result.append((info.id, info.scope, element, value(slot: slot)))
                if info.scope == .global { break }
                element += 1
            }
        }
        return result
    }
}

extension AudioUnit {
    /// The unit's state, for saving.
    public func saveState() throws(AudioUnitError) -> UnitClassInfo {
        try checkAlive()
        let values = parameters.allValues().map {
            UnitClassInfo.ParameterValue(id: $0.0.rawValue, scope: $0.1.description, element: $0.2, value: $0.3)
        }
        return UnitClassInfo(
            component: componentDescription.description, name: name, version: version, properties: stateProperties,
            preset: factoryPresets.isEmpty ? nil : currentPreset?.number, parameters: values)
    }

    /// Puts the unit back into a saved state: properties first (they may reshape the unit, and some need it
    /// uninitialized), then the preset, then every parameter value (explicit values win over the preset's).
    public func restoreState(_ state: UnitClassInfo) throws(AudioUnitError) {
        try checkAlive()
        // A state saved under the unit's Core Audio alias (before Aulos's own units said who wrote them) is its too.
        guard ([componentDescription] + aliases).contains(where: { $0.description == state.component }) else {
            throw AudioUnitError(.invalidPropertyValue, "state is for \(state.component), not \(componentDescription)")
        }
        try restoreStateProperties(state.properties)
        if let number = state.preset, let preset = factoryPresets.first(where: { $0.number == number }) {
            try set(.presentPreset, preset)
        }
        for value in state.parameters {
            guard let scope = Scope.allCases.first(where: { $0.description == value.scope }) else {
                throw AudioUnitError(.invalidScope, "state names an unknown scope '\(value.scope)'")
            }
            try setParameter(ParameterID(value.id), scope: scope, element: value.element, value: value.value)
        }
    }
}
