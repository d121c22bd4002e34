import ArgumentParser
import AulosCore
import AulosPlayback
import Foundation

/// `aulos learn`: MIDI-learn on the running aulos, and the rig-file line that keeps the mapping.
struct LearnCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "learn",
        abstract: "MIDI-learn: map the next controller moved on the keyboard to a parameter of the running aulos.",
        discussion: "Prints the mapping as a line for the rig file's controls: list, so it can be kept.")

    @Argument(help: "The parameter to map, as UNIT.PARAMETER.")
    var target: String

    @Option(parsing: .unconditional, help: "Seconds to wait for a controller.")
    var timeout: Double = 30

    @OptionGroup var socket: SocketOption

    func validate() throws {
        guard timeout > 0, timeout <= 3600 else {
            throw ValidationError("--timeout must be more than 0 and at most 3600 seconds, not \(timeout.clean)")
        }
    }

    func run() throws {
        // The instrument gives up a second after this command would: if this command is killed, it is not
        // left learning; if not, this command says so first.
        let armed = try socket.request("learn \(target) \((timeout + 1).clean)")
        printError("aulos: move a controller to map it to \(armed["learning"] ?? target)…")
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            usleep(100_000)
            let reply = try socket.request("learned")
            if let learned = reply["learned"] as? [String: Any], let cc = learned["cc"],
                let channel = learned["channel"], let name = learned["target"]
            {
                print("learned: cc \(cc) on channel \(channel) → \(name)")
                print("rig file: controls: [{cc: \(cc), channel: \(channel), target: \"\(name)\"}]")
                return
            }
        }
        _ = try? socket.request("unlearn")  // the instrument gives up by itself too; say so now
        throw ControlSocketError(
            "no controller moved within \(timeout.clean) s; move one on a connected keyboard (aulos status lists them)")
    }
}
