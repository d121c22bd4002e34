import AulosCore
import Foundation
import Glibc

/// Who owns the other end of a loopback TCP connection, and whether they may use a panel that asks no
/// password. A TCP peer sends no credentials (a Unix socket's SO_PEERCRED has no TCP twin), but on this
/// machine the kernel knows the client's socket — the one whose local end is the connection's remote one
/// and whose remote end is ours — and its owner: asked for that one socket through NETLINK_SOCK_DIAG (what
/// `ss` uses; no privilege needed), or, where netlink is not allowed, found in /proc/net/tcp (and tcp6),
/// which lists every socket of the machine and costs a read of them all, TIME_WAIT ones included.
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

    /// Whether `uid`, the owner of a connection's client end (`owner(of:)`), may use the panel; not when it
    /// could not be read.
    static func mayUsePanel(_ uid: uid_t?) -> Bool {
        guard let uid else { return false }
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
        switch diagnosed(client: remote, server: local) {
        case .owner(let uid): return uid
        case .noSuchSocket: return nil
        case .unavailable: break
        }
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

    /// What NETLINK_SOCK_DIAG says of a socket.
    enum Diagnosis: Equatable {
        case owner(uid_t)
        case noSuchSocket
        /// Netlink cannot be used here (a sandbox, say).
        case unavailable
    }

    /// The client socket's owner through NETLINK_SOCK_DIAG (4): an IPv4 socket, else an IPv6 one with
    /// v4-mapped ends.
    static func diagnosed(client: sockaddr_in, server: sockaddr_in) -> Diagnosis {
        let descriptor = socket(AF_NETLINK, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 4)
        guard descriptor >= 0 else { return .unavailable }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        for family in [AF_INET, AF_INET6] {
            // struct nlmsghdr (16 bytes) + struct inet_diag_req_v2 (8 + struct inet_diag_sockid, 48).
            var request = [UInt8](repeating: 0, count: 72)
            func put32(_ value: UInt32, at offset: Int) {
                withUnsafeBytes(of: value) { request.replaceSubrange(offset..<offset + 4, with: $0) }
            }
            func put16(_ value: UInt16, at offset: Int) {
                withUnsafeBytes(of: value) { request.replaceSubrange(offset..<offset + 2, with: $0) }
            }
            put32(72, at: 0)
            put16(20, at: 4)  // SOCK_DIAG_BY_FAMILY
            put16(1, at: 6)  // NLM_F_REQUEST: one socket, looked up by its ends
            request[16] = UInt8(family)
            request[17] = UInt8(IPPROTO_TCP)
            put32(~0, at: 20)  // every state
            put16(client.sin_port, at: 24)  // already network order
            put16(server.sin_port, at: 26)
            if family == AF_INET {
                put32(client.sin_addr.s_addr, at: 28)
                put32(server.sin_addr.s_addr, at: 44)
            } else {
                for (offset, address) in [(28, client), (44, server)] {
                    put32(UInt32(0xFFFF).bigEndian, at: offset + 8)
                    put32(address.sin_addr.s_addr, at: offset + 12)
                }
            }
            put32(~0, at: 64)  // INET_DIAG_NOCOOKIE
            put32(~0, at: 68)
            guard send(descriptor, request, request.count, 0) == request.count else { return .unavailable }
            var answer = [UInt8](repeating: 0, count: 8192)
            let count = recv(descriptor, &answer, answer.count, 0)
            guard count >= 16 else { return .unavailable }
            let type = UInt16(answer[4]) | UInt16(answer[5]) << 8
            // NLMSG_ERROR: ENOENT (no such socket in this family) tries the next; anything else, netlink cannot.
            if type == 2 {
                let code = count >= 20 ? answer[16..<20].withUnsafeBytes { $0.loadUnaligned(as: Int32.self) } : 0
                if code == -ENOENT { continue }
                return .unavailable
            }
            // struct inet_diag_msg: family, state, timer, retrans, sockid (48), expires, rqueue, wqueue, uid.
            guard type == 20, count >= 16 + 68 else { return .unavailable }
            return .owner(answer[80..<84].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
        }
        return .noSuchSocket
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
