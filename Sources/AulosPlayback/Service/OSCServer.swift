import AulosCore
import Foundation
import Glibc

/// Open Sound Control over UDP for the live instrument (`aulos play --osc [ADDR:]PORT`, docs/osc.md).
///
/// A thread of its own receives datagrams, parses them (`OSCMessage`), maps each to a `ControlRequest`
/// (`request(for:)`) and queues it with its sender; the control loop takes them each tick and carries them
/// out through the one executor the control socket and the panel use, so every check and every effect is
/// the same. A parameter change whose target was resolved before is carried out at once on the receive
/// thread instead (`answerAtOnce`), without waiting for the tick. Replies go back to the sender.
/// It binds to loopback: listening beyond this machine waits for the panel's tokens (issue 18).
///
/// Replies to one sender (address and port) are limited to `replyRatio` times the bytes it sent plus
/// `replyBytesPerSecond` (with as much again at once): a 20-byte /aulos/status is answered with 0.7 to
/// 3.5 KB, and without a limit whoever can send from a spoofed address would aim up to 200 times their own
/// traffic at it. On loopback only root can spoof, so this is mostly a bound on what one client costs; a
/// controller's messages, answered with a few bytes each, are never held back, however many. Past the
/// limit requests are still carried out, unanswered.
///
/// Threads: created and served on the control thread; its receive thread only parses and queues.
final class OSCServer: @unchecked Sendable {
    typealias Sender = sockaddr_in
    /// A message as a control request and the address its answer goes back on, or why it is none.
    typealias Mapped = Result<(request: ControlRequest, reply: String), OSCError>

    let port: UInt16
    private let descriptor: Int32
    private let lock = NSLock()
    private var pending: [(Mapped, Sender)] = []
    private var atOnce: (@Sendable (ControlRequest) -> ControlReply?)?
    /// Datagrams that were not OSC, or that arrived while 1,024 were waiting.
    private(set) var rejected = 0
    private var running = true
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    static let replyBytesPerSecond = 32 * 1024.0
    static let replyRatio = 4.0
    /// Each sender's reply bytes left and when they were counted (a token bucket; at most 256 senders
    /// remembered, the longest unheard forgotten first).
    private var replyBudgets: [UInt64: (left: Double, at: Date)] = [:]
    /// Replies not sent for being over the limit.
    private(set) var repliesDropped = 0

    /// Binds `spec` — `PORT` or `127.0.0.1:PORT` (`localhost:PORT`); port 0 picks a free one.
    init(_ spec: String) throws(OSCError) {
        guard let listen = ListenAddress(spec) else {
            throw OSCError("--osc takes PORT or 127.0.0.1:PORT, not '\(spec)'")
        }
        guard listen.isLoopback else {
            throw OSCError(
                "OSC listens on this machine only (127.0.0.1); other addresses wait for the web panel's tokens")
        }
        let port = listen.port
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else {
            throw OSCError("OSC: cannot open a UDP socket (\(String(cString: strerror(errno))))")
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        _ = inet_pton(AF_INET, listen.host, &address.sin_addr)  // checked by ListenAddress
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw OSCError("OSC: cannot listen on 127.0.0.1:\(port) (\(reason))")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        // Room for a burst while the receive thread, which now also sets parameters and answers them, waits
        // for a core: 1 MB (the kernel keeps it within net.core.rmem_max).
        var room: Int32 = 1 << 20
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &room, socklen_t(MemoryLayout<Int32>.size))
        self.descriptor = descriptor
        self.port = UInt16(bigEndian: actual.sin_port)
        let thread = Thread { [unowned self] in self.receive() }
        thread.name = "aulos-osc"
        self.thread = thread
        thread.start()
    }

    deinit {
        lock.withLock { running = false }
        finished.wait()
        close(descriptor)
    }

    /// Lets `body` carry out requests on the receive thread; it returns nil for those that must wait for the
    /// control thread. Control thread.
    func answerAtOnce(_ body: @escaping @Sendable (ControlRequest) -> ControlReply?) {
        lock.withLock { atOnce = body }
    }

    /// The messages received since the last call, as requests, with their senders. Control thread.
    func take() -> [(Mapped, Sender)] {
        lock.withLock {
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
    }

    /// Sends `message` to `sender`, within the sender's reply budget. Control or receive thread.
    func reply(_ message: OSCMessage, to sender: Sender) {
        var target = sender
        let bytes = message.encoded()
        guard spend(bytes.count, on: sender) else { return }
        _ = withUnsafePointer(to: &target) { address in
            address.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bytes.withUnsafeBytes {
                    sendto(descriptor, $0.baseAddress, $0.count, 0, raw, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// Whether `count` bytes may go to `sender` now. A reply larger than the whole budget still goes when the
    /// budget is full (and leaves it in debt), so every reply can be had at the rate.
    private func spend(_ count: Int, on sender: Sender) -> Bool {
        adjustBudget(of: sender, by: -Double(count))
    }

    /// Adds `change` to `sender`'s reply budget if it is positive (a request's credit), or takes it away if the
    /// budget is not spent (a reply); whether it did. Refilled at `replyBytesPerSecond` up to as much again.
    @discardableResult private func adjustBudget(of sender: Sender, by change: Double) -> Bool {
        let key = UInt64(sender.sin_addr.s_addr) << 16 | UInt64(sender.sin_port)
        let now = Date()
        return lock.withLock {
            if replyBudgets[key] == nil && replyBudgets.count >= 256,
                let oldest = replyBudgets.min(by: { $0.value.at < $1.value.at })
            {
                replyBudgets[oldest.key] = nil
            }
            var budget = replyBudgets[key] ?? (Self.replyBytesPerSecond, now)
            budget.left = min(
                Self.replyBytesPerSecond, budget.left + now.timeIntervalSince(budget.at) * Self.replyBytesPerSecond)
            budget.at = now
            let allowed = change >= 0 || budget.left > 0
            if change >= 0 {
                budget.left = min(Self.replyBytesPerSecond, budget.left + change)
            } else if allowed {
                budget.left += change
            } else {
                repliesDropped += 1
            }
            replyBudgets[key] = budget
            return allowed
        }
    }

    /// The receive thread: wait up to 100 ms for a datagram, parse it, queue its messages.
    private func receive() {
        var buffer = [UInt8](repeating: 0, count: OSCMessage.packetLimit + 1)
        while lock.withLock({ running }) {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            var sender = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &sender) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        // MSG_TRUNC: the datagram's whole size, even where it did not fit.
                        recvfrom(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_TRUNC), $0, &length)
                    }
                }
            }
            guard count > 0 else { continue }
            adjustBudget(of: sender, by: Double(count) * Self.replyRatio)
            let parsed: [OSCMessage]
            do throws(OSCError) {
                guard count <= OSCMessage.packetLimit else { throw OSCMessage.oversized(count) }
                parsed = try OSCMessage.parse(Array(buffer[..<count]))
            } catch {
                lock.withLock { rejected += 1 }
                reply(OSCMessage("/aulos/error", [.string(error.message)]), to: sender)
                continue
            }
            let answering = lock.withLock { atOnce }
            for message in parsed {
                let mapped = Self.request(for: message)
                if case .success(let request) = mapped, request.request.isParameterSet,
                    let answer = answering?(request.request)
                {
                    reply(OSCMessage(request.reply, [.string(answer.json)]), to: sender)
                    continue
                }
                lock.withLock {
                    if pending.count < 1024 { pending.append((mapped, sender)) } else { rejected += 1 }
                }
            }
        }
        finished.signal()
    }

    /// The control request an OSC message stands for, and the address its answer goes back on; or the
    /// one-line reason it stands for none. Strings are taken as they are (a rig name may hold spaces).
    static func request(for message: OSCMessage) -> Mapped {
        let path = message.address.split(separator: "/").map(String.init)
        func integers(_ count: Int, in range: ClosedRange<Int32>) -> [Int32]? {
            guard message.arguments.count == count else { return nil }
            let values = message.arguments.compactMap { argument -> Int32? in
                switch argument {
                case .int(let value): value
                case .float(let value) where value.rounded() == value && abs(value) < 1e6: Int32(value)
                default: nil
                }
            }
            return values.count == count && values.allSatisfy(range.contains) ? values : nil
        }
        func number(_ argument: OSCMessage.Argument) -> Float? {
            switch argument {
            case .float(let value) where value.isFinite: value
            case .int(let value): Float(value)
            default: nil
            }
        }
        func reply(_ request: ControlRequest) -> Mapped { .success((request, "/aulos/reply")) }
        switch path {
        case ["aulos", "status"]:
            return .success((.status, "/aulos/status"))
        case ["aulos", "note"]:
            guard let values = integers(3, in: 0...127), (1...16).contains(values[0]) else {
                return .failure(OSCError("/aulos/note takes channel 1…16, note 0…127, velocity 0…127 (0: off)"))
            }
            let status = (values[2] == 0 ? 0x80 : 0x90) | (values[0] - 1)
            return reply(.midi([status, values[1], values[2]].map { UInt8($0) }))
        case ["aulos", "cc"]:
            guard let values = integers(3, in: 0...127), (1...16).contains(values[0]) else {
                return .failure(OSCError("/aulos/cc takes channel 1…16, controller 0…127, value 0…127"))
            }
            return reply(.midi([0xB0 | (values[0] - 1), values[1], values[2]].map { UInt8($0) }))
        case ["aulos", "program"]:
            guard let values = integers(2, in: 0...127), (1...16).contains(values[0]) else {
                return .failure(OSCError("/aulos/program takes channel 1…16, program 0…127"))
            }
            return reply(.midi([0xC0 | (values[0] - 1), values[1]].map { UInt8($0) }))
        case ["aulos", "bank"]:
            // Bank select MSB (CC 0), what a program change that follows takes its bank from.
            guard let values = integers(2, in: 0...127), (1...16).contains(values[0]) else {
                return .failure(OSCError("/aulos/bank takes channel 1…16, bank 0…127"))
            }
            return reply(.midi([0xB0 | (values[0] - 1), 0, values[1]].map { UInt8($0) }))
        case ["aulos", "pressure"]:
            guard let values = integers(2, in: 0...127), (1...16).contains(values[0]) else {
                return .failure(OSCError("/aulos/pressure takes channel 1…16, pressure 0…127"))
            }
            return reply(.midi([0xD0 | (values[0] - 1), values[1]].map { UInt8($0) }))
        case ["aulos", "bend"]:
            // An integer −8192…8191 (0 centred), or a float −1…1 as a fader sends it.
            let problem = OSCError(
                "/aulos/bend takes channel 1…16 and a bend: i −8192…8191 or f −1…1 (0: centre)")
            guard message.arguments.count == 2, case .int(let channel) = message.arguments[0],
                (1...16).contains(channel)
            else { return .failure(problem) }
            let bend: Int32
            switch message.arguments[1] {
            case .int(let value) where (-8192...8191).contains(value): bend = value
            case .float(let value) where value.isFinite && (-1...1).contains(value):
                bend = max(-8192, min(8191, Int32((value * 8192).rounded())))
            default: return .failure(problem)
            }
            let value = bend + 8192
            return reply(.midi([0xE0 | (channel - 1), value & 0x7F, value >> 7].map { UInt8($0) }))
        case ["aulos", "midi"]:
            // Raw MIDI bytes, as a blob or as integers: read by the control socket's `midi` (a stream parser).
            let problem = OSCError("/aulos/midi takes MIDI bytes: a blob, or integers 0…255")
            var bytes: [UInt8] = []
            for argument in message.arguments {
                switch argument {
                case .blob(let blob): bytes += blob
                case .int(let value) where (0...255).contains(value): bytes.append(UInt8(value))
                default: return .failure(problem)
                }
            }
            guard !bytes.isEmpty else { return .failure(problem) }
            return reply(.midi(bytes))
        case ["aulos", "rig"]:
            switch message.arguments.first {
            case .int(let number) where message.arguments.count == 1: return reply(.rig(.number(Int(number))))
            case .string(let name) where message.arguments.count == 1 && !name.isEmpty: return reply(.rig(.name(name)))
            default: return .failure(OSCError("/aulos/rig takes a rig number (1…) or a name"))
            }
        case ["aulos", "tempo"]:
            guard message.arguments.count == 1, let bpm = number(message.arguments[0]) else {
                return .failure(OSCError("/aulos/tempo takes beats per minute (20…400)"))
            }
            return reply(.tempo(Double(bpm)))
        case ["aulos", "transport"]:
            switch (message.arguments.first, message.arguments.count) {
            case (.string("play"), 1): return reply(.transport(.play))
            case (.string("stop"), 1): return reply(.transport(.stop))
            case (.string("rewind"), 1): return reply(.transport(.rewind))
            case (.string("locate"), 2):
                guard let beat = number(message.arguments[1]), beat >= 0 else { break }
                return reply(.transport(.locate(beat: Double(beat))))
            default: break
            }
            return .failure(OSCError("/aulos/transport takes play, stop, rewind, or locate and a beat"))
        case ["aulos", "player"]:
            // play, pause, stop, next, previous; locate and a time in seconds; loop and 1 or 0; load and a
            // song's number (from 1) or name.
            let problem = OSCError(
                "/aulos/player takes play, pause, stop, locate SECONDS, loop 1|0, load SONG, next or previous")
            switch (message.arguments.first, message.arguments.count) {
            case (.string("play"), 1): return reply(.player(.play))
            case (.string("pause"), 1): return reply(.player(.pause))
            case (.string("stop"), 1): return reply(.player(.stop))
            case (.string("next"), 1): return reply(.player(.next))
            case (.string("previous"), 1): return reply(.player(.previous))
            case (.string("load"), 2):
                switch message.arguments[1] {
                case .int(let number): return reply(.player(.load(String(number))))
                case .string(let name) where !name.isEmpty: return reply(.player(.load(name)))
                default: return .failure(problem)
                }
            case (.string("locate"), 2):
                guard let seconds = number(message.arguments[1]), seconds >= 0 else { return .failure(problem) }
                return reply(.player(.locate(seconds: Double(seconds))))
            case (.string("loop"), 2):
                guard let on = number(message.arguments[1]), on == 0 || on == 1 else { return .failure(problem) }
                return reply(.player(.loop(on == 1)))
            default: return .failure(problem)
            }
        case ["aulos", "snapshot"]:
            switch message.arguments.first {
            case .int(let number) where message.arguments.count == 1: return reply(.snapshot(String(number)))
            case .string(let name) where message.arguments.count == 1 && !name.isEmpty: return reply(.snapshot(name))
            default: return .failure(OSCError("/aulos/snapshot takes a snapshot's number (1…) or name"))
            }
        case ["aulos", "save"]:
            // No argument: into the rig's own file(s); a name: a new file beside it.
            switch (message.arguments.first, message.arguments.count) {
            case (nil, 0): return reply(.save(name: nil))
            case (.string(let name), 1) where !name.isEmpty: return reply(.save(name: name))
            default: return .failure(OSCError("/aulos/save takes nothing (the rig's own file) or a name NAME.yaml"))
            }
        default:
            guard path.count == 4, path[0] == "aulos", path[1] == "part", message.arguments.count == 1 else {
                return .failure(
                    OSCError(
                        "unknown address \(message.address.prefix(80)) (/aulos/status, /aulos/note, /aulos/cc, "
                            + "/aulos/program, /aulos/bank, /aulos/bend, /aulos/pressure, /aulos/midi, /aulos/rig, "
                            + "/aulos/tempo, /aulos/transport, /aulos/player, /aulos/snapshot, /aulos/save, "
                            + "/aulos/part/PART/PARAMETER)"
                    )
                )
            }
            switch message.arguments[0] {
            case .float, .int:
                guard let value = number(message.arguments[0]) else {
                    return .failure(OSCError("\(message.address) takes one finite number"))
                }
                return reply(.set(target: "\(path[2]).\(path[3])", value: ControlValue(value)))
            default: return .failure(OSCError("\(message.address) takes one number"))
            }
        }
    }
}
