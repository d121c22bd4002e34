import AulosCore
import AulosTestSupport
import Testing

@Suite struct ComponentTests {
    static func component(_ type: FourCharCode, _ subtype: FourCharCode, _ manufacturer: FourCharCode, _ name: String)
        -> Component
    {
        Component(ComponentDescription(type: type, subtype: subtype, manufacturer: manufacturer), name: name) {
            AudioUnit(
                description: ComponentDescription(type: type, subtype: subtype, manufacturer: manufacturer),
                name: name, inputs: 0, outputs: 1)
        }
    }

    /// Registered deliberately out of order: the registry's order must not depend on it.
    static func registry() -> ComponentRegistry {
        let registry = ComponentRegistry()
        for component in [
            component("aumx", "mcmx", "appl", "Apple: AUMultiChannelMixer"),
            component("auou", "rioc", "Auls", "Aulos: ALSA I/O"),
            component("aufx", "ipeq", "appl", "Apple: AUiPodEQ"),
            component("auou", "genr", "appl", "Apple: AUGenericOutput"),
            component("aumu", "osc1", "Auls", "Aulos: Oscillator Synth"),
            component("auou", "vpio", "appl", "Apple: AUVoiceProcessor"),
        ] { registry.register(component) }
        return registry
    }

    @Test func fourCharCodesRoundTrip() {
        let code: FourCharCode = "auou"
        #expect(code.rawValue == 0x6175_6F75)
        #expect(code.description == "auou")
        #expect(FourCharCode(string: "toolong") == nil)
        #expect(FourCharCode(string: "ab\u{7}c") == nil)
        #expect(FourCharCode(string: "genr") == .genericOutput)
        #expect(FourCharCode(rawValue: 1).description == "0x1")
    }

    @Test func descriptionsParseWithWildcards() {
        #expect(
            ComponentDescription(parsing: "auou/genr/appl")
                == ComponentDescription(type: "auou", subtype: "genr", manufacturer: "appl"))
        #expect(ComponentDescription(parsing: "auou") == ComponentDescription(type: "auou"))
        #expect(
            ComponentDescription(parsing: "auou/*/appl") == ComponentDescription(type: "auou", manufacturer: "appl"))
        #expect(ComponentDescription(parsing: "a/b/c") == nil)
        #expect(ComponentDescription(parsing: "auou/genr/appl/more") == nil)
    }

    @Test func allZeroMatchesEverythingInDeterministicOrder() {
        let names = Self.registry().find(matching: .any).map(\.componentDescription.description)
        #expect(
            names == [
                "aufx/ipeq/appl", "aumu/osc1/Auls", "aumx/mcmx/appl", "auou/genr/appl", "auou/rioc/Auls",
                "auou/vpio/appl",
            ])
    }

    @Test func subtypeWildcardFindsEveryOutputUnit() {
        let found = Self.registry().find(matching: ComponentDescription(type: .output)).map(
            \.componentDescription.subtype)
        #expect(found == ["genr", "rioc", "vpio"])
    }

    @Test func manufacturerIsAWildcardToo() {
        let found = Self.registry().find(
            matching: ComponentDescription(type: .any, subtype: .any, manufacturer: "Auls"))
        #expect(found.map(\.name) == ["Aulos: Oscillator Synth", "Aulos: ALSA I/O"])
    }

    @Test func findNextIteratesLikeCoreAudio() {
        let registry = Self.registry()
        let pattern = ComponentDescription(type: .output)
        var seen: [String] = []
        var current = registry.findNext(after: nil, matching: pattern)
        while let component = current {
            seen.append(component.name)
            current = registry.findNext(after: component, matching: pattern)
        }
        #expect(seen == ["Apple: AUGenericOutput", "Aulos: ALSA I/O", "Apple: AUVoiceProcessor"])
        #expect(registry.findNext(after: nil, matching: ComponentDescription(type: "zzzz")) == nil)
    }

    @Test func foundComponentReportsItsConcreteDescription() throws {
        let found = try #require(Self.registry().findNext(after: nil, matching: ComponentDescription(type: .effect)))
        #expect(found.componentDescription == ComponentDescription(type: "aufx", subtype: "ipeq", manufacturer: "appl"))
        #expect(found.versionString == "1.0.0")
        let unit = found.instantiate()
        #expect(unit.componentDescription == found.componentDescription)
    }

    /// A unit Aulos wrote registers as Aulos's and answers to the Core Audio description it reimplements:
    /// found by either, reporting its own; a search for the manufacturer finds it under the alias too.
    @Test func aliasesFindAUnitByItsCoreAudioDescription() throws {
        let own = ComponentDescription(type: "auou", subtype: "genr", manufacturer: "Auls")
        let coreAudio = ComponentDescription(type: "auou", subtype: "genr", manufacturer: "appl")
        let registry = ComponentRegistry()
        registry.register(
            Component(own, aliases: [coreAudio], name: "Aulos: Generic Output") {
                AudioUnit(description: own, aliases: [coreAudio], name: "Aulos: Generic Output", inputs: 1, outputs: 1)
            })
        #expect(registry.findNext(after: nil, matching: coreAudio)?.componentDescription == own)
        #expect(registry.findNext(after: nil, matching: own)?.name == "Aulos: Generic Output")
        #expect(registry.find(matching: ComponentDescription(type: .any, manufacturer: "appl")).count == 1)
        #expect(registry.find(matching: ComponentDescription(type: "aufx")).isEmpty)
        // State saved under the Core Audio description (as Aulos wrote it before) restores into the unit.
        let unit = try registry.instantiate(coreAudio)
        var state = try unit.saveState()
        #expect(state.component == "auou/genr/Auls")
        state.component = "auou/genr/appl"
        try unit.restoreState(state)
        state.component = "auou/genr/Test"
        expectError(.invalidPropertyValue) { try unit.restoreState(state) }
    }

    @Test func instantiatingNothingIsAComponentNotFoundError() {
        #expect(throws: AudioUnitError(.componentNotFound, "")) {
            _ = try Self.registry().instantiate(ComponentDescription(type: "zzzz"))
        }
    }

    @Test func registrationReplacesAndNotifies() {
        let registry = Self.registry()
        let notified = Counter()
        registry.onRegistrationsChanged { notified.increment() }
        registry.register(Self.component("aufx", "ipeq", "appl", "Apple: AUiPodEQ v2"))
        #expect(notified.value == 1)
        #expect(registry.all.count == 6)
        #expect(registry.find(matching: ComponentDescription(type: .effect)).map(\.name) == ["Apple: AUiPodEQ v2"])
    }
}

/// A thread-safe counter for callbacks.
final class Counter: @unchecked Sendable {
    private var count = 0
    func increment() { count += 1 }
    var value: Int { count }
}
