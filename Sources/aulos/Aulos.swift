import ArgumentParser
import AulosAudioFile
import AulosCore
import AulosHost
import AulosSoundFont
import AulosUnits

#if canImport(Glibc)
import Glibc
#endif

/// The `aulos` command. Subcommands map onto the host's layers; later issues add play, devices, presets.
struct Aulos: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "aulos",
        abstract: "A real-time MIDI synthesizer and instrument host for Linux, on Core Audio's audio-unit model.",
        version: version,
        subcommands: [Units.self, Graph.self, Render.self, SoundFont.self])
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
            let registry = BuiltInUnits.registry()
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
        static let configuration = CommandConfiguration(abstract: "Print the default rig's processing graph (like CAShow).")

        @OptionGroup var rig: RigOptions

        func run() throws {
            let demo = try DemoRig(sampleRate: rig.sampleRate, maximumFramesPerSlice: rig.slice)
            print(demo.graph.dump())
        }
    }

    struct Render: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Render the built-in demo offline to a WAV or FLAC file.",
            discussion: "The file type comes from the extension (.wav or .flac). Rendering is faster than real time and bit-for-bit repeatable.")

        @Option(name: .shortAndLong, help: "Output file (.wav or .flac).")
        var output: String = "demo.wav"

        @Option(help: "Sample format: int16, int24 or float32 (FLAC: int16 or int24).")
        var sampleFormat: String = "int16"

        @Option(help: "Seconds to render (default: the whole demo).")
        var seconds: Double?

        @OptionGroup var rig: RigOptions

        func validate() throws {
            guard AudioFileType(path: output) != nil else {
                throw ValidationError("--output must end in .wav or .flac, not '\(output)'")
            }
            guard let sample = SampleFormat(name: sampleFormat), sample != .int32 else {
                throw ValidationError("--sample-format must be int16, int24 or float32, not '\(sampleFormat)'")
            }
            if let seconds, !(seconds > 0 && seconds <= 3600) {
                throw ValidationError("--seconds must be between 0 and 3600, not \(seconds)")
            }
        }

        func run() throws {
            let sample = SampleFormat(name: sampleFormat)!
            let fileFormat = StreamFormat(sample: sample, channels: 2, sampleRate: rig.sampleRate, interleaved: true)
            let demo = try DemoRig(sampleRate: rig.sampleRate, maximumFramesPerSlice: rig.slice, outputFormat: fileFormat)
            let writer = try AudioFileWriter(path: output, format: fileFormat)
            let renderer = try OfflineRenderer(graph: demo.graph, sliceFrames: rig.slice)
            let frames = Int64(((seconds ?? DemoRig.duration) * rig.sampleRate).rounded())
            let started = ContinuousClock.now
            do {
                try renderer.render(frameCount: frames, to: writer) { start, count in
                    try demo.scheduleMelody(sliceStart: start, frames: count)
                }
                try writer.close()
            } catch {
                unlink(output)
                throw error
            }
            let elapsed = ContinuousClock.now - started
            let seconds = Double(frames) / rig.sampleRate
            let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            let speed = wall > 0 ? "\(Int(seconds / wall))× real time" : "instant"
            print("wrote \(output): \(frames) frames (\(seconds.formatted2) s), \(fileFormat.compactDescription), \(rig.slice)-frame slices, \(speed)")
        }
    }
}

extension Aulos {
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

extension Double {
    var formatted2: String {
        let hundredths = Int((self * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
