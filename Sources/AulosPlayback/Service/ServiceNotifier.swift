import Glibc

/// systemd's readiness protocol (sd_notify) without libsystemd: one datagram to the Unix socket named by
/// $NOTIFY_SOCKET (`READY=1`, `RELOADING=1`, `STOPPING=1`, `STATUS=…`). Outside systemd the variable is
/// unset and every call does nothing.
///
/// Threads: the control thread.
public enum ServiceNotifier {
    /// True when running under a service manager that wants notifications.
    public static var isSupervised: Bool { getenv("NOTIFY_SOCKET") != nil }

    @discardableResult
    public static func notify(_ state: String) -> Bool {
        guard let variable = getenv("NOTIFY_SOCKET") else { return false }
        var path = Array(String(cString: variable).utf8)
        guard !path.isEmpty, path.count < 108 else { return false }
        // '@' names an abstract socket: a leading NUL byte instead.
        if path[0] == UInt8(ascii: "@") { path[0] = 0 }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bytes.withUnsafeBytes {
                    sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, length)
                }
            }
        }
        return sent == bytes.count
    }
}
