import AulosCore
import CLilv

#if canImport(Glibc)
import Glibc
#endif

/// lilv's world, loaded once for the process: the installed plugins (`plugins`), their instantiation
/// with a set of host features per instance, and the state and presets lilv reads from the world.
///
/// Threads: control thread (lilv's world is not thread-safe; loading, instantiating and state calls happen
/// while units are built and initialized, under a mutex).
public final class LV2World: @unchecked Sendable {
    public static let shared = LV2World()

    let world: OpaquePointer?
    /// lilv's world is not thread-safe. (`Locked`, not `Mutex`: ThreadSanitizer sees pthread mutexes.)
    let lock = Locked(())
    public let plugins: [LV2PluginInfo]
    /// Where plugins' own files go (state:makePath): `$XDG_DATA_HOME/aulos/lv2` (or ~/.local/share/…),
    /// one directory per plugin under it.
    public let stateDirectory: String
    /// What lilv reported while loading the installed bundles (broken Turtle, missing files).
    public let loadComplaints: [String]

    /// The plugins on `path` (colon-separated directories; nil: `LV2_PATH`, else lilv's default). Most
    /// callers use `shared`; tests load worlds of their own bundles.
    public init(path: String? = nil) {
        world = lilv_world_new()
        if let world {
            if let path {
                let node = lilv_new_string(world, path)
                lilv_world_set_option(world, LILV_OPTION_LV2_PATH, node)
                lilv_node_free(node)
            }
            // A bundle with broken Turtle makes serd print; the plugin is passed over, and the messages
            // are kept for `aulos units --lv2`.
            loadComplaints = Self.capturingStandardError { lilv_world_load_all(world) }.1
                .split(separator: "\n").map(String.init)
        } else {
            loadComplaints = []
        }
        plugins = world.map(LV2Catalog.describe) ?? []
        let environment = ProcessEnvironment()
        let data =
            environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? "/tmp") + "/.local/share"
        stateDirectory = data + "/aulos/lv2"
    }

    /// A new instance of the plugin at `uri` given `features`. A plugin that asks for
    /// `state:loadDefaultState` gets its default state restored. Fails with lilv's reason (a missing
    /// binary, a binary without the plugin, the plugin's own refusal), which lilv would otherwise print.
    func instantiate(_ uri: String, sampleRate: Double, features: LV2InstanceFeatures) throws(AudioUnitError)
        -> UnsafeMutablePointer<LilvInstance>
    {
        let (instance, complaint) = Self.capturingStandardError {
            lock.withLock { _ -> UnsafeMutablePointer<LilvInstance>? in
                guard let world, let plugin = plugin(uri) else { return nil }
                guard let instance = lilv_plugin_instantiate(plugin, sampleRate, features.list) else { return nil }
                let loadDefault = lilv_new_uri(world, LV2URI.stateLoadDefaultState)
                defer { lilv_node_free(loadDefault) }
                if lilv_plugin_has_feature(plugin, loadDefault),
                    let state = lilv_state_new_from_world(world, LV2URIDMap.shared.mapData, lilv_plugin_get_uri(plugin))
                {
                    lilv_state_restore(state, instance, nil, nil, 0, features.list)
                    lilv_state_free(state)
                }
                return instance
            }
        }
        guard let instance else {
            let reason = complaint.split(separator: "\n").first.map { line in
                String(line.split(separator: ": ").last ?? line)
            }
            throw AudioUnitError(.failedInitialization, reason.map { " (\($0))" } ?? "")
        }
        return instance
    }

    /// Runs `body` with standard error going to a temporary file, and returns what was written there
    /// (lilv and serd report problems by printing; Aulos reports them as one-line errors). Control thread;
    /// nothing else in Aulos prints meanwhile. One capture at a time: file descriptor 2 is the process's.
    static func capturingStandardError<T>(_ body: () -> T) -> (T, String) {
        captureLock.withLock { _ in capturing(body) }
    }

    private static let captureLock = Locked(())

    private static func capturing<T>(_ body: () -> T) -> (T, String) {
        fflush(nil)
        let saved = dup(2)
        guard saved >= 0, let file = tmpfile() else { return (body(), "") }
        dup2(fileno(file), 2)
        let result = body()
        fflush(nil)
        dup2(saved, 2)
        close(saved)
        rewind(file)
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = fread(&bytes, 1, bytes.count, file)
        fclose(file)
        return (result, String(decoding: bytes.prefix(count), as: UTF8.self))
    }

    /// The installed plugin with `uri`, as the catalog describes it; nil when none is.
    public func info(_ uri: String) -> LV2PluginInfo? { plugins.first { $0.uri == uri } }

    /// lilv's plugin for `uri` (call under the lock).
    func plugin(_ uri: String) -> OpaquePointer? {
        guard let world else { return nil }
        let node = lilv_new_uri(world, uri)
        defer { lilv_node_free(node) }
        return lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world), node)
    }
}

/// The process's environment variables (read once, control thread).
struct ProcessEnvironment {
    subscript(name: String) -> String? { getenv(name).map { String(cString: $0) } }
}
