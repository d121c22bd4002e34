import ArgumentParser
import AulosAudioFile
import AulosCore
import AulosHost
import AulosSoundFont
import AulosUnits

#if canImport(Glibc)
import Glibc
#endif

/// The `aulos` command: one subcommand per thing a user does (list units, print a graph, render, play, …).
struct Aulos: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "aulos",
        abstract: "A real-time MIDI synthesizer and instrument host for Linux, on Core Audio's audio-unit model.",
        version: version,
        subcommands: [Units.self, Graph.self, Render.self, Play.self, Devices.self, Presets.self, SoundFont.self,
                      Status.self, Set.self, Learn.self, Service.self])
}

/// Options shared by commands that build the default rig.
struct RigOptions: ParsableArguments {
    @Option(help: "Sample rate in Hz.")
    var sampleRate: Double = 48_000

    @Option(help: "Frames per render slice (1...4096). Sets MaximumFramesPerSlice on every unit.")
    var slice: UInt32 = 256

    func validate() throws {
        guard sampleRate >= 8_000, sampleRate <= 192_000 else {
            throw ValidationError("--sample-rate must be between 8000 and 192000 Hz, not \(sampleRate)")
        }
        guard (1...4096).contains(slice) else {
            throw ValidationError("--slice must be between 1 and 4096 frames, not \(slice)")
        }
    }
}

/// What to play and with what: shared by `render` and `play`.
struct PlaybackOptions: ParsableArguments {
    @Option(help: "Instrument: synth or sampler.")
    var instrument: InstrumentChoice = .synth

    @Option(help: "SoundFont for the sampler (default: the bundled AulosGM.sf2).")
    var soundfont: String?

    @Option(help: "Program 0…127: the synth preset number, or for the sampler a program for every channel but 10.")
    var program: Int?

    @Option(help: "Synth preset by name (see presets/synth).")
    var preset: String?

    @Option(name: .customLong("rig"), help: "A rig file (docs/rigs.md): parts, mixer and EQ, instead of one instrument.")
    var rigFile: String?

    @Option(help: "Master iPod-style EQ preset, by name or number (see aulos presets).")
    var eq: String?

    @Option(help: "Transport tempo in BPM for tempo-synced units (default: the input's tempo map); the input's notes keep their own timing.")
    var tempo: Double?

    @Option(help: "Arpeggiate synth parts: MODE:RATE, MODE up|down|updown|random|played, RATE 1/4 1/4t 1/8 1/8t 1/16 1/16t 1/32 1/32t.")
    var arpeggio: String?

    func validate() throws {
        if let program, !(0...127).contains(program) {
            throw ValidationError("--program must be 0…127, not \(program)")
        }
        if soundfont != nil && instrument != .sampler {
            throw ValidationError("--soundfont goes with --instrument sampler")
        }
        if let tempo, !(tempo >= 1 && tempo <= 1000) {
            throw ValidationError("--tempo must be between 1 and 1000 BPM, not \(tempo)")
        }
        if let arpeggio, Arpeggio(parsing: arpeggio) == nil {
            throw ValidationError("--arpeggio takes MODE:RATE like up:1/16 (modes up, down, updown, random, played), not '\(arpeggio)'")
        }
        if rigFile != nil && (soundfont != nil || program != nil || preset != nil) {
            throw ValidationError("--rig describes its own instruments; --soundfont, --program and --preset go without it")
        }
    }

    /// The host's options for these flags (loading the rig file and checking the EQ name).
    func renderOptions(output: String, input: String?, rig: RigOptions) throws -> RenderOptions {
        var options = RenderOptions(output: output)
        options.input = input
        options.instrument = instrument
        options.soundFont = soundfont
        options.program = program
        options.preset = preset
        options.sampleRate = rig.sampleRate
        options.slice = rig.slice
        if let rigFile {
            let set = try RigSet.load(rigFile)
            if set.entries.count == 1 && set.controlChannel == nil { options.rig = set.entries[0].rig } else { options.rigSet = set }
        }
        options.eq = try eq.map { name throws(AudioUnitError) in try checkedEQ(name) }
        options.tempo = tempo
        options.arpeggio = arpeggio.flatMap(Arpeggio.init(parsing:))
        return options
    }
}

extension Aulos {
    struct Units: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List every registered audio unit: type, subtype, manufacturer, version, name.")

        @Option(help: "Only units matching type[/subtype[/manufacturer]]; '*' is a wildcard (e.g. auou/*).")
        var matching: String?

        func run() throws {
            var pattern = ComponentDescription.any
            if let matching {
                guard let parsed = ComponentDescription(parsing: matching) else {
                    throw ValidationError("--matching takes four-character codes like auou/genr/appl, not '\(matching)'")
                }
                pattern = parsed
            }
            let registry = HostComponents.registry()
            var component = registry.findNext(after: nil, matching: pattern)
            print("TYPE SUBT MANU  VERSION  NAME")
            while let found = component {
                let d = found.componentDescription
                let version = found.versionString.padding(to: 8)
                print("\(d.type) \(d.subtype) \(d.manufacturer)  \(version) \(found.name)")
                component = registry.findNext(after: found, matching: pattern)
            }
        }
    }

    struct Graph: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the playback rig's processing graph (like CAShow).")

        @OptionGroup var rigOptions: RigOptions

        @Option(help: "Instrument: synth or sampler.")
        var instrument: InstrumentChoice = .synth

        @Option(help: "A rig file (docs/rigs.md) instead of one instrument.")
        var rig: String?

        @Option(help: "Master iPod-style EQ preset (see aulos presets).")
        var eq: String?

        func run() throws {
            var options = RenderOptions(output: "/dev/null")
            options.instrument = instrument
            options.sampleRate = rigOptions.sampleRate
            options.slice = rigOptions.slice
            options.rigSet = try self.rig.map { path throws(AudioUnitError) in try RigSet.load(path) }
            options.eq = try eq.map { name throws(AudioUnitError) in try checkedEQ(name) }
            let playback = try PlaybackRig(set: options.effectiveRigSet)
            defer { playback.close() }
            print(playback.graph.dump())
        }
    }

    struct Render: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Render a MIDI file or score offline to WAV or FLAC (the built-in demo piece without INPUT).",
            discussion: """
                INPUT is a Standard MIDI File (type 0 or 1) or a score (docs/score.md). The output type comes \
                from its extension (.wav or .flac). Rendering is faster than real time and deterministic: the \
                same input and options give the same bytes. With --instrument synth, channel 10 (GM drums) \
                and program changes are skipped: the synth plays one preset (--preset or --program).
                """)

        @Argument(help: "A .mid file or a score; omit for the built-in demo piece.")
        var input: String?

        @Option(name: .shortAndLong, help: "Output file (.wav or .flac). Default: INPUT with .wav, or demo.wav.")
        var output: String?

        @Option(help: "Sample format: float, s16 or s24 (FLAC: s16 or s24).")
        var format: String = "s16"

        @Option(help: "Seconds rendered after the last event (release tails).")
        var tail: Double = 1.5

        @OptionGroup var playback: PlaybackOptions

        @OptionGroup var rig: RigOptions

        func validate() throws {
            if let output, AudioFileType(path: output) == nil {
                throw ValidationError("--output must end in .wav or .flac, not '\(output)'")
            }
            guard sampleFormat != nil else {
                throw ValidationError("--format must be float, s16 or s24, not '\(format)'")
            }
            guard tail >= 0, tail <= 60 else { throw ValidationError("--tail must be between 0 and 60 seconds, not \(tail)") }
        }

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
            var options = try playback.renderOptions(output: outputPath, input: input, rig: rig)
            options.tail = tail
            options.sample = sampleFormat!
            let bar = ProgressBar()
            let started = ContinuousClock.now
            let summary = try ScriptedRender.run(options) { bar.update($0) }
            bar.finish()
            let elapsed = ContinuousClock.now - started
            let seconds = Double(summary.frames) / summary.format.sampleRate
            let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            let speed = wall > 0 ? "\(Int(seconds / wall))× real time" : "instant"
            var line = "wrote \(options.output): \(summary.frames) frames (\(seconds.formatted2) s), \(summary.events) events, "
            line += "\(summary.instrumentDescription), \(summary.format.compactDescription), \(summary.slice)-frame slices, \(speed)"
            if !summary.notes.isEmpty { line += "; " + summary.notes.joined(separator: "; ") }
            print(line)
        }
    }
}

extension InstrumentChoice: ExpressibleByArgument {}

/// An EQ preset name or number, or a one-line error listing them.
func checkedEQ(_ name: String) throws(AudioUnitError) -> String {
    guard let index = IPodEQCurves.index(of: name) else {
        throw AudioUnitError(.invalidPropertyValue, "no EQ preset '\(name)' (see aulos presets)")
    }
    return IPodEQUnit.curves[index].name
}

/// A one-line progress bar on standard error, shown only when standard error is a terminal.
final class ProgressBar {
    private let enabled = isatty(2) == 1
    private var shown = -1

    func update(_ fraction: Double) {
        guard enabled else { return }
        let percent = Int(min(1, max(0, fraction)) * 100)
        guard percent != shown else { return }
        shown = percent
        let filled = percent * 30 / 100
        printError("\r[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled) + "] \(percent)%", newline: false)
    }

    func finish() {
        guard enabled, shown >= 0 else { return }
        printError("\r" + String(repeating: " ", count: 40) + "\r", newline: false)
    }
}

extension Aulos {
    struct Presets: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List synth presets and parameters, EQ presets and factory rigs.")

        func run() throws {
            let presets = SynthPresetLibrary.factory
            print("Synth presets (program: name), from presets/synth:")
            if presets.isEmpty { print("  none found (searched \(SynthPresetLibrary.searchPaths.joined(separator: ", ")))") }
            for preset in presets { print("  \(preset.program): \(preset.name)") }
            print("Synth parameters (preset-file key, range, default):")
            for parameter in OscillatorSynthUnit.Parameter.allCases {
                let info = parameter.info
                let range = info.valueNames.isEmpty
                    ? "\(info.minValue.compact)…\(info.maxValue.compact) \(info.unit.rawValue)"
                    : info.valueNames.joined(separator: "|")
                let value = info.valueNames.isEmpty ? info.defaultValue.compact : info.valueNames[Int(info.defaultValue)]
                print("  \(parameter.key.padding(to: 20)) \(range.padding(to: 36)) \(value)")
            }
            print("EQ presets (iPod-style, docs/eq-presets.md):")
            for (number, curve) in IPodEQUnit.curves.enumerated() { print("  \(number): \(curve.name)") }
            print("Rigs (presets/rigs):")
            for rig in RigLibrary.factory {
                print("  \(rig.path): \(rig.name), " + (rig.rigs > 1 ? "a set of \(rig.rigs) rigs recalled by program change" : "\(rig.parts) part\(rig.parts == 1 ? "" : "s")"))
            }
            if let font = SoundFontLocator.defaultPath { print("Sampler SoundFont: \(font)") }
        }
    }

    struct SoundFont: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "soundfont",
            abstract: "Write the project's own General-MIDI-style SoundFont (synthesised, deterministic).")

        @Option(name: .shortAndLong, help: "Output .sf2 file.")
        var output: String = "soundfonts/" + AulosGMSoundFont.fileName

        func run() throws {
            let bytes = AulosGMSoundFont.make().encode()
            guard let file = fopen(output, "wb") else {
                throw AudioUnitError(.invalidFile, "cannot write \(output)")
            }
            let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            fclose(file)
            guard written == bytes.count else { throw AudioUnitError(.invalidFile, "writing \(output) failed") }
            print("wrote \(output): \(bytes.count) bytes")
        }
    }
}

extension String {
    func padding(to width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}

extension Float {
    /// 0.5, 20000, -6: no trailing zeros.
    var compact: String { self == rounded() && abs(self) < 1e6 ? String(Int(self)) : String(self) }
}

extension Double {
    var formatted2: String {
        let hundredths = Int((self * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
