import AulosCore
import AulosRig
import Foundation
import Glibc

/// The last rig set that started and played, kept so an unattended box can never boot into a loop on a
/// bad rig: `.last-good/` beside the rig file holds it as rig files of its own (`set.yaml`, `rig-N.yaml`,
/// written whole by `rig.yaml()`), and a marker, `trying`, holds the set being started until it has played
/// for `settlingSeconds`. At start, a configured rig that cannot be read or built — or that is the very set
/// the marker names, because the last start with it never settled (a crash, a hang killed by systemd) — is
/// passed over for the last good one, and the status, the panel and the journal say so.
///
/// Threads: control thread.
public final class LastKnownGoodRig {
    /// How long a new rig must play before it becomes the last good one: a crash in the first seconds after
    /// a rig change falls back on the next start.
    public static let settlingSeconds = 5.0

    public let folder: String
    private var setFile: String { folder + "/set.yaml" }
    private var marker: String { folder + "/trying" }
    /// The text last recorded (or found on disk), to write nothing when the same set settles again.
    private var recorded: String?
    /// A complaint about the folder, said once (a rig on a read-only file system keeps no last good rig).
    private var complained = false

    /// The last good rig kept beside the rig file at `rigPath`.
    public init(beside rigPath: String) {
        folder = FileContents.folder(of: rigPath) + "/.last-good"
        recorded = Self.fingerprint(load())
    }

    /// The last good set, if one was kept and still reads.
    public func load() -> RigSet? {
        guard access(setFile, R_OK) == 0 else { return nil }
        return try? RigSet.load(setFile)
    }

    /// The files `set` is kept as: the set file's text and each rig file's name and text.
    static func files(of set: RigSet) -> (set: String, rigs: [(name: String, text: String)]) {
        if set.isPlainRig { return (set.yaml(listing: []), []) }
        let names = set.entries.indices.map { "rig-\($0 + 1).yaml" }
        return (set.yaml(listing: names), zip(names, set.entries).map { ($0, $1.rig.yaml()) })
    }

    /// One text standing for the whole set (its files, in order), to tell sets apart.
    static func fingerprint(_ set: RigSet?) -> String? {
        guard let set else { return nil }
        let files = files(of: set)
        return ([files.set] + files.rigs.map { "--- \($0.name)\n" + $0.text }).joined()
    }

    /// Whether the last start with `set` never settled: the marker names it, and it is not the last good one.
    public func crashedTrying(_ set: RigSet) -> Bool {
        guard let trying = try? FileContents.text(marker, limit: 4 * rigFileLimit) else { return false }
        let print = Self.fingerprint(set)
        return trying == print && print != recorded
    }

    /// Marks `set` as being started (nothing when it is the last good one already). The warning, once, when
    /// the folder cannot be written.
    public func beginTrying(_ set: RigSet) -> String? {
        guard let print = Self.fingerprint(set), print != recorded else {
            unlink(marker)
            return nil
        }
        return write(Array(print.utf8), to: marker)
    }

    /// `set` has played long enough: it becomes the last good rig, and the marker goes. The warning, once,
    /// when the folder cannot be written.
    public func settled(_ set: RigSet) -> String? {
        defer { unlink(marker) }
        guard let print = Self.fingerprint(set), print != recorded else { return nil }
        let files = Self.files(of: set)
        var warning: String?
        for rig in files.rigs { warning = warning ?? write(Array(rig.text.utf8), to: folder + "/" + rig.name) }
        warning = warning ?? write(Array(files.set.utf8), to: setFile)
        if warning == nil { recorded = print }
        return warning
    }

    /// A clean stop is no crash: the marker goes, and the set it named is tried again next time.
    public func stoppedCleanly() { unlink(marker) }

    private func write(_ bytes: [UInt8], to path: String) -> String? {
        do {
            if access(folder, F_OK) != 0 {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            }
            try FileContents.replace(path, with: bytes)
            return nil
        } catch {
            guard !complained else { return nil }
            complained = true
            let reason = (error as? ReportableError)?.message ?? error.localizedDescription
            return "cannot keep the last good rig in \(folder), so a bad rig at boot has nothing to fall back to: "
                + reason
        }
    }
}
