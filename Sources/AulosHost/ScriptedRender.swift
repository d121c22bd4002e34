import AulosAudioFile
import AulosCore
import AulosFluid
import AulosGraph
import AulosMIDI
import AulosUnits

#if canImport(Glibc)
import Glibc
#endif

/// Which instrument plays a scripted render.
public enum InstrumentChoice: String, Sendable, CaseIterable {
    case synth, sampler
}

/// Everything `aulos render` takes.
public struct RenderOptions: Sendable {
    /// A Standard MIDI File or a score; nil plays the built-in demo piece.
    public var input: String?
    public var output: String
    public var instrument: InstrumentChoice = .synth
    public var soundFont: String?
    /// A program sent to every channel (but 10) before the input's own events.
    public var program: Int?
    /// A synth preset by name or number.
    public var preset: String?
    public var sampleRate = 48_000.0
    public var slice: UInt32 = 256
    /// Seconds rendered after the last event, for release tails and reverb.
    public var tail = 1.5
    public var sample: SampleFormat = .int16

    public init(output: String) { self.output = output }
}

/// What a render did, for the one-line summary.
public struct RenderSummary: Sendable {
    public var frames: Int64
    public var events: Int
    public var format: StreamFormat
    public var instrumentDescription: String
    public var notes: [String]
}

/// Scripted playback: a MIDI file or score → instrument → Generic Output → WAV/FLAC, offline and
/// deterministic (the same input gives the same bytes).
///
/// Threads: control thread; the offline renderer pulls on the same thread.
public enum ScriptedRender {
    /// Reads a MIDI file (by content: files starting with "MThd") or a score.
    public static func load(_ path: String, sampleRate: Double) throws(AudioUnitError) -> (messages: [ScheduledMessage], end: Int64) {
        guard let bytes = readFile(path) else {
            throw AudioUnitError(.invalidFile, "\(path): \(String(cString: strerror(errno)))")
        }
        if bytes.starts(with: Array("MThd".utf8)) {
            do {
                let messages = try StandardMIDIFile(bytes: bytes).scheduledMessages(sampleRate: sampleRate)
                return (messages, messages.last?.sampleTime ?? 0)
            } catch {
                throw AudioUnitError(.invalidFile, "\(path): \(error.message)")
            }
        }
        if path.lowercased().hasSuffix(".mid") || path.lowercased().hasSuffix(".midi") {
            throw AudioUnitError(.invalidFile, "\(path): not a Standard MIDI File (it does not start with 'MThd')")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw AudioUnitError(.invalidFile, "\(path): neither a MIDI file nor a text score")
        }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        do {
            return try Score(text: text, name: name).scheduledMessages(sampleRate: sampleRate)
        } catch {
            throw AudioUnitError(.invalidFile, error.message)
        }
    }

    static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        return ferror(file) == 0 ? bytes : nil
    }

    public static func run(_ options: RenderOptions, progress: (Double) -> Void = { _ in }) throws -> RenderSummary {
        let loaded = try options.input.map { path throws(AudioUnitError) in try load(path, sampleRate: options.sampleRate) }
            ?? (try Score(text: DemoPiece.score, name: "demo").scheduledMessages(sampleRate: options.sampleRate))
        var messages = loaded.messages
        var notes: [String] = []

        let rig = try PlaybackRig(options)
        defer { rig.close() }
        let channelMessages = messages.filter { $0.message.channelBytes != nil }
        if channelMessages.count < messages.count {
            notes.append("\(messages.count - channelMessages.count) system messages (sysex, clock) not played")
        }
        messages = rig.prelude + rig.filter(channelMessages, notes: &notes)
        let scheduler = rig.scheduler
        let graph = rig.graph
        let fileFormat = rig.fileFormat
        let instrument = rig.instrument

        let writer = try AudioFileWriter(path: options.output, format: fileFormat)
        let renderer = try OfflineRenderer(graph: graph, sliceFrames: options.slice)
        let total = max(loaded.end, messages.last?.sampleTime ?? 0) + Int64((options.tail * options.sampleRate).rounded())
        var next = 0
        do {
            try renderer.render(frameCount: total, to: writer) { start, frames in
                // Feed the scheduler slice by slice so a long file never overfills its queue.
                while next < messages.count && messages[next].sampleTime < start + Int64(frames) {
                    guard scheduler.schedule(messages[next].message, at: messages[next].sampleTime) else {
                        throw AudioUnitError(.cannotDoInCurrentContext, "more than 16384 MIDI events fall in one slice")
                    }
                    next += 1
                }
                progress(Double(start + Int64(frames)) / Double(max(1, total)))
            }
            try writer.close()
        } catch {
            unlink(options.output)
            throw error
        }
        if scheduler.droppedCount > 0 { notes.append("\(scheduler.droppedCount) events dropped (too many in one slice)") }
        let name = options.instrument == .synth
            ? "synth (\((instrument as? OscillatorSynthUnit)?.currentPreset?.name ?? "default"))"
            : "sampler (\(((instrument as? FluidSynthSamplerUnit)?.soundFontPath ?? "").split(separator: "/").last ?? ""))"
        return RenderSummary(frames: total, events: messages.count, format: fileFormat, instrumentDescription: name, notes: notes)
    }
}

/// The rig scripted playback uses: Generic Output ← one instrument, a MIDI scheduler as the graph's
/// render notify. `aulos graph` prints it; `aulos render` pulls it.
///
/// Threads: control thread.
public final class PlaybackRig {
    public let graph: AudioGraph
    public let instrument: any MusicDevice
    public let scheduler: MIDIScheduler
    public let fileFormat: StreamFormat
    /// Messages to send before the input's own (the `--program` choice for the sampler).
    public let prelude: [ScheduledMessage]

    public init(_ options: RenderOptions) throws {
        graph = AudioGraph(registry: HostComponents.registry())
        let outputNode = try graph.addNode(GenericOutputUnit.componentDescription)
        let description = options.instrument == .synth ? OscillatorSynthUnit.componentDescription : FluidSynthSamplerUnit.componentDescription
        let instrumentNode = try graph.addNode(description)
        graph.open()
        instrument = try graph.unit(for: instrumentNode) as! any MusicDevice
        let processing = StreamFormat.canonical(channels: 2, sampleRate: options.sampleRate)
        fileFormat = StreamFormat(sample: options.sample, channels: 2, sampleRate: options.sampleRate, interleaved: true)
        for node in [outputNode, instrumentNode] {
            let unit = try graph.unit(for: node)
            try unit.set(.maximumFramesPerSlice, options.slice)
            try unit.set(.streamFormat, processing, scope: .output)
        }
        try graph.unit(for: outputNode).set(.streamFormat, fileFormat, scope: .output)
        var prelude: [ScheduledMessage] = []
        switch instrument {
        case let synth as OscillatorSynthUnit:
            let choice = options.preset ?? options.program.map(String.init) ?? "String Ensemble"
            if !synth.presets.isEmpty { try synth.selectPreset(choice) }
            try synth.setProperty(OscillatorSynthUnit.polyphonyProperty, scope: .global, element: 0, value: UInt32(64))
        case let sampler as FluidSynthSamplerUnit:
            guard let font = options.soundFont ?? sampler.soundFontPath ?? SoundFontLocator.defaultPath else {
                throw AudioUnitError(.invalidFile, "no SoundFont found; pass --soundfont FILE.sf2 (searched \(SoundFontLocator.searchPaths.joined(separator: ", ")))")
            }
            try sampler.loadSoundFont(font)
            if options.preset != nil { throw AudioUnitError(.invalidPropertyValue, "--preset names a synth preset; use --program with the sampler") }
            if let program = options.program {
                for channel in UInt8(0)..<16 where channel != 9 {
                    prelude.append(ScheduledMessage(sampleTime: 0, message: .programChange(channel: channel, program: UInt8(program))))
                }
            }
        default:
            break
        }
        self.prelude = prelude
        try graph.connectNodeInput(instrumentNode, sourceOutput: 0, outputNode, destinationInput: 0)
        scheduler = MIDIScheduler(destinations: [instrument.midiInput], capacity: 16_384)
        try graph.addRenderNotify(scheduler.renderNotify)
        try graph.initialize()
    }

    /// The synth is one patch with one voice pool: GM drums on channel 10 and the input's program changes
    /// mean nothing to it, so they are left out (and said so). The sampler takes everything.
    func filter(_ messages: [ScheduledMessage], notes: inout [String]) -> [ScheduledMessage] {
        guard instrument is OscillatorSynthUnit else { return messages }
        var kept = messages
        kept.removeAll { $0.message.channel == 9 }
        if kept.count < messages.count { notes.append("channel 10 (drums) skipped: the synth has no drum kit") }
        let count = kept.count
        kept.removeAll { if case .programChange = $0.message { return true } else { return false } }
        if kept.count < count { notes.append("program changes ignored by the synth") }
        return kept
    }

    public func close() {
        try? graph.stop()
        try? graph.uninitialize()
    }
}

/// The short piece `make demo` plays: eight bars in C with piano chords, a bass line, a string melody and
/// drums (GM channel 10), 100 BPM.
public enum DemoPiece {
    public static let score = """
        # Aulos demo piece: piano (ch 1), bass (ch 2), strings (ch 3), drums (ch 10). 100 BPM.
        0b tempo 100
        0b program 0 ch=1
        0b program 33 ch=2
        0b program 48 ch=3
        0b cc 7 100 ch=1
        0b cc 7 110 ch=2
        0b cc 7 90 ch=3
        \(bars)
        32b end
        """

    /// C – Am – F – G, twice; melody on top; four-on-the-floor drums.
    static var bars: String {
        let chords: [[String]] = [["C4", "E4", "G4"], ["A3", "C4", "E4"], ["F3", "A3", "C4"], ["G3", "B3", "D4"]]
        let basses = ["C2", "A1", "F1", "G1"]
        let melody: [[(String, Double)]] = [
            [("E5", 1), ("G5", 1), ("C6", 1.5), ("B5", 0.5)], [("A5", 2), ("E5", 2)],
            [("F5", 1), ("A5", 1), ("C6", 1), ("A5", 1)], [("G5", 1.5), ("F5", 0.5), ("D5", 2)],
        ]
        var lines: [String] = []
        for bar in 0..<8 {
            let start = Double(bar * 4)
            let index = bar % 4
            for beat in 0..<4 {
                let at = start + Double(beat)
                for note in chords[index] { lines.append("\(at)b note \(note) 0.9b vel=\(beat == 0 ? 92 : 70) ch=1") }
                lines.append("\(at)b note \(basses[index]) 0.45b vel=100 ch=2")
                lines.append("\(at + 0.5)b note \(basses[index]) 0.4b vel=80 ch=2")
                lines.append("\(at)b note C2 0.2b vel=110 ch=10")
                if beat % 2 == 1 { lines.append("\(at)b note D2 0.2b vel=100 ch=10") }
                lines.append("\(at)b note F#2 0.1b vel=70 ch=10")
                lines.append("\(at + 0.5)b note F#2 0.1b vel=55 ch=10")
            }
            if bar >= 4 {
                var at = start
                for (note, length) in melody[index] {
                    lines.append("\(at)b note \(note) \(length * 0.95)b vel=85 ch=3")
                    at += length
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}
