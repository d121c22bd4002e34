import AulosAudioFile
import AulosCore
import AulosFluid
import AulosMIDI
import AulosRig
import AulosUnits
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where `aulos render` writes, and in what sample format.
public struct RenderOutput: Sendable {
    public var path: String
    public var sample: SampleFormat
    /// Each part's own output too, in a file beside `path` (`PartFileNames`).
    public var parts: Bool

    public init(path: String, sample: SampleFormat = .int16, parts: Bool = false) {
        self.path = path
        self.sample = sample
        self.parts = parts
    }
}

/// What a render did, for the one-line summary.
public struct RenderSummary: Sendable {
    /// Frames written: all of them, or those rendered before an interruption.
    public var frames: Int64
    /// Frames the whole input would have taken.
    public var plannedFrames: Int64
    public var events: Int
    public var format: StreamFormat
    public var instrumentDescription: String
    public var notes: [String]
    public var slice: UInt32
    /// Stopped early (SIGINT/SIGTERM): the file holds the frames rendered until then, and is valid.
    public var interrupted: Bool { frames < plannedFrames }
    /// Written as RF64: the WAV would have passed 4 GiB.
    public var isRF64: Bool
    /// What the user should know but did not stop the render: broken samples, a sampler that stayed silent.
    public var warnings: [String]
    /// The parts' own files (`RenderOutput.parts`), in part order.
    public var partFiles: [String] = []
    /// The General MIDI programs the input sounded ("Acoustic Grand Piano, Fingered Bass and drums").
    public var programsHeard = ""
}

/// Scripted playback: a MIDI file or score → the rig → Generic Output → WAV/FLAC, offline and
/// deterministic (the same input gives the same bytes).
///
/// Threads: the control thread; the offline renderer pulls on the same thread.
public enum FileRender {
    /// Renders `options.input` to `output`. The file appears only when it is whole (it is written beside
    /// and renamed into place; a failure leaves what was there). `stopRequested` is asked before every
    /// slice: when it says yes, the frames rendered so far are finished as a valid file and the summary
    /// says the render was interrupted.
    public static func run(
        _ options: PlaybackOptions, to output: RenderOutput, progress: (Double) -> Void = { _ in },
        stopRequested: () -> Bool = { false }
    ) throws -> RenderSummary {
        let set = options.playedRigSet()
        let rate = set.entries[0].rig.sampleRate
        try refuseOverwritingAnInput(output.path, options: options, set: set)
        let input = try InputFile.load(orDemo: options.input, sampleRate: rate, reading: options.midiReading)
        let tail = Int64((options.tail * rate).rounded())
        let fileType = AudioFileType(path: output.path)
        try options.checkPlayingTime(
            frames: input.end + tail, sampleRate: rate,
            output: (Int(output.sample.bytesPerSample) * PlaybackRig.outputChannels, fileType == .flac))
        let rig = try PlaybackRig(
            set: set, fileSample: output.sample, tempoMap: options.tempoMap(of: input), arpeggio: options.arpeggio,
            tappingParts: output.parts)
        defer { rig.close() }
        let routed = try RoutedInput(input, through: rig)
        rig.timelinePlayer.play(routed.timeline)
        var actions = RoutedActions(routed)

        let renderer = try OfflineRenderer(graph: rig.graph, sliceFrames: rig.rig.slice)
        let total = max(input.end, routed.timeline.lastSampleTime) + tail
        // The output stage looks ahead: render that much further; the renderer leaves it out of the file.
        let rendered = total + renderer.leadingFramesToDrop
        // Dropped without close() on any error below, the writer removes its temporary file: the user's
        // file is never half-written, nor deleted.
        let writer = try AudioFileWriter(path: output.path, format: rig.fileFormat, expectedFrames: total)
        let partFiles = output.parts ? PartFileNames.paths(beside: output.path, parts: rig.partNames) : []
        let partSinks = try partFiles.map { path throws(AudioFileError) in
            try PartFileSink(path: path, format: rig.fileFormat, sliceFrames: rig.rig.slice, expectedFrames: total)
        }
        for (index, part) in partSinks.enumerated() { rig.partTaps?.attach(part.sink, toPart: index) }
        // Taken off before the sinks go, whatever happens below.
        defer { for index in partSinks.indices { rig.partTaps?.attach(nil, toPart: index) } }
        var endedQuiet = false
        do {
            // In segments that end where a rig switch or preset change is due, so each starts a slice.
            var position: Int64 = 0
            // With a level to end at, the tail is rendered in steps of 50 ms once the input has played, and
            // ends after `quietTail` seconds below the level.
            let music = rendered - tail
            let step = Int64(0.05 * rate)
            var quietFrames: Int64 = 0
            let floor = options.tailEndsBelow.map { Float(pow(10, Double($0) / 20)) }
            _ = rig.outputStage.takeRecentPeak()
            while position < rendered {
                if let floor, position > music {
                    quietFrames = rig.outputStage.takeRecentPeak() < floor ? quietFrames + step : 0
                    if Double(quietFrames) >= PlaybackOptions.quietTail * rate {
                        endedQuiet = true
                        break
                    }
                }
                let next = min(
                    actions.applyBoundaries(to: rig, before: position + 1) ?? rendered,
                    floor == nil ? rendered : position >= music ? position + step : music)
                let end = min(rendered, max(next, position + 1))
                try renderer.render(frameCount: end - position, to: writer) { start, frames in
                    if stopRequested() { throw Interrupted() }
                    if let failure = partSinks.lazy.compactMap(\.failure).first { throw failure }
                    actions.applyParameters(to: rig, before: start + Int64(frames), sliceStart: start)
                    // An LV2 plugin's program changes of the slice before select its presets from this one.
                    rig.applyPluginProgramChanges()
                    progress(Double(start + Int64(frames)) / Double(max(1, rendered)))
                }
                position = end
            }
        } catch is Interrupted {
            // Stopped: what was rendered becomes the file, valid and complete up to here.
        }
        if let failure = partSinks.lazy.compactMap(\.failure).first { throw failure }
        try writer.close()
        for part in partSinks { try part.writer.close() }
        var heard = GeneralMIDI.ProgramsHeard()
        for event in rig.prelude {
            heard.take(ChannelMessage(status: event.status, data1: event.data1, data2: event.data2))
        }
        for scheduled in input.messages { if let message = ChannelMessage(scheduled.message) { heard.take(message) } }
        var notes = routed.notes
        var warnings = input.warnings + rig.warnings + rig.silentSamplers
        let stage = rig.outputStage.activity
        notes.append(stage.summary(limiting: rig.outputStage.limiting, frames: writer.framesWritten))
        if stage.fullScaleSamples > 0 {
            warnings.append(
                "\(stage.fullScaleSamples) samples at or past full scale with the limiter off: "
                    + (output.sample == .float32
                        ? "kept as they are in the float file; they clip on a device"
                        : "clipped in the file; turn it down with --gain, or leave the limiter on"))
        }
        // Offline, an SFZ voice waits for its streamed data; one that waited the streams' limit in vain played
        // silence instead of hanging the render — say so: the file is not what the score asks.
        if let streaming = SampleStreamingStatus.total(rig.sampleStreaming), streaming.underruns > 0 {
            warnings.append(
                "SFZ: \(streaming.lateFrames) frames of streamed samples did not arrive from disk in time and are "
                    + "silent in the file; render again, and report it if it repeats")
        }
        if rig.scheduler.droppedCount > 0 {
            notes.append("\(rig.scheduler.droppedCount) events dropped (too many in one slice)")
        }
        if rig.timelinePlayer.lateEvents > 0 {
            let late = Double(rig.timelinePlayer.worstLateFrames) / rig.rig.sampleRate * 1000
            notes.append(
                "\(rig.timelinePlayer.lateEvents) events played up to \(String(format: "%.1f", late)) ms late (more "
                    + "than a part takes in one slice; none dropped)")
        }
        return RenderSummary(
            frames: writer.framesWritten, plannedFrames: endedQuiet ? writer.framesWritten : total,
            events: routed.timeline.count, format: rig.fileFormat,
            instrumentDescription: describe(rig), notes: notes, slice: rig.rig.slice, isRF64: writer.isRF64,
            warnings: warnings, partFiles: partFiles,
            // General MIDI's names say nothing of what an SFZ library plays for a program (its loprog/hiprog).
            programsHeard: rig.parts.allSatisfy { $0.part.instrument == .sfz } ? "" : heard.description())
    }

    private struct Interrupted: Error {}

    /// A render must not write over what it reads: `aulos render song.wav` (a score named .wav) would
    /// otherwise replace its own input, and `-o` naming the SoundFont would destroy it.
    static func refuseOverwritingAnInput(_ output: String, options: PlaybackOptions, set: RigSet) throws(InputFileError)
    {
        let inputs = [options.input].compactMap { $0 } + set.rigs.flatMap { $0.parts.compactMap(\.soundFont) }
        for input in inputs where FileContents.isSameFile(input, output) || input == output {
            throw InputFileError(
                "the output \(output) is also an input (\(input)); give the output another name with -o")
        }
    }

    /// "FluidR3_GM.sf2, the system's General MIDI font": the font's file name (through a link such as Debian's
    /// default-GM.sf2 alternative) and, when nothing named it, why it was chosen.
    static func describeFont(_ path: String?, named: String?) -> String {
        guard let path else { return "no SoundFont" }
        let file = URL(fileURLWithPath: path).resolvingSymlinksInPath().lastPathComponent
        guard named == nil, let choice = SearchPaths.soundFontChoice, choice.path == path else { return file }
        return "\(file), \(choice.reason)"
    }

    /// "synth (Warm Pad) + sampler (AulosGM.sf2), EQ Rock": what played, for the summary.
    static func describe(_ rig: PlaybackRig) -> String {
        let parts = rig.parts.map { loaded in
            switch loaded.instrument {
            // Without a preset or program of its own, the synth plays each channel's General MIDI program.
            case let synth as OscillatorSynthUnit:
                loaded.part.preset == nil && loaded.part.program == nil && loaded.part.channels.count > 1
                    ? "synth (General MIDI)" : "synth (\(synth.currentPreset?.name ?? "default"))"
            case let sampler as FluidSynthSamplerUnit:
                "sampler (\(describeFont(sampler.soundFontPath, named: loaded.part.soundFont)))"
            default: "\(loaded.part.instrument.rawValue) (\(loaded.instrument.name))"
            }
        }
        return parts.joined(separator: " + ") + (rig.rig.eq.map { ", EQ \($0)" } ?? "")
    }
}
