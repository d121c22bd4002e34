import AulosCore
import Foundation
import Glibc

/// The panel's front door: it listens on the panel's address and passes each connection on to the HTTP
/// server behind it (`PanelServer`, on a private Unix socket) only as far as the limits allow. Every request
/// is framed here first (`RequestFraming`: the server before, FlyingFox, read a head without a limit of its
/// own, and a single endless header line held a core busy for as long as it was sent), so the server behind
/// only ever reads what these limits let through:
///
/// - a head of at most 16 KB and 100 lines, whole within 10 seconds of its first byte; else 431 or 408,
///   and the connection is closed;
/// - a body only with a Content-Length of at most 1 MB + 8 KB (a rig file, the API's largest), passed on
///   byte-counted; chunked bodies are refused (411), and so is a second, different Content-Length (400);
/// - after a WebSocket upgrade (the status feed, which the page only reads) at most 64 KB more from the
///   client;
/// - at most 128 connections at once, and 16 from one address — on loopback, where every local user connects
///   from 127.0.0.1, from one user (uid, from the kernel) other than root and the service's user and group,
///   who are held to the overall limit alone: a newcomer past either limit takes the place
///   of the connection quiet longest (no request under way), or is closed when none is quiet — idle
///   connections held open cannot lock the panel out;
/// - a connection quiet for 5 s before its first byte, or 15 s between requests, is closed;
/// - never more than 64 KB waiting in either direction of one connection (reading stops until it drains).
///
/// On loopback without a password, a connection is served only when its owner — read from the kernel's
/// table of TCP sockets (`PeerOwner`) — may use the control socket too: root, the panel's own user, or a
/// member of its group. Anyone else is refused with 403 before anything is read.
///
/// What the server answers is passed back as it is. Requests are not rewritten, so the Host and Origin
/// checks behind it see what the browser sent.
///
/// Threads: a thread of its own ("aulos-web-gate") polls every connection; `init` and `stop` on the
/// caller's.
final class WebGate: @unchecked Sendable {
    static let connectionLimit = 128
    static let addressLimit = 16
    static let pendingLimit = 64 * 1024
    static let evictionGrace = 1.0
    /// Seconds a connection may stay quiet before its first byte and between requests
    /// (AULOS_WEB_IDLE_SECONDS sets both, for tests).
    static let (firstByteSeconds, idleSeconds): (Double, Double) = {
        let seconds = ProcessInfo.processInfo.environment["AULOS_WEB_IDLE_SECONDS"].flatMap(Double.init)
        return seconds.map { ($0, $0) } ?? (5, 15)
    }()

    let port: UInt16
    private let listener: Int32
    private let upstream: String
    /// Whether each connection's owner is checked (loopback without a password).
    private let checksOwners: Bool
    private let stopping = Locked(false)
    private let finished = DispatchSemaphore(value: 0)
    private var started = false

    /// Listens on `address`, to pass connections to the server on the Unix socket at `upstream` once
    /// `start` is called (until then they wait in the kernel's queue). `checkingOwners`: serve only the
    /// users the control socket serves.
    init(_ address: ListenAddress, upstream: String, checkingOwners: Bool) throws(WebPanelError) {
        self.upstream = upstream
        checksOwners = checkingOwners
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
    }

    /// Starts passing connections on.
    func start() {
        started = true
        let thread = Thread { [self] in run() }
        thread.name = "aulos-web-gate"
        thread.start()
    }

    /// Closes every connection and the listening socket, and waits for the thread.
    func stop() {
        guard started else {
            close(listener)
            return
        }
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

    /// Takes the waiting connections, each with its own connection to the server behind: at most 64 a turn,
    /// so that clients reconnecting as fast as they are closed cannot keep the loop from the others.
    private func accept(into links: inout [Link]) {
        for _ in 0..<64 {
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let client = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(listener, $0, &length) }
            }
            guard client >= 0 else { return }
            Self.makeNonBlocking(client)
            // Every user of this machine connects from 127.0.0.1 (or any of 127/8): there a client is counted by
            // its owner instead, so that one local user cannot crowd out another.
            let loopback = UInt32(bigEndian: peer.sin_addr.s_addr) >> 24 == 127
            let owner = loopback ? PeerOwner.owner(of: client) : nil
            let source = owner.map { 1 << 32 | UInt64($0) } ?? UInt64(peer.sin_addr.s_addr)
            // Room is made before anything else: a newcomer takes the place of the quietest connection of its
            // source, or of anyone's at the overall limit, and is closed only when every one is busy.
            let open = links.filter { !$0.isDone }
            // The service's own users on this machine (root, its user, its group) are held only to the overall
            // limit: a browser and the load test open more than 16 from one user; other users get 16.
            let trusted = owner != nil && PeerOwner.mayUsePanel(owner)
            guard trusted || Self.makeRoom(among: open.filter { $0.source == source }, limit: Self.addressLimit),
                Self.makeRoom(among: open, limit: Self.connectionLimit)
            else {
                Glibc.close(client)
                continue
            }
            if checksOwners && !PeerOwner.mayUsePanel(owner) {
                let link = Link(client: client, server: -1, source: source)
                link.refuse(PeerOwner.refusal)
                links.append(link)
                continue
            }
            guard let server = connectUpstream() else {
                Glibc.close(client)
                continue
            }
            Self.makeNonBlocking(server)
            links.append(Link(client: client, server: server, source: source))
        }
    }

    /// Whether there is room for one more beside `links`, closing the one quiet longest if need be. Only one
    /// quiet for `evictionGrace` gives way: a connection just taken has had no time to send its request.
    private static func makeRoom(among links: [Link], limit: Int) -> Bool {
        guard links.count >= limit else { return true }
        let settled = Date().addingTimeInterval(-Self.evictionGrace)
        let quiet = links.filter { $0.isQuiet && $0.lastHeard < settled }
        guard let quietest = quiet.min(by: { $0.lastHeard < $1.lastHeard }) else { return false }
        quietest.expire()
        return true
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

/// One client's connection and its own connection to the server behind; what the client sends is passed on
/// through its `RequestFraming`.
///
/// Threads: the gate's thread only.
private final class Link {
    let client: Int32
    let server: Int32
    /// Whom the per-address limit counts it for: the client's IPv4 address (network order), or on loopback
    /// 1 << 32 | the uid owning the client's socket.
    let source: UInt64
    var toServer: [UInt8] = []
    var toClient: [UInt8] = []
    private var framing = RequestFraming()
    /// Once refused: until when, and how many more bytes, what the client still sends is read and dropped, so
    /// that closing does not reset the connection before the client has read why.
    private var draining: (until: Date, budget: Int)?
    private var clientEnded = false
    private var serverEnded = false
    private var failed = false
    /// When a byte last came from either side.
    private(set) var lastHeard = Date()
    private var heardFromClient = false
    /// A request was passed on and the server has not begun its answer.
    private var awaitingAnswer = false
    private var requestsPassed = 0

    init(client: Int32, server: Int32, source: UInt64) {
        (self.client, self.server, self.source) = (client, server, source)
    }

    /// Nothing under way: between requests (or before the first), nothing waiting either way, no answer
    /// awaited, no WebSocket. Such a connection may be closed with no harm to any request.
    var isQuiet: Bool {
        draining == nil && !failed && framing.isBetweenRequests && !awaitingAnswer && toServer.isEmpty
            && toClient.isEmpty
    }

    /// Closes it at the next turn of the loop.
    func expire() { failed = true }

    var readsClient: Bool { !clientEnded && !failed && toServer.count < WebGate.pendingLimit }

    var readsServer: Bool { !serverEnded && !failed && toClient.count < WebGate.pendingLimit && draining == nil }

    /// Over: an error; a refusal answered and drained; or both sides finished and everything passed on.
    var isDone: Bool {
        if failed { return true }
        if let draining {
            return toClient.isEmpty && (clientEnded || draining.budget <= 0 || Date() > draining.until)
        }
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
            if let bytes = read(client) {
                if !bytes.isEmpty { (lastHeard, heardFromClient) = (Date(), true) }
                take(bytes)
            } else {
                clientEnded = true
            }
        }
        if serverEvents & Int16(POLLIN | POLLHUP | POLLERR) != 0 && readsServer {
            if let bytes = read(server) {
                if !bytes.isEmpty { (lastHeard, awaitingAnswer) = (Date(), false) }
                toClient += bytes
            } else {
                serverEnded = true
            }
        }
        if serverEvents & Int16(POLLOUT) != 0 { write(&toServer, to: server) }
        if clientEvents & Int16(POLLOUT) != 0 {
            write(&toClient, to: client)
            // A refusal's answer is complete: the client sees its end while what it still sends is dropped.
            if draining != nil && toClient.isEmpty { shutdown(client, Int32(SHUT_WR)) }
        }
        // The client is done sending: so is the server's side, once what it sent has gone on.
        if clientEnded && toServer.isEmpty { shutdown(server, Int32(SHUT_WR)) }
        if draining == nil, let refusal = framing.refusalIfLate(now: Date()) { refuse(refusal) }
        // Quiet too long: closed, as HTTP lets a server close an idle connection (a client opens another).
        let allowed = heardFromClient ? WebGate.idleSeconds : WebGate.firstByteSeconds
        if isQuiet && Date().timeIntervalSince(lastHeard) > allowed { expire() }
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

    /// Bytes from the client: passed on as the framing allows, or dropped once refused.
    private func take(_ bytes: [UInt8]) {
        if let draining {
            self.draining = (draining.until, draining.budget - bytes.count)
            return
        }
        let (passed, outcome) = framing.take(bytes[...], now: Date())
        toServer += passed
        if framing.requestsPassed != requestsPassed {
            (requestsPassed, awaitingAnswer) = (framing.requestsPassed, true)
        }
        switch outcome {
        case .goOn: break
        case .refuse(let refusal): refuse(refusal)
        case .overrun: failed = true
        }
    }

    /// Answers the client, stops passing anything on, and drains what the client still sends.
    func refuse(_ refusal: RequestFraming.Refusal) {
        toClient += refusal.response
        draining = (Date().addingTimeInterval(2), 1 << 20)
        shutdown(server, Int32(SHUT_RDWR))
    }
}
