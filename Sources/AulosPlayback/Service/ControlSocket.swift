import AulosCore
import Glibc

/// The running instrument's local control socket: a Unix stream socket (never a network one) at a path
/// like /run/aulos/control, readable and writable only by the service's user and group (mode 0660, and
/// each peer's credentials checked again on accept). One request line per connection, one reply line
/// (JSON) back: `status`, `set TARGET VALUE`, `learn TARGET`, `midi BYTES…` (docs/service.md).
///
/// Clients are served concurrently by the socket's own thread (`ControlSocketThread`): up to
/// `maximumClients` at once, each given `requestTimeout` to send its line, so idle or slow clients cost
/// nothing and cannot keep `aulos status` out; past the limit a client gets an error line at once. The
/// requests themselves are answered by `serve` on the control thread, where the rig's control-side state
/// lives: nothing else needs a lock, and nothing here ever runs on the render or MIDI threads.
///
/// Threads: created, served and freed on the control thread; the socket thread owns the connections.
public final class ControlSocket {
    public let path: String
    private let thread: ControlSocketThread

    /// Clients connected at once; more get `{"error":"too many connections…"}` and are closed.
    public static let maximumClients = 32
    /// From connecting to the end of the request line, and from the reply being ready to it being sent.
    public static let requestTimeout: Int64 = 2_000_000_000
    /// How long a request may wait for the control thread (a rig being rebuilt) before the client is told.
    public static let answerTimeout: Int64 = 10_000_000_000
    /// The longest request line read.
    public static let maximumLine = 65_536

    /// Binds the socket and starts serving connections. An existing socket file is replaced only if nothing
    /// answers on it (a stale one left by a crash); a live one means another aulos is running: an error.
    public init(path: String) throws(ControlSocketError) {
        self.path = path
        guard path.utf8.count < 108 else {
            throw ControlSocketError("control socket path too long (at most 107 bytes): \(path)")
        }
        if access(path, F_OK) == 0 {
            if let probe = try? ControlSocket.connect(path) {
                close(probe)
                throw ControlSocketError(
                    "another aulos is already listening on \(path) (stop it, or give this one --control-socket PATH)")
            }
            unlink(path)
        }
        let folder = FileContents.folder(of: path)
        if !folder.isEmpty, access(folder, F_OK) != 0 { mkdir(folder, 0o750) }
        let descriptor = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw ControlSocketError("control socket: \(String(cString: strerror(errno)))") }
        var address = ControlSocket.address(path)
        // Created with no permissions for others from the first instant; then group read/write.
        let previous = umask(0o117)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        umask(previous)
        guard bound == 0, listen(descriptor, 64) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw ControlSocketError("cannot listen on \(path): \(reason)")
        }
        chmod(path, 0o660)
        do {
            thread = try ControlSocketThread(listening: descriptor)
        } catch {
            close(descriptor)
            unlink(path)
            throw error
        }
    }

    deinit {
        thread.stop()
        unlink(path)
    }

    /// Answers every request waiting now; `handle` turns a request line into a reply line, here on the
    /// calling (control) thread. Returns at once when there are none.
    public func serve(_ handle: (String) -> String) {
        thread.answer(handle)
    }

    /// Connections open now (tests, status).
    public var openConnections: Int { thread.openConnections }

    /// Root, our own user, or a member of our group (as its primary group or a supplementary one, read
    /// from /proc: a user in group audio usually has another primary group).
    static func peerAllowed(_ client: Int32) -> Bool {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } (Glibc hides the type without _GNU_SOURCE).
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        guard getsockopt(client, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return false }
        if credentials.uid == 0 || credentials.uid == getuid() || credentials.gid == getgid() { return true }
        guard let bytes = try? FileContents.read("/proc/\(credentials.pid)/status", limit: 1 << 16) else {
            return false
        }
        let groups = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("Groups:") }
        return groups?.split(separator: "\t").last?.split(separator: " ").contains { UInt32($0) == getgid() } ?? false
    }

    static func readLine(_ descriptor: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < 65_536 {
            let count = read(descriptor, &byte, 1)
            if count <= 0 { break }
            if byte == 10 { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    static func write(_ descriptor: Int32, _ text: String) {
        let bytes = Array((text + "\n").utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count <= 0 { return }
            sent += count
        }
    }

    static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(107).enumerated() { raw[index] = byte }
        }
        return address
    }

    static func connect(_ path: String) throws(ControlSocketError) -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = address(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let reason =
                errno == ENOENT || errno == ECONNREFUSED
                ? "no aulos is running there" : String(cString: strerror(errno))
            close(descriptor)
            throw ControlSocketError("cannot reach aulos at \(path): \(reason)")
        }
        return descriptor
    }

    /// The client side (`aulos status`, `aulos set`): one request, one reply line.
    public static func request(_ line: String, at path: String, timeout seconds: Int = 5) throws(ControlSocketError)
        -> String
    {
        let descriptor = try connect(path)
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        write(descriptor, line)
        guard let reply = readLine(descriptor) else {
            throw ControlSocketError("aulos at \(path) did not answer")
        }
        return reply
    }

    /// Where `aulos play` listens, and where `aulos status` looks, by default: the service's runtime
    /// directory when it exists (/run/aulos), else the user's ($XDG_RUNTIME_DIR/aulos), else /tmp.
    public static var defaultPath: String {
        if let path = getenv("AULOS_CONTROL_SOCKET") { return String(cString: path) }
        if access("/run/aulos", W_OK) == 0 || (access("/run/aulos/control", F_OK) == 0) { return "/run/aulos/control" }
        if let runtime = getenv("XDG_RUNTIME_DIR") { return String(cString: runtime) + "/aulos/control" }
        return "/tmp/aulos-\(getuid())/control"
    }
}

/// The control socket could not be served or reached, as one line saying what to do.
///
/// Threads: a value.
public struct ControlSocketError: ReportableError, Equatable, Sendable {
    public let message: String

    public init(_ message: String) { self.message = message }

}
