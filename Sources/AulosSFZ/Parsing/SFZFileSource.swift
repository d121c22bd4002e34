import AulosCore

#if canImport(Glibc)
import Glibc
#endif

/// Where the parser reads `.sfz` files and checks that samples exist: the disk, or (for the fuzzer and tests)
/// a table in memory. Paths are plain strings joined with `/`.
///
/// Threads: used by the one control thread that loads a library.
public protocol SFZFileSource {
    /// The file's bytes, at most `limit` of them; throws a message (without the path) when it cannot.
    func read(_ path: String, limit: Int) throws(SFZFileSourceError) -> [UInt8]
    /// Whether a readable file (not a folder) is at `path`.
    func fileExists(_ path: String) -> Bool
    /// The names in a folder, for matching a sample's name without regard to case (libraries written on
    /// Windows or macOS often spell a file's case differently from the disk); nil when unreadable.
    func names(inFolder path: String) -> [String]?
}

/// Why a file source could not read a file (the caller adds the file and line).
///
/// Threads: a value.
public struct SFZFileSourceError: Error, Sendable {
    public var reason: String

    public init(_ reason: String) { self.reason = reason }
}

/// The disk, read with the project's size-limited reader.
///
/// Threads: control side (it blocks on the file system).
public struct SFZDiskFiles: SFZFileSource {
    public init() {}

    public func read(_ path: String, limit: Int) throws(SFZFileSourceError) -> [UInt8] {
        do {
            return try FileContents.read(path, limit: limit)
        } catch {
            throw SFZFileSourceError(error.reason)
        }
    }

    public func fileExists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && access(path, R_OK) == 0
    }

    public func names(inFolder path: String) -> [String]? {
        FileContents.entries(inFolder: path)?.map(\.name)
    }
}

/// Files held in memory, keyed by path: the fuzzer's and the tests' library, with no disk involved.
///
/// Threads: a value.
public struct SFZMemoryFiles: SFZFileSource, Sendable {
    public var files: [String: [UInt8]]

    public init(_ files: [String: [UInt8]]) { self.files = files }

    public init(texts: [String: String]) { files = texts.mapValues { Array($0.utf8) } }

    public func read(_ path: String, limit: Int) throws(SFZFileSourceError) -> [UInt8] {
        guard let bytes = files[path] else { throw SFZFileSourceError("No such file or directory") }
        guard bytes.count <= limit else { throw SFZFileSourceError("is larger than \(limit) bytes") }
        return bytes
    }

    public func fileExists(_ path: String) -> Bool { files[path] != nil }

    public func names(inFolder path: String) -> [String]? {
        let prefix = path + "/"
        let names = files.keys.compactMap { key -> String? in
            guard key.hasPrefix(prefix) else { return nil }
            return key.dropFirst(prefix.count).split(separator: "/").first.map(String.init)
        }
        return names.isEmpty ? nil : Array(Set(names))
    }
}

/// Paths inside a library: written with `/` or Windows' `\`, joined, and normalised without the file system
/// so that a path is checked against the root before anything is opened.
///
/// Threads: pure functions.
public enum SFZPath {
    /// `path` with `\` as `/`, no `.` components, `..` applied, and no repeated or trailing `/`. A `..` that
    /// would climb above the start of a relative path is kept (so the confinement check sees it).
    public static func normalise(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == "..", let last = parts.last, last != ".." {
                parts.removeLast()
                continue
            }
            if part == "..", absolute { continue }
            parts.append(part)
        }
        let joined = parts.joined(separator: "/")
        return absolute ? "/" + joined : (joined.isEmpty ? "." : joined)
    }

    /// `relative` (with `\` read as `/`) taken from `folder`, normalised; an absolute `relative` stands alone.
    public static func join(_ folder: String, _ relative: String) -> String {
        let slashed = relative.replacingBackslashes()
        if slashed.hasPrefix("/") { return normalise(slashed) }
        return normalise(folder == "." ? slashed : folder + "/" + slashed)
    }

    /// The part of `path` inside `root` (both normalised), or nil when `path` is outside it.
    public static func inside(_ path: String, root: String) -> String? {
        if root == "." {
            return path.hasPrefix("/") || path == ".." || path.hasPrefix("../") ? nil : path
        }
        if path == root { return "" }
        let prefix = root.hasSuffix("/") ? root : root + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : nil
    }
}

extension String {
    func replacingBackslashes() -> String {
        contains("\\") ? String(map { $0 == "\\" ? "/" : $0 }) : self
    }
}
