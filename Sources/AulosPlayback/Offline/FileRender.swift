import AulosAudioFile
import AulosCore
import AulosFluid
import AulosMIDI
import AulosRig
import AulosUnits

#if canImport(Glibc)
import Glibc
#endif

/// Where `aulos render` writes, and in what sample format.
public struct RenderOutput: Sendable {
    public var path: String
    public var sample: SampleFormat

    public init(path: String, sample: SampleFormat = .int16) {
        self.path = path
        self.sample = sample
    }
}

/// What a render did, for the one-line summary.
public struct RenderSummary: Sendable {
    public var frames: Int64
    public var events: Int
    public var format: StreamFormat
    public var instrumentDescription: String
    public var notes: [String]
    public var slice: UInt32
}

/// Scripted playback: a MIDI file or score → the rig → Generic Output → WAV/FLAC, offline and
/// deterministic (the same input gives the same bytes).
///
/// Threads: the control thread; the offline renderer pulls on the same thread.
public enum FileRender {
    public static func run(_ options: PlaybackOptions, to output: RenderOutput, progress: (Double) -> Void = { _ in })
        throws -> RenderSummary
    {
        let set = options.rigSet(playingFile: true)
        let rate = set.entries[0].rig.sampleRate
        let input = try InputFile.load(orDemo: options.input, sampleRate: rate)
        let rig = try PlaybackRig(
            set: set, fileSample: output.sample, tempoMap: options.tempoMap(of: input), arpeggio: options.arpeggio)
        defer { rig.close() }
        let routed = try RoutedInput(input, through: rig)
        rig.timelinePlayer.play(routed.timeline)
        var actions = RoutedActions(routed)

        let writer = try AudioFileWriter(path: output.path, format: rig.fileFormat)
        let renderer = try OfflineRenderer(graph: rig.graph, sliceFrames: rig.rig.slice)
        let total = max(input.end, routed.timeline.lastSampleTime) + Int64((options.tail * rate).rounded())
        do {
            // In segments that end where a rig switch or preset change is due, so each starts a slice.
            var position: Int64 = 0
            while position < total {
                let next = actions.applyBoundaries(to: rig, before: position + 1) ?? total
                let end = min(total, max(next, position + 1))
                try renderer.render(frameCount: end - position, to: writer) { start, frames in
                    actions.applyParameters(to: rig, before: start + Int64(frames), sliceStart: start)
                    progress(Double(start + Int64(frames)) / Double(max(1, total)))
                }
                position = end
            }
            try writer.close()
        } catch {
            unlink(output.path)
            throw error
        }
        var notes = routed.notes
        if rig.scheduler.droppedCount > 0 {
            notes.append("\(rig.scheduler.droppedCount) events dropped (too many in one slice)")
        }
        return RenderSummary(
            frames: total, events: routed.timeline.count, format: rig.fileFormat, instrumentDescription: describe(rig),
            notes: notes, slice: rig.rig.slice)
    }

    /// "synth (Warm Pad) + sampler (AulosGM.sf2), EQ Rock": what played, for the summary.
    static func describe(_ rig: PlaybackRig) -> String {
        let parts = rig.parts.map { loaded in
            switch loaded.instrument {
            case let synth as OscillatorSynthUnit: "synth (\(synth.currentPreset?.name ?? "default"))"
            case let sampler as FluidSynthSamplerUnit:
                "sampler (\((sampler.soundFontPath ?? "").split(separator: "/").last ?? ""))"
            default: loaded.part.name
            }
        }
        return parts.joined(separator: " + ") + (rig.rig.eq.map { ", EQ \($0)" } ?? "")
    }
}
