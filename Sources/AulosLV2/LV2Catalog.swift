import AulosCore
import CLilv

/// One LV2 plugin as discovery finds it: what it is (an instrument, an effect, a MIDI effect), the
/// component description Aulos gives it, its ports and the features it asks of a host.
///
/// Threads: a value.
public struct LV2PluginInfo: Sendable, Equatable {
    public struct Port: Sendable, Equatable {
        public enum Kind: String, Sendable {
            case audio, control, atom, cv, unknown
        }
        public var index: Int
        public var symbol: String
        public var name: String
        public var kind: Kind
        public var isInput: Bool
        /// `lv2:connectionOptional`: the plugin runs with the port unconnected.
        public var isOptional: Bool
        /// An atom port that carries MIDI events.
        public var carriesMIDI: Bool
        /// Control ports: default, minimum, maximum (nil where the plugin gives none).
        public var range: (defaultValue: Float?, minimum: Float?, maximum: Float?)
        /// Control ports' hints: `lv2:toggled`, `lv2:integer`, `lv2:enumeration` (with its scale points,
        /// sorted by value), `pprops:logarithmic`, `lv2:sampleRate` (its range is a fraction of the sample
        /// rate), and the `units:unit` (its URI's fragment: "hz", "db"…).
        public var hints = Hints()
        /// An atom input that takes `time:Position` (a tempo-synced plugin follows the host's transport).
        public var followsTime = false
        /// A control output that reports the plugin's latency in frames (`lv2:reportsLatency`, or the
        /// `lv2:latency` designation).
        public var reportsLatency = false
        /// An atom port's `rsz:minimumSize`: the bytes its buffer must hold at least.
        public var minimumSize: Int?

        public struct Hints: Sendable, Equatable {
            public var isToggle = false
            public var isInteger = false
            public var isEnumeration = false
            public var isLogarithmic = false
            /// `lv2:sampleRate`: the plugin reads the value as a fraction of the sample rate (a frequency).
            public var isSampleRate = false
            public var scalePoints: [ScalePoint] = []
            public var unit: String?
        }
        public struct ScalePoint: Sendable, Equatable {
            public var label: String
            public var value: Float
        }

        public static func == (a: Port, b: Port) -> Bool {
            a.index == b.index && a.symbol == b.symbol && a.name == b.name && a.kind == b.kind
                && a.isInput == b.isInput && a.isOptional == b.isOptional && a.carriesMIDI == b.carriesMIDI
                && a.range.defaultValue == b.range.defaultValue && a.range.minimum == b.range.minimum
                && a.range.maximum == b.range.maximum && a.hints == b.hints && a.reportsLatency == b.reportsLatency
                && a.followsTime == b.followsTime && a.minimumSize == b.minimumSize
        }
    }

    /// A property the host may set by message (`patch:writable`: a sample's path, a number that is not a
    /// port), with its label and value type (`rdfs:range`: an atom type's URI, e.g. atom#Path).
    public struct PropertyInfo: Sendable, Equatable {
        public var uri: String
        public var label: String
        public var range: String
    }

    /// An LV2 preset of the plugin (`pset:Preset`): its URI and label, in label order.
    public struct PresetInfo: Sendable, Equatable {
        public var uri: String
        public var label: String
    }

    public var uri: String
    public var name: String
    /// The plugin's project (or author) name, where its bundle gives one.
    public var project: String?
    public var componentDescription: ComponentDescription
    public var ports: [Port]
    public var requiredFeatures: [String]
    public var optionalFeatures: [String]
    /// `lv2:hardRTCapable`: the plugin promises its `run()` is real-time safe.
    public var isHardRealTimeCapable: Bool
    /// The plugin's presets (its own bundle's and any installed beside it).
    public var presets: [PresetInfo] = []
    /// The properties it takes by message (patch:Set), in label order.
    public var properties: [PropertyInfo] = []
    /// Whether the plugin keeps state of its own beyond its ports (`state:interface`), and whether that
    /// state may be restored while it runs (`state:threadSafeRestore`).
    public var hasStateInterface = false
    public var restoresStateWhileRunning = false

    /// The bytes of each of its atom buffers (the MIDI sequence in, each atom output): 8 KiB (about 340
    /// MIDI events a run), or the most any of its atom ports asks for (`rsz:minimumSize`: fil4's 64 KiB,
    /// a meter's 128 KiB), up to `maximumAtomBufferSize`.
    public var atomBufferSize: Int {
        max(8192, ports.compactMap(\.minimumSize).max() ?? 0)
    }
    /// What Aulos gives an atom buffer at most: a plugin asking more is refused (the largest installed
    /// here asks 131,680 bytes).
    public static let maximumAtomBufferSize = 1 << 20

    /// The bytes of each atom output: `atomBufferSize`, but 512 KiB for a plugin that keeps state of its
    /// own. Such a plugin may send its state out to a UI (every DPF plugin does: ZynAddSubFX's is up to
    /// 392 KB of XML, and it declares 2,048 bytes), and with too little room it says "out of space" on
    /// every run and tries again.
    public var atomOutputSize: Int {
        hasStateInterface ? max(atomBufferSize, Self.statefulOutputSize) : atomBufferSize
    }
    static let statefulOutputSize = 1 << 19

    /// The required features Aulos's LV2 host does not provide: empty when it can host the plugin.
    public var missingFeatures: [String] { requiredFeatures.filter { !LV2Catalog.providedFeatures.contains($0) } }

    /// Required ports Aulos cannot connect (CV, unknown types): a plugin with one cannot run.
    public var unsupportedPorts: [Port] { ports.filter { ($0.kind == .cv || $0.kind == .unknown) && !$0.isOptional } }
}

/// Finds the LV2 plugins on `LV2_PATH` (lilv's default path when unset) and describes them as audio units:
/// type `aumu` for an instrument (MIDI in, audio out, no audio in), `aumf` for a MIDI effect (MIDI in and
/// out, no audio), `aufx` for an effect (audio in and out); the subtype is derived from the plugin's URI
/// and the manufacturer from its project (or author, or the URI's host), each a stable hash spelled in
/// four lower-case letters and digits, so a rig file's description never changes while the plugin's URI
/// does not.
///
/// Threads: control thread (discovery reads every installed bundle's Turtle files: start-up, never the
/// render thread).
public enum LV2Catalog {
    /// The host features Aulos's LV2 host provides (`LV2InstanceFeatures`, and the two properties a host
    /// meets by being one): what `aulos units --lv2` checks and what `LV2Unit` refuses a plugin for lacking.
    public static let providedFeatures: Set<String> = LV2InstanceFeatures.provided.union([
        LV2URI.isLive, LV2URI.hardRTCapable,
    ])

    /// Every installed plugin that can be loaded, sorted by name (then URI). Reads every bundle on the
    /// search path into a world of its own, once per call (a listing's cost, not a render's).
    public static func discover() -> [LV2PluginInfo] { LV2World().plugins }

    /// Every plugin of a loaded lilv world (none of them loaded or checked yet).
    static func allPlugins(_ world: OpaquePointer) -> [OpaquePointer] {
        var result: [OpaquePointer] = []
        let plugins = lilv_world_get_all_plugins(world)
        var iterator = lilv_plugins_begin(plugins)
        while !lilv_plugins_is_end(plugins, iterator) {
            if let plugin = lilv_plugins_get(plugins, iterator) { result.append(plugin) }
            iterator = lilv_plugins_next(plugins, iterator)
        }
        return result
    }

    /// One plugin of a loaded lilv world: checked first (`LV2PluginCheck`; lilv is asked for its ports only
    /// if it passes), then described, or the reason it cannot be loaded. `forListing` reads only what a
    /// listing shows (name, project, what its ports make it): not its presets (each a file of its own to
    /// read), properties, or its ports' names, ranges and hints.
    static func describe(
        _ world: OpaquePointer, _ plugin: OpaquePointer, forListing: Bool = false
    ) -> Result<LV2PluginInfo, LV2BrokenPlugin> {
        let pluginURI = string(lilv_plugin_get_uri(plugin)) ?? ""
        if let reason = LV2PluginCheck.problem(world: world, plugin: plugin) {
            let bundleURI = lilv_plugin_get_bundle_uri(plugin)
            let path = lilv_file_uri_parse(lilv_node_as_uri(bundleURI), nil)
            defer { lilv_free(path) }
            var bundle = path.map { String(cString: $0) } ?? string(bundleURI) ?? ""
            if bundle.count > 1 && bundle.hasSuffix("/") { bundle.removeLast() }
            return .failure(LV2BrokenPlugin(uri: pluginURI, bundle: bundle, reason: reason))
        }
        let uri = { (text: String) in lilv_new_uri(world, text) }
        let nodes = (
            audio: uri("http://lv2plug.in/ns/lv2core#AudioPort"),
            control: uri("http://lv2plug.in/ns/lv2core#ControlPort"),
            cv: uri("http://lv2plug.in/ns/lv2core#CVPort"),
            atom: uri("http://lv2plug.in/ns/ext/atom#AtomPort"),
            input: uri("http://lv2plug.in/ns/lv2core#InputPort"),
            optional: uri("http://lv2plug.in/ns/lv2core#connectionOptional"),
            midiEvent: uri("http://lv2plug.in/ns/ext/midi#MidiEvent"),
            timePosition: uri("http://lv2plug.in/ns/ext/time#Position"),
            instrument: uri("http://lv2plug.in/ns/lv2core#InstrumentPlugin"),
            hardRT: uri("http://lv2plug.in/ns/lv2core#hardRTCapable"),
            doapName: uri("http://usefulinc.com/ns/doap#name"),
            toggled: uri("http://lv2plug.in/ns/lv2core#toggled"),
            integer: uri("http://lv2plug.in/ns/lv2core#integer"),
            enumeration: uri("http://lv2plug.in/ns/lv2core#enumeration"),
            logarithmic: uri("http://lv2plug.in/ns/ext/port-props#logarithmic"),
            sampleRate: uri("http://lv2plug.in/ns/lv2core#sampleRate"),
            unit: uri("http://lv2plug.in/ns/extensions/units#unit"),
            reportsLatency: uri("http://lv2plug.in/ns/lv2core#reportsLatency"),
            designation: uri("http://lv2plug.in/ns/lv2core#designation"),
            latency: uri("http://lv2plug.in/ns/lv2core#latency"),
            preset: uri(LV2URI.presetPreset),
            label: uri(LV2URI.rdfsLabel),
            stateInterface: uri(LV2URI.stateInterface),
            writable: uri("http://lv2plug.in/ns/ext/patch#writable"),
            range: uri("http://www.w3.org/2000/01/rdf-schema#range"),
            minimumSize: uri("http://lv2plug.in/ns/ext/resize-port#minimumSize")
        )
        defer {
            for node in [
                nodes.audio, nodes.control, nodes.cv, nodes.atom, nodes.input, nodes.optional, nodes.midiEvent,
                nodes.instrument, nodes.hardRT, nodes.doapName, nodes.timePosition, nodes.toggled, nodes.integer,
                nodes.enumeration,
                nodes.logarithmic, nodes.sampleRate, nodes.unit, nodes.reportsLatency, nodes.designation, nodes.latency,
                nodes.preset,
                nodes.label, nodes.stateInterface, nodes.writable, nodes.range, nodes.minimumSize,
            ] {
                lilv_node_free(node)
            }
        }
        let name = taking(lilv_plugin_get_name(plugin)) ?? pluginURI
        var project: String?
        if let projectNode = lilv_plugin_get_project(plugin) {
            if let names = lilv_world_find_nodes(world, projectNode, nodes.doapName, nil) {
                if !lilv_nodes_is_end(names, lilv_nodes_begin(names)) {
                    project = string(lilv_nodes_get(names, lilv_nodes_begin(names)))
                }
                lilv_nodes_free(names)
            }
            lilv_node_free(projectNode)
        }
        if project == nil { project = taking(lilv_plugin_get_author_name(plugin)) }
        var ports: [LV2PluginInfo.Port] = []
        for index in 0..<lilv_plugin_get_num_ports(plugin) {
            guard let port = lilv_plugin_get_port_by_index(plugin, index) else { continue }
            let kind: LV2PluginInfo.Port.Kind =
                lilv_port_is_a(plugin, port, nodes.audio)
                ? .audio
                : lilv_port_is_a(plugin, port, nodes.control)
                    ? .control
                    : lilv_port_is_a(plugin, port, nodes.atom)
                        ? .atom
                        : lilv_port_is_a(plugin, port, nodes.cv) ? .cv : .unknown
            var range: (Float?, Float?, Float?) = (nil, nil, nil)
            var hints = LV2PluginInfo.Port.Hints()
            if kind == .control && !forListing {
                var defaultNode: OpaquePointer?
                var minimumNode: OpaquePointer?
                var maximumNode: OpaquePointer?
                lilv_port_get_range(plugin, port, &defaultNode, &minimumNode, &maximumNode)
                range = (float(defaultNode), float(minimumNode), float(maximumNode))
                for node in [defaultNode, minimumNode, maximumNode] { lilv_node_free(node) }
                hints.isToggle = lilv_port_has_property(plugin, port, nodes.toggled)
                hints.isInteger = lilv_port_has_property(plugin, port, nodes.integer)
                hints.isEnumeration = lilv_port_has_property(plugin, port, nodes.enumeration)
                hints.isLogarithmic = lilv_port_has_property(plugin, port, nodes.logarithmic)
                hints.isSampleRate = lilv_port_has_property(plugin, port, nodes.sampleRate)
                if let unit = taking(lilv_port_get(plugin, port, nodes.unit)) {
                    hints.unit = unit.split(separator: "#").last.map(String.init)
                }
                hints.scalePoints = scalePoints(plugin, port)
            }
            let designation = forListing ? nil : taking(lilv_port_get(plugin, port, nodes.designation))
            let minimumSize =
                kind == .atom ? taking(lilv_port_get(plugin, port, nodes.minimumSize)).flatMap { Int($0) } : nil
            ports.append(
                LV2PluginInfo.Port(
                    index: Int(index), symbol: string(lilv_port_get_symbol(plugin, port)) ?? "",
                    name: forListing ? "" : taking(lilv_port_get_name(plugin, port)) ?? "", kind: kind,
                    isInput: lilv_port_is_a(plugin, port, nodes.input),
                    isOptional: lilv_port_has_property(plugin, port, nodes.optional),
                    carriesMIDI: kind == .atom && lilv_port_supports_event(plugin, port, nodes.midiEvent),
                    range: range, hints: hints,
                    followsTime: kind == .atom && lilv_port_is_a(plugin, port, nodes.input)
                        && lilv_port_supports_event(plugin, port, nodes.timePosition),
                    reportsLatency: kind == .control && !lilv_port_is_a(plugin, port, nodes.input)
                        && (lilv_port_has_property(plugin, port, nodes.reportsLatency)
                            || designation == "http://lv2plug.in/ns/lv2core#latency"),
                    minimumSize: minimumSize
                ))
        }
        let className = string(lilv_plugin_class_get_uri(lilv_plugin_get_class(plugin))) ?? ""
        let required = strings(taking: lilv_plugin_get_required_features(plugin))
        let optional = strings(taking: lilv_plugin_get_optional_features(plugin))
        let type = Self.type(
            ports: ports, declaredInstrument: className == "http://lv2plug.in/ns/lv2core#InstrumentPlugin")
        let owner = project ?? Self.host(of: pluginURI)
        var presets: [LV2PluginInfo.PresetInfo] = []
        if !forListing, let related = lilv_plugin_get_related(plugin, nodes.preset) {
            for presetURI in strings(taking: related) {
                let node = lilv_new_uri(world, presetURI)
                lilv_world_load_resource(world, node)
                let label = taking(lilv_world_get(world, node, nodes.label, nil))
                lilv_node_free(node)
                presets.append(.init(uri: presetURI, label: Self.presetLabel(label, uri: presetURI)))
            }
        }
        presets.sort { ($0.label.lowercased(), $0.uri) < ($1.label.lowercased(), $1.uri) }
        var info = LV2PluginInfo(
            uri: pluginURI, name: name, project: project,
            componentDescription: ComponentDescription(
                type: type, subtype: Self.code(for: pluginURI), manufacturer: Self.code(for: owner)),
            ports: ports, requiredFeatures: required, optionalFeatures: optional,
            isHardRealTimeCapable: lilv_plugin_has_feature(plugin, nodes.hardRT)
                || optional.contains(LV2URI.hardRTCapable))
        info.presets = presets
        var properties: [LV2PluginInfo.PropertyInfo] = []
        for property in forListing
            ? []
            : strings(taking: lilv_world_find_nodes(world, lilv_plugin_get_uri(plugin), nodes.writable, nil))
        {
            let node = lilv_new_uri(world, property)
            let label = taking(lilv_world_get(world, node, nodes.label, nil))
            let range = taking(lilv_world_get(world, node, nodes.range, nil))
            lilv_node_free(node)
            properties.append(.init(uri: property, label: label ?? property, range: range ?? ""))
        }
        info.properties = properties.sorted { ($0.label.lowercased(), $0.uri) < ($1.label.lowercased(), $1.uri) }
        info.hasStateInterface = lilv_plugin_has_extension_data(plugin, nodes.stateInterface)
        info.restoresStateWhileRunning = (required + optional).contains(LV2URI.stateThreadSafeRestore)
        return .success(info)
    }

    /// What a plugin is, by its ports: MIDI in and audio out without audio in (or a declared instrument),
    /// MIDI in and out without audio, else an effect.
    static func type(ports: [LV2PluginInfo.Port], declaredInstrument: Bool) -> FourCharCode {
        let midiIn = ports.contains { $0.carriesMIDI && $0.isInput }
        let midiOut = ports.contains { $0.carriesMIDI && !$0.isInput }
        let audioIn = ports.contains { $0.kind == .audio && $0.isInput }
        let audioOut = ports.contains { $0.kind == .audio && !$0.isInput }
        if midiIn && audioOut && (!audioIn || declaredInstrument) { return .musicDevice }
        if midiIn && midiOut && !audioIn && !audioOut { return .musicEffect }
        return .effect
    }

    /// Four lower-case letters and digits from a 32-bit FNV-1a hash of `text`: stable across runs and
    /// machines.
    static func code(for text: String) -> FourCharCode {
        var hash: UInt32 = 2_166_136_261
        for byte in text.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        var characters = ""
        for _ in 0..<4 {
            characters.append(alphabet[Int(hash % 36)])
            hash /= 36
        }
        return FourCharCode(string: characters)!
    }

    /// A preset's label as a person reads it: its `rdfs:label`; without one (or an empty one, as
    /// ZynAddSubFX's default program has), the last part of its URI ("preset001" of
    /// http://zynaddsubfx.sourceforge.net#preset001).
    static func presetLabel(_ label: String?, uri: String) -> String {
        if let label, !label.trimmingPrefix(" ").isEmpty { return label }
        let tail = uri.split(whereSeparator: { $0 == "#" || $0 == "/" || $0 == ":" }).last.map(String.init)
        return tail ?? uri
    }

    /// The host part of a URI ("lv2plug.in" of http://lv2plug.in/plugins/eg-amp).
    static func host(of uri: String) -> String {
        let rest = uri.split(separator: ":", maxSplits: 1).last.map(String.init) ?? uri
        return rest.split(separator: "/").first.map(String.init) ?? uri
    }

    /// A control port's scale points (an enumeration's choices), sorted by value.
    private static func scalePoints(_ plugin: OpaquePointer, _ port: OpaquePointer) -> [LV2PluginInfo.Port.ScalePoint] {
        guard let points = lilv_port_get_scale_points(plugin, port) else { return [] }
        defer { lilv_scale_points_free(points) }
        var result: [LV2PluginInfo.Port.ScalePoint] = []
        var iterator = lilv_scale_points_begin(points)
        while !lilv_scale_points_is_end(points, iterator) {
            if let point = lilv_scale_points_get(points, iterator), let value = float(lilv_scale_point_get_value(point))
            {
                result.append(.init(label: string(lilv_scale_point_get_label(point)) ?? "\(value)", value: value))
            }
            iterator = lilv_scale_points_next(points, iterator)
        }
        return result.sorted { $0.value < $1.value }
    }

    // MARK: lilv nodes

    private static func string(_ node: OpaquePointer?) -> String? {
        guard let node, let text = lilv_node_as_string(node) else { return nil }
        return String(cString: text)
    }

    /// A node the caller owns: its text, and the node freed.
    private static func taking(_ node: OpaquePointer?) -> String? {
        defer { lilv_node_free(node) }
        return string(node)
    }

    private static func float(_ node: OpaquePointer?) -> Float? {
        guard let node, lilv_node_is_float(node) || lilv_node_is_int(node) else { return nil }
        return lilv_node_as_float(node)
    }

    /// A node list the caller owns: every node's text, and the list freed.
    private static func strings(taking list: UnsafeMutableRawPointer?) -> [String] {
        guard let list else { return [] }
        defer { lilv_nodes_free(list) }
        var result: [String] = []
        var iterator = lilv_nodes_begin(list)
        while !lilv_nodes_is_end(list, iterator) {
            if let text = string(lilv_nodes_get(list, iterator)) { result.append(text) }
            iterator = lilv_nodes_next(list, iterator)
        }
        return result
    }
}
