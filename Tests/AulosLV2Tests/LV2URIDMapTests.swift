import AulosLV2
import CLilv
import Testing

/// The host's URID map: one id per URI for the process, unmap giving the URI back; and a real plugin (mda
/// JX10, which requires urid:map) instantiated through lilv with the map feature, playing a note placed at
/// a frame of a block — the plumbing the LV2 unit is built on.
@Suite struct LV2URIDMapTests {
    @Test func urisMapToOneIdEachAndBack() {
        let map = LV2URIDMap.shared
        let sequence = map.map("http://lv2plug.in/ns/ext/atom#Sequence")
        #expect(sequence > 0)
        #expect(map.map("http://lv2plug.in/ns/ext/atom#Sequence") == sequence)
        #expect(map.map("http://lv2plug.in/ns/ext/midi#MidiEvent") != sequence)
        #expect(map.unmap(sequence) == "http://lv2plug.in/ns/ext/atom#Sequence")
        #expect(map.unmap(0) == nil && map.unmap(.max) == nil)
        // Through the C feature, as a plugin calls it.
        let feature = map.mapFeature.pointee
        let data = feature.data.assumingMemoryBound(to: LV2_URID_Map.self).pointee
        #expect(data.map(data.handle, "http://lv2plug.in/ns/ext/atom#Sequence") == sequence)
        #expect(String(cString: feature.URI) == "http://lv2plug.in/ns/ext/urid#map")
    }

    /// mda JX10 instantiated with Aulos's urid features by the bare host: a note sounds.
    @Test func aRealPluginPlaysThroughTheFeatures() throws {
        let output = try BareLV2Host.note("http://drobilla.net/plugins/mda/JX10", at: 100, block: 256, frames: 1024)
        #expect(output[..<100].allSatisfy { $0 == 0 }, "silent before the note")
        #expect(output[100...].contains { $0 != 0 }, "sounding after it")
    }
}
