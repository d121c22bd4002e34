import ArgumentParser
import AulosAudioFile
import AulosCore
import AulosPlayback

#if canImport(Glibc)
import Glibc
#endif

/// `aulos render`: a MIDI file or score (or the demo piece) rendered offline to WAV or FLAC.
struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a MIDI file or score offline to WAV or FLAC (the built-in demo piece without INPUT).",
        discussion: """
            INPUT is a Standard MIDI File (format 0, 1 or 2; also karaoke .kar and RIFF .rmi files) or a \
            score (docs/score.md). A MIDI file that deviates from the specification is read as other players \
            read it, with a warning for each kind of deviation (--strict makes it an error; aulos check lists \
            them). The output type comes from its extension (.wav or .flac). Rendering is faster than real \
            time and deterministic: the same input and options give the same bytes.

            A MIDI file plays on the sampler by default, with the General MIDI SoundFont fluidsynth would use \
            (the summary names the font and why it was chosen); a score and the demo play on the synth. Both \
            play all 16 channels: program changes pick each channel's sound, channel 10 plays drums. The output \
            ends in a true-peak limiter at -1 dBTP (--no-limiter; --gain to turn the whole mix up or down), and \
            the summary says the peak and how much the limiter did.
            """)

    @Argument(help: "A .mid file or a score; omit for the built-in demo piece.")
    var input: String?

    @Option(name: .shortAndLong, help: "Output file (.wav or .flac). Default: INPUT with .wav, or demo.wav.")
    var output: String?

    @Option(help: "Sample format: float, s16 or s24 (FLAC: s16 or s24).")
    var format: String = "s16"

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Seconds rendered after the last event, exactly. Default: until the output has stayed below -90 dBFS "
                + "for 0.2 s (release tails and reverb die away, as fluidsynth renders), at most 30 s."))
    var tail: Double?

    @Flag(
        help: ArgumentHelp(
            "Also write each part's own output beside the file (OUT.PART.wav): after the part's effects and EQ, "
                + "before its volume, pan and sends."))
    var parts = false

    @OptionGroup var instrument: InstrumentOptions

    @OptionGroup var slicing: SliceOptions

    func validate() throws {
        if let output, AudioFileType(path: output) == nil {
            throw ValidationError("--output must end in .wav or .flac, not '\(output)'")
        }
        guard sampleFormat != nil else {
            throw ValidationError("--format must be float, s16 or s24, not '\(format)'")
        }
        if let tail, !(tail >= 0 && tail <= 60) {
            throw ValidationError("--tail must be between 0 and 60 seconds, not \(tail.clean)")
        }
    }

    /// The most a tail that ends at -90 dBFS may last: a sustained sample or a long delay must not run on.
    static let longestTail = 30.0

    var sampleFormat: SampleFormat? {
        switch format.lowercased() {
        case "float", "f32", "float32": .float32
        case "s16", "int16", "16": .int16
        case "s24", "int24", "24": .int24
        default: nil
        }
    }

    var outputPath: String {
        if let output { return output }
        guard let input else { return "demo.wav" }
        let name = input.split(separator: "/").last.map(String.init) ?? input
        let stem = name.contains(".") ? String(name[..<name.lastIndex(of: ".")!]) : name
        return stem + ".wav"
    }

    func run() throws {
        var options = try instrument.playbackOptions(input: input, slicing: slicing)
        options.tail = tail ?? Self.longestTail
        if tail == nil { options.tailEndsBelow = -90 }
        let bar = ProgressBar()
        let started = ContinuousClock.now
        // SIGINT, SIGTERM or a closed terminal stop the render with a valid file of what was rendered.
        StopSignals.catchThem(hangupStops: true)
        defer { StopSignals.release() }
        let summary = try FileRender.run(
            options, to: RenderOutput(path: outputPath, sample: sampleFormat!, parts: parts),
            progress: { bar.update($0) },
            stopRequested: { StopSignals.stopRequested != 0 })
        bar.finish()
        for warning in summary.warnings { printError("aulos: warning: \(warning)") }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(summary.frames) / summary.format.sampleRate
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let speed = wall > 0 ? "\(Int(seconds / wall))× real time" : "instant"
        var line = "wrote \(outputPath): \(summary.frames) frames (\(seconds.fixed(2)) s), "
        line += "\(summary.events) event\(summary.events == 1 ? "" : "s"), "
        line +=
            "\(summary.instrumentDescription), \(summary.format.compactDescription)"
            + "\(summary.isRF64 ? " as RF64 (a plain WAV holds at most 4 GiB)" : ""), \(summary.slice)-frame slices, "
            + "\(speed)"
        if !summary.programsHeard.isEmpty { line += "; programs heard: \(summary.programsHeard)" }
        if !summary.notes.isEmpty { line += "; " + summary.notes.joined(separator: "; ") }
        if !summary.partFiles.isEmpty { line += "; parts: " + summary.partFiles.joined(separator: ", ") }
        guard summary.interrupted else { return print(line) }
        let planned = Double(summary.plannedFrames) / summary.format.sampleRate
        let signal = [SIGINT: "SIGINT", SIGHUP: "SIGHUP"][StopSignals.stopSignal] ?? "SIGTERM"
        print(
            "stopped by \(signal) after \(seconds.hoursMinutesSeconds) of \(planned.hoursMinutesSeconds): "
                + "the file is valid and holds what was rendered; " + line)
        // Scripts must not take a partial render for a whole one: exit as the signal would have (128 + it).
        throw ExitCode(128 + StopSignals.stopSignal)
    }
}
