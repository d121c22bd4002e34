import AulosCore
import Foundation
import Glibc

/// Who owns the other end of a loopback TCP connection, and whether they may use a panel that asks no
/// password. A TCP peer sends no credentials (a Unix socket's SO_PEERCRED has no TCP twin), but on this
/// machine the kernel lists every socket with its owner in /proc/net/tcp (and tcp6): the client's socket is
/// the row whose local end is the connection's remote one and whose remote end is ours.
///
/// The rule is the control socket's (`ControlSocket.peerAllowed`): root, the panel's own user, or a member
/// of its group — here by the user's groups in the user database, as the client's process is not known.
///
/// Threads: stateless; called on the gate's thread.
enum PeerOwner {
    /// The answer to anyone else.
    static let refusal = RequestFraming.Refusal(
        status: 403, phrase: "Forbidden",
        why: "this panel is for the service's user and group only: run as that user, or give the panel a "
            + "password (--web-password)")

    /// Whether the owner of `connection`'s client end may use the panel; false when it cannot be read.
    static func mayUsePanel(_ connection: Int32) -> Bool {
        guard let uid = owner(of: connection) else { return false }
        if uid == 0 || uid == getuid() { return true }
        return groups(of: uid).contains(getgid())
    }

    /// The uid owning the client end of the accepted TCP `connection`, from /proc/net/tcp or tcp6.
    static func owner(of connection: Int32) -> uid_t? {
        func address(_ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32)
            -> sockaddr_in?
        {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let result = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(connection, $0, &length) }
            }
            return result == 0 ? address : nil
        }
        guard let local = address(getsockname), let remote = address(getpeername) else { return nil }
        // The kernel prints an IPv4 address as its four bytes read as a native integer, a port in hex; an
        // IPv6 socket's v4-mapped address as four such words, the third 0000FFFF.
        func v4(_ address: sockaddr_in) -> String {
            String(format: "%08X:%04X", address.sin_addr.s_addr, UInt16(bigEndian: address.sin_port))
        }
        func v6(_ address: sockaddr_in) -> String {
            String(format: "0000000000000000%08X", UInt32(0xFFFF).bigEndian) + v4(address)
        }
        return owner(in: "/proc/net/tcp", local: v4(remote), remote: v4(local))
            ?? owner(in: "/proc/net/tcp6", local: v6(remote), remote: v6(local))
    }

    /// The uid of the row of `table` with these ends ("sl local rem st queues timer retransmits uid …").
    static func owner(in table: String, local: String, remote: String) -> uid_t? {
        // One row per socket in this network namespace: a few MB would be a hundred thousand sockets.
        guard let bytes = try? FileContents.read(table, limit: 64 << 20) else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 7, fields[1] == local, fields[2] == remote else { continue }
            return uid_t(fields[7])
        }
        return nil
    }

    /// The groups of user `uid` (its primary one and the others the user database lists); none when unknown.
    static func groups(of uid: uid_t) -> [gid_t] {
        var entry = passwd()
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        var found: UnsafeMutablePointer<passwd>?
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &found) == 0, found != nil, let name = entry.pw_name
        else { return [] }
        var count: Int32 = 256
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(name, entry.pw_gid, &groups, &count) < 0 {
            // Too few places: `count` now says how many are needed.
            groups = [gid_t](repeating: 0, count: Int(count))
            guard getgrouplist(name, entry.pw_gid, &groups, &count) >= 0 else { return [entry.pw_gid] }
        }
        return Array(groups.prefix(Int(count)))
    }
}
