import AulosRealtime
import Glibc
import Synchronization

/// The control socket's own thread: one `poll` loop over the listening socket, a wake-up pipe and every
/// open connection. It accepts (checking the peer's credentials), reads each client's request line without
/// blocking, hands complete lines to the control thread, and writes the replies back — so idle clients
/// cost a file descriptor each and nothing else, and `aulos status` is answered within one control tick
/// whatever they do. Every connection has a deadline; a client past it is closed. At the connection limit
/// the one idle longest makes room for a newcomer; only clients with requests in hand are never dropped.
///
/// Threads: the socket thread runs `run`; `answer`, `stop` and `openConnections` are called from the
/// control thread. They meet only in `Mailbox`, under a mutex (neither thread is a real-time one).
final class ControlSocketThread: @unchecked Sendable {
    /// Request lines for the control thread and its replies for the socket thread, by connection number.
    struct Mailbox {
        var requests: [(connection: Int, line: String)] = []
        var replies: [(connection: Int, text: String)] = []
        var stopping = false
        var open = 0
    }

    /// One client: what it has sent so far, or the reply being written to it, and when it must be done.
    struct Connection {
        enum Stage { case reading, waitingForAnswer, writing }
        let descriptor: Int32
        var stage = Stage.reading
        var received: [UInt8] = []
        var reply: [UInt8] = []
        var sent = 0
        var deadline: Int64
    }

    private let listener: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let mailbox = Mutex(Mailbox())
    private var thread = pthread_t()

    init(listening listener: Int32) throws(ControlSocketError) {
        self.listener = listener
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            throw ControlSocketError("control socket: \(String(cString: strerror(errno)))")
        }
        for end in pipeEnds { Self.makeNonBlockingAndPrivate(end) }
        (wakeRead, wakeWrite) = (pipeEnds[0], pipeEnds[1])
        let unmanaged = Unmanaged.passRetained(self)
        let created = pthread_create(
            &thread, nil,
            { raw in
                let loop = Unmanaged<ControlSocketThread>.fromOpaque(raw!).takeRetainedValue()
                loop.run()
                return nil
            }, unmanaged.toOpaque())
        guard created == 0 else {
            unmanaged.release()
            close(wakeRead)
            close(wakeWrite)
            throw ControlSocketError("control socket: cannot start its thread (\(String(cString: strerror(created))))")
        }
    }

    /// Ends the thread (closing every connection and the listening socket) and waits for it.
    func stop() {
        mailbox.withLock { $0.stopping = true }
        wake()
        pthread_join(thread, nil)
        close(wakeRead)
        close(wakeWrite)
    }

    var openConnections: Int { mailbox.withLock { $0.open } }

    /// Control thread: answers the waiting requests and hands the replies to the socket thread.
    func answer(_ handle: (String) -> String) {
        let requests = mailbox.withLock { mailbox in
            defer { mailbox.requests.removeAll() }
            return mailbox.requests
        }
        guard !requests.isEmpty else { return }
        let replies = requests.map { (connection: $0.connection, text: handle($0.line)) }
        mailbox.withLock { $0.replies += replies }
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = Glibc.write(wakeWrite, &byte, 1)
    }

    // MARK: The socket thread

    private func run() {
        var connections: [Int: Connection] = [:]
        var nextNumber = 0
        defer {
            for connection in connections.values { close(connection.descriptor) }
            close(listener)
        }
        while true {
            var watched = [
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
            ]
            let numbers = Array(connections.keys)
            for number in numbers {
                let connection = connections[number]!
                let events: Int32 =
                    switch connection.stage {
                    case .reading: POLLIN
                    case .writing: POLLOUT
                    case .waitingForAnswer: 0
                    }
                watched.append(pollfd(fd: connection.descriptor, events: Int16(events), revents: 0))
            }
            let now = monotonicNanoseconds()
            let nearest = connections.values.map(\.deadline).min().map { max(0, $0 - now) / 1_000_000 } ?? 1000
            _ = poll(&watched, nfds_t(watched.count), Int32(min(1000, nearest + 1)))
            let afterPoll = monotonicNanoseconds()

            if watched[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(wakeRead, &drain, drain.count) > 0 {}
            }
            let (replies, stopping) = mailbox.withLock { mailbox in
                defer { mailbox.replies.removeAll() }
                return (mailbox.replies, mailbox.stopping)
            }
            if stopping { return }
            for reply in replies where connections[reply.connection] != nil {
                connections[reply.connection]!.reply = Array((reply.text + "\n").utf8)
                connections[reply.connection]!.stage = .writing
                connections[reply.connection]!.deadline = afterPoll + ControlSocket.requestTimeout
            }
            if watched[1].revents != 0 {
                while let client = acceptClient() {
                    // At the limit, the connection that has sent nothing for longest makes room: a flood of
                    // idle connections must not keep `aulos status` out.
                    if connections.count >= ControlSocket.maximumClients,
                        let idlest = connections.filter({ $0.value.stage == .reading && $0.value.received.isEmpty })
                            .min(by: { $0.value.deadline < $1.value.deadline })?.key
                    {
                        finish(&connections, idlest)
                    }
                    guard connections.count < ControlSocket.maximumClients else {
                        Self.sendNow(
                            client,
                            #"{"error":"too many connections (\#(ControlSocket.maximumClients)); try again"}"#)
                        close(client)
                        continue
                    }
                    connections[nextNumber] = Connection(
                        descriptor: client, deadline: afterPoll + ControlSocket.requestTimeout)
                    nextNumber += 1
                }
            }
            for (index, number) in numbers.enumerated() where connections[number] != nil {
                let revents = watched[index + 2].revents
                if revents != 0 { progress(&connections, number) }
            }
            // Past a deadline: an idle reader or a client that does not take its reply is closed; a request
            // the control thread has not answered (a rig being rebuilt) gets an error line instead.
            for (number, connection) in connections where connection.deadline <= afterPoll {
                if connection.stage == .waitingForAnswer {
                    Self.sendNow(connection.descriptor, #"{"error":"aulos is busy and did not answer in time"}"#)
                }
                finish(&connections, number)
            }
            mailbox.withLock { $0.open = connections.count }
        }
    }

    /// The next waiting connection, non-blocking, close-on-exec; refused ones answered and closed here.
    private func acceptClient() -> Int32? {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return nil }
            Self.makeNonBlockingAndPrivate(client)
            guard ControlSocket.peerAllowed(client) else {
                Self.sendNow(client, #"{"error":"not allowed: only the service's user and group may control it"}"#)
                close(client)
                continue
            }
            return client
        }
    }

    /// Reads what a client sent (a whole line goes to the control thread) or writes what is left of its reply.
    private func progress(_ connections: inout [Int: Connection], _ number: Int) {
        var connection = connections[number]!
        switch connection.stage {
        case .reading:
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(connection.descriptor, &chunk, chunk.count)
            if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
            if count > 0 { connection.received += chunk[..<count] }
            let newline = connection.received.firstIndex(of: 10)
            let full = connection.received.count >= ControlSocket.maximumLine
            let ended = count <= 0
            guard newline != nil || full || ended else {
                connections[number] = connection
                return
            }
            let line = connection.received[..<(newline ?? min(connection.received.count, ControlSocket.maximumLine))]
            guard !(ended && line.isEmpty) else { return finish(&connections, number) }
            connection.stage = .waitingForAnswer
            connection.deadline = monotonicNanoseconds() + ControlSocket.answerTimeout
            connection.received = []
            let text = String(decoding: line, as: UTF8.self)
            mailbox.withLock { $0.requests.append((number, text)) }
        case .writing:
            let count = connection.reply[connection.sent...].withUnsafeBytes {
                send(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
            guard count > 0 else { return finish(&connections, number) }
            connection.sent += count
            if connection.sent == connection.reply.count { return finish(&connections, number) }
        case .waitingForAnswer:
            break  // the client hung up or sent more: its reply, when it comes, is simply not wanted
        }
        connections[number] = connection
    }

    private func finish(_ connections: inout [Int: Connection], _ number: Int) {
        if let connection = connections.removeValue(forKey: number) { close(connection.descriptor) }
    }

    /// Non-blocking, and closed in any program aulos starts (Glibc hides pipe2 and accept4, which would set
    /// both at once, without _GNU_SOURCE).
    private static func makeNonBlockingAndPrivate(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }

    /// One short line to a client being turned away: whatever fits in the socket buffer now.
    private static func sendNow(_ descriptor: Int32, _ text: String) {
        let bytes = Array((text + "\n").utf8)
        _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
