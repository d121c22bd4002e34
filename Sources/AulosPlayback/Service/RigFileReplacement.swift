import AulosCore
import AulosRig
import Glibc

/// A rig file sent over the network (the panel's upload) replacing the one the instrument plays: read in
/// full as a rig or set first, from a scratch file beside the target (so the rig files a set names resolve
/// as they will), and only then written over the target in one rename. A bad file leaves the old one, and
/// the rig playing, untouched.
///
/// Threads: control thread.
enum RigFileReplacement {
    /// The playing rig file's text.
    static func text(of path: String?) throws(RigError) -> String {
        guard let path else { throw RigError(noFile) }
        do { return try FileContents.text(path, limit: 1 << 20) } catch {
            throw RigError("\(path): cannot read the rig file: \(error.reason)")
        }
    }

    /// Checks `text` as a rig or set file and writes it over `path`; the error says what is wrong with it.
    static func replace(_ path: String?, with text: String) throws(RigError) {
        guard let path else { throw RigError(noFile) }
        guard text.utf8.count <= 1 << 20 else { throw RigError("the rig file is larger than 1 MB; a rig is a page") }
        let scratch = path + ".checking-\(getpid())"
        defer { unlink(scratch) }
        do { try FileContents.replace(scratch, with: Array(text.utf8)) } catch {
            throw RigError("cannot check the new rig beside \(path): \(error.reason)")
        }
        do { _ = try RigSet.load(scratch) } catch {
            // Name the file being replaced, not the scratch copy.
            throw RigError("not replaced: " + error.message.replacingOccurrences(of: scratch, with: "uploaded rig"))
        }
        do { try FileContents.replace(path, with: Array(text.utf8)) } catch {
            throw RigError("cannot write \(path): \(error.reason)")
        }
    }

    private static let noFile =
        "this instrument plays no rig file; start it with --rig FILE to replace its rig from the panel"
}
