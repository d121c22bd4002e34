import AulosCore
import AulosTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Whole files read with a limit, and written so that the old file is never half-replaced.
@Suite struct FileContentsTests {
    /// What a user may name instead of a file: each one clear line, never exhausted memory or a hang.
    @Test func whatIsNotAFileIsBoundedAndNeverHangs() throws {
        let fifo = TestFiles.scratch("fifo")
        mkfifo(fifo, 0o600)
        defer { unlink(fifo) }
        // A named pipe nobody writes to reads as empty (it used to block in open for ever).
        #expect(try FileContents.read(fifo, limit: 1 << 20).isEmpty)
        do {
            _ = try FileContents.read("/dev/zero", limit: 1 << 20)
            Issue.record("read /dev/zero to the end")
        } catch {
            #expect(error.message == "/dev/zero: is larger than 1 MiB, the most aulos reads as such a file")
        }
        #expect(throws: FileReadError(path: "/tmp", reason: "is a directory, not a file")) {
            try FileContents.read("/tmp", limit: 1 << 20)
        }
        #expect(throws: FileReadError(path: "/nonexistent", reason: "No such file or directory")) {
            try FileContents.read("/nonexistent", limit: 1 << 20)
        }
        let small = TestFiles.scratch("small")
        TestFiles.write(Array(repeating: 7, count: 70_000), to: small)
        defer { unlink(small) }
        #expect(
            throws: FileReadError(path: small, reason: "is larger than 64 KiB, the most aulos reads as such a file")
        ) {
            try FileContents.read(small, limit: 1 << 16)
        }
    }

    /// Replacing a file: the new bytes, the old permissions, no temporary file left; a link keeps pointing
    /// at the replaced file; a failure leaves the old file whole.
    @Test func replacingNeverLeavesHalfAFile() throws {
        let folder = TestFiles.scratch("replace")
        mkdir(folder, 0o755)
        defer { TestFiles.remove(folder) }
        let path = folder + "/state.json"
        TestFiles.write("old", to: path)
        chmod(path, 0o600)
        try FileContents.replace(path, with: Array("new".utf8))
        #expect(TestFiles.bytes(path) == Array("new".utf8))
        var info = stat()
        stat(path, &info)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["state.json"])
        symlink(path, folder + "/link.json")
        try FileContents.replace(folder + "/link.json", with: Array("newer".utf8))
        #expect(TestFiles.bytes(path) == Array("newer".utf8))
        lstat(folder + "/link.json", &info)
        #expect(info.st_mode & S_IFMT == S_IFLNK)
        // The file beside it cannot be made (a directory is in the way, which stops root too): an error
        // saying the old file is untouched, and it is.
        mkdir(path + ".partial-\(getpid())", 0o755)
        do {
            try FileContents.replace(path, with: Array("lost".utf8))
            Issue.record("wrote through a directory")
        } catch {
            #expect(error.message == "cannot write \(path): Is a directory (the existing file is untouched)")
        }
        #expect(TestFiles.bytes(path) == Array("newer".utf8))
    }
}
