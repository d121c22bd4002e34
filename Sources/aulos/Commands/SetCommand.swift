import ArgumentParser
import AulosPlayback

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
        // Sent as a typed request's line, so a name with spaces is quoted.
        let request: ControlRequest =
            value.isEmpty
            ? .get(target: target) : .set(target: target, value: ControlValue(text: value.joined(separator: " ")))
        let reply = try socket.request(request.line)
        print("\(reply["target"] ?? target) = \(reply["value"] ?? "?")")
    }
}
