import ArgumentParser
import AulosCore
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

    func run() throws {
        var pattern = ComponentDescription.any
        if let matching {
            guard let parsed = ComponentDescription(parsing: matching) else {
                throw ValidationError("--matching takes four-character codes like auou/genr/appl, not '\(matching)'")
            }
            pattern = parsed
        }
        let registry = UnitCatalog.registry()
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
    }
}
