import ArgumentParser
import AulosALSA
import AulosCore
import AulosLV2
import AulosRig

/// `aulos units`: every audio unit a host can instantiate, as Core Audio's component search finds them.
struct UnitsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "units",
        abstract:
            "List every registered audio unit: type, subtype, manufacturer, version, name, and its Core Audio alias.")

    @Option(
        help: ArgumentHelp(
            "Only units matching type[/subtype[/manufacturer]]; '*' is a wildcard (e.g. auou/*; Core Audio's "
                + "auou/genr/appl finds Aulos's Generic Output).")
    )
    var matching: String?

    @Flag(
        help: ArgumentHelp(
            "Show only the LV2 plugins found (LV2_PATH, or lilv's default path), each with its ports, the features "
                + "it requires and whether Aulos provides them."))
    var lv2 = false

    func run() throws {
        var pattern = ComponentDescription.any
        if let matching {
            guard let parsed = ComponentDescription(parsing: matching) else {
                throw ValidationError("--matching takes four-character codes like auou/genr/appl, not '\(matching)'")
            }
            pattern = parsed
        }
        // The plain listing shows each plugin's description and name: its presets and ports' details
        // are not read (with hundreds of plugins installed, they were most of the listing's cost).
        let catalog = LV2World().catalog(forListing: !lv2)
        let plugins = catalog.plugins.filter { pattern.matches($0.componentDescription) }
        // A broken plugin costs only itself: one line each, and the listing goes on.
        for broken in catalog.broken { printError("aulos: warning: \(broken.message)") }
        for bundle in catalog.unreadableBundles { printError("aulos: warning: \(bundle)") }
        if lv2 {
            Self.describe(plugins)
            return
        }
        let registry = UnitCatalog.registry()
        registry.register(ALSAOutputUnit.component)  // the driver the CLI plays through by default
        var component = registry.findNext(after: nil, matching: pattern)
        print("TYPE SUBT MANU  VERSION  NAME")
        while let found = component {
            let d = found.componentDescription
            // Who wrote it is the manufacturer; a Core Audio description it also answers to is shown beside.
            let alias =
                found.aliases.isEmpty
                ? "" : "  (Core Audio: " + found.aliases.map(\.description).joined(separator: ", ") + ")"
            print(
                "\(d.type) \(d.subtype) \(d.manufacturer)  \(found.versionString.padding(to: 8)) \(found.name)" + alias)
            component = registry.findNext(after: found, matching: pattern)
        }
        // LV2 plugins by what a musician knows them by: name, who made them, and what a rig writes. Their
        // subtype and manufacturer codes are hashes of the URI and project (stable, unique, meaningless to
        // read): `--lv2` shows them, and --matching still filters by them.
        if !plugins.isEmpty {
            print("\nLV2 plugins (TYPE, name, project; a rig names one as lv2:URI; aulos units --lv2 for more):")
        }
        for plugin in plugins {
            let project = plugin.project.map { "(\($0))" } ?? ""
            print(
                "\(plugin.componentDescription.type)  \(plugin.name.padding(to: 32)) \(project.padding(to: 24)) "
                    + "lv2:\(plugin.uri)")
        }
    }

    /// `aulos units --lv2`: each plugin's ports, features and whether Aulos can provide what it requires.
    static func describe(_ plugins: [LV2PluginInfo]) {
        let hostable = plugins.filter { $0.missingFeatures.isEmpty && $0.unsupportedPorts.isEmpty }.count
        print(
            "\(plugins.count) LV2 plugin\(plugins.count == 1 ? "" : "s") found; Aulos can host \(hostable) "
                + "(as instruments: --instrument lv2:URI, a rig part's instrument: lv2:URI; as effects in rig chains; "
                + "MIDI effects, aumf, in a part's midi-effects: before its instrument).")
        for plugin in plugins {
            let d = plugin.componentDescription
            print("\n\(d.type) \(d.subtype) \(d.manufacturer)  \(plugin.name)  <\(plugin.uri)>")
            if let project = plugin.project { print("  project: \(project)") }
            for port in plugin.ports {
                var line = "  port \(port.index) \(port.isInput ? "in " : "out") \(port.kind.rawValue)"
                if port.carriesMIDI { line += " (MIDI)" }
                line += " \(port.symbol) \"\(port.name)\""
                if port.kind == .control && port.hints.isSampleRate {
                    // Bounds written as multiples of the sample rate: shown in hertz, as rigs write the value.
                    let info = LV2Unit.parameter(port, sampleRate: AudioUnit.defaultSampleRate)
                    line += " \(info.minValue.clean)…\(info.maxValue.clean) Hz default \(info.defaultValue.clean)"
                    line += " (bounds × the sample rate: at 48 kHz)"
                } else if port.kind == .control, let minimum = port.range.minimum, let maximum = port.range.maximum {
                    line += " \(minimum.clean)…\(maximum.clean)"
                    if let value = port.range.defaultValue { line += " default \(value.clean)" }
                }
                if port.isOptional { line += ", optional" }
                if port.reportsLatency { line += ", reports latency" }
                print(line)
            }
            if !plugin.presets.isEmpty { print("  presets: \(plugin.presets.count) (aulos presets --unit lv2:URI)") }
            let required = plugin.requiredFeatures.map(Self.short)
            print("  requires: " + (required.isEmpty ? "no features" : required.joined(separator: ", ")))
            if !plugin.isHardRealTimeCapable {
                print("  not hard-real-time capable: its run() may block or allocate (hosted all the same; flagged)")
            }
            let missing = plugin.missingFeatures.map(Self.short)
            let ports = plugin.unsupportedPorts.map { "port \($0.index) (\($0.kind.rawValue))" }
            if missing.isEmpty && ports.isEmpty {
                print("  Aulos provides everything it requires")
            } else {
                print(
                    "  Aulos cannot host it: "
                        + (missing.map { "needs \($0)" } + ports.map { "cannot connect \($0)" }).joined(separator: "; ")
                )
            }
        }
    }

    /// "urid:map" for http://lv2plug.in/ns/ext/urid#map.
    static func short(_ uri: String) -> String {
        guard uri.hasPrefix("http://lv2plug.in/ns/"), let hash = uri.lastIndex(of: "#") else { return uri }
        let path = uri[uri.index(uri.startIndex, offsetBy: 21)..<hash].split(separator: "/").last ?? ""
        let prefix = path == "lv2core" ? "lv2" : String(path)
        return prefix + ":" + uri[uri.index(after: hash)...]
    }
}
