import AulosCore
import CLilv

#if canImport(Glibc)
import Glibc
#endif

/// lilv's world for the process: the installed plugins, read as they are asked for, their instantiation
/// with a set of host features per instance, and the state and presets lilv reads from the world.
///
/// Loading is lazy because reading every installed bundle is what start-up cost: with 647 plugins of 27
/// Debian packages, lsp-plugins alone is 26 MB of Turtle. `info(uri)` loads only the bundles whose
/// manifest names the plugin (and the LV2 specifications); `plugins` loads them all, for a listing. A
/// plugin is checked (`LV2PluginCheck`) before lilv builds its ports: one broken bundle costs only itself.
///
/// Threads: control thread (lilv's world is not thread-safe; loading, instantiating and state calls happen
/// while units are built and initialized, under a mutex; the mutex is taken before standard error is
/// captured, everywhere).
public final class LV2World: @unchecked Sendable {
    public static let shared = LV2World()

    let world: OpaquePointer?
    /// lilv's world is not thread-safe; what has been loaded and described so far goes with it.
    /// (`Locked`, not `Mutex`: ThreadSanitizer sees pthread mutexes.)
    let lock = Locked(Loaded())
    /// The directories searched for bundles, in order (`LV2_PATH`'s, or lilv's default).
    public let searchPath: [String]
    /// Where plugins' own files go (state:makePath): `$XDG_DATA_HOME/aulos/lv2` (or ~/.local/share/…),
    /// one directory per plugin under it.
    public let stateDirectory: String

    /// What the world has read so far (under the lock).
    struct Loaded {
        /// Every bundle on the search path and its manifest's text, read once (nil until first needed).
        var manifests: [(bundle: String, text: String)]?
        var loadedBundles: Set<String> = []
        var specificationsLoaded = false
        var everythingLoaded = false
        /// Plugins described so far, by URI: each hostable's description or why it is broken.
        var described: [String: Result<LV2PluginInfo, LV2BrokenPlugin>] = [:]
        /// What lilv and serd printed while loading bundles (broken Turtle, missing files).
        var complaints: [String] = []
        /// Bundles whose manifest lilv could not read (it then passes over all their plugins), and where
        /// serd stopped ("manifest.ttl line 3, column 83: missing ';' or '.'").
        var unreadable: [String: String] = [:]
    }

    /// lilv's default search path (lilv 0.24 on Linux), used when `LV2_PATH` is unset.
    static let defaultPath = "~/.lv2:/usr/lib/x86_64-linux-gnu/lv2:/usr/lib/lv2:/usr/local/lib/lv2"

    /// The plugins on `path` (colon-separated directories; nil: `LV2_PATH`, else lilv's default). Most
    /// callers use `shared`; tests load worlds of their own bundles. Nothing is read until asked for.
    public init(path: String? = nil) {
        let environment = ProcessEnvironment()
        let resolved = path ?? environment["LV2_PATH"] ?? Self.defaultPath
        let home = environment["HOME"] ?? "/"
        searchPath = resolved.split(separator: ":").map { directory in
            var expanded = directory.hasPrefix("~") ? home + directory.dropFirst() : String(directory)
            while expanded.count > 1 && expanded.hasSuffix("/") { expanded.removeLast() }
            return expanded
        }
        world = lilv_world_new()
        if let world {
            // lilv reads LV2_PATH itself only in lilv_world_load_all, which Aulos does not call; set for
            // anything inside lilv that looks.
            let node = lilv_new_string(world, resolved)
            lilv_world_set_option(world, LILV_OPTION_LV2_PATH, node)
            lilv_node_free(node)
        }
        let data =
            environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? "/tmp") + "/.local/share"
        stateDirectory = data + "/aulos/lv2"
    }

    /// Every plugin on the search path that Aulos can load, fully described, sorted by name (then URI).
    /// Reads every bundle: for listings (`aulos units --lv2`), not for playing one plugin.
    public var plugins: [LV2PluginInfo] { catalog().plugins }

    /// Every plugin on the search path: those that can be loaded, sorted by name (then URI), those that
    /// are broken, sorted by URI, and the bundles whose manifest could not be read (their plugins unknown),
    /// each a line to show. `forListing`: each plugin described only as far as a listing needs (name,
    /// project, component description; `LV2Catalog.describe`), and the descriptions not kept.
    public func catalog(forListing: Bool = false) -> (
        plugins: [LV2PluginInfo], broken: [LV2BrokenPlugin], unreadableBundles: [String]
    ) {
        lock.withLock { loaded in
            guard let world else { return ([], [], []) }
            loadEverything(&loaded)
            var plugins: [LV2PluginInfo] = []
            var broken: [LV2BrokenPlugin] = []
            for plugin in LV2Catalog.allPlugins(world) {
                let result =
                    forListing
                    ? LV2Catalog.describe(world, plugin, forListing: true) : describe(plugin, &loaded)
                switch result {
                case .success(let info): plugins.append(info)
                case .failure(let plugin): broken.append(plugin)
                }
            }
            let unreadable = loaded.unreadable.sorted { $0.key < $1.key }.map { bundle, reason in
                "the LV2 bundle \(Self.path(bundle)) cannot be read (\(reason)); none of its plugins can be "
                    + "loaded: fix or remove it (other plugins are unaffected)"
            }
            return (
                plugins.sorted { ($0.name.lowercased(), $0.uri) < ($1.name.lowercased(), $1.uri) },
                broken.sorted { $0.uri < $1.uri }, unreadable
            )
        }
    }

    /// What lilv and serd printed while reading bundles so far (broken Turtle, missing files).
    public var loadComplaints: [String] { lock.withLock { $0.complaints } }

    /// The plugin with `uri` as the catalog describes it; nil when none is installed or it is broken.
    public func info(_ uri: String) -> LV2PluginInfo? { try? lookUp(uri)?.get() }

    /// The plugin with `uri`: its description, or why it is broken; nil when none is installed. Loads only
    /// the bundles that name it (and, failing that, every bundle).
    public func lookUp(_ uri: String) -> Result<LV2PluginInfo, LV2BrokenPlugin>? {
        lock.withLock { loaded in
            if let known = loaded.described[uri] { return known }
            guard world != nil else { return nil }
            if !loaded.everythingLoaded {
                loadSpecifications(&loaded)
                load(Self.bundles(in: manifests(&loaded), naming: uri), &loaded)
            }
            if lilvPlugin(uri) == nil && !loaded.everythingLoaded {
                // Named in a way the manifest scan does not recognize (a relative or oddly written URI).
                loadEverything(&loaded)
            }
            if let plugin = lilvPlugin(uri) { return describe(plugin, &loaded) }
            // lilv passes over a bundle whose manifest it cannot read: a plugin it names is not "not
            // installed", it is broken.
            let bundles = Self.bundles(in: manifests(&loaded), naming: uri)
            guard let bundle = bundles.first(where: { loaded.unreadable[$0] != nil }),
                let place = loaded.unreadable[bundle]
            else { return nil }
            let reason = "its bundle's manifest could not be read (\(place))"
            return .failure(LV2BrokenPlugin(uri: uri, bundle: Self.path(bundle), reason: reason))
        }
    }

    /// A bundle's directory as the user wrote it (without the trailing slash lilv wants).
    static func path(_ bundle: String) -> String {
        bundle.count > 1 && bundle.hasSuffix("/") ? String(bundle.dropLast()) : bundle
    }

    /// The bundles on the search path, each with its manifest's text (read once; a manifest over 4 MB is
    /// not a manifest and is passed over).
    private func manifests(_ loaded: inout Loaded) -> [(bundle: String, text: String)] {
        if let manifests = loaded.manifests { return manifests }
        var result: [(bundle: String, text: String)] = []
        for directory in searchPath {
            // readdir's order, as lilv_world_load_all's: with two bundles of one plugin, the same one wins.
            guard let stream = opendir(directory) else { continue }
            defer { closedir(stream) }
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name.hasPrefix(".") { continue }
                let bundle = directory + "/" + name + "/"
                if let text = Self.contents(of: bundle + "manifest.ttl", limit: 4 << 20) {
                    result.append((bundle, text))
                }
            }
        }
        loaded.manifests = result
        return result
    }

    /// The LV2 specifications (their classes tell an instrument; their labels name standard properties):
    /// loaded once, before any plugin, as lilv_world_load_all would have.
    private func loadSpecifications(_ loaded: inout Loaded) {
        guard let world, !loaded.specificationsLoaded else { return }
        loaded.specificationsLoaded = true
        let specifications = manifests(&loaded).filter {
            $0.text.contains("Specification") || $0.text.contains("Ontology")
        }.map(\.bundle)
        load(specifications, &loaded)
        let (_, complaint) = Self.capturingStandardError {
            lilv_world_load_specifications(world)
            lilv_world_load_plugin_classes(world)
        }
        loaded.complaints += complaint.split(separator: "\n").map(String.init)
    }

    /// Every bundle on the search path.
    private func loadEverything(_ loaded: inout Loaded) {
        guard !loaded.everythingLoaded else { return }
        loadSpecifications(&loaded)
        load(manifests(&loaded).map(\.bundle), &loaded)
        loaded.everythingLoaded = true
    }

    /// lilv reads each bundle's manifest (not its plugins' data: that waits until a plugin is described).
    private func load(_ bundles: [String], _ loaded: inout Loaded) {
        guard let world else { return }
        for bundle in bundles where loaded.loadedBundles.insert(bundle).inserted {
            // A bundle with broken Turtle makes serd print; its plugins are passed over, and the messages
            // are kept (`loadComplaints`).
            let (_, complaint) = Self.capturingStandardError {
                let node = lilv_new_file_uri(world, nil, bundle)
                lilv_world_load_bundle(world, node)
                lilv_node_free(node)
            }
            let lines = complaint.split(separator: "\n")
            loaded.complaints += lines.map(String.init)
            // serd's line says where; lilv's "Error reading …/manifest.ttl" that the manifest was given up.
            if lines.contains(where: { $0.contains("Error reading") }) {
                let place = lines.first { $0.hasPrefix("error: ") }.map(LV2PluginCheck.place) ?? "manifest.ttl"
                loaded.unreadable[bundle] = place
            }
        }
    }

    /// The plugin described once (checked first: a broken one is never asked for its ports).
    private func describe(_ plugin: OpaquePointer, _ loaded: inout Loaded) -> Result<LV2PluginInfo, LV2BrokenPlugin> {
        let uri = String(cString: lilv_node_as_uri(lilv_plugin_get_uri(plugin)))
        if let known = loaded.described[uri] { return known }
        guard let world else { return .failure(LV2BrokenPlugin(uri: uri, bundle: "", reason: "lilv has no world")) }
        let result = LV2Catalog.describe(world, plugin)
        loaded.described[uri] = result
        return result
    }

    /// The bundles whose manifest names `uri`: in full (`<uri>`) or as a prefixed name (`mda:JX10` under
    /// `@prefix mda: <http://drobilla.net/plugins/mda/>`). A preset bundle for the plugin names it too.
    static func bundles(in manifests: [(bundle: String, text: String)], naming uri: String) -> [String] {
        manifests.filter { names($0.text, uri) }.map(\.bundle)
    }

    /// Whether a manifest's text names `uri` (a quick look at the text, not a Turtle reader: a plugin whose
    /// bundle it misses is still found, since `lookUp` then loads every bundle).
    static func names(_ text: String, _ uri: String) -> Bool {
        if text.contains("<" + uri + ">") { return true }
        for line in text.split(separator: "\n") {
            // "@prefix mda: <http://drobilla.net/plugins/mda/> ." (or SPARQL's "PREFIX mda: <…>")
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 3, words[0].lowercased() == "@prefix" || words[0].lowercased() == "prefix",
                words[1].hasSuffix(":"), words[2].hasPrefix("<"), words[2].hasSuffix(">")
            else { continue }
            let namespace = words[2].dropFirst().dropLast()
            if !namespace.isEmpty, uri.hasPrefix(namespace), text.contains(words[1] + uri.dropFirst(namespace.count)) {
                return true
            }
        }
        return false
    }

    /// A small text file's contents; nil when it is missing, unreadable or over `limit` bytes.
    static func contents(of path: String, limit: Int) -> String? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count == 0 { break }
            bytes += chunk.prefix(count)
            if bytes.count > limit { return nil }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A new instance of the plugin at `uri` given `features`. A plugin that asks for
    /// `state:loadDefaultState` gets its default state restored. Fails with lilv's reason (a missing
    /// binary, a binary without the plugin, the plugin's own refusal), which lilv would otherwise print.
    func instantiate(_ uri: String, sampleRate: Double, features: LV2InstanceFeatures) throws(AudioUnitError)
        -> UnsafeMutablePointer<LilvInstance>
    {
        // A plugin that crashes or calls exit() while being created is named by the crash report, after its
        // own last words (which the capture would otherwise hold back).
        aulos_crash_report_set_activity("creating LV2 plugin <\(uri)>")
        defer { aulos_crash_report_set_activity(nil) }
        let (instance, complaint) = lock.withLock { loaded in
            Self.capturingStandardError { () -> UnsafeMutablePointer<LilvInstance>? in
                guard let world, let plugin = plugin(uri, loaded) else { return nil }
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
            let reason = complaint.split(separator: "\n").first.map { Self.lilvReason(String($0)) }
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

    /// lilv's line with its function name and "error:" taken off ("lilv_lib_open(): error: Failed to open
    /// library …"): what went wrong, whole (keeping only the text after the last ": " turned a missing
    /// library into "No such file or directory)" and an unresolved symbol into "fftwf_execute)"), clipped.
    static func lilvReason(_ line: String) -> String {
        var text = Substring(line)
        if let call = text.firstRange(of: "(): "), !text[..<call.lowerBound].contains(" ") {
            text = text[call.upperBound...]
        }
        for prefix in ["error: ", "warning: "] where text.hasPrefix(prefix) { text = text.dropFirst(prefix.count) }
        return String(text).clipped(240)
    }

    private static func capturing<T>(_ body: () -> T) -> (T, String) {
        fflush(nil)
        let saved = dup(2)
        guard saved >= 0, let file = tmpfile() else { return (body(), "") }
        dup2(fileno(file), 2)
        // Should the body crash or exit (a plugin being created), the crash report copies what was captured
        // to the real stderr first: a plugin's last words are never held back.
        aulos_crash_report_capturing(fileno(file), saved)
        let result = body()
        aulos_crash_report_capturing(-1, -1)
        fflush(nil)
        dup2(saved, 2)
        close(saved)
        rewind(file)
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = fread(&bytes, 1, bytes.count, file)
        fclose(file)
        return (result, String(decoding: bytes.prefix(count), as: UTF8.self))
    }

    /// lilv's plugin for `uri` once it has been described and passed its checks (call under the lock):
    /// nothing builds the port array of a plugin that has not.
    func plugin(_ uri: String, _ loaded: Loaded) -> OpaquePointer? {
        guard case .success = loaded.described[uri] else { return nil }
        return lilvPlugin(uri)
    }

    /// lilv's plugin for `uri`, unchecked (call under the lock).
    private func lilvPlugin(_ uri: String) -> OpaquePointer? {
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
