import ArgumentParser
import AulosPlayback
import AulosRig

/// `aulos graph`: the playback rig's processing graph, printed as Core Audio's CAShow prints one, then its
/// parts, sends, returns and master chain.
struct GraphCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph", abstract: "Print the playback rig's processing graph (like CAShow).")

    @OptionGroup var slicing: SliceOptions

    @Option(help: "Instrument: synth, sampler, or lv2:URI.")
    var instrument = "synth"

    @Option(
        help: "A rig file (docs/rigs.md), or a factory rig by name, instead of one instrument.",
        transform: SearchPaths.rigFile)
    var rig: String?

    @Option(help: "Master iPod-style EQ preset (see aulos presets).")
    var eq: String?

    @Flag(help: "Without reverb and chorus (as render --dry and play --dry).")
    var dry = false

    func run() throws {
        var options = PlaybackOptions()
        guard let (choice, plugin) = InstrumentChoice.parse(instrument) else {
            throw ValidationError("--instrument takes synth, sampler, sfz:PATH or lv2:URI, not '\(instrument)'")
        }
        (options.instrument, options.plugin) = (choice, plugin)
        options.sampleRate = slicing.sampleRate
        options.slice = slicing.slice.map(UInt32.init)
        options.rigSet = try rig.map { path throws(RigError) in try RigSet.load(path) }
        options.eq = try eq.map(checkedEQ)
        options.dry = dry
        let playback = try PlaybackRig(set: options.playedRigSet())
        defer { playback.close() }
        print(playback.graph.dump())
        print(playback.routingDescription)
    }
}
