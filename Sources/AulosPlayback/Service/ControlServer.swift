import AulosALSA
import AulosCore
import AulosIO
import AulosMIDI
import AulosRealtime
import AulosRig
import AulosUnits
import Foundation

/// Answers the control socket's requests for the live instrument: keeps the latest status and the
/// connected keyboards, and carries out `set`, `get`, `learn`, `rig` and `midi`.
///
/// Threads: the control thread only.
final class ControlServer {
    private var rig: PlaybackRig?
    private var midi: LiveMIDIPath?
    private var live: LiveMIDIInput?
    private var reloads = 0
    private var current: LiveStatus?
    private var keyboards: [SequencerAddress: String] = [:]
    private var sequencerUp = false
    private var learning: String?
    /// When an unanswered MIDI-learn gives up (CLOCK_MONOTONIC ns): a client that timed out or went away
    /// must not leave the instrument learning, or "learning" in the status, for ever.
    private var learningUntil: Int64 = 0
    /// The tempo the last `tempo` request set.
    private var tempo: Double?
    /// Why the last SIGHUP could not reload the rig file (nil once one succeeds).
    var reloadFailure: String?
    /// Why the last good rig plays instead of the configured one, when it does.
    var fallback: String?
    /// The unit a render cycle is stuck in, said as the watchdog says it.
    var stuckUnit: String?

    /// The session playing (for recording), and the folder `record start` writes in.
    private var session: LiveSession?
    var recordFolder = "."

    func begin(rig: PlaybackRig, midi: LiveMIDIPath, live: LiveMIDIInput, session: LiveSession, reloads: Int) {
        self.rig = rig
        self.session = session
        // The status shows every part's, send's and return's level.
        try? rig.startMetering()
        self.midi = midi
        self.live = live
        self.reloads = reloads
    }

    func end() {
        session = nil
        rig = nil
        midi = nil
        live = nil
    }

    func note(_ notice: SequencerInput.Notice) {
        switch notice {
        case .connected(let port): keyboards[port.address] = "\(port.address) \(port.clientName): \(port.portName)"
        case .disconnected(let port, _): keyboards[port.address] = nil
        case .subscribed(let address, let name): keyboards[address] = "\(address) \(name)"
        case .listening, .connectFailed, .inputOverflow: break
        }
    }

    func update(_ status: LiveStatus, sequencerUp: Bool) {
        current = status
        self.sequencerUp = sequencerUp
        if learning != nil, monotonicNanoseconds() > learningUntil { stopLearning() }
    }

    private func stopLearning() {
        learning = nil
        midi?.cancelLearning()
    }

    var status: ServiceStatus? {
        guard let rig, let current, let live, let router = midi?.router else { return nil }
        let active = router.activeRig
        let grant = current.grant
        return ServiceStatus(
            pid: getpid(), rigSet: rig.set.name, rigs: rig.set.entries.map(\.rig.name), activeRig: active,
            rig: rig.set.entries[active].rig.name,
            device: grant.device, sampleRate: grant.sampleRate, period: grant.period, periods: grant.periods,
            bufferMs: grant.outputLatency * 1000, seconds: current.seconds, voices: current.voices,
            voicesShed: rig.voicesShed,
            dspLoad: current.statistics.dspLoad, peakLoad: current.statistics.peakLoad, xruns: current.statistics.xruns,
            lateSlices: current.statistics.lateSlices, deviceLost: current.statistics.isInterrupted,
            midiDelivered: live.deliveredCount, midiLate: live.lateCount, midiDropped: live.droppedCount,
            midiStale: live.staleCount,
            keyboards: sequencerUp
                ? keyboards.keys.sorted { ($0.client, $0.port) < ($1.client, $1.port) }.map { keyboards[$0]! } : nil,
            controls: router.mappings.map {
                ServiceStatus.Control(cc: $0.controller, channel: $0.channel, target: $0.target)
            },
            learning: router.learnedMapping == nil ? learning : nil, rigSwitches: router.switchCount, reloads: reloads,
            reloadFailure: reloadFailure, fallback: fallback, stuckUnit: stuckUnit,
            meters: rig.meters.map { ServiceStatus.Meter(name: $0.name, peak: $0.peak, average: $0.average) },
            warnings: rig.warnings, tempo: tempo, transportPlaying: rig.transport.isPlaying,
            transportBeat: rig.transport.renderedPosition.beat, transportTempo: rig.transport.renderedPosition.tempo,
            recordingTo: session?.recordingPath, recordingFailure: session?.status.recordingFailure,
            recentMIDI: midi?.activity.entries().map {
                ServiceStatus.MIDIActivity(sequence: $0.sequence, text: $0.text)
            }, limiter: Self.limiter(rig.outputStage))
    }

    /// The output stage's state for the status.
    static func limiter(_ stage: PeakLimiterUnit) -> ServiceStatus.Limiter {
        let activity = stage.activity
        return ServiceStatus.Limiter(
            on: stage.limiting, latencyMs: stage.latency * 1000, limitedSamples: activity.limitedSamples,
            deepestReductionDb: Double(activity.deepestReduction), fullScaleSamples: activity.fullScaleSamples,
            peakDb: Double(activity.peak))
    }

    /// One request line → one reply line (JSON).
    func handle(_ line: String) -> String {
        let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let command = words.first else { return Self.error("empty request") }
        guard let rig, let midi else { return Self.error("not playing yet") }
        let activeRig = midi.router?.activeRig ?? 0
        do {
            switch command {
            case "status":
                guard let status else { return Self.error("not playing yet") }
                return try Self.json(status)
            case "set"
            where words.count >= 3 && ["output.eq", "master.eq"].contains(words[1].lowercased())
                && (!rig.masterEQInFlow || ["off", "none"].contains(words[2].lowercased())):
                // The master EQ in or out of the signal path: a graph change.
                let preset = ["off", "none"].contains(words[2].lowercased()) ? nil : words[2...].joined(separator: " ")
                try rig.setMasterEQ(preset)
                return #"{"ok":true,"target":"output.eq","value":"\#(Self.escape(preset ?? "off"))"}"#
            case "get"
            where words.count == 2 && ["output.eq", "master.eq"].contains(words[1].lowercased()) && !rig.masterEQInFlow:
                return #"{"target":"output.eq","value":"off"}"#
            case "get" where words.count == 2:
                let target = try rig.target(words[1], preferring: activeRig)
                return #"{"target":"\#(Self.escape(target.name))","value":\#(try target.current())}"#
            case "set" where words.count >= 3:
                let target = try rig.target(words[1], preferring: activeRig)
                let text = words[2...].joined(separator: " ")
                var value = Float(text)
                if value == nil, case .eqPreset = target.kind { value = IPodEQUnit.curveIndex(text).map(Float.init) }
                guard let value, value.isFinite else {
                    return Self.error("'\(text)' is not a value for \(target.name)")
                }
                guard target.range.contains(value) else {
                    return Self.error(
                        "\(target.name) takes \(target.range.lowerBound.clean)…\(target.range.upperBound.clean), not "
                            + "\(text)"
                    )
                }
                try target.apply(value)
                return #"{"ok":true,"target":"\#(Self.escape(target.name))","value":\#(value)}"#
            case "learn" where words.count == 2 || words.count == 3:
                // `learn TARGET [SECONDS]`: waits that long (default 30 s, at most an hour) for a controller.
                let seconds = words.count == 3 ? Double(words[2]) : 30
                guard let seconds, seconds > 0, seconds <= 3600 else {
                    return Self.error("'\(words[2])' is not a number of seconds to wait (0…3600)")
                }
                let target = try rig.target(words[1], preferring: activeRig)
                midi.learn(target)
                learning = target.name
                learningUntil = monotonicNanoseconds() + Int64(seconds * 1e9)
                return #"{"learning":"\#(Self.escape(target.name))"}"#
            case "unlearn" where words.count == 1:
                stopLearning()
                return #"{"ok":true}"#
            case "learned":
                if let mapping = midi.router?.learnedMapping {
                    learning = nil
                    let (cc, channel, target) = (mapping.controller, mapping.channel ?? 0, Self.escape(mapping.target))
                    return #"{"learned":{"cc":\#(cc),"channel":\#(channel),"target":"\#(target)"}}"#
                }
                return learning.map { #"{"learning":"\#(Self.escape($0))"}"# } ?? Self.error("not learning")
            case "rig" where words.count == 2:
                let name = words[1]
                guard
                    let index = Int(name).map({ $0 &- 1 })  // wrapping: `rig -9223372036854775808` is just not a rig
                        ?? rig.set.entries.firstIndex(where: { $0.rig.name.lowercased() == name.lowercased() }),
                    rig.set.entries.indices.contains(index)
                else {
                    return Self.error(
                        "no rig '\(name)' (1…\(rig.set.entries.count) or a name: "
                            + "\(rig.set.entries.map(\.rig.name).joined(separator: ", ")))"
                    )
                }
                midi.select(rig: index)
                try rig.applyOutputSettings(ofRig: index)
                return #"{"ok":true,"rig":"\#(Self.escape(rig.set.entries[index].rig.name))"}"#
            case "parts" where words.count == 1:
                return try Self.json(PanelParts(rig, active: activeRig))
            case "fonts" where words.count == 1:
                return try Self.json(PanelFonts(rig, active: activeRig))
            case "tempo" where words.count == 2:
                guard let bpm = Double(words[1]), (20...400).contains(bpm) else {
                    return Self.error("'\(words[1])' is not a tempo (20…400 beats per minute)")
                }
                rig.transport.setTempo(bpm)
                tempo = bpm
                return #"{"ok":true,"tempo":\#(bpm)}"#
            case "transport" where words.count == 2 || (words.count == 3 && words[1] == "locate"):
                // Through JACK, its transport is the one every client follows, aulos's host transport included.
                let jack = session?.io.transport.flatMap { $0.drivesHostTransport ? $0 : nil }
                switch words[1] {
                case "play": if let jack { jack.startTransport() } else { rig.transport.play() }
                case "stop": if let jack { jack.stopTransport() } else { rig.transport.stop() }
                case "rewind":
                    if let jack { jack.locateTransport(beat: 0, bpm: 120) } else { rig.transport.rewind() }
                case "locate" where Double(words[2]).map { $0.isFinite && $0 >= 0 } == true:
                    if let jack {
                        jack.locateTransport(beat: Double(words[2])!, bpm: rig.transport.renderedPosition.tempo)
                    } else {
                        rig.transport.locate(beat: Double(words[2])!)
                    }
                default:
                    return Self.error("transport takes play, stop, rewind or locate BEAT (a beat ≥ 0)")
                }
                return #"{"ok":true,"transport":"\#(Self.escape(words[1]))"}"#
            case "preset" where words.count == 4:
                // `preset PART BANK PROGRAM`: bank select and program change to that part alone.
                guard let bank = Int(words[2]), (0...16383).contains(bank), let program = Int(words[3]),
                    (0...127).contains(program)
                else { return Self.error("preset takes PART BANK (0…16383) PROGRAM (0…127)") }
                guard
                    let part = rig.parts.indices.first(where: {
                        rig.parts[$0].rigIndex == activeRig
                            && rig.parts[$0].part.name.lowercased() == words[1].lowercased()
                    })
                else {
                    let names = rig.parts.filter { $0.rigIndex == activeRig }.map(\.part.name)
                    return Self.error("no part '\(words[1])' (this rig has \(names.joined(separator: ", ")))")
                }
                let channel = UInt8((rig.parts[part].part.channels.first ?? 1) - 1)
                midi.send(
                    [
                        ChannelMessage(status: 0xB0 | channel, data1: 0, data2: UInt8(bank >> 7)),
                        ChannelMessage(status: 0xB0 | channel, data1: 32, data2: UInt8(bank & 0x7F)),
                        ChannelMessage(status: 0xC0 | channel, data1: UInt8(program)),
                    ], toPart: part)
                return #"{"ok":true,"part":"\#(Self.escape(rig.parts[part].part.name))","bank":\#(bank),"#
                    + #""program":\#(program)}"#
            case "record" where words.count == 2 || (words.count == 3 && words[1] == "start"):
                return try record(words.dropFirst().map { $0 })
            case "midi" where words.count >= 2:
                var bytes: [UInt8] = []
                for word in words.dropFirst() {
                    guard let byte = UInt8(word, radix: 16) else { return Self.error("'\(word)' is not a hex byte") }
                    bytes.append(byte)
                }
                var parser = MIDIParser()
                var count = 0
                let now = monotonicNanoseconds()
                parser.parse(bytes) { message in
                    if let channel = ChannelMessage(message) {
                        midi.receive(channel, from: .controlSocket, arrivalNanos: now)
                    } else {
                        midi.receive(system: message, from: .controlSocket, arrivalNanos: now)
                    }
                    count += 1
                }
                return #"{"ok":true,"messages":\#(count)}"#
            default:
                return Self.error(
                    "unknown request '\(line.prefix(40))' "
                        + "(status, parts, fonts, get T, set T V, learn T [SECONDS], learned, unlearn, rig N, "
                        + "preset PART BANK PROGRAM, tempo BPM, transport play|stop|rewind|locate BEAT, "
                        + "record start [NAME]|stop, midi HEX…)"
                )
            }
        } catch let error as AudioUnitError {
            return Self.error(error.detail)
        } catch let error as CustomStringConvertible {
            return Self.error(error.description)
        } catch {
            return Self.error("\(error)")
        }
    }

    /// `record start [NAME]` / `record stop`: the master output into NAME (.wav or .flac; default a dated
    /// FLAC) in the record folder, and each part beside it with `--record-parts`. A name is only a name — a
    /// request from the network chooses no folder — and an existing file is never replaced.
    private func record(_ words: [String]) throws -> String {
        guard let session else { return Self.error("not playing yet") }
        if words == ["stop"] {
            let done = try session.stopRecording()
            let parts = done.dropFirst().map { #""\#(Self.escape($0.path))""# }.joined(separator: ",")
            let failure = done.compactMap(\.failure).first.map { #","failed":"\#(Self.escape($0))""# } ?? ""
            return #"{"ok":true,"recorded":"\#(Self.escape(done[0].path))","frames":\#(done[0].frames),"#
                + #""dropped":\#(done.map(\.dropped).reduce(0, +)),"parts":[\#(parts)]\#(failure)}"#
        }
        guard words.first == "start" else { return Self.error("record takes start [NAME.wav|NAME.flac] or stop") }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let name = words.count == 2 ? words[1] : "aulos-\(formatter.string(from: Date())).flac"
        guard !name.contains("/"), !name.hasPrefix("."), name.hasSuffix(".wav") || name.hasSuffix(".flac") else {
            return Self.error("record start takes a file name (no folder) ending in .wav or .flac, not '\(name)'")
        }
        let path = recordFolder + "/" + name
        // Refused (the parts' files too) by `RecordingTarget`, the rule `--record` follows.
        try session.startRecording(to: path)
        return #"{"ok":true,"recording":"\#(Self.escape(path))"}"#
    }

    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func error(_ text: String) -> String { #"{"error":"\#(escape(text))"}"# }

    static func escape(_ text: String) -> String { text.escapedForDoubleQuotes }
}
