import ArgumentParser

/// `aulos set`: one parameter of the running aulos, read or changed through its control socket.
struct SetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract:
            "Change a parameter of the running aulos: PART.PARAMETER (volume, pan, enabled, eq, or an instrument "
            + "parameter), output.volume, output.eq.",
        discussion:
            "Examples: aulos set piano.volume 0.8; aulos set lead.cutoff 1200; aulos set output.eq Rock. Without "
            + "VALUE, prints the current one."
    )

    @Argument(help: "What to change, as UNIT.PARAMETER.")
    var target: String

    @Argument(help: "The new value (an EQ preset by name or number for eq targets).")
    var value: [String] = []

    @OptionGroup var socket: SocketOption

    func run() throws {
        let reply = try socket.request(
            value.isEmpty ? "get \(target)" : "set \(target) \(value.joined(separator: " "))")
        print("\(reply["target"] ?? target) = \(reply["value"] ?? "?")")
    }
}
