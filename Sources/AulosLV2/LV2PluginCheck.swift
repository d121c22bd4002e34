import CLilv

/// A plugin lilv found that Aulos will not load: its Turtle could not be read, or its ports are malformed.
/// It costs only itself: listed with its reason, never instantiated, and every other plugin still loads.
///
/// Threads: a value.
public struct LV2BrokenPlugin: Error, Sendable, Equatable {
    public var uri: String
    /// The bundle's directory (a path, or the bundle's URI when it is not a local file).
    public var bundle: String
    /// Why, in a few words ("port 0's lv2:index is -1, not 0…1").
    public var reason: String

    /// One line: which plugin, where, why, and that nothing else is affected.
    public var message: String {
        "the LV2 plugin <\(uri)> in \(bundle) cannot be loaded: \(reason); fix or remove the bundle "
            + "(other plugins are unaffected)"
    }
}

/// The checks a plugin's description passes before lilv is asked for anything that builds its port array
/// (`lilv_plugin_get_num_ports`, `get_port_by_index`, `instantiate`, a state of an instance…). lilv 0.24
/// sizes that array by the largest `lv2:index` it reads, unchecked: an index of -1 or 4000000000 makes it
/// memset some 32 GB and the process dies — every command that lists or loads any plugin, for one bad
/// bundle. The checks ask only the world's RDF model (which lilv has already parsed), never the port array.
///
/// Threads: control thread, under the world's lock (LV2World) or on a world of the caller's own.
enum LV2PluginCheck {
    /// More ports than any real plugin declares (the largest installed in Debian 12 has a few hundred);
    /// a bound on what a plugin may make Aulos allocate.
    static let maximumPorts = 4096

    /// Why the plugin must not be loaded, or nil when lilv may build its ports. Loads the plugin's data
    /// files (lilv does so on first use anyway); what serd prints about them is kept for the reason.
    static func problem(world: OpaquePointer, plugin: OpaquePointer) -> String? {
        // lilv_plugin_verify reads the data files and is false after a Turtle error, which lilv otherwise
        // keeps to itself: the plugin would look portless (an "effect that takes no audio in").
        let (verified, complaint) = LV2World.capturingStandardError { lilv_plugin_verify(plugin) }
        let lines = complaint.split(separator: "\n")
        // serd's own line says where; lilv's ("Error loading file …") only which file. (A plugin that is
        // merely unverified — no doap:name — has neither, and is checked on.)
        if !verified,
            let serdError = lines.first(where: { $0.hasPrefix("error: ") })
                ?? lines.first(where: { $0.contains("Error loading file") })
        {
            return "its Turtle could not be read (\(Self.place(of: serdError)))"
        }
        let uri = { (text: String) in lilv_new_uri(world, text) }
        let (portPredicate, indexPredicate, symbolPredicate) = (
            uri("http://lv2plug.in/ns/lv2core#port"), uri("http://lv2plug.in/ns/lv2core#index"),
            uri("http://lv2plug.in/ns/lv2core#symbol")
        )
        defer { for node in [portPredicate, indexPredicate, symbolPredicate] { lilv_node_free(node) } }
        guard let ports = lilv_plugin_get_value(plugin, portPredicate) else {
            return verified ? nil : "its Turtle declares no ports"
        }
        defer { lilv_nodes_free(ports) }
        let count = Int(lilv_nodes_size(ports))
        if count > maximumPorts { return "it declares \(count) ports (at most \(maximumPorts))" }
        var seen = Set<Int>()
        var iterator = lilv_nodes_begin(ports)
        while !lilv_nodes_is_end(ports, iterator) {
            defer { iterator = lilv_nodes_next(ports, iterator) }
            guard let port = lilv_nodes_get(ports, iterator) else { continue }
            let indices = strings(lilv_world_find_nodes(world, port, indexPredicate, nil))
            guard indices.count == 1, let text = indices.first else {
                return indices.isEmpty ? "a port has no lv2:index" : "a port has \(indices.count) lv2:index values"
            }
            // Read from the text: lilv keeps an integer in a C int, so 4000000000 would arrive wrapped.
            guard let index = Int(text.value), text.isInteger else {
                return "a port's lv2:index \"\(text.value)\" is not an integer"
            }
            guard (0..<count).contains(index) else {
                let ports = count == 1 ? "1 port" : "\(count) ports"
                return "a port's lv2:index is \(index), not 0…\(count - 1) (it declares \(ports))"
            }
            guard seen.insert(index).inserted else { return "two ports have lv2:index \(index)" }
            let symbols = strings(lilv_world_find_nodes(world, port, symbolPredicate, nil))
            guard symbols.count == 1, let symbol = symbols.first, symbol.isString, isSymbol(symbol.value) else {
                return "port \(index) has no valid lv2:symbol (one, a C identifier)"
            }
        }
        // count distinct indices, each in 0..<count: dense, as lilv's array needs.
        return nil
    }

    /// "error: /usr/lib/lv2/x.lv2/plugin.ttl:7:12: bad verb" → "plugin.ttl line 7, column 12: bad verb".
    static func place(of serdError: Substring) -> String {
        let text = serdError.hasPrefix("error: ") ? serdError.dropFirst("error: ".count) : serdError
        // A path (or a file URI) may hold colons of its own: the line and column are the two fields after
        // the last ".ttl".
        guard let ttl = text.ranges(of: ".ttl:").last else { return String(text) }
        let file = text[..<ttl.lowerBound].split(separator: "/").last.map { $0 + ".ttl" } ?? ""
        let rest = text[ttl.upperBound...].split(separator: ":", maxSplits: 2).map { $0.trimmingPrefix(" ") }
        guard rest.count == 3 else { return String(text) }
        return "\(file) line \(rest[0]), column \(rest[1]): \(rest[2])"
    }

    /// A port symbol as lilv requires it: letters, digits (not first) and underscores.
    static func isSymbol(_ text: String) -> Bool {
        guard let first = text.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            return false
        }
        return text.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
        }
    }

    /// A node list the caller owns: each node's text and whether it is an integer or string literal; freed.
    private static func strings(_ list: UnsafeMutableRawPointer?) -> [(value: String, isInteger: Bool, isString: Bool)]
    {
        guard let list else { return [] }
        defer { lilv_nodes_free(list) }
        var result: [(String, Bool, Bool)] = []
        var iterator = lilv_nodes_begin(list)
        while !lilv_nodes_is_end(list, iterator) {
            if let node = lilv_nodes_get(list, iterator), let text = lilv_node_as_string(node) {
                result.append((String(cString: text), lilv_node_is_int(node), lilv_node_is_string(node)))
            }
            iterator = lilv_nodes_next(list, iterator)
        }
        return result
    }
}
