import AulosCore
import Foundation
import Glibc

/// The panel's front door: it listens on the panel's address and passes each connection on to the HTTP
/// server behind it (on a private Unix socket) only as far as the limits allow. FlyingFox reads a request's
/// head without a limit of its own — a single endless header line held a core busy for as long as it was
/// sent, before any password was asked for — so every request's head is read here first:
///
/// - a head of at most 16 KB and 100 lines, whole within 10 seconds of its first byte (or of the
///   connection's start); else 431 or 408, and the connection is closed;
/// - a body only with a Content-Length of at most 1 MB + 8 KB (a rig file, the API's largest), passed on
///   byte-counted; chunked bodies are refused (411), and so is a second, different Content-Length (400);
/// - after a WebSocket upgrade (the status feed, which the page only reads) at most 64 KB more from the
///   client;
/// - at most 128 connections at once (more are closed at once), and never more than 64 KB waiting in either
///   direction of one (reading stops until it drains).
///
/// What the server answers is passed back as it is. Requests are not rewritten, so the Host and Origin
/// checks behind it see what the browser sent.
///
/// Threads: a thread of its own ("aulos-web-gate") polls every connection; `init` and `stop` on the
/// caller's.
final class WebGate: @unchecked Sendable {
    static let headLimit = 16 * 1024
    static let headLines = 100
    static let bodyLimit = (1 << 20) + 8 * 1024
    static let tunnelLimit = 64 * 1024
    static let connectionLimit = 128
    static let pendingLimit = 64 * 1024
    /// Seconds a request head may take (AULOS_WEB_HEAD_SECONDS for tests).
    static let headSeconds = ProcessInfo.processInfo.environment["AULOS_WEB_HEAD_SECONDS"].flatMap(Double.init) ?? 10

    let port: UInt16
    private let listener: Int32
    private let upstream: String
    private let stopping = Locked(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Listens on `address` and passes connections to the server on the Unix socket at `upstream`.
    init(_ address: ListenAddress, upstream: String) throws(WebPanelError) {
        self.upstream = upstream
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw WebPanelError("the panel cannot open a socket (\(Self.reason()))") }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var inet = sockaddr_in()
        inet.sin_family = sa_family_t(AF_INET)
        inet.sin_port = address.port.bigEndian
        _ = inet_pton(AF_INET, address.host, &inet.sin_addr)  // checked by ListenAddress
        let bound = withUnsafePointer(to: &inet) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else {
            let reason = Self.reason()
            close(descriptor)
            throw WebPanelError("the panel cannot listen on \(address) (\(reason))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &inet) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = UInt16(bigEndian: inet.sin_port)
        listener = descriptor
        Self.makeNonBlocking(descriptor)
        let thread = Thread { [self] in run() }
        thread.name = "aulos-web-gate"
        thread.start()
    }

    /// Closes every connection and the listening socket, and waits for the thread.
    func stop() {
        stopping.withLock { $0 = true }
        finished.wait()
    }

    // MARK: The thread

    private func run() {
        var links: [Link] = []
        while !stopping.withLock({ $0 }) {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            for link in links {
                var client = Int16(0)
                var server = Int16(0)
                if link.readsClient { client |= Int16(POLLIN) }
                if !link.toClient.isEmpty { client |= Int16(POLLOUT) }
                if link.readsServer { server |= Int16(POLLIN) }
                if !link.toServer.isEmpty { server |= Int16(POLLOUT) }
                // Nothing asked of a side: leave it out (a peer gone for good would report POLLHUP at once,
                // every time, and spin the loop until the other side is done).
                fds.append(pollfd(fd: client == 0 ? -1 : link.client, events: client, revents: 0))
                fds.append(pollfd(fd: server == 0 ? -1 : link.server, events: server, revents: 0))
            }
            guard poll(&fds, nfds_t(fds.count), 250) >= 0 || errno == EINTR else { break }
            for (index, link) in links.enumerated() {
                link.service(client: fds[1 + 2 * index].revents, server: fds[2 + 2 * index].revents)
            }
            links.removeAll { link in
                guard link.isDone else { return false }
                link.close()
                return true
            }
            if fds[0].revents & Int16(POLLIN) != 0 { accept(into: &links) }
        }
        for link in links { link.close() }
        close(listener)
        finished.signal()
    }

    /// Takes every waiting connection, each with its own connection to the server behind.
    private func accept(into links: inout [Link]) {
        while true {
            let client = Glibc.accept(listener, nil, nil)
            guard client >= 0 else { return }
            guard links.count < Self.connectionLimit, let server = connectUpstream() else {
                Glibc.close(client)
                continue
            }
            Self.makeNonBlocking(client)
            Self.makeNonBlocking(server)
            links.append(Link(client: client, server: server))
        }
    }

    private func connectUpstream() -> Int32? {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(upstream.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            return nil
        }
        return descriptor
    }

    static func makeNonBlocking(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    static func reason() -> String { String(cString: strerror(errno)).lowercased() }
}

/// One client's connection and its own connection to the server behind, with the request parsing that
/// enforces the gate's limits on what the client sends.
///
/// Threads: the gate's thread only.
private final class Link {
    enum Phase {
        /// Reading a request head (bytes so far).
        case head
        /// Passing on a body: bytes still to come.
        case body(Int)
        /// After a WebSocket upgrade: bytes the client may still send.
        case tunnel(Int)
        /// Refused: the answer is on its way to the client; what the client still sends is read and dropped
        /// (up to a megabyte, for two seconds) so that closing does not reset the connection before the
        /// client has read why.
        case refused(until: Date, budget: Int)
    }

    let client: Int32
    let server: Int32
    var toServer: [UInt8] = []
    var toClient: [UInt8] = []
    private var phase = Phase.head
    private var head: [UInt8] = []
    private var headSince = Date()
    private var clientEnded = false
    private var serverEnded = false
    private var failed = false

    init(client: Int32, server: Int32) {
        (self.client, self.server) = (client, server)
    }

    var readsClient: Bool { !clientEnded && !failed && toServer.count < WebGate.pendingLimit }

    var readsServer: Bool { !serverEnded && !failed && toClient.count < WebGate.pendingLimit && !isRefused }

    private var isRefused: Bool {
        if case .refused = phase { return true }
        return false
    }

    /// A refused connection is over once its answer is out and the client stopped sending, ran out of
    /// budget or time.
    private var refusalIsOver: Bool {
        guard case .refused(let until, let budget) = phase else { return false }
        return toClient.isEmpty && (clientEnded || budget <= 0 || Date() > until)
    }

    /// Over: an error, or both sides finished and everything passed on.
    var isDone: Bool {
        if failed { return true }
        if isRefused { return refusalIsOver }
        if serverEnded { return toClient.isEmpty }
        return clientEnded && toServer.isEmpty && serverEnded
    }

    func close() {
        Glibc.close(client)
        Glibc.close(server)
    }

    /// Moves what poll says can move.
    func service(client clientEvents: Int16, server serverEvents: Int16) {
        if clientEvents & Int16(POLLIN | POLLHUP | POLLERR) != 0 && readsClient {
            if let bytes = read(client) { take(bytes) } else { clientEnded = true }
        }
        if serverEvents & Int16(POLLIN | POLLHUP | POLLERR) != 0 && readsServer {
            if let bytes = read(server) { toClient += bytes } else { serverEnded = true }
        }
        if serverEvents & Int16(POLLOUT) != 0 { write(&toServer, to: server) }
        if clientEvents & Int16(POLLOUT) != 0 {
            write(&toClient, to: client)
            // A refusal's answer is complete: the client sees its end while what it still sends is dropped.
            if isRefused && toClient.isEmpty { shutdown(client, Int32(SHUT_WR)) }
        }
        // The client is done sending: so is the server's side, once what it sent has gone on.
        if clientEnded && toServer.isEmpty { shutdown(server, Int32(SHUT_WR)) }
        // A head under way must be whole in time (an idle connection is the server's to time out).
        if case .head = phase, !head.isEmpty, Date().timeIntervalSince(headSince) > WebGate.headSeconds {
            refuse(408, "Request Timeout", "the request did not arrive within \(Int(WebGate.headSeconds)) s")
        }
    }

    private func read(_ descriptor: Int32) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let count = Glibc.read(descriptor, &buffer, buffer.count)
        if count > 0 { return Array(buffer[..<count]) }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return [] }
        return nil
    }

    private func write(_ pending: inout [UInt8], to descriptor: Int32) {
        guard !pending.isEmpty else { return }
        let count = pending.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if count > 0 {
            pending.removeFirst(count)
        } else if count < 0 && errno != EAGAIN && errno != EINTR {
            failed = true
        }
    }

    /// Bytes from the client, passed on as far as the limits allow.
    private func take(_ bytes: [UInt8]) {
        var rest = bytes[...]
        while !rest.isEmpty {
            switch phase {
            case .refused(let until, let budget):
                phase = .refused(until: until, budget: budget - rest.count)
                return
            case .head:
                if head.isEmpty { headSince = Date() }
                let searchFrom = max(0, head.count - 2)
                head += rest
                rest = []
                let end = Self.headEnd(in: head, from: searchFrom)
                if let end {
                    rest = ArraySlice(head[(end + 1)...])
                    head.removeSubrange((end + 1)...)
                }
                if head.count > WebGate.headLimit || head.lazy.filter({ $0 == 0x0A }).count > WebGate.headLines {
                    return refuse(
                        431, "Request Header Fields Too Large",
                        "a request head is at most \(WebGate.headLimit / 1024) KB and \(WebGate.headLines) lines")
                }
                guard end != nil, let next = nextPhase() else { return }
                toServer += head
                head = []
                phase = next
            case .body(let remaining):
                let passed = rest.prefix(remaining)
                toServer += passed
                rest = rest[passed.endIndex...]
                phase = remaining == passed.count ? .head : .body(remaining - passed.count)
            case .tunnel(let remaining):
                guard rest.count <= remaining else {
                    failed = true
                    return
                }
                toServer += rest
                phase = .tunnel(remaining - rest.count)
                return
            }
        }
    }

    /// The index of the last byte of a head (its empty line's "\n"), searching from `start`.
    static func headEnd(in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index < bytes.count {
            if bytes[index] == 0x0A {
                if index + 1 < bytes.count && bytes[index + 1] == 0x0A { return index + 1 }
                if index + 2 < bytes.count && bytes[index + 1] == 0x0D && bytes[index + 2] == 0x0A { return index + 2 }
            }
            index += 1
        }
        return nil
    }

    /// What follows the head just read, or nil after refusing it.
    private func nextPhase() -> Phase? {
        let text = String(decoding: head, as: UTF8.self)
        var lengths: Set<String> = []
        var upgrade = false
        // Lines by Character: "\r\n" is one Character in Swift, so splitting on "\n" alone would not split them.
        for line in text.split(whereSeparator: \.isNewline).dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let name = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
            let value = parts[1].trimmingCharacters(in: .whitespacesAndNewlines)
            switch name {
            case "content-length": lengths.insert(value)
            case "transfer-encoding":
                refuse(411, "Length Required", "a request body needs a Content-Length (no chunked bodies)")
                return nil
            case "upgrade": upgrade = value.lowercased() == "websocket"
            default: break
            }
        }
        guard lengths.count <= 1 else {
            refuse(400, "Bad Request", "two different Content-Lengths")
            return nil
        }
        guard let length = lengths.first.map({ Int($0) }) ?? 0, length >= 0 else {
            refuse(400, "Bad Request", "the Content-Length is not a number")
            return nil
        }
        guard length <= WebGate.bodyLimit else {
            refuse(413, "Content Too Large", "a request body is at most 1 MB (a rig file)")
            return nil
        }
        if upgrade { return .tunnel(WebGate.tunnelLimit) }
        return length > 0 ? .body(length) : .head
    }

    /// Answers the client with `status` and one line why, then closes: nothing more reaches the server.
    private func refuse(_ status: Int, _ phrase: String, _ why: String) {
        let body = #"{"error":"\#(why)"}"#
        toClient += Array(
            ("HTTP/1.1 \(status) \(phrase)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Connection: close\r\n\r\n" + body).utf8)
        phase = .refused(until: Date().addingTimeInterval(2), budget: 1 << 20)
        shutdown(server, Int32(SHUT_RDWR))
    }
}
