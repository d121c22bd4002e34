import Glibc

/// A Network MIDI 2.0 client on loopback written from the specification's structure, not from Aulos's builder:
/// every datagram is "MIDI" then commands of code · length in words · two specific bytes · payload, put together
/// byte by byte here; answers are read the same way. Shared by the host's tests and the render tests that play
/// network MIDI 2.0 into a rig. Threads: the test's.
public final class MIDI2TestClient {
    public let fd: Int32
    public let hostPort: UInt16

    /// One command as read back: its code, its two specific bytes and its payload bytes.
    public struct Command: Equatable {
        public var code: UInt8
        public var specific: UInt16
        public var payload: [UInt8]

        public init(code: UInt8, specific: UInt16, payload: [UInt8]) {
            (self.code, self.specific, self.payload) = (code, specific, payload)
        }
    }

    public init(hostPort: UInt16) {
        self.hostPort = hostPort
        fd = boundLoopbackUDPSocket()
    }

    deinit { close(fd) }

    /// A command's bytes: the header, then the payload (whose length must be whole words).
    public static func command(_ code: UInt8, _ byte2: UInt8 = 0, _ byte3: UInt8 = 0, _ payload: [UInt8] = [])
        -> [UInt8]
    {
        precondition(payload.count % 4 == 0)
        return [code, UInt8(payload.count / 4), byte2, byte3] + payload
    }

    public static func word(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// UMP data with sequence number `sequence` carrying `words`.
    public static func ump(_ sequence: UInt16, _ words: [UInt32]) -> [UInt8] {
        command(0xFF, UInt8(sequence >> 8), UInt8(sequence & 0xFF), words.flatMap(word))
    }

    /// A MIDI 2.0 note on / off on channel 1 at full velocity.
    public static func noteOn(_ note: UInt8) -> [UInt32] { [0x4090_0000 | UInt32(note) << 8, 0xFFFF_0000] }
    public static func noteOff(_ note: UInt8) -> [UInt32] { [0x4080_0000 | UInt32(note) << 8, 0x8000_0000] }

    public func send(_ commands: [UInt8]...) {
        let bytes: [UInt8] = [0x4D, 0x49, 0x44, 0x49] + commands.flatMap { $0 }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = hostPort.bigEndian
        _ = bytes.withUnsafeBytes { raw in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// The commands of the next datagram within `milliseconds` (empty when none came or it is not one).
    public func receive(milliseconds: Int32 = 2_000) -> [Command] {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, milliseconds) == 1 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 2048)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count >= 4, buffer[0..<4] == [0x4D, 0x49, 0x44, 0x49] else { return [] }
        var commands: [Command] = []
        var at = 4
        while at + 4 <= count {
            let length = Int(buffer[at + 1]) * 4
            guard at + 4 + length <= count else { break }
            commands.append(
                Command(
                    code: buffer[at], specific: UInt16(buffer[at + 2]) << 8 | UInt16(buffer[at + 3]),
                    payload: Array(buffer[at + 4..<at + 4 + length])))
            at += 4 + length
        }
        return commands
    }

    /// Commands received until one with `code` (within 2 s), that one last.
    public func receive(until code: UInt8) -> [Command] {
        var seen: [Command] = []
        let deadline = Self.now() + 2_000_000_000
        while Self.now() < deadline {
            seen += receive(milliseconds: 200)
            if seen.contains(where: { $0.code == code }) { return seen }
        }
        return seen
    }

    /// Invitation: name "Test", capabilities `capabilities`, product id "t1".
    public func invite(capabilities: UInt8 = 0) -> [Command] {
        send(Self.command(0x01, 1, capabilities, Array("Test".utf8) + Array("t1".utf8) + [0, 0]))
        return receive()
    }

    /// A ping and its reply: every earlier datagram has been handled by then (the host reads in order).
    public func barrier(_ id: UInt32 = 0xB0B0) -> [Command] {
        send(Self.command(0x20, 0, 0, Self.word(id)))
        return receive(until: 0x21)
    }

    /// CLOCK_MONOTONIC in nanoseconds.
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
