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

    /// mda JX10 instantiated with Aulos's urid features; a note-on at frame 100 of a 256-frame block: silent
    /// before frame 100, sounding after.
    @Test func theJX10PlaysANoteAtItsFrame() throws {
        let world = try #require(lilv_world_new())
        defer { lilv_world_free(world) }
        lilv_world_load_all(world)
        let uri = lilv_new_uri(world, "http://drobilla.net/plugins/mda/JX10")
        defer { lilv_node_free(uri) }
        let plugin = try #require(
            lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world), uri),
            "mda-lv2 is not installed: scripts/setup.sh --tests installs it")
        let map = LV2URIDMap.shared
        let features = UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>.allocate(capacity: 3)
        defer { features.deallocate() }
        features[0] = UnsafePointer(map.mapFeature)
        features[1] = UnsafePointer(map.unmapFeature)
        features[2] = nil
        let instance = try #require(lilv_plugin_instantiate(plugin, 48_000, features))
        defer { lilv_instance_free(instance) }
        let frames = 256
        let ports = Int(lilv_plugin_get_num_ports(plugin))
        let controls = UnsafeMutablePointer<Float>.allocate(capacity: ports)
        defer { controls.deallocate() }
        let left = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        defer {
            left.deallocate()
            right.deallocate()
        }
        // The atom sequence: a header, then one MIDI event (time, size, type, 3 bytes, padded to 8).
        let sequence = UnsafeMutableRawPointer.allocate(byteCount: 1024, alignment: 8)
        defer { sequence.deallocate() }
        sequence.initializeMemory(as: UInt8.self, repeating: 0, count: 1024)
        sequence.storeBytes(of: UInt32(8 + 24), toByteOffset: 0, as: UInt32.self)
        sequence.storeBytes(of: map.map("http://lv2plug.in/ns/ext/atom#Sequence"), toByteOffset: 4, as: UInt32.self)
        sequence.storeBytes(of: Int64(100), toByteOffset: 16, as: Int64.self)
        sequence.storeBytes(of: UInt32(3), toByteOffset: 24, as: UInt32.self)
        sequence.storeBytes(of: map.map("http://lv2plug.in/ns/ext/midi#MidiEvent"), toByteOffset: 28, as: UInt32.self)
        for (offset, byte) in [UInt8(0x90), 60, 110].enumerated() {
            sequence.storeBytes(of: byte, toByteOffset: 32 + offset, as: UInt8.self)
        }
        let audio = lilv_new_uri(world, "http://lv2plug.in/ns/lv2core#AudioPort")
        let control = lilv_new_uri(world, "http://lv2plug.in/ns/lv2core#ControlPort")
        let output = lilv_new_uri(world, "http://lv2plug.in/ns/lv2core#OutputPort")
        defer { for node in [audio, control, output] { lilv_node_free(node) } }
        var audioOutputs = [left, right]
        for index in 0..<ports {
            let port = lilv_plugin_get_port_by_index(plugin, UInt32(index))
            if lilv_port_is_a(plugin, port, control) {
                var value: OpaquePointer?
                lilv_port_get_range(plugin, port, &value, nil, nil)
                controls[index] = value.map { lilv_node_as_float($0) } ?? 0
                lilv_node_free(value)
                lilv_instance_connect_port(instance, UInt32(index), controls + index)
            } else if lilv_port_is_a(plugin, port, audio) && lilv_port_is_a(plugin, port, output) {
                lilv_instance_connect_port(instance, UInt32(index), audioOutputs.removeFirst())
            } else {
                lilv_instance_connect_port(instance, UInt32(index), sequence)
            }
        }
        lilv_instance_activate(instance)
        lilv_instance_run(instance, UInt32(frames))
        lilv_instance_deactivate(instance)
        let before = (0..<100).allSatisfy { left[$0] == 0 && right[$0] == 0 }
        let after = (100..<frames).contains { left[$0] != 0 || right[$0] != 0 }
        #expect(before, "silent before the note's frame")
        #expect(after, "sounding from the note's frame on")
    }
}
