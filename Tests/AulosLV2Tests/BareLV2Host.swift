import AulosLV2
import CLilv
import Testing

/// The smallest lilv host, for comparing with Aulos's LV2 unit: instantiates a plugin with the URID
/// features, sets every control port to its default, feeds one note-on through an atom sequence at its
/// frame, runs in blocks of a given size and returns the left output. Nothing of Aulos's render path.
///
/// Threads: the calling test's.
enum BareLV2Host {
    static func note(_ uri: String, at offset: Int, block: Int, frames: Int) throws -> [Float] {
        let world = try #require(lilv_world_new())
        defer { lilv_world_free(world) }
        lilv_world_load_all(world)
        let node = lilv_new_uri(world, uri)
        defer { lilv_node_free(node) }
        let plugin = try #require(
            lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world), node),
            "\(uri) is not installed: scripts/setup.sh --tests installs mda-lv2 and lv2-examples")
        let map = LV2URIDMap.shared
        let features = UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>.allocate(capacity: 3)
        defer { features.deallocate() }
        features.initialize(from: [UnsafePointer(map.mapFeature), UnsafePointer(map.unmapFeature), nil], count: 3)
        let instance = try #require(lilv_plugin_instantiate(plugin, 48_000, features))
        defer { lilv_instance_free(instance) }
        let ports = Int(lilv_plugin_get_num_ports(plugin))
        let controls = UnsafeMutablePointer<Float>.allocate(capacity: ports)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let sequence = UnsafeMutableRawPointer.allocate(byteCount: 1024, alignment: 8)
        defer {
            controls.deallocate()
            left.deallocate()
            right.deallocate()
            sequence.deallocate()
        }
        let audio = lilv_new_uri(world, "http://lv2plug.in/ns/lv2core#AudioPort")
        let control = lilv_new_uri(world, "http://lv2plug.in/ns/lv2core#ControlPort")
        let output = lilv_new_uri(world, "http://lv2plug.in/ns/lv2core#OutputPort")
        defer { for node in [audio, control, output] { lilv_node_free(node) } }
        var outputs = [left, right]
        for index in 0..<ports {
            let port = lilv_plugin_get_port_by_index(plugin, UInt32(index))
            if lilv_port_is_a(plugin, port, control) {
                var value: OpaquePointer?
                lilv_port_get_range(plugin, port, &value, nil, nil)
                controls[index] = value.map { lilv_node_as_float($0) } ?? 0
                lilv_node_free(value)
                lilv_instance_connect_port(instance, UInt32(index), controls + index)
            } else if lilv_port_is_a(plugin, port, audio) && lilv_port_is_a(plugin, port, output) {
                lilv_instance_connect_port(instance, UInt32(index), outputs.removeFirst())
            } else {
                lilv_instance_connect_port(instance, UInt32(index), sequence)
            }
        }
        lilv_instance_activate(instance)
        defer { lilv_instance_deactivate(instance) }
        var result: [Float] = []
        var start = 0
        while result.count < frames {
            // The sequence: empty, or the note-on when it falls in this block.
            sequence.initializeMemory(as: UInt8.self, repeating: 0, count: 1024)
            let hasNote = offset >= start && offset < start + block
            sequence.storeBytes(of: UInt32(hasNote ? 8 + 24 : 8), as: UInt32.self)
            sequence.storeBytes(of: map.map("http://lv2plug.in/ns/ext/atom#Sequence"), toByteOffset: 4, as: UInt32.self)
            if hasNote {
                sequence.storeBytes(of: Int64(offset - start), toByteOffset: 16, as: Int64.self)
                sequence.storeBytes(of: UInt32(3), toByteOffset: 24, as: UInt32.self)
                sequence.storeBytes(
                    of: map.map("http://lv2plug.in/ns/ext/midi#MidiEvent"), toByteOffset: 28, as: UInt32.self)
                for (index, byte) in [UInt8(0x90), 60, 110].enumerated() {
                    sequence.storeBytes(of: byte, toByteOffset: 32 + index, as: UInt8.self)
                }
            }
            lilv_instance_run(instance, UInt32(block))
            result += UnsafeBufferPointer(start: left, count: block)
            start += block
        }
        return Array(result.prefix(frames))
    }
}
