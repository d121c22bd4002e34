import ArgumentParser
import AulosCore
import AulosPlayback
import AulosRig
import AulosUnits
import Foundation

/// What plays and with what — an instrument and its sound, or a rig file; the master EQ; tempo and
/// arpeggio: shared by `render` and `play`.
struct InstrumentOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Instrument: synth, sampler, sfz:PATH (an SFZ library's .sfz file), or lv2:URI (an LV2 instrument aulos "
                + "units --lv2 lists). Default: the sampler "
                + "for a MIDI file (General MIDI samples, as fluidsynth plays it), the synth for a score, the demo "
                + "and live play."))
    var instrument: String?

    /// The instrument asked for, and the LV2 plugin's URI for lv2:URI; without --instrument, the sampler for
    /// a MIDI file (or with --soundfont), the synth otherwise.
    func choice(input: String?) -> (InstrumentChoice, plugin: String?) {
        if let instrument { return InstrumentChoice.parse(instrument) ?? (.synth, nil) }
        if soundfont != nil { return (.sampler, nil) }
        if preset != nil || mpe != nil { return (.synth, nil) }
        // A MIDI file, or a playlist folder (of MIDI files, mostly General MIDI), plays on the sampler.
        if let input, InputFile.isMIDIFile(path: input) || FileContents.isFolder(input) { return (.sampler, nil) }
        return (.synth, nil)
    }

    @Option(
        help: ArgumentHelp(
            "SoundFont for the sampler. Default: $AULOS_SOUNDFONT, then your or the system's General MIDI font "
                + "(~/.local/share/sounds/sf2/default-GM.sf2, /usr/share/sounds/sf2/default-GM.sf2: what fluidsynth "
                + "plays), then the bundled AulosGM.sf2."))
    var soundfont: String?

    @Option(
        parsing: .unconditional,
        help: "Program 0…127: the synth preset number, or for the sampler a program for every channel but 10.")
    var program: Int?

    @Option(help: "Synth preset by name (see presets/synth).")
    var preset: String?

    @Option(
        name: .customLong("rig"),
        help: ArgumentHelp(
            "A rig file (docs/rigs.md): parts, mixer and EQ, instead of one instrument; or a factory rig by name "
                + "(aulos presets lists them: band, stage, …)."),
        transform: SearchPaths.rigFile)
    var rigFile: String?

    @Option(help: "Master iPod-style EQ preset, by name or number (see aulos presets).")
    var eq: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Output gain in dB, -40…24, before the limiter (default: the rig's output.gain, 0).", valueName: "dB"))
    var gain: Double?

    @Flag(
        help: ArgumentHelp(
            "No true-peak limiter at the end of the master chain (on by default: it keeps the output at or below "
                + "-1 dBTP and adds 1.3 ms of latency); float output then carries values past full scale as they are."
        ))
    var noLimiter = false

    @Option(help: "A Scala scale (.scl) the synth or sampler plays in (with a rig: every synth and sampler part).")
    var tuning: String?

    @Option(
        help: ArgumentHelp(
            "MPE zones for the synth: lower (channel 1 the manager, 2–16 the notes), upper, or 'lower 7, upper 7'.",
            valueName: "zones"))
    var mpe: String?

    @Option(help: "A Scala keyboard mapping (.kbm) for --tuning: which keys play, the reference key and pitch.")
    var keymap: String?

    @Flag(
        help: ArgumentHelp(
            "No reverb or chorus: without a rig, no General MIDI returns (CC 91/93); with one, its returns, sends "
                + "and master effects are left out."))
    var dry = false

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Transport tempo in BPM for tempo-synced units (default: the input's tempo map); the input's notes keep "
                + "their own timing.")
    )
    var tempo: Double?

    @Option(
        help: ArgumentHelp(
            "Arpeggiate synth parts: MODE:RATE, MODE up|down|updown|random|played, RATE 1/4 1/4t 1/8 1/8t 1/16 1/16t "
                + "1/32 1/32t.")
    )
    var arpeggio: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The longest a file may play or render, in seconds (default 86400, a day; at most 604800, a week).",
            valueName: "seconds"))
    var maxDuration: Double = PlaybackOptions.defaultMaximumDuration

    @Flag(
        help: ArgumentHelp(
            "Read a MIDI file strictly: any deviation from the specification is an error naming the track and "
                + "byte (default: read past it as other players do, with a warning)."))
    var strict = false

    func validate() throws {
        if let instrument, InstrumentChoice.parse(instrument) == nil {
            throw ValidationError("--instrument takes synth, sampler, sfz:PATH or lv2:URI, not '\(instrument)'")
        }
        // Which instrument the flags name by themselves (the input decides only when they name none).
        let choice = choice(input: nil)
        if !(maxDuration > 0 && maxDuration <= PlaybackOptions.longestMaximumDuration) {
            let longest = PlaybackOptions.longestMaximumDuration.clean
            throw ValidationError(
                "--max-duration must be more than 0 and at most \(longest) seconds, not \(maxDuration.clean)")
        }
        if let program, !(0...127).contains(program) {
            throw ValidationError("--program must be 0…127, not \(program)")
        }
        if soundfont != nil && choice.0 != .sampler {
            throw ValidationError("--soundfont goes with --instrument sampler")
        }
        if preset != nil && choice.0 != .synth {
            throw ValidationError("--preset names a synth preset; the sampler takes --program")
        }
        if let gain, !(gain >= -40 && gain <= 24) {
            throw ValidationError("--gain must be between -40 and 24 dB, not \(gain.clean)")
        }
        if let tempo, !(tempo >= 1 && tempo <= 1000) {
            throw ValidationError("--tempo must be between 1 and 1000 BPM, not \(tempo.clean)")
        }
        if let arpeggio, Arpeggio(parsing: arpeggio) == nil {
            throw ValidationError(
                "--arpeggio takes MODE:RATE like up:1/16 (modes up, down, updown, random, played), not '\(arpeggio)'")
        }
        if let mpe {
            if case .failure(let problem) = MPELayout.parse(mpe) { throw ValidationError("--mpe: \(problem.message)") }
            if rigFile != nil || choice.0 != .synth {
                throw ValidationError("--mpe goes with the synth without a rig (a rig part takes mpe:)")
            }
        }
        if keymap != nil && tuning == nil {
            throw ValidationError("--keymap goes with --tuning (a .scl file)")
        }
        if tuning != nil && rigFile == nil && choice.0 == .lv2 {
            throw ValidationError(
                "--tuning goes with the synth or the sampler (an LV2 instrument keeps its own tuning)")
        }
        if rigFile != nil && (soundfont != nil || program != nil || preset != nil) {
            throw ValidationError(
                "--rig describes its own instruments; --soundfont, --program and --preset go without it")
        }
    }

    /// The playback options these flags describe (loading the rig file).
    func playbackOptions(input: String?, slicing: SliceOptions) throws -> PlaybackOptions {
        var options = PlaybackOptions()
        options.input = input
        (options.instrument, options.plugin) = choice(input: input)
        options.soundFont = soundfont
        options.program = program
        options.preset = preset
        options.sampleRate = slicing.sampleRate
        options.slice = slicing.slice.map(UInt32.init)
        if let rigFile {
            // Neither a file nor a factory rig (`SearchPaths.rigFile` left the name as it was): say what there is.
            if !rigFile.contains("/") && !FileManager.default.fileExists(atPath: rigFile) {
                throw RigError(
                    "no rig file or factory rig '\(rigFile)' (factory rigs: "
                        + SearchPaths.rigs.joined(separator: ", ") + ")")
            }
            let set = try RigSet.load(rigFile)
            if set.entries.count == 1 && set.controlChannel == nil {
                options.rig = set.entries[0].rig
            } else {
                options.rigSet = set
            }
        }
        options.eq = try eq.map(checkedEQ)
        options.gain = gain.map(Float.init)
        if noLimiter { options.limiter = false }
        (options.tuning, options.keymap) = (tuning, keymap)
        if let mpe, case .success(let layout) = MPELayout.parse(mpe) { options.mpe = layout }
        options.dry = dry
        options.tempo = tempo
        options.arpeggio = arpeggio.flatMap(Arpeggio.init(parsing:))
        options.maximumDuration = maxDuration
        options.midiReading = strict ? .strict : .forgiving
        return options
    }
}

/// An EQ preset by name or number as its curve's name, or a one-line error listing where to find them.
func checkedEQ(_ name: String) throws(CommandError) -> String {
    guard let index = IPodEQUnit.curveIndex(name) else {
        throw CommandError("no EQ preset '\(name)' (see aulos presets)")
    }
    return IPodEQUnit.curves[index].name
}
