import Glibc
import Synchronization

/// The one thread a network MIDI host reads its sockets on: started with the host's loop, asked to stop (the loop
/// checks `isStopping` at least every poll() timeout) and joined. The loop's closure holds the host, so the host
/// lives as long as its thread runs.
///
/// Threads: `start` and `stop` on the control thread; `isStopping` read by the network thread.
final class NetworkThread: @unchecked Sendable {
    private let stopping = Atomic<Bool>(false)
    private var handle: pthread_t?

    var isStarted: Bool { handle != nil }
    var isStopping: Bool { stopping.load(ordering: .relaxed) }

    /// Runs `loop` on a new thread; `what` names it in the error when the system will not make one.
    func start(_ what: String, _ loop: @escaping @Sendable () -> Void) throws(AppleMIDIHostError) {
        guard handle == nil else { return }
        stopping.store(false, ordering: .relaxed)
        final class Box: @unchecked Sendable {
            let loop: @Sendable () -> Void
            init(_ loop: @escaping @Sendable () -> Void) { self.loop = loop }
        }
        let retained = Unmanaged.passRetained(Box(loop)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { raw in
                Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().loop()
                return nil
            }, retained)
        guard created == 0 else {
            Unmanaged<Box>.fromOpaque(retained).release()
            throw AppleMIDIHostError("cannot start the \(what) thread: \(String(cString: strerror(created)))")
        }
        handle = thread
    }

    /// Asks the loop to end and waits for it.
    func stop() {
        guard let thread = handle else { return }
        stopping.store(true, ordering: .relaxed)
        pthread_join(thread, nil)
        handle = nil
    }
}

extension PeerAddress {
    /// The next datagram waiting on the non-blocking socket `fd`, read into `buffer` (made once, the largest
    /// datagram's size) and copied out, with who sent it; nil when none is waiting.
    static func receive(on fd: Int32, into buffer: inout [UInt8]) -> (bytes: [UInt8], from: PeerAddress)? {
        var from = PeerAddress()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let count = buffer.withUnsafeMutableBytes { bytes in
            withUnsafeMutablePointer(to: &from.storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(fd, bytes.baseAddress, bytes.count, 0, $0, &length)
                }
            }
        }
        guard count >= 0 else { return nil }  // EAGAIN: drained (or an error the next poll shows again)
        from.length = length
        return (Array(buffer[0..<count]), from)
    }

    /// Sends `bytes` to this peer from `fd`; a datagram the system drops is lost as on the network.
    func send(_ bytes: [UInt8], on fd: Int32) {
        var address = storage
        _ = bytes.withUnsafeBytes { raw in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
    }
}
