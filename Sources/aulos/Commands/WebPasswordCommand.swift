import ArgumentParser
import AulosCore
import AulosWeb

/// `aulos web-password`: turns a password (read from standard input) into the hash `--web-password` reads,
/// so the password itself is stored nowhere.
struct WebPasswordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web-password",
        abstract: "Hash a web-panel password read from standard input (yescrypt) into a file for --web-password.")

    @Option(name: .shortAndLong, help: "Write the hash to this file (mode 600) instead of printing it.")
    var output: String?

    func run() throws {
        guard let password = readLine(strippingNewline: true), !password.isEmpty, password.utf8.count <= 256 else {
            throw CommandError(
                "give the password (1…256 bytes) on standard input: echo 'secret' | aulos web-password")
        }
        guard let hash = WebPanel.hash(password) else { throw CommandError("libcrypt could not hash the password") }
        guard let output else { return print(hash) }
        do { try FileContents.replace(output, with: Array((hash + "\n").utf8), mode: 0o600) } catch {
            throw CommandError("cannot write \(output): \(error.reason)")
        }
        print("wrote the password hash to \(output)")
    }
}
