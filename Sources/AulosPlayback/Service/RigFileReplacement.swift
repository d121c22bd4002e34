import AulosCore
import AulosRig
import Foundation
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
        return try readRigFile(path)
    }

    /// Checks `text` as a rig or set file, has `trying` build it in full (given the scratch file's path), and
    /// only then writes it over `path`; the error says what is wrong with it.
    static func replace(
        _ path: String?, with text: String, trying: (String) throws(RigError) -> Void = { _ throws(RigError) in }
    ) throws(RigError) {
        guard let path else { throw RigError(noFile) }
        guard text.utf8.count <= rigFileLimit else {
            throw RigError("the rig file is larger than 1 MB; a rig is a page")
        }
        let scratch = path + ".checking-\(getpid())"
        defer { unlink(scratch) }
        do { try FileContents.replace(scratch, with: Array(text.utf8)) } catch {
            throw RigError("cannot check the new rig beside \(path): \(error.reason)")
        }
        do {
            _ = try RigSet.load(scratch, confined: true)
            try trying(scratch)
        } catch {
            // Name the file being replaced, not the scratch copy.
            throw RigError("not replaced: " + error.message.replacingOccurrences(of: scratch, with: "uploaded rig"))
        }
        do { try FileContents.replace(path, with: Array(text.utf8)) } catch {
            throw RigError("cannot write \(path): \(error.reason)")
        }
    }

    /// What the panel's rig-file menu shows: the playing file's name and the rig files beside it.
    struct Listing: Encodable {
        var playing: String
        var files: [String]

        init(beside path: String?) {
            playing = path.map { String($0.split(separator: "/").last ?? "") } ?? ""
            files = siblings(of: path)
        }
    }

    /// The `.yaml` files beside `path` (at most 200, sorted): what the panel can load.
    static func siblings(of path: String?) -> [String] {
        guard let path else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: FileContents.folder(of: path))) ?? []
        return Array(names.filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted().prefix(200))
    }

    /// `name` beside `path`, refused unless it is a plain `.yaml` name (a request from the network names no
    /// folder); with `checked`, it must exist and load as a rig or set.
    static func sibling(_ name: String, of path: String?, checked: Bool) throws(RigError) -> String {
        guard let path else { throw RigError(noFile) }
        guard !name.contains("/"), !name.hasPrefix("."), name.hasSuffix(".yaml") || name.hasSuffix(".yml"),
            name.utf8.count <= 255
        else { throw RigError("a rig file here is a name ending in .yaml, without a folder, not '\(name)'") }
        let target = FileContents.folder(of: path) + "/" + name
        if checked {
            do { _ = try RigSet.load(target, confined: true) } catch {
                throw RigError("not loaded: \(error.message)")
            }
        }
        return target
    }

    /// Writes `set` (the rig as it plays) into the file(s) it plays from, or as `name` beside them (an existing
    /// file is never replaced). A set's rigs go to their own files: in place, the rig files it lists (the set
    /// file itself holds nothing a player changes), each kept as it was in `FILE~`; as `NAME.yaml`, the set
    /// there listing its rigs as `NAME.RIGFILE` beside it. Each file is written beside and renamed into place.
    /// Returns the file saved.
    static func save(_ set: RigSet, playing path: String?, as name: String?) throws(RigError) -> String {
        guard let path else { throw RigError(noFile) }
        let folder = FileContents.folder(of: path)
        var files: [(path: String, text: String)] = []
        if set.isPlainRig {
            files.append((name.map { folder + "/" + $0 } ?? path, set.entries[0].rig.yaml()))
        } else if let name {
            let stem = name.hasSuffix(".yml") ? String(name.dropLast(4)) : String(name.dropLast(5))
            let rigFiles = set.entries.map {
                stem + "." + ($0.file ?? "rig.yaml").replacingOccurrences(of: "/", with: "-")
            }
            files.append((folder + "/" + name, set.yaml(listing: rigFiles)))
            files += zip(set.entries, rigFiles).map { (folder + "/" + $1, $0.rig.yaml()) }
        } else {
            files = set.entries.compactMap { entry in entry.file.map { (folder + "/" + $0, entry.rig.yaml()) } }
        }
        if let name {
            _ = try sibling(name, of: path, checked: false)
            if let taken = files.first(where: { FileManager.default.fileExists(atPath: $0.path) }) {
                throw RigError(
                    "\(taken.path.split(separator: "/").last ?? "") exists; saving never replaces a file (choose "
                        + "another name)")
            }
        }
        for file in files {
            // In place, the file as it was (its comments too: a saved file has none) is kept as NAME.yaml~.
            if name == nil, let before = try? FileContents.read(file.path, limit: rigFileLimit) {
                try? FileContents.replace(file.path + "~", with: before)
            }
            do { try FileContents.replace(file.path, with: Array(file.text.utf8)) } catch {
                throw RigError("cannot write \(file.path): \(error.reason)")
            }
        }
        return files[0].path
    }

    /// `message` as it may go over the network: a quoted text ('…') is kept only when it is in `sent` (what
    /// the client itself sent) or in a rig file of the playing rig's folder (what the panel serves anyway);
    /// any other is a line of some other file a rig named (a tuning of `/etc/passwd` quoted its second
    /// line) and becomes '…'. File names and line numbers stay: they say where to look.
    static func redacted(_ message: String, beside path: String?, sent: String? = nil) -> String {
        var known: [String] = sent.map { [$0] } ?? []
        if let path {
            let folder = FileContents.folder(of: path)
            known += siblings(of: path).compactMap { try? FileContents.text(folder + "/" + $0, limit: rigFileLimit) }
        }
        // A quote opens after a space or bracket and closes before a space, punctuation or the end, so the
        // apostrophe in "plugin's" is neither.
        let characters = Array(message)
        func opens(_ index: Int) -> Bool { index == 0 || " (<[".contains(characters[index - 1]) }
        func closes(_ index: Int) -> Bool {
            index + 1 == characters.count || " ,.;:)]>".contains(characters[index + 1])
        }
        var result = ""
        var index = 0
        while index < characters.count {
            guard characters[index] == "'", opens(index),
                let close = characters[(index + 1)...].indices.first(where: { characters[$0] == "'" && closes($0) })
            else {
                result.append(characters[index])
                index += 1
                continue
            }
            let quoted = String(characters[(index + 1)..<close])
            result += "'" + (quoted.isEmpty || known.contains(where: { $0.contains(quoted) }) ? quoted : "…") + "'"
            index = close + 1
        }
        return result
    }

    private static let noFile =
        "this instrument plays no rig file; start it with --rig FILE to replace its rig from the panel"
}
