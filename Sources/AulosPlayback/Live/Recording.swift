import AulosAudioFile
import AulosCore
import AulosRig
import Glibc

/// One recording while playing: the master output into its file and, when the rig taps its parts
/// (`--record-parts`), every part's own output into a file beside it (`PartFileNames`), all started and
/// ended on the same graph frames (one window for every recorder, set ahead of the render thread).
///
/// Threads: the control thread; the recorders' rings are fed on the render thread.
final class Recording {
    let master: Recorder
    /// One per part, in the rig's part order; empty when the rig does not tap its parts.
    let parts: [Recorder]
    private let taps: PartTaps?
    private let sampleRate: Double
    /// Failures already reported (`newFailures`).
    private var reported: Set<String> = []

    /// Opens every file and attaches the recorders to the rig. Nothing is left attached when it throws. A
    /// file that exists is refused unless `replacing` (`--force`), with `advice` saying what to do instead;
    /// so is a folder, or a folder that cannot be written — before anything plays, not when the take ends.
    /// Recording starts at graph frame `firstFrame` (0: the first, for a recording attached before playing).
    init(
        to path: String, rig: PlaybackRig, sampleRate: Double, replacing: Bool, advice: String,
        firstFrame: Int64 = 0
    ) throws(RigError) {
        for file in Self.files(for: path, rig: rig) {
            if let refusal = RecordingTarget.refusal(for: file, replacing: replacing, advice: advice) {
                throw RigError(refusal)
            }
        }
        do {
            // The master comes through the output stage, whose look-ahead the take leaves out (the parts are
            // tapped before it).
            master = try Recorder(
                path: path, sampleRate: sampleRate, skippingFirst: rig.outputStage.latencyFrames)
            parts = try Self.files(for: path, rig: rig).dropFirst().map { path throws(AudioFileError) in
                try Recorder(path: path, sampleRate: sampleRate)
            }
        } catch {
            throw RigError("cannot record: \(error.message)")
        }
        for recorder in [master] + parts { recorder.window(from: firstFrame) }
        taps = rig.partTaps
        self.sampleRate = sampleRate
        do { try rig.graph.addRenderNotify(master.renderNotify) } catch {
            throw RigError("cannot record: \(error.detail)")
        }
        for (index, part) in parts.enumerated() { taps?.attach(part.sliceSink, toPart: index) }
    }

    /// The files a recording to `path` writes: the master's, then each part's when the rig taps them.
    static func files(for path: String, rig: PlaybackRig) -> [String] {
        [path] + (rig.partTaps == nil ? [] : PartFileNames.paths(beside: path, parts: rig.partNames))
    }

    /// Leftovers of recordings killed outright, moved aside as the files opened: one warning line each.
    var recoveries: [String] {
        ([master] + parts).flatMap(\.recovered).map { from, to, frames in
            "\(from) was left by a recording killed before it finished: kept as \(to)"
                + (frames.map { " (\(String(format: "%.1f", Double($0) / sampleRate)) s, its header repaired)" } ?? "")
        }
    }

    /// Disk failures (a full disk) not reported yet, each once: as they happen, and those `finished` found
    /// (a FLAC that could not be finished).
    func newFailures(finished: [RecordingOutcome] = []) -> [String] {
        (([master] + parts).compactMap(\.failure) + finished.compactMap(\.failure)).filter {
            reported.insert($0).inserted
        }
    }

    /// Every recorder ends at graph frame `frame` (not included): set ahead of the render thread, then wait
    /// until it has rendered that far before `detach` and `finish`.
    func end(at frame: Int64, firstFrame: Int64) {
        for recorder in [master] + parts { recorder.window(from: firstFrame, to: frame) }
    }

    /// Takes the recorders off the rig: from the next cycle nothing more reaches them. The render thread may
    /// still be in a cycle that feeds them, so keep the recording until that cycle is surely over.
    func detach(from rig: PlaybackRig) {
        try? rig.graph.removeRenderNotify(refCon: UnsafeMutableRawPointer(master.tap))
        for index in parts.indices { taps?.attach(nil, toPart: index) }
    }

    /// Finishes every file (renamed into place, with what fitted when the disk failed). Returns what each
    /// holds, the master's first. Throws only when a file cannot be put in place.
    func finish() throws(RigError) -> [RecordingOutcome] {
        var done: [RecordingOutcome] = []
        var failure: RigError?
        for recorder in [master] + parts {
            do {
                done.append(try recorder.finish())
            } catch {
                failure = failure ?? RigError("recording failed: \(error.message)")
            }
        }
        if let failure { throw failure }
        return done
    }
}

/// The one rule for where a recording may go — `aulos play --record`, `record start` on the control socket
/// and the panel: never over a file that exists (unless the user says so), never a folder, never a folder
/// that cannot be written. Checked before playing, so a take is not lost at its end.
///
/// Threads: any.
public enum RecordingTarget {
    /// Why `path` cannot be recorded to, as one line ending in `advice` for a file that exists; nil if it can.
    public static func refusal(for path: String, replacing: Bool, advice: String) -> String? {
        var info = stat()
        if stat(path, &info) == 0 {
            if info.st_mode & S_IFMT == S_IFDIR {
                return "\(path) is a folder: record to a file in it (\(path)/take.wav) or name another file"
            }
            if !replacing { return "\(path) exists; \(advice)" }
        }
        let folder = FileContents.folder(of: path).isEmpty ? "/" : FileContents.folder(of: path)
        guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            return "cannot record to \(path): there is no folder \(folder); create it or record elsewhere"
        }
        guard access(folder, W_OK) == 0 else {
            return "cannot record to \(path): \(folder) cannot be written (\(String(cString: strerror(errno)))); "
                + "record elsewhere"
        }
        return nil
    }

    /// The first of `take-2.wav`, `take-3.wav`, … that does not exist: where a recording goes on when the
    /// rig it recorded is rebuilt.
    public static func continuation(of path: String) -> String {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let dot = path[slash...].lastIndex(of: ".") ?? path.endIndex
        var number = 2
        while access(path[..<dot] + "-\(number)" + path[dot...], F_OK) == 0 { number += 1 }
        return path[..<dot] + "-\(number)" + path[dot...]
    }
}
