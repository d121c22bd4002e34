import AulosCore
import AulosIO
import AulosMIDI
import AulosRealtime
import AulosRig
import AulosUnits
import Foundation

/// Carries out `ControlRequest`s on the live instrument — the one executor behind the control socket, OSC
/// and the web panel — and keeps what the status shows: the latest live status, the connected keyboards,
/// MIDI-learn, the tempo set, and why a reload failed or the last good rig plays.
///
/// Threads: the control thread only (`targets.setAtOnce` is the part of `set` other threads may do).
final class ControlExecutor {
    private var rig: PlaybackRig?
    private var midi: LiveMIDIPath?
    private var live: LiveMIDIInput?
    private var reloads = 0
    private var current: LiveStatus?
    private var keyboards: [MIDIPortName: String] = [:]
    private var sequencerUp = false
    /// The network MIDI sessions as the input last reported them (nil: the input has no network).
    private var networkSessions: [NetworkSessionCounters]?
    private var learning: String?
    /// When an unanswered MIDI-learn gives up (CLOCK_MONOTONIC ns): a client that timed out or went away
    /// must not leave the instrument learning, or "learning" in the status, for ever.
    private var learningUntil: Int64 = 0
    /// The tempo the last `tempo` request set.
    private var tempo: Double?
    /// The rig the last `rig` request chose (its index and name), until the road that asked takes it to log
    /// the switch with where it came from (`LiveControl`).
    var chosenRig: (index: Int, name: String)?
    /// Why the last SIGHUP could not reload the rig file (nil once one succeeds).
    var reloadFailure: String?
    /// Why the last good rig plays instead of the configured one, when it does.
    var fallback: String?
    /// The file player's state, each tick (nil: no file loaded).
    var player: ServiceStatus.Player?
    /// The snapshot recalled last (nil: none since the rig was built).
    private var snapshot: String?
    /// The unit a render cycle is stuck in, said as the watchdog says it.
    var stuckUnit: String?
    /// The playing rig's targets, resolved once each; shared with the threads that set parameters at once.
    let targets = ControlTargets()

    /// The session playing (for recording), and the folder `record start` writes in.
    private var session: LiveSession?
    var recordFolder = "."

    func begin(rig: PlaybackRig, midi: LiveMIDIPath, live: LiveMIDIInput, session: LiveSession, reloads: Int) {
        self.rig = rig
        snapshot = nil
        self.session = session
        self.midi = midi
        self.live = live
        self.reloads = reloads
        targets.attach(midi)
    }

    func end() {
        targets.detach()
        session = nil
        rig = nil
        midi = nil
        live = nil
    }

    func note(_ notice: MIDIInputNotice) {
        switch notice {
        case .connected(let port):
            keyboards[Self.key(port)] = port.isNetwork ? "\(port.clientName): \(port.portName)" : port.description
        case .disconnected(let port, _): keyboards[Self.key(port)] = nil
        case .subscribed(let port): keyboards[Self.key(port)] = "\(port.address) \(port.clientName)"
        case .listening, .connectFailed, .inputOverflow, .networkListening, .networkInvitation, .networkMIDI2Listening,
            .unavailable:
            break
        }
    }

    /// A keyboard is known by where it is (a port's names may differ between its notices).
    private static func key(_ port: MIDIPortName) -> MIDIPortName {
        MIDIPortName(client: port.client, port: port.port, clientName: "", portName: "")
    }

    func update(_ status: LiveStatus, sequencerUp: Bool, networkSessions: [NetworkSessionCounters]? = nil) {
        current = status
        self.sequencerUp = sequencerUp
        self.networkSessions = networkSessions
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
            dspLoad: current.statistics.dspLoad, peakLoad: current.statistics.peakLoad,
            meanLoad: current.statistics.meanLoad, cpu: session.flatMap { Self.cpu($0.cpu, of: rig) },
            rigLoads: session.flatMap { Self.rigLoads($0.cpu) }, xruns: current.statistics.xruns,
            lateSlices: current.statistics.lateSlices, deviceLost: current.statistics.isInterrupted,
            midiDelivered: live.deliveredCount, midiLate: live.lateCount, midiDropped: live.droppedCount,
            midiStale: live.staleCount,
            // Network sessions are listed with the keyboards even while there is no sequencer.
            keyboards: sequencerUp || !keyboards.isEmpty
                ? keyboards.keys.sorted { ($0.client, $0.port) < ($1.client, $1.port) }.map { keyboards[$0]! } : nil,
            networkSessions: networkSessions?.map {
                ServiceStatus.NetworkSession(
                    peer: $0.peerName, address: $0.address, kind: $0.kind, packets: $0.packets, lost: $0.lost,
                    repaired: $0.repaired, latencyMs: $0.latencyMs, clockRoundTripMs: $0.clockRoundTripMs)
            },
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
            }, limiter: Self.limiter(rig.outputStage), programs: Self.programs(of: rig, active), player: player,
            snapshot: snapshot, sampleStreaming: Self.sampleStreaming(of: rig, active))
    }

    /// Snapshot `index` of rig `rigIndex` was recalled by a program change on its snapshot channel, and its
    /// values set (`PlaybackRig.apply`): its programs are played and the status names it. Returns its name.
    func recalledByProgramChange(snapshot index: Int, ofRig rigIndex: Int) -> String? {
        guard let rig, let midi, rig.set.entries.indices.contains(rigIndex),
            rig.set.entries[rigIndex].rig.snapshots.indices.contains(index)
        else { return nil }
        for (part, messages) in rig.programMessages(ofSnapshot: index, ofRig: rigIndex) {
            midi.send(messages, toPart: part)
        }
        snapshot = rig.set.entries[rigIndex].rig.snapshots[index].name
        return snapshot
    }

    /// The meter's loads for the status; nil with unit timing off (every figure would read 0).
    static func cpu(_ meter: RigCPUMeter, of rig: PlaybackRig) -> ServiceStatus.CPU? {
        guard UnitTiming.isEnabled else { return nil }
        return ServiceStatus.CPU(
            parts: rig.parts.indices.map { index in
                ServiceStatus.CPU.Part(
                    rig: rig.parts[index].rigIndex, part: rig.parts[index].part.name, cpu: meter.parts[index],
                    mean: meter.partMeans[index])
            }, shared: meter.shared, meters: meter.meters, sharedMean: meter.sharedMean, metersMean: meter.metersMean)
    }

    /// Each rig's last measured peak and predicted fit, for the status and the panel's rig menu.
    static func rigLoads(_ meter: RigCPUMeter) -> [ServiceStatus.RigLoad]? {
        guard UnitTiming.isEnabled else { return nil }
        return meter.predictions.map {
            ServiceStatus.RigLoad(
                name: $0.name, measured: $0.peak != nil, peak: $0.peak, predicted: $0.predicted, fits: $0.fits)
        }
    }

    /// Rig `active`'s SFZ parts' streaming, nil when it has none.
    static func sampleStreaming(of rig: PlaybackRig, _ active: Int) -> [SampleStreamingStatus]? {
        let parts = rig.sampleStreaming.filter { $0.rig == active }
        return parts.isEmpty ? nil : parts
    }

    /// What each channel of rig `active`'s parts plays now.
    static func programs(of rig: PlaybackRig, _ active: Int) -> [ServiceStatus.ChannelProgram] {
        rig.parts.filter { $0.rigIndex == active }.flatMap { loaded in
            loaded.part.channels.compactMap { channel in
                loaded.instrument.midiInput.program(onChannel: channel - 1).map {
                    ServiceStatus.ChannelProgram(
                        part: loaded.part.name, channel: channel, bank: $0.bank, program: $0.program)
                }
            }
        }
    }

    /// The set as it plays now, every value a player changed in its place (`PlaybackRig.liveSet`).
    func liveSet() throws -> RigSet {
        guard let rig, let router = midi?.router else {
            throw ControlFailure("not playing yet", reason: .unavailable)
        }
        return try rig.liveSet(
            activeRig: router.activeRig, learned: router.learnedMappings, tempo: rig.transport.renderedPosition.tempo)
    }

    /// The status as a reply (an error until the instrument plays).
    var statusReply: ControlReply { status.map(ControlReply.status) ?? .failure("not playing yet", .unavailable) }

    /// The output stage's state for the status.
    static func limiter(_ stage: PeakLimiterUnit) -> ServiceStatus.Limiter {
        let activity = stage.activity
        return ServiceStatus.Limiter(
            on: stage.limiting, latencyMs: stage.latency * 1000, limitedSamples: activity.limitedSamples,
            deepestReductionDb: Double(activity.deepestReduction), fullScaleSamples: activity.fullScaleSamples,
            peakDb: Double(activity.peak))
    }

    // MARK: Requests

    /// Carries out one request; every failure is a one-line reply.
    func perform(_ request: ControlRequest) -> ControlReply {
        guard let rig, let midi else { return .failure("not playing yet", .unavailable) }
        let activeRig = midi.activeRig ?? 0
        let playing = Playing(rig: rig, midi: midi, activeRig: activeRig)
        do {
            switch request {
            case .status: return statusReply
            case .parts: return .parts(PanelParts(rig, active: activeRig))
            case .fonts: return .fonts(PanelFonts(rig, active: activeRig))
            case .get(let target): return try get(target, playing)
            case .set(let target, let value): return try set(target, to: value, playing)
            case .learn(let target, let seconds): return try learn(target, for: seconds, playing)
            case .unlearn:
                stopLearning()
                return .done(ControlReply.Done())
            case .learned: return learned(midi)
            case .rig(let choice): return try select(choice, playing)
            case .preset(let part, let bank, let program, let channel):
                return preset(part, bank: bank, program: program, channel: channel, playing)
            case .tempo(let bpm):
                guard (20...400).contains(bpm) else {
                    return .failure("'\(bpm)' is not a tempo (20…400 beats per minute)")
                }
                // The session's tempo, not a change at this beat: a rewind or a loop plays at it too.
                rig.transport.setTempoThroughout(bpm)
                tempo = bpm
                var done = ControlReply.Done()
                done.tempo = bpm
                return .done(done)
            case .transport(let command): return transport(command, rig)
            case .record(let command): return try record(command)
            case .midi(let bytes): return play(bytes, midi)
            // The session that knows the rig's file saves (`LiveControl`); here there is none.
            case .save: return .failure("this instrument plays no rig file to save")
            case .player: return .failure(FilePlayer.noneLoaded)
            case .snapshot(let choice):
                let recalled: String
                do {
                    recalled = try rig.recall(choice, ofRig: activeRig) { part, messages in
                        midi.send(messages, toPart: part)
                    }
                } catch { return .failure(error.message) }
                snapshot = recalled
                var done = ControlReply.Done()
                done.snapshot = recalled
                return .done(done)
            }
        } catch let error as AudioUnitError {
            return .failure(error.detail)
        } catch let error as CustomStringConvertible {
            return .failure(error.description)
        } catch {
            return .failure("\(error)")
        }
    }

    /// What every request acts on.
    private struct Playing {
        let rig: PlaybackRig
        let midi: LiveMIDIPath
        let activeRig: Int
    }

    private static func isOutputEQ(_ target: String) -> Bool {
        ["output.eq", "master.eq"].contains(target.lowercased())
    }

    private func get(_ name: String, _ playing: Playing) throws -> ControlReply {
        if Self.isOutputEQ(name) && !playing.rig.masterEQInFlow {
            return .value(target: "output.eq", value: .text("off"))
        }
        let target = try targets.resolve(name, in: playing.rig, activeRig: playing.activeRig)
        return .value(target: target.name, value: ControlTargets.reported(try target.current(), of: target))
    }

    private func set(_ name: String, to value: ControlValue, _ playing: Playing) throws -> ControlReply {
        let off = ["off", "none"].contains(value.text.lowercased())
        if Self.isOutputEQ(name) && (!playing.rig.masterEQInFlow || off) {
            // The master EQ in or out of the signal path: a graph change.
            try playing.rig.setMasterEQ(off ? nil : value.text)
            var done = ControlReply.Done()
            done.target = "output.eq"
            done.value = .text(off ? "off" : value.text)
            return .done(done)
        }
        return ControlTargets.set(try targets.resolve(name, in: playing.rig, activeRig: playing.activeRig), to: value)
    }

    private func learn(_ name: String, for seconds: Double, _ playing: Playing) throws -> ControlReply {
        let target = try targets.resolve(name, in: playing.rig, activeRig: playing.activeRig)
        playing.midi.learn(target)
        learning = target.name
        learningUntil = monotonicNanoseconds() + Int64(seconds * 1e9)
        return .learning(target.name)
    }

    private func learned(_ midi: LiveMIDIPath) -> ControlReply {
        if let mapping = midi.router?.learnedMapping {
            learning = nil
            return .learned(
                ControlReply.Learned(cc: mapping.controller, channel: mapping.channel ?? 0, target: mapping.target))
        }
        return learning.map(ControlReply.learning) ?? .failure("not learning")
    }

    private func select(_ choice: ControlRequest.RigChoice, _ playing: Playing) throws -> ControlReply {
        let entries = playing.rig.set.entries
        let index: Int? =
            switch choice {
            case .number(let number): number &- 1  // wrapping: `rig -9223372036854775808` is just not a rig
            case .name(let name): entries.firstIndex { $0.rig.name.lowercased() == name.lowercased() }
            }
        guard let index, entries.indices.contains(index) else {
            let asked =
                switch choice {
                case .number(let number): "\(number)"
                case .name(let name): name
                }
            let names = entries.map(\.rig.name).joined(separator: ", ")
            return .failure("no rig '\(asked)' (1…\(entries.count) or a name: \(names))")
        }
        playing.midi.select(rig: index)
        try playing.rig.applyOutputSettings(ofRig: index)
        chosenRig = (index, entries[index].rig.name)
        var done = ControlReply.Done()
        done.rig = entries[index].rig.name
        return .done(done)
    }

    /// `preset PART BANK PROGRAM`: bank select and program change to that part alone.
    private func preset(_ name: String, bank: Int, program: Int, channel: Int?, _ playing: Playing) -> ControlReply {
        let rig = playing.rig
        guard
            let part = rig.parts.indices.first(where: {
                rig.parts[$0].rigIndex == playing.activeRig && rig.parts[$0].part.name.lowercased() == name.lowercased()
            })
        else {
            let names = rig.parts.filter { $0.rigIndex == playing.activeRig }.map(\.part.name)
            return .failure("no part '\(name)' (this rig has \(names.joined(separator: ", ")))")
        }
        let channels = rig.parts[part].part.channels
        if let channel, !channels.contains(channel) {
            return .failure(
                "part '\(rig.parts[part].part.name)' plays channels "
                    + "\(channels.map(String.init).joined(separator: ", ")), not \(channel)")
        }
        let number = channel ?? channels.first ?? 1
        playing.midi.send(
            ChannelPrograms.Choice(bank: bank, program: program).messages(onChannel: number), toPart: part)
        var done = ControlReply.Done()
        (done.part, done.bank, done.program, done.channel) = (rig.parts[part].part.name, bank, program, number)
        return .done(done)
    }

    /// Through JACK, its transport is the one every client follows, aulos's host transport included.
    private func transport(_ command: ControlRequest.Transport, _ rig: PlaybackRig) -> ControlReply {
        let jack = session?.io.transport.flatMap { $0.drivesHostTransport ? $0 : nil }
        var done = ControlReply.Done()
        switch command {
        case .play:
            if let jack { jack.startTransport() } else { rig.transport.play() }
            done.transport = "play"
        case .stop:
            if let jack { jack.stopTransport() } else { rig.transport.stop() }
            done.transport = "stop"
        case .rewind:
            if let jack { jack.locateTransport(beat: 0, bpm: 120) } else { rig.transport.rewind() }
            done.transport = "rewind"
        case .locate(let beat):
            if let jack {
                jack.locateTransport(beat: beat, bpm: rig.transport.renderedPosition.tempo)
            } else {
                rig.transport.locate(beat: beat)
            }
            done.transport = "locate"
        }
        return .done(done)
    }

    /// `record start [NAME]` / `record stop`: the master output into NAME (.wav or .flac; default a dated
    /// FLAC) in the record folder, and each part beside it with `--record-parts`. A name is only a name — a
    /// request from the network chooses no folder — and an existing file is never replaced.
    private func record(_ command: ControlRequest.Recording) throws -> ControlReply {
        guard let session else { return .failure("not playing yet", .unavailable) }
        var done = ControlReply.Done()
        guard case .start(let named) = command else {
            let finished = try session.stopRecording()
            done.recorded = finished[0].path
            done.frames = finished[0].frames
            done.dropped = finished.map(\.dropped).reduce(0, +)
            done.parts = finished.dropFirst().map(\.path)
            done.failed = finished.compactMap(\.failure).first
            return .done(done)
        }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let name = named ?? "aulos-\(formatter.string(from: Date())).flac"
        guard !name.contains("/"), !name.hasPrefix("."), name.hasSuffix(".wav") || name.hasSuffix(".flac") else {
            return .failure("record start takes a file name (no folder) ending in .wav or .flac, not '\(name)'")
        }
        let path = recordFolder + "/" + name
        // Refused (the parts' files too) by `RecordingTarget`, the rule `--record` follows.
        try session.startRecording(to: path)
        done.recording = path
        return .done(done)
    }

    /// `midi HEX…`: played as if a keyboard had sent it.
    private func play(_ bytes: [UInt8], _ midi: LiveMIDIPath) -> ControlReply {
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
        var done = ControlReply.Done()
        done.messages = count
        return .done(done)
    }
}
