import AulosCore
import AulosTestSupport
import CLilv
import Testing

@testable import AulosLV2

/// The LV2 world reads what is used: a plugin looked up loads the bundles that name it (and the LV2
/// specifications), not every installed bundle — with 647 plugins installed, reading them all was 4 s and
/// 180 MB before the first note. A listing reads them all, and a broken plugin costs only itself there.
@Suite struct LV2WorldLoadingTests {
    @Test func onePluginLoadsOnlyItsBundle() throws {
        let folder = try LV2TestBundles.folder(good: ["mda.lv2", "eg-amp.lv2", "core.lv2"])
        defer { TestFiles.remove(folder) }
        let world = LV2World(path: folder)
        let jx10 = try #require(world.info(LV2TestBundles.jx10))
        // Its class comes from the specification (lv2core), read as lilv_world_load_all would.
        #expect(jx10.componentDescription.type == .musicDevice && jx10.ports.count == 27)
        let (bundles, described) = world.lock.withLock { ($0.loadedBundles, Array($0.described.keys)) }
        #expect(bundles == [folder + "/core.lv2/", folder + "/mda.lv2/"], "only its bundle and the specification")
        #expect(described == [LV2TestBundles.jx10], "only the plugin asked for is described")
        let known = world.lock.withLock { _ in Self.pluginURIs(world.world!) }
        #expect(known.count == 36 && known.allSatisfy { $0.hasPrefix("http://drobilla.net/plugins/mda/") }, "\(known)")

        // A broken plugin looked up afterwards is refused with its reason; the rest still load.
        guard case .failure(let broken)? = world.lookUp(LV2TestBundles.hugeIndex) else {
            Issue.record("\(LV2TestBundles.hugeIndex) was not refused")
            return
        }
        #expect(broken.reason.contains("4000000000") && broken.bundle == folder + "/huge-index.lv2")
        #expect(world.lock.withLock { $0.loadedBundles.count } == 3)
        #expect(world.info(LV2TestBundles.amp)?.name == "Simple Amplifier")

        // The listing reads everything: each good plugin once, each broken one with its reason.
        let catalog = world.catalog()
        #expect(catalog.plugins.count == 37)
        #expect(
            catalog.broken.map(\.uri)
                == [LV2TestBundles.hugeIndex, LV2TestBundles.negativeIndex, LV2TestBundles.syntaxError].sorted())
    }

    /// `aulos units` lists each plugin's description and name: the listing reads no presets (a file each)
    /// and no port details, and describes every plugin as the full description does.
    @Test func aListingReadsOnlyWhatItShows() throws {
        let folder = try LV2TestBundles.folder(good: ["mda.lv2", "eg-amp.lv2", "core.lv2"])
        defer { TestFiles.remove(folder) }
        let listing = LV2World(path: folder).catalog(forListing: true)
        let full = LV2World(path: folder).catalog()
        #expect(listing.plugins.count == 37 && listing.broken == full.broken)
        #expect(listing.plugins.map(\.componentDescription) == full.plugins.map(\.componentDescription))
        #expect(listing.plugins.map(\.name) == full.plugins.map(\.name))
        let jx10 = try #require(listing.plugins.first { $0.uri == LV2TestBundles.jx10 })
        #expect(jx10.presets.isEmpty && jx10.ports.allSatisfy { $0.name.isEmpty }, "presets and port names not read")
        #expect(full.plugins.first { $0.uri == LV2TestBundles.jx10 }?.presets.count ?? 0 > 0)
    }

    /// A plugin named in its manifest by a prefixed name (mda:JX10) or in full (<urn:…>) is found; a
    /// prefix of another namespace, or a different plugin of the same namespace, is not mistaken for it.
    @Test func manifestsAreSearchedForTheURIInFullOrPrefixed() {
        let manifest =
            "@prefix lv2: <http://lv2plug.in/ns/lv2core#> .\n@prefix mda:\t<http://drobilla.net/plugins/mda/> .\n"
            + "mda:JX10 a lv2:Plugin .\n<urn:aulos:x> a lv2:Plugin .\n"
        #expect(LV2World.names(manifest, "http://drobilla.net/plugins/mda/JX10"))
        #expect(LV2World.names(manifest, "urn:aulos:x"))
        #expect(!LV2World.names(manifest, "http://drobilla.net/plugins/mda/DX10"))
        #expect(!LV2World.names(manifest, "urn:aulos:y"))
    }

    static func pluginURIs(_ world: OpaquePointer) -> [String] {
        LV2Catalog.allPlugins(world).map { String(cString: lilv_node_as_uri(lilv_plugin_get_uri($0))) }
    }
}
