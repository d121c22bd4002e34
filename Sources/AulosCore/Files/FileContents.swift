#if canImport(Glibc)
import Glibc
#endif

/// Whole files a person names — scores, MIDI files, rigs, presets, state files — read into memory with a
/// size limit, so a wrong path (a directory, /dev/zero, a 4 GB video) is one clear error instead of
/// exhausted memory or a hang.
///
/// Threads: control side (it blocks on the file system).
public enum FileContents {
    /// The folder `path` is in ("." for a bare name), without a trailing slash.
    public static func folder(of path: String) -> String {
        path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
    }

    /// The file's bytes, or an error naming the path and what is wrong. Files larger than `limit` bytes are
    /// refused without reading them whole (special files with no size, such as /proc entries, are read up
    /// to the limit).
    public static func read(_ path: String, limit: Int) throws(FileReadError) -> [UInt8] {
        // Opened without blocking, so a named pipe nobody writes to (a path in a rig set, say) reads as
        // empty instead of hanging; then blocking again, so a pipe being written (cat song.mid | aulos
        // render /dev/stdin) is read to its end.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw FileReadError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw FileReadError(path: path, reason: String(cString: strerror(errno)))
        }
        if info.st_mode & S_IFMT == S_IFDIR { throw FileReadError(path: path, reason: "is a directory, not a file") }
        if info.st_size > limit { throw FileReadError.tooLarge(path, limit: limit) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(max(0, info.st_size)))
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileReadError(path: path, reason: String(cString: strerror(errno)))
            }
            if count == 0 { return bytes }
            guard bytes.count + count <= limit else { throw FileReadError.tooLarge(path, limit: limit) }
            bytes += chunk[..<count]
        }
    }

    /// Makes `bytes` the whole content of `path` without ever leaving it half-written: they go to a file
    /// beside it (`NAME.partial-PID`), flushed to disk, which is then renamed over it in one step. A failure
    /// (a full disk, no permission) removes the new file and leaves the old one as it was. A link is followed
    /// (the file it points to is replaced); the old file's permissions are kept, else `mode` is used.
    public static func replace(_ path: String, with bytes: [UInt8], mode: mode_t = 0o644) throws(FileWriteError) {
        var target = path
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK, let real = realpath(path, nil) {
            target = String(cString: real)
            free(real)
        }
        let keptMode = stat(target, &info) == 0 ? info.st_mode & 0o7777 : mode
        let temporary = target + ".partial-\(getpid())"
        let untouched = access(path, F_OK) == 0 ? " (the existing file is untouched)" : ""
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, keptMode)
        guard descriptor >= 0 else {
            throw FileWriteError(path: path, reason: String(cString: strerror(errno)) + untouched)
        }
        var written = 0
        var failure: Int32 = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                failure = errno
                break
            }
            written += count
        }
        if failure == 0 && fsync(descriptor) != 0 { failure = errno }
        if close(descriptor) != 0 && failure == 0 { failure = errno }
        if failure == 0 { fchmodat(AT_FDCWD, temporary, keptMode, 0) }
        if failure == 0 && rename(temporary, target) != 0 { failure = errno }
        guard failure != 0 else { return }
        unlink(temporary)
        throw FileWriteError(path: path, reason: String(cString: strerror(failure)) + untouched)
    }

    /// Whether `path` is a folder (following links).
    public static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// The names in a folder (without "." and ".."), each with whether it is a folder; nil when it cannot
    /// be read. The name is read in place in the directory entry: an entry is only as long as its name, so
    /// copying the whole `d_name` field reads past the end of the last one (AddressSanitizer found it).
    public static func entries(inFolder folder: String) -> [(name: String, isFolder: Bool)]? {
        guard let directory = opendir(folder) else { return nil }
        defer { closedir(directory) }
        var entries: [(name: String, isFolder: Bool)] = []
        while let entry = readdir(directory) {
            let name = withUnsafeMutablePointer(to: &entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 1) { String(cString: $0) }
            }
            guard name != ".", name != ".." else { continue }
            entries.append((name, Int32(entry.pointee.d_type) == Int32(DT_DIR)))
        }
        return entries
    }

    /// Whether two paths name the same file on disk, however they are written (`./s.yaml`, `../x/s.yaml`,
    /// a link); false when either does not exist.
    public static func isSameFile(_ one: String, _ other: String) -> Bool {
        var first = stat()
        var second = stat()
        guard stat(one, &first) == 0, stat(other, &second) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }

    /// The file as UTF-8 text (the same limit), or an error saying it is not text.
    public static func text(_ path: String, limit: Int) throws(FileReadError) -> String {
        let bytes = try read(path, limit: limit)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw FileReadError(path: path, reason: "is not UTF-8 text")
        }
        return text
    }
}

/// A file that could not be read: its path and why, as one line ("song.mid: No such file or directory").
///
/// Threads: a value.
public struct FileReadError: ReportableError, Equatable, Sendable {
    public let path: String
    public let reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    static func tooLarge(_ path: String, limit: Int) -> FileReadError {
        let size = limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit >> 10) KiB"
        return FileReadError(path: path, reason: "is larger than \(size), the most aulos reads as such a file")
    }

    public var message: String { "\(path): \(reason)" }
}

/// A file that could not be written: its path and why ("/etc/x: Permission denied").
///
/// Threads: a value.
public struct FileWriteError: ReportableError, Equatable, Sendable {
    public let path: String
    public let reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var message: String { "cannot write \(path): \(reason)" }
}
