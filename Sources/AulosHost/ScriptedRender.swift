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

    /// A rig set (rigs recalled by program change); wins over `rig`.
    public var rigSet: RigSet?

    public init(output: String) { self.output = output }

    /// The rig set these options describe: the given set (with `eq` as every rig's master EQ), or the
    /// effective rig alone.
    public var effectiveRigSet: RigSet {
        guard var set = rigSet else { return RigSet(effectiveRig) }
        if let eq { for index in set.entries.indices { set.entries[index].rig.eq = eq } }
        return set
    }

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

/// A MIDI file or score routed through a rig: what each part hears when, and the parameter changes and
/// rig switches it causes, fed to the rig slice by slice (offline) or tick by tick (real time).
///
/// Threads: the control thread.
struct RoutedTimeline {
    var events: [(sampleTime: Int64, destination: UInt16, message: MIDIMessage)] = []
    /// Mapped controllers moving parameters: sample-exact through the parameters' event queues.
    var parameterActions: [(sampleTime: Int64, action: RigRouter.Action)] = []
    /// Rig switches and EQ presets (property changes, which take effect from the next slice): an offline
    /// render starts a slice at each one, so where it lands does not depend on the slice size.
    var boundaryActions: [(sampleTime: Int64, action: RigRouter.Action)] = []
    var notes: [String] = []
    var nextEvent = 0
    var nextParameterAction = 0
    var nextBoundaryAction = 0

    mutating func append(_ action: RigRouter.Action, at time: Int64) {
        if case .control(let target, _) = action, case .parameter = target.kind {
            parameterActions.append((time, action))
        } else {
            boundaryActions.append((time, action))
        }
    }

    /// Schedules the events before `horizon` and applies the parameter actions before it: with
    /// `sliceStart` (the slice about to render) a parameter lands on its exact frame; without, as soon as
    /// it is applied. Boundary actions are applied here only when `actionsBefore` is given (real time,
    /// where they apply as their time is rendered). False when the scheduler is full (the caller tries
    /// again later).
    mutating func feed(_ rig: PlaybackRig, before horizon: Int64, sliceStart: Int64? = nil, actionsBefore: Int64? = nil) -> Bool {
        while nextEvent < events.count && events[nextEvent].sampleTime < horizon {
            let event = events[nextEvent]
            guard rig.scheduler.schedule(event.message, at: event.sampleTime, destination: event.destination) else { return false }
            nextEvent += 1
        }
        while nextParameterAction < parameterActions.count && parameterActions[nextParameterAction].sampleTime < (actionsBefore ?? horizon) {
            let (time, action) = parameterActions[nextParameterAction]
            rig.apply(action, offset: sliceStart.map { UInt32(max(0, time - $0)) } ?? 0)
            nextParameterAction += 1
        }
        if let actionsBefore { applyBoundaryActions(rig, before: actionsBefore) }
        return true
    }

    /// Applies the boundary actions due before `time`; returns when the next one is due (nil: none left).
    @discardableResult
    mutating func applyBoundaryActions(_ rig: PlaybackRig, before time: Int64) -> Int64? {
        while nextBoundaryAction < boundaryActions.count && boundaryActions[nextBoundaryAction].sampleTime < time {
            rig.apply(boundaryActions[nextBoundaryAction].action)
            nextBoundaryAction += 1
        }
        return nextBoundaryAction < boundaryActions.count ? boundaryActions[nextBoundaryAction].sampleTime : nil
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

    /// One (part, channel, note), as a dictionary key.
    static func noteKey(_ destination: UInt16, _ channel: UInt8, _ note: UInt8) -> Int {
        Int(destination) << 11 | Int(channel) << 7 | Int(note)
    }

    /// Which parts play each message and as what (the rig's router: channels, key ranges, transposition,
    /// velocity curves, controller mappings, rig switches), with notes on what is skipped (system
    /// messages, channels no part plays, program changes the synth ignores). The rig's prelude comes first.
    static func route(_ messages: [ScheduledMessage], through rig: PlaybackRig) -> RoutedTimeline {
        var timeline = RoutedTimeline()
        let channelMessages = messages.filter { $0.message.channelBytes != nil }
        if channelMessages.count < messages.count {
            timeline.notes.append("\(messages.count - channelMessages.count) system messages (sysex, clock) not played")
        }
        timeline.events = rig.prelude.map { (sampleTime: $0.0.sampleTime, destination: $0.1, message: $0.0.message) }
        var unrouted = 0
        var programsSkipped = false
        var struckAt: [Int: Int64] = [:]
        let router = rig.router!
        for message in channelMessages {
            var actions: [RigRouter.Action] = []
            let deliveries = router.route(message.message, actions: &actions)
            for action in actions { timeline.append(action, at: message.sampleTime) }
            for delivery in deliveries {
                var time = message.sampleTime
                switch delivery.message {
                case .noteOn(let channel, let note, _):
                    struckAt[Self.noteKey(delivery.destination, channel, note)] = time
                case .noteOff(let channel, let note, _):
                    // A zero-length note (on and off at one time in a MIDI file): the instrument's
                    // same-frame order puts releases before strikes (so a repeated note is re-struck), which
                    // would leave this one hanging. End it a frame after it starts instead.
                    if struckAt[Self.noteKey(delivery.destination, channel, note)] == time { time += 1 }
                default:
                    break
                }
                timeline.events.append((time, delivery.destination, delivery.message))
            }
            guard deliveries.isEmpty && actions.isEmpty else {
                if case .programChange = message.message, message.message.channel != router.controlChannel,
                   rig.rig.parts.contains(where: { $0.instrument == .synth }) { programsSkipped = true }
                continue
            }
            switch message.message.normalized {
            case .programChange: if message.message.channel != router.controlChannel { programsSkipped = true }
            case .noteOff, .polyPressure: break  // follows a note-on that was skipped, or off a key range
            case .noteOn(_, let note, _) where rig.rig.parts.contains(where: { $0.channels.contains(Int(message.message.channel!) + 1) && !$0.keys.contains(Int(note)) }): break
            case .controlChange(let channel, _, _) where channel == router.controlChannel: break
            default: unrouted += 1
            }
        }
        // Back in time order (a shifted note-off may now follow an event of the next frame), stably.
        timeline.events = timeline.events.enumerated().sorted { ($0.element.sampleTime, $0.offset) < ($1.element.sampleTime, $1.offset) }.map(\.element)
        if unrouted > 0 {
            let drums = channelMessages.contains { $0.message.channel == 9 } && !rig.rig.parts.contains { $0.channels.contains(10) }
            timeline.notes.append(drums ? "channel 10 (drums) skipped: no part plays it" : "\(unrouted) events on channels no part plays")
        }
        if programsSkipped { timeline.notes.append("program changes ignored by the synth") }
        if router.switchCount > 0 { timeline.notes.append("\(router.switchCount) rig switch\(router.switchCount == 1 ? "" : "es") by program change") }
        return timeline
    }

    public static func run(_ options: RenderOptions, progress: (Double) -> Void = { _ in }) throws -> RenderSummary {
        let rate = options.effectiveRigSet.entries[0].rig.sampleRate
        let loaded = try options.input.map { path throws(AudioUnitError) in try load(path, sampleRate: rate) }
            ?? LoadedInput(score: try Score(text: DemoPiece.score, name: "demo"), sampleRate: rate)
        var notes: [String] = []

        var rigDescription = options.effectiveRig
        if options.rig == nil && options.instrument == .synth {
            // One synth alone has no drum kit: leave GM's drum channel out rather than play drums as notes.
            rigDescription.parts[0].channels.removeAll { $0 == 10 }
        }
        let tempoMap = options.tempo.map { [(beat: 0.0, bpm: $0)] } ?? loaded.tempoMap
        let rig = try PlaybackRig(set: options.rigSet != nil ? options.effectiveRigSet : RigSet(rigDescription), fileSample: options.sample, tempoMap: tempoMap,
                                  arpeggio: options.arpeggio)
        defer { rig.close() }
        var timeline = route(loaded.messages, through: rig)
        notes += timeline.notes
        let graph = rig.graph
        let fileFormat = rig.fileFormat

        let writer = try AudioFileWriter(path: options.output, format: fileFormat)
        let renderer = try OfflineRenderer(graph: graph, sliceFrames: rig.rig.slice)
        let total = max(loaded.end, timeline.events.last?.sampleTime ?? 0) + Int64((options.tail * rate).rounded())
        do {
            // In segments that end where a rig switch or preset change is due, so each starts a slice.
            var position: Int64 = 0
            while position < total {
                let next = timeline.applyBoundaryActions(rig, before: position + 1) ?? total
                let end = min(total, max(next, position + 1))
                try renderer.render(frameCount: end - position, to: writer) { start, frames in
                    // Feed the scheduler slice by slice so a long file never overfills its queue.
                    guard timeline.feed(rig, before: start + Int64(frames), sliceStart: start) else {
                        throw AudioUnitError(.cannotDoInCurrentContext, "more than 16384 MIDI events fall in one slice")
                    }
                    progress(Double(start + Int64(frames)) / Double(max(1, total)))
                }
                position = end
            }
            try writer.close()
        } catch {
            unlink(options.output)
            throw error
        }
        if rig.scheduler.droppedCount > 0 { notes.append("\(rig.scheduler.droppedCount) events dropped (too many in one slice)") }
        let name = zip(rig.rig.parts, rig.instruments).map { part, instrument in
            switch instrument {
            case let synth as OscillatorSynthUnit: "synth (\(synth.currentPreset?.name ?? "default"))"
            case let sampler as FluidSynthSamplerUnit: "sampler (\((sampler.soundFontPath ?? "").split(separator: "/").last ?? ""))"
            default: part.name
            }
        }.joined(separator: " + ") + (rig.rig.eq.map { ", EQ \($0)" } ?? "")
        return RenderSummary(frames: total, events: timeline.events.count, format: fileFormat, instrumentDescription: name, notes: notes,
                             slice: rig.rig.slice)
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
