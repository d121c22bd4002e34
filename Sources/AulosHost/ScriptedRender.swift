import AulosALSA
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
    /// A whole rig instead of one instrument (its sample rate and slice win over the options').
    public var rig: Rig?
    /// A master iPod-style EQ preset (overrides the rig's).
    public var eq: String?
    /// The transport's tempo (replaces the input's tempo map for tempo-synced units; the input's own
    /// event times are not changed).
    public var tempo: Double?
    /// Arpeggiate synth parts: mode and rate.
    public var arpeggio: Arpeggio?

    public init(output: String) { self.output = output }

    /// The rig these options describe: the given one, or one part playing every channel.
    public var effectiveRig: Rig {
        var rig = self.rig ?? {
            var part = Rig.Part(name: instrument.rawValue, instrument: instrument, channels: Array(1...16))
            part.preset = preset
            part.program = program
            part.soundFont = soundFont
            var rig = Rig(name: "default", parts: [part])
            rig.sampleRate = sampleRate
            rig.slice = slice
            return rig
        }()
        if let eq { rig.eq = eq }
        return rig
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

/// A MIDI file or score ready to play: its messages at sample times, where it ends, and its tempo map.
public struct LoadedInput: Sendable {
    public var messages: [ScheduledMessage]
    public var end: Int64
    public var tempoMap: [(beat: Double, bpm: Double)]

    public init(messages: [ScheduledMessage], end: Int64, tempoMap: [(beat: Double, bpm: Double)]) {
        self.messages = messages
        self.end = end
        self.tempoMap = tempoMap
    }

    init(score: Score, sampleRate: Double) {
        let (messages, end) = score.scheduledMessages(sampleRate: sampleRate)
        self.init(messages: messages, end: end, tempoMap: score.tempoMap)
    }
}

/// Scripted playback: a MIDI file or score → instrument → Generic Output → WAV/FLAC, offline and
/// deterministic (the same input gives the same bytes).
///
/// Threads: control thread; the offline renderer pulls on the same thread.
public enum ScriptedRender {
    /// Reads a MIDI file (by content: files starting with "MThd") or a score.
    public static func load(_ path: String, sampleRate: Double) throws(AudioUnitError) -> LoadedInput {
        guard let bytes = readFile(path) else {
            throw AudioUnitError(.invalidFile, "\(path): \(String(cString: strerror(errno)))")
        }
        if bytes.starts(with: Array("MThd".utf8)) {
            do {
                let file = try StandardMIDIFile(bytes: bytes)
                let messages = file.scheduledMessages(sampleRate: sampleRate)
                return LoadedInput(messages: messages, end: messages.last?.sampleTime ?? 0, tempoMap: file.tempoMap)
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
            return try LoadedInput(score: Score(text: text, name: name), sampleRate: sampleRate)
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

    /// Which parts play each message, with notes on what is skipped (system messages, channels no part
    /// plays, program changes the synth ignores). The rig's prelude comes first.
    static func route(_ messages: [ScheduledMessage], through rig: PlaybackRig) -> ([(ScheduledMessage, [UInt16])], [String]) {
        var notes: [String] = []
        let channelMessages = messages.filter { $0.message.channelBytes != nil }
        if channelMessages.count < messages.count {
            notes.append("\(messages.count - channelMessages.count) system messages (sysex, clock) not played")
        }
        var routed: [(ScheduledMessage, [UInt16])] = rig.prelude.map { ($0, rig.destinations(of: $0.message)) }
        var unrouted = 0
        var programsSkipped = false
        for message in channelMessages {
            let targets = rig.destinations(of: message.message)
            if targets.isEmpty {
                if case .programChange = message.message { programsSkipped = true } else { unrouted += 1 }
                continue
            }
            if case .programChange = message.message, rig.rig.parts.contains(where: { $0.instrument == .synth }) { programsSkipped = true }
            routed.append((message, targets))
        }
        if unrouted > 0 {
            let drums = channelMessages.contains { $0.message.channel == 9 } && !rig.rig.parts.contains { $0.channels.contains(10) }
            notes.append(drums ? "channel 10 (drums) skipped: no part plays it" : "\(unrouted) events on channels no part plays")
        }
        if programsSkipped { notes.append("program changes ignored by the synth") }
        return (routed, notes)
    }

    public static func run(_ options: RenderOptions, progress: (Double) -> Void = { _ in }) throws -> RenderSummary {
        let rate = options.effectiveRig.sampleRate
        let loaded = try options.input.map { path throws(AudioUnitError) in try load(path, sampleRate: rate) }
            ?? LoadedInput(score: try Score(text: DemoPiece.score, name: "demo"), sampleRate: rate)
        var messages = loaded.messages
        var notes: [String] = []

        var rigDescription = options.effectiveRig
        if options.rig == nil && options.instrument == .synth {
            // One synth alone has no drum kit: leave GM's drum channel out rather than play drums as notes.
            rigDescription.parts[0].channels.removeAll { $0 == 10 }
        }
        let tempoMap = options.tempo.map { [(beat: 0.0, bpm: $0)] } ?? loaded.tempoMap
        let rig = try PlaybackRig(rigDescription, fileSample: options.sample, tempoMap: tempoMap, arpeggio: options.arpeggio)
        defer { rig.close() }
        let (routed, routingNotes) = route(messages, through: rig)
        notes += routingNotes
        messages = routed.map(\.0)
        let scheduler = rig.scheduler
        let graph = rig.graph
        let fileFormat = rig.fileFormat

        let writer = try AudioFileWriter(path: options.output, format: fileFormat)
        let renderer = try OfflineRenderer(graph: graph, sliceFrames: rig.rig.slice)
        let total = max(loaded.end, messages.last?.sampleTime ?? 0) + Int64((options.tail * rate).rounded())
        var next = 0
        do {
            try renderer.render(frameCount: total, to: writer) { start, frames in
                // Feed the scheduler slice by slice so a long file never overfills its queue.
                while next < routed.count && routed[next].0.sampleTime < start + Int64(frames) {
                    for destination in routed[next].1 {
                        guard scheduler.schedule(routed[next].0.message, at: routed[next].0.sampleTime, destination: destination) else {
                            throw AudioUnitError(.cannotDoInCurrentContext, "more than 16384 MIDI events fall in one slice")
                        }
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
        let name = zip(rig.rig.parts, rig.instruments).map { part, instrument in
            switch instrument {
            case let synth as OscillatorSynthUnit: "synth (\(synth.currentPreset?.name ?? "default"))"
            case let sampler as FluidSynthSamplerUnit: "sampler (\((sampler.soundFontPath ?? "").split(separator: "/").last ?? ""))"
            default: part.name
            }
        }.joined(separator: " + ") + (rig.rig.eq.map { ", EQ \($0)" } ?? "")
        return RenderSummary(frames: total, events: messages.count, format: fileFormat, instrumentDescription: name, notes: notes,
                             slice: rig.rig.slice)
    }
}

/// The graph a rig describes, built and initialized: each part's instrument (→ its EQ) → a mixer bus →
/// (master EQ) → Generic Output, with one MIDI scheduler as the graph's render notify routing events by
/// channel to every part that listens on it. `aulos graph` prints it; `aulos render` pulls it.
///
/// Threads: control thread.
public final class PlaybackRig {
    public let rig: Rig
    public let graph: AudioGraph
    public let instruments: [any MusicDevice]
    public let mixer: MultichannelMixerUnit
    public let scheduler: MIDIScheduler
    public let transport: HostTransport
    public let fileFormat: StreamFormat
    /// The live session, when the rig plays to a device.
    public let session: AudioSession?
    /// Messages to send before the input's own: each sampler part's program on its channels.
    public let prelude: [ScheduledMessage]

    /// With a `session`, the graph's head is the ALSA I/O unit (live playback): the session is activated
    /// first and the whole graph runs at the granted rate with the granted period as the slice — every
    /// unit's maximumFramesPerSlice set before initialize. Without, it is a Generic Output (offline render).
    public init(_ rig: Rig, fileSample: SampleFormat = .int16, tempoMap: [(beat: Double, bpm: Double)] = [(0, 120)],
                arpeggio: Arpeggio? = nil, session: AudioSession? = nil) throws {
        var rig = rig
        let graph = AudioGraph(registry: HostComponents.registry())
        self.graph = graph
        let outputNode = try graph.addNode(session == nil ? GenericOutputUnit.componentDescription : ALSAOutputUnit.componentDescription)
        graph.open()
        if let session {
            let grant = try session.activate(for: graph)
            rig.sampleRate = grant.sampleRate
            rig.slice = grant.period
        }
        self.session = session
        self.rig = rig
        transport = HostTransport(sampleRate: rig.sampleRate, tempoMap: tempoMap)
        let processing = StreamFormat.canonical(channels: 2, sampleRate: rig.sampleRate)
        fileFormat = StreamFormat(sample: fileSample, channels: 2, sampleRate: rig.sampleRate, interleaved: true)
        let mixerNode = try graph.addNode(MultichannelMixerUnit.componentDescription)
        let callbacks = transport.callbacks
        func configure(_ unit: AudioUnit) throws {
            try unit.set(.maximumFramesPerSlice, rig.slice)
            try unit.set(.hostCallbacks, callbacks)
            if unit.inputBusCount > 0 && !(unit is MultichannelMixerUnit) { try unit.set(.streamFormat, processing, scope: .input) }
            try unit.set(.streamFormat, processing, scope: .output)
        }
        /// An iPod-style EQ set to `preset`, fed by `source`: a part's or the master EQ.
        func insertEQ(_ preset: String, after source: NodeID) throws -> NodeID {
            let eqNode = try graph.addNode(IPodEQUnit.componentDescription)
            let unit = try graph.unit(for: eqNode) as! IPodEQUnit
            try configure(unit)
            try unit.selectPreset(preset)
            try graph.connectNodeInput(source, sourceOutput: 0, eqNode, destinationInput: 0)
            return eqNode
        }
        mixer = try graph.unit(for: mixerNode) as! MultichannelMixerUnit
        // Live input (the session names a capture device): one more mixer bus after the parts, fed by the
        // I/O unit's input callback — the seeds' I/O pass-through, mixed with the instruments.
        let inputBus = session?.inputDevice == nil ? nil : Element(rig.parts.count)
        try mixer.set(.elementCount, UInt32(rig.parts.count + (inputBus == nil ? 0 : 1)), scope: .input)
        try configure(mixer)
        try configure(try graph.unit(for: outputNode))
        if session == nil { try graph.unit(for: outputNode).set(.streamFormat, fileFormat, scope: .output) }
        try mixer.setParameter(MultichannelMixerUnit.Parameter.volume, scope: .output, element: 0, value: rig.volume)

        // Only the oscillator synth arpeggiates; accepting --arpeggio for a sampler-only rig would
        // silently render something other than what was asked for.
        if arpeggio != nil && !rig.parts.contains(where: { $0.instrument == .synth }) {
            throw AudioUnitError(.invalidPropertyValue, "--arpeggio needs a synth part: only the oscillator synth has an arpeggiator")
        }
        var instruments: [any MusicDevice] = []
        var prelude: [ScheduledMessage] = []
        for (bus, part) in rig.parts.enumerated() {
            let description = part.instrument == .synth ? OscillatorSynthUnit.componentDescription : FluidSynthSamplerUnit.componentDescription
            let node = try graph.addNode(description)
            let instrument = try graph.unit(for: node) as! any MusicDevice
            try configure(instrument)
            switch instrument {
            case let synth as OscillatorSynthUnit:
                let choice = part.preset ?? part.program.map(String.init) ?? "String Ensemble"
                if !synth.presets.isEmpty {
                    try synth.selectPreset(choice)
                } else if part.preset != nil || part.program != nil {
                    // Asked for a sound we cannot load: say so rather than play the bare default patch.
                    throw AudioUnitError(.invalidFile, "no synth presets found, so preset '\(choice)' cannot be selected "
                        + "(searched \(SynthPresetLibrary.searchPaths.joined(separator: ", ")); set AULOS_PRESETS)")
                }
                try synth.setProperty(OscillatorSynthUnit.polyphonyProperty, scope: .global, element: 0, value: UInt32(64))
                if let arpeggio {
                    try synth.setParameter(OscillatorSynthUnit.Parameter.arpMode.id, value: Float(arpeggio.mode.rawValue))
                    try synth.setParameter(OscillatorSynthUnit.Parameter.arpRate.id, value: Float(arpeggio.rate.rawValue))
                }
            case let sampler as FluidSynthSamplerUnit:
                guard let font = part.soundFont ?? sampler.soundFontPath ?? SoundFontLocator.defaultPath else {
                    throw AudioUnitError(.invalidFile, "no SoundFont found for part '\(part.name)'; give one (searched \(SoundFontLocator.searchPaths.joined(separator: ", ")))")
                }
                try sampler.loadSoundFont(font)
                if let program = part.program {
                    for channel in part.channels where channel != 10 {
                        prelude.append(ScheduledMessage(sampleTime: 0, message: .programChange(channel: UInt8(channel - 1), program: UInt8(program))))
                    }
                }
            default:
                break
            }
            let source = try part.eq.map { eq in try insertEQ(eq, after: node) } ?? node
            try graph.connectNodeInput(source, sourceOutput: 0, mixerNode, destinationInput: Element(bus))
            try mixer.setParameter(MultichannelMixerUnit.Parameter.volume, scope: .input, element: Element(bus), value: part.volume)
            try mixer.setParameter(MultichannelMixerUnit.Parameter.pan, scope: .input, element: Element(bus), value: part.pan)
            try mixer.setParameter(MultichannelMixerUnit.Parameter.enable, scope: .input, element: Element(bus), value: part.enabled ? 1 : 0)
            instruments.append(instrument)
        }
        let master = try rig.eq.map { eq in try insertEQ(eq, after: mixerNode) } ?? mixerNode
        try graph.connectNodeInput(master, sourceOutput: 0, outputNode, destinationInput: 0)
        if let inputBus, let io = try graph.unit(for: outputNode) as? ALSAOutputUnit {
            try io.set(.enableIO, UInt32(1), scope: .input, element: 1)
            try graph.setNodeInputCallback(mixerNode, destinationInput: inputBus, io.inputCallback)
        }
        self.instruments = instruments
        self.prelude = prelude
        scheduler = MIDIScheduler(destinations: instruments.map(\.midiInput), capacity: 16_384)
        try graph.addRenderNotify(transport.renderNotify)
        try graph.addRenderNotify(scheduler.renderNotify)
        try graph.initialize()
        transport.play()
    }

    /// The parts that play a message: those listening on its channel. The synth is one patch with one voice
    /// pool, so program changes are not sent to synth parts (their sound is the rig's preset).
    func destinations(of message: MIDIMessage) -> [UInt16] {
        guard let channel = message.channel else { return [] }
        var result: [UInt16] = []
        for (index, part) in rig.parts.enumerated() where part.channels.contains(Int(channel) + 1) {
            if case .programChange = message, part.instrument == .synth { continue }
            result.append(UInt16(index))
        }
        return result
    }

    public func close() {
        try? graph.stop()
        try? graph.uninitialize()
        try? session?.deactivate()
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
