import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A small tmpfs mounted for one test: a real full disk (ENOSPC from the kernel, not a simulated error).
/// Mounting needs root (CAP_SYS_ADMIN); tests that use it are skipped with `SmallDisk.skipReason` otherwise.
///
/// Threads: the test's.
public final class SmallDisk {
    public let folder: String

    /// Mounts a tmpfs of `size` (mount's syntax: "1m") on a new folder.
    public init(size: String) throws {
        folder = NSTemporaryDirectory() + "aulos-small-disk-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        guard mount("tmpfs", folder, "tmpfs", 0, "size=\(size)") == 0 else {
            let reason = String(cString: strerror(errno))
            rmdir(folder)
            throw SmallDiskError(message: "cannot mount a tmpfs on \(folder): \(reason)")
        }
    }

    deinit {
        umount2(folder, Int32(MNT_DETACH))
        rmdir(folder)
    }

    /// Whether this process can mount one (tried once, on a tmpfs of its own).
    public static let canMount: Bool = (try? SmallDisk(size: "64k")) != nil

    public static let skipReason: Comment = "skipped: mounting a small tmpfs (a full disk) needs root"
}

public struct SmallDiskError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
