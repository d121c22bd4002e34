import AulosCore
import AulosPlayback
import Foundation

/// The web panel (`aulos play --web [ADDR:]PORT`, docs/web.md): the page, its JSON API and the status
/// WebSocket, served by `PanelServer` (HTTP/1.1 and WebSockets, all the panel needs) behind a `WebGate` that
/// holds the panel's address and limits what reaches it.
///
/// Every request reaches the instrument through the `ControlBridge`: the control loop carries it out on its
/// own tick, with the control socket's checks, so the panel never touches the rig and the render thread
/// never waits on the network.
///
/// Threads: the server's own threads (`PanelServer`); `start`/`stop` on the caller's.
public final class WebPanel: @unchecked Sendable {
    public let host: String
    public private(set) var port: UInt16 = 0
    private let server: PanelServer
    /// The front door on the panel's address.
    private let gate: WebGate
    /// The private folder holding the server's Unix socket.
    private let folder: String

    /// Listens on `spec` (`PORT`, `127.0.0.1:PORT`, `0.0.0.0:PORT`, …). Anything but loopback needs a
    /// password hash. Returns once listening; throws a one-line `WebPanelError` when it cannot.
    public init(_ spec: String, passwordHash: String?, bridge: ControlBridge) throws(WebPanelError) {
        guard let listen = ListenAddress(spec) else {
            throw WebPanelError("--web takes PORT or ADDRESS:PORT (127.0.0.1:8080, 0.0.0.0:8080), not '\(spec)'")
        }
        let (host, requested) = (listen.host, listen.port)
        if !listen.isLoopback && passwordHash == nil {
            throw WebPanelError(
                "the panel listens beyond this machine only with a password: give --web-password FILE (or "
                    + "web-password: in the rig; make it with `aulos web-password -o FILE`), or use --web "
                    + "127.0.0.1:\(requested)")
        }
        if let passwordHash, !Self.isPasswordHash(passwordHash) {
            throw WebPanelError(
                "--web-password's file holds no password hash; make it with `aulos web-password -o FILE`")
        }
        self.host = host
        let files: PanelFiles
        do { files = try PanelFiles.load() } catch { throw WebPanelError(error.message) }
        // The server listens on a Unix socket in a folder of this process's own; the gate in front takes the
        // panel's address and passes on only what its limits allow (see WebGate).
        var template = Array((NSTemporaryDirectory() + "aulos-web-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw WebPanelError("the panel cannot make its private folder (\(String(cString: strerror(errno))))")
        }
        let folder = String(cString: made)
        self.folder = folder
        let socketPath = folder + "/panel.sock"
        // The gate listens first: the session cookie's name carries the port (0 picks one). Connections wait
        // in the kernel's queue until the gate starts.
        do throws(WebPanelError) {
            gate = try WebGate(listen, upstream: socketPath, checkingOwners: listen.isLoopback && passwordHash == nil)
        } catch {
            rmdir(folder)
            throw error
        }
        let port = gate.port
        self.port = port
        let api = PanelAPI(
            bridge: bridge, access: WebAccess(passwordHash: passwordHash, port: port), files: files,
            loopbackOnly: listen.isLoopback)
        do throws(WebPanelError) {
            server = try PanelServer(path: socketPath, api: api)
        } catch {
            gate.stop()
            rmdir(folder)
            throw error
        }
        server.start()
        gate.start()
    }

    /// Whether `hash` is one the panel takes: a "$id$…" hash libcrypt knows. libcrypt would also take any two
    /// characters as an old DES salt, and then no password could ever match.
    public static func isPasswordHash(_ hash: String) -> Bool {
        hash.hasPrefix("$") && WebAccess.crypt("", setting: hash) != nil
    }

    /// A crypt(3) hash of `password` with a fresh salt, for `--web-password`'s file.
    public static func hash(_ password: String) -> String? { WebAccess.hash(password) }

    /// Closes every connection and stops listening.
    public func stop() {
        gate.stop()
        server.stop()
        unlink(folder + "/panel.sock")
        rmdir(folder)
    }
}

/// Why the panel cannot start, in one line.
public struct WebPanelError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
