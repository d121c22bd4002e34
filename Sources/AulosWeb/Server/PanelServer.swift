import AulosCore
import Foundation
import Glibc

/// The panel's HTTP/1.1 server, behind the gate (`WebGate`) on a Unix socket in the panel's private folder:
/// a thread accepts, and each connection is served on a thread of its own — requests one after another
/// (keep-alive), each answered by `PanelAPI`, or handed to the status feed after a WebSocket upgrade.
///
/// Why not a library: the one used before (FlyingFox) brings Foundation's URL loading (`FoundationNetworking`,
/// which links libcurl and 28 libraries with it) into every run of `aulos`, for a proxy handler the panel never
/// used; the dynamic loader's work for those libraries was most of what `aulos --version` cost. The gate in
/// front already frames every request and holds every limit (head size and time, body size, connections), so
/// what is left here is small: read a head, read its body, answer, and the WebSocket's few frames.
///
/// Threads: "aulos-web-accept" accepts; one "aulos-web" thread per connection (the gate passes at most 128);
/// `start`/`stop` on the caller's.
final class PanelServer: @unchecked Sendable {
    /// Seconds a connection may stay quiet between requests, or within one (the gate closes idle clients
    /// first; this only frees the thread when the gate's side of a connection ends without a word).
    static let idleSeconds: Int32 = 20
    /// A head longer than the gate passes on (16 KB) is not a request from it.
    static let headLimit = 32 * 1024

    private let listener: Int32
    private let api: PanelAPI
    private let stopping = Locked(false)
    /// Open connections, to be shut down by `stop`.
    private let connections = Locked<Set<Int32>>([])
    private let threads = DispatchGroup()

    /// Listens on the Unix socket at `path` (not yet accepting: `start`).
    init(path: String, api: PanelAPI) throws(WebPanelError) {
        self.api = api
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw WebPanelError("the panel cannot make its socket (\(Self.errorText()))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(descriptor)
            throw WebPanelError("the panel's socket path is too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(descriptor, 128) == 0 else {
            let reason = Self.errorText()
            close(descriptor)
            throw WebPanelError("the panel's server cannot listen on \(path) (\(reason))")
        }
        listener = descriptor
    }

    /// Accepts connections until `stop`.
    func start() {
        threads.enter()
        let thread = Thread { [self] in
            defer { threads.leave() }
            acceptLoop()
        }
        thread.name = "aulos-web-accept"
        thread.start()
    }

    /// Stops accepting, ends every connection (a status feed sends its close frame first) and waits up to
    /// a second for their threads.
    func stop() {
        stopping.withLock { $0 = true }
        shutdown(listener, Int32(SHUT_RDWR))
        // Under the lock: a connection's thread takes its descriptor out of the set (under the lock) before it
        // closes it, so none shut down here has been closed and perhaps reused for another file.
        connections.withLock { open in
            for descriptor in open { shutdown(descriptor, Int32(SHUT_RDWR)) }
        }
        _ = threads.wait(timeout: .now() + 1)
        close(listener)
    }

    private var isStopping: Bool { stopping.withLock { $0 } }

    private func acceptLoop() {
        while !isStopping {
            let descriptor = accept(listener, nil, nil)
            if descriptor < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if errno == EMFILE || errno == ENFILE {
                    // Out of descriptors: wait for some to close rather than spin.
                    usleep(100_000)
                    continue
                }
                return
            }
            connections.withLock { _ = $0.insert(descriptor) }
            threads.enter()
            let thread = Thread { [self] in
                defer {
                    connections.withLock { _ = $0.remove(descriptor) }
                    close(descriptor)
                    threads.leave()
                }
                serve(PanelConnection(descriptor, idleSeconds: Self.idleSeconds))
            }
            thread.name = "aulos-web"
            thread.start()
        }
    }

    /// Requests one after another until the client closes, asks to, or goes quiet; or a WebSocket.
    private func serve(_ connection: PanelConnection) {
        while !isStopping {
            guard let head = connection.readHead(limit: Self.headLimit) else { return }
            guard var request = PanelRequest(head: head[...]) else {
                _ = connection.write(PanelAPI.refused(400, "not an HTTP/1.1 request").bytes(keepAlive: false))
                return
            }
            guard let length = request.contentLength, length <= PanelAPI.rigLimit + PanelAPI.requestLimit else {
                _ = connection.write(
                    PanelAPI.refused(413, "a request body is at most 1 MB (a rig file)").bytes(keepAlive: false))
                return
            }
            guard let body = connection.read(count: length) else { return }
            request.body = body
            switch api.route(request) {
            case .answer(let response):
                guard connection.write(response.bytes(keepAlive: request.keepAlive)), request.keepAlive else { return }
            case .statusFeed(let accept):
                let handshake =
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Accept: \(accept)\r\n\r\n"
                guard connection.write(Array(handshake.utf8)) else { return }
                StatusFeed(bridge: api.bridge).run(on: connection) { [self] in isStopping }
                return
            }
        }
    }

    static func errorText() -> String { String(cString: strerror(errno)) }
}

/// One accepted connection's socket, read through a buffer with a time limit on every wait.
///
/// Threads: its connection's thread.
final class PanelConnection {
    let descriptor: Int32
    private let idleMilliseconds: Int32
    /// Read but not yet taken.
    private(set) var buffered: [UInt8] = []

    init(_ descriptor: Int32, idleSeconds: Int32) {
        self.descriptor = descriptor
        idleMilliseconds = idleSeconds * 1000
        // A write waits no longer than a read: a gate that stopped reading cannot hold the thread for ever.
        var limit = timeval(tv_sec: Int(idleSeconds), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    /// What a wait for bytes came to.
    enum Arrival {
        /// Bytes were read into the buffer.
        case bytes
        /// Nothing arrived within the wait.
        case quiet
        /// The peer closed the connection, or it failed.
        case ended
    }

    /// Waits up to `milliseconds` for bytes and appends what arrived (a wait cut short by a signal is waited
    /// again).
    func fill(waiting milliseconds: Int32) -> Arrival {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        var ready = poll(&entry, 1, milliseconds)
        while ready < 0 && errno == EINTR { ready = poll(&entry, 1, milliseconds) }
        guard ready >= 0 else { return .ended }
        guard ready > 0 else { return .quiet }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = recv(descriptor, &chunk, chunk.count, 0)
        guard count > 0 else { return .ended }
        buffered += chunk[..<count]
        return .bytes
    }

    /// The next request head, through its empty line; nil at the end of the connection, after the idle
    /// limit, or past `limit` bytes.
    func readHead(limit: Int) -> [UInt8]? {
        var searched = 0
        while true {
            if let end = RequestFraming.headEnd(in: buffered, from: max(0, searched - 2)) {
                let head = Array(buffered[...end])
                buffered.removeSubrange(...end)
                return head
            }
            searched = buffered.count
            guard buffered.count <= limit, fill(waiting: idleMilliseconds) == .bytes else { return nil }
        }
    }

    /// The next `count` bytes; nil if the connection ends or goes quiet first.
    func read(count: Int) -> [UInt8]? {
        while buffered.count < count {
            guard fill(waiting: idleMilliseconds) == .bytes else { return nil }
        }
        let bytes = Array(buffered[..<count])
        buffered.removeSubrange(..<count)
        return bytes
    }

    /// Takes `count` bytes from the buffer's front.
    func take(_ count: Int) { buffered.removeSubrange(..<count) }

    /// Writes everything, or false when the connection failed.
    func write(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }
}
