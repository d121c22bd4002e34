import AulosCore
import AulosTestSupport
import Foundation
import Testing

@testable import AulosLV2

#if canImport(Glibc)
import Glibc
#endif

/// Discovery of the LV2 plugins Debian installs (`scripts/setup.sh --tests`: mda-lv2, lv2-examples):
/// each described as the unit type its ports make it, with a component description that never changes,
/// its ports, and the features it requires checked against what Aulos provides. Serialized: one test
/// points LV2_PATH elsewhere.
@Suite(.serialized) struct LV2CatalogTests {
    static func plugin(_ uri: String) throws -> LV2PluginInfo {
        // One plugin's bundle, not every installed one (LV2World loads what is looked up).
        let found = LV2World().info(uri)
        return try #require(found, "\(uri) not installed: scripts/setup.sh --tests installs mda-lv2 and lv2-examples")
    }

    @Test func instrumentsEffectsAndMIDIEffectsAreToldApart() throws {
        let jx10 = try Self.plugin("http://drobilla.net/plugins/mda/JX10")
        #expect(jx10.componentDescription.type == .musicDevice)
        #expect(jx10.name == "MDA JX10" && jx10.project == "MDA LV2")
        #expect(jx10.ports.contains { $0.kind == .atom && $0.isInput && $0.carriesMIDI })
        #expect(jx10.ports.filter { $0.kind == .audio && !$0.isInput }.count == 2)
        let ambience = try Self.plugin("http://drobilla.net/plugins/mda/Ambience")
        #expect(ambience.componentDescription.type == .effect)
        let fifths = try Self.plugin("http://lv2plug.in/plugins/eg-fifths")
        #expect(fifths.componentDescription.type == .musicEffect, "MIDI in, MIDI out, no audio")
        let amp = try Self.plugin("http://lv2plug.in/plugins/eg-amp")
        let gain = try #require(amp.ports.first { $0.kind == .control })
        #expect(gain.range.minimum == -90 && gain.range.maximum == 24 && gain.range.defaultValue == 0)
    }

    /// A rig file names a plugin's unit by its description: the same URI gives the same codes everywhere,
    /// and one manufacturer code covers a project's plugins.
    @Test func descriptionsAreStableAndShareTheProjectsManufacturer() throws {
        let jx10 = try Self.plugin("http://drobilla.net/plugins/mda/JX10")
        // Pinned: a rig file written today must find the same plugin tomorrow.
        #expect(
            jx10.componentDescription == ComponentDescription(type: .musicDevice, subtype: "dsq9", manufacturer: "ldpz")
        )
        #expect(LV2Catalog.code(for: jx10.uri) == jx10.componentDescription.subtype)
        #expect(LV2Catalog.code(for: jx10.uri) == LV2Catalog.code(for: "http://drobilla.net/plugins/mda/JX10"))
        let dx10 = try Self.plugin("http://drobilla.net/plugins/mda/DX10")
        #expect(dx10.componentDescription.manufacturer == jx10.componentDescription.manufacturer)
        #expect(dx10.componentDescription.subtype != jx10.componentDescription.subtype)
        // Every installed plugin, described as far as its description goes (as `aulos units` lists them).
        let all = LV2World().catalog(forListing: true).plugins
        #expect(Set(all.map(\.componentDescription)).count == all.count, "two plugins share a description")
    }

    @Test func requiredFeaturesAreCheckedAgainstWhatAulosProvides() throws {
        let jx10 = try Self.plugin("http://drobilla.net/plugins/mda/JX10")
        #expect(jx10.requiredFeatures == ["http://lv2plug.in/ns/ext/urid#map"])
        #expect(jx10.missingFeatures.isEmpty && jx10.unsupportedPorts.isEmpty)
        var strange = jx10
        strange.requiredFeatures.append("http://example.org/ns#teleport")
        #expect(strange.missingFeatures == ["http://example.org/ns#teleport"])
    }

    /// A bundle whose Turtle is broken is passed over: discovery still finds the rest, and nothing crashes.
    @Test func aBrokenBundleDoesNotStopDiscovery() throws {
        let folder = TestFiles.scratch("lv2-broken")
        let bundle = folder + "/broken.lv2"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        defer { TestFiles.remove(folder) }
        TestFiles.write(
            "@prefix lv2: <http://lv2plug.in/ns/lv2core#> .\n<urn:broken> a lv2:Plugin ; lv2:binary <",
            to: bundle + "/manifest.ttl")
        let saved = getenv("LV2_PATH").map { String(cString: $0) }
        // Beside one good bundle, not every installed one: reading hundreds of plugins takes seconds.
        try FileManager.default.createSymbolicLink(
            atPath: folder + "/mda.lv2", withDestinationPath: "/usr/lib/lv2/mda.lv2")
        setenv("LV2_PATH", folder, 1)
        defer {
            if let saved { setenv("LV2_PATH", saved, 1) } else { unsetenv("LV2_PATH") }
        }
        let plugins = LV2Catalog.discover()
        #expect(plugins.contains { $0.uri == "http://drobilla.net/plugins/mda/JX10" })
        #expect(!plugins.contains { $0.uri == "urn:broken" })
    }
}
