import AulosAudioFile
import AulosCore
import AulosRig

/// One recording while playing: the master output into its file and, when the rig taps its parts
/// (`--record-parts`), every part's own output into a file beside it (`PartFileNames`), all started on the
/// same cycle boundary's side of the control thread and stopped together.
///
/// Threads: the control thread; the recorders' rings are fed on the render thread.
final class Recording {
    let master: Recorder
    /// One per part, in the rig's part order; empty when the rig does not tap its parts.
    let parts: [Recorder]
    private let taps: PartTaps?

    /// Opens every file and attaches the recorders to the rig. Nothing is left attached when it throws.
    init(to path: String, rig: PlaybackRig, sampleRate: Double) throws(RigError) {
        do {
            master = try Recorder(path: path, sampleRate: sampleRate)
            parts = try Self.files(for: path, rig: rig).dropFirst().map { path throws(AudioFileError) in
                try Recorder(path: path, sampleRate: sampleRate)
            }
        } catch {
            throw RigError("cannot record: \(error.message)")
        }
        taps = rig.partTaps
        do { try rig.graph.addRenderNotify(master.renderNotify) } catch {
            throw RigError("cannot record: \(error.detail)")
        }
        for (index, part) in parts.enumerated() { taps?.attach(part.sliceSink, toPart: index) }
    }

    /// The files a recording to `path` writes: the master's, then each part's when the rig taps them.
    static func files(for path: String, rig: PlaybackRig) -> [String] {
        [path] + (rig.partTaps == nil ? [] : PartFileNames.paths(beside: path, parts: rig.partNames))
    }

    /// Takes the recorders off the rig: from the next cycle nothing more reaches them. The render thread may
    /// still be in a cycle that feeds them, so keep the recording until that cycle is surely over.
    func detach(from rig: PlaybackRig) {
        try? rig.graph.removeRenderNotify(refCon: UnsafeMutableRawPointer(master.tap))
        for index in parts.indices { taps?.attach(nil, toPart: index) }
    }

    /// Finishes every file (renamed into place). Returns what each holds, the master's first.
    func finish() throws(RigError) -> [(path: String, frames: Int64, dropped: Int)] {
        var done: [(path: String, frames: Int64, dropped: Int)] = []
        var failure: RigError?
        for recorder in [master] + parts {
            do {
                done.append((recorder.path, try recorder.finish(), recorder.droppedFrames))
            } catch {
                failure = failure ?? RigError("recording failed: \(error.message)")
            }
        }
        if let failure { throw failure }
        return done
    }
}
