import ArgumentParser
import AulosCore
import AulosPlayback
import Foundation

/// The control socket's path, shared by the commands that talk to a running aulos (`status`, `set`, `learn`).
struct SocketOption: ParsableArguments {
    @Option(
        name: .customLong("socket"),
        help: ArgumentHelp(
            "The running aulos's control socket (default: /run/aulos/control for the service, else "
                + "$XDG_RUNTIME_DIR/aulos/control).",
            valueName: "path"))
    var path: String?

    var resolved: String { path ?? ControlSocket.defaultPath }

    /// Sends one request; a reply carrying "error" becomes a one-line error.
    func request(_ line: String) throws -> [String: Any] {
        try parsedReply(line).object
    }

    /// The reply as received and as parsed.
    func parsedReply(_ line: String) throws -> (text: String, object: [String: Any]) {
        let reply = try ControlSocket.request(line, at: resolved)
        guard let object = try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any] else {
            throw ControlSocketError("unreadable reply from aulos: \(reply.prefix(80))")
        }
        if let error = object["error"] as? String { throw ControlSocketError(error) }
        return (reply, object)
    }
}
