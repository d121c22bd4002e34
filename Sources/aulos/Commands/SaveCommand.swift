import ArgumentParser
import AulosPlayback

/// `aulos save`: the running aulos writes its rig as it plays — every value moved on the panel, by OSC, a
/// controller or `aulos set`, what each channel plays, plugin states — into its rig file(s), or as a new
/// file beside them.
struct SaveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "save",
        abstract: "Save the running aulos's rig as it plays now: into its rig file(s), or as NAME.yaml beside them.",
        discussion:
            "Without NAME the files it plays from are replaced (each kept as it was in FILE~); NAME.yaml is a "
            + "new file (never one that exists), and for a set its rigs are saved beside it as NAME.RIGFILE."
    )

    @Argument(help: "A new file's name (NAME.yaml, no folder), beside the playing rig.")
    var name: String?

    @OptionGroup var socket: SocketOption

    func run() throws {
        let reply = try socket.request(ControlRequest.save(name: name).line)
        print("saved \(reply["saved"] ?? "?")")
    }
}
