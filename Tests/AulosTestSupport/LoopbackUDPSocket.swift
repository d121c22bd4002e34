#if canImport(Glibc)
import Glibc
#endif

/// A UDP socket bound to 127.0.0.1 on a port the system picks: a test's own peer for a host listening on
/// loopback. Threads: the caller's; the caller closes it.
public func boundLoopbackUDPSocket() -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    return fd
}
