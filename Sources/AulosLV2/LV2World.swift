import CLilv
import Synchronization

/// lilv's world, loaded once for the process: the installed plugins (`plugins`) and their instantiation
/// with Aulos's host features.
///
/// Threads: control thread (lilv's world is not thread-safe; loading and instantiating happen while units
/// are built and initialized, under a mutex).
public final class LV2World: @unchecked Sendable {
    public static let shared = LV2World()

    private let world: OpaquePointer?
    private let lock = Mutex(())
    public let plugins: [LV2PluginInfo]
    /// The feature list handed to every instance (NULL-terminated), alive as long as the process.
    private let features: UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>

    private init() {
        world = lilv_world_new()
        if let world { lilv_world_load_all(world) }
        plugins = world.map(LV2Catalog.describe) ?? []
        let map = LV2URIDMap.shared
        let bounded = UnsafeMutablePointer<LV2_Feature>.allocate(capacity: 1)
        bounded.initialize(
            to: LV2_Feature(URI: LV2URIDMap.cString("http://lv2plug.in/ns/ext/buf-size#boundedBlockLength"), data: nil))
        features = .allocate(capacity: 4)
        features.initialize(
            from: [UnsafePointer(map.mapFeature), UnsafePointer(map.unmapFeature), UnsafePointer(bounded), nil],
            count: 4)
    }

    /// A new instance of the plugin at `uri`, or nil (unknown, or its instantiate failed).
    func instantiate(_ uri: String, sampleRate: Double) -> UnsafeMutablePointer<LilvInstance>? {
        lock.withLock { _ in
            guard let world else { return nil }
            let node = lilv_new_uri(world, uri)
            defer { lilv_node_free(node) }
            guard let plugin = lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world), node) else { return nil }
            return lilv_plugin_instantiate(plugin, sampleRate, features)
        }
    }
}
