import AulosCore
import AulosRealtime
import Synchronization

/// What the transport tells the control thread about (Core Audio's HostTransportState listener).
public struct TransportChange: BitwiseCopyable, Sendable, Equatable {
    public var isPlaying: Bool
    public var isRecording: Bool
    public var beat: Double
}

/// Remote-control events a unit or a MIDI controller sends the host (Core Audio's AudioUnitRemoteControlEvent).
public enum RemoteControlEvent: Sendable, Equatable {
    case togglePlayPause, toggleRecord, rewindToStart
}

/// Commands from the control thread, applied at the start of the next slice.
enum TransportCommand: BitwiseCopyable {
    case play, stop, toggleRecord
    case locate(beat: Double)
    case tempo(Double)
    case tempoThroughout(Double)
    case cycle(start: Double, end: Double, enabled: Bool)
    case clock(MIDIClockFollower.Line, running: Bool)
    case internalClock
    case followExternal(Bool)
}

/// Where another transport (JACK's) stands for the cycle about to render: written by the I/O unit on the
/// render thread before it pulls the graph, read by the transport's pre-render notification on the same
/// thread. Not `valid`, the transport runs on its own from where it is. `beat` and `bpm` are NaN when that
/// transport has no musical position (no timebase master): the beat then comes from this transport's own
/// tempo map at `frame`.
public struct ExternalTransportPosition: BitwiseCopyable, Sendable {
    public var valid = false
    public var rolling = false
    /// The other transport's frame (its timeline) at the cycle's first frame.
    public var frame: Int64 = 0
    /// The graph's sample time of that first frame.
    public var sampleTime: Int64 = 0
    /// Quarter-note beats and quarter notes a minute.
    public var beat = Double.nan
    public var bpm = Double.nan

    public init() {}
}

/// The per-slice answers the host callbacks give. `valid` is 1 only between pre- and post-render.
struct TransportSnapshot {
    var valid: UInt8 = 0
    var beat = 0.0
    var tempo = 120.0
    var sampleInTimeline = 0.0
    var deltaToNextBeat: UInt32 = 0
    var timeSignatureNumerator: Float = 4
    var timeSignatureDenominator: UInt32 = 4
    var measureDownbeat = 0.0
    var playing: UInt8 = 0
    var recording: UInt8 = 0
    var changed: UInt8 = 0
    var cycling: UInt8 = 0
    var cycleStart = 0.0
    var cycleEnd = 0.0
}

struct TempoSegment: BitwiseCopyable {
    var sample: Int64
    var beat: Double
    var bpm: Double
}

/// Render-side timeline state.
struct TransportTimeline {
    var position: Int64 = 0  // timeline sample
    var playing = false
    var recording = false
    var changed = true
    var segments: UnsafeMutablePointer<TempoSegment>
    var segmentCount: Int
    var segmentCapacity: Int
    var cycling = false
    var cycleStart = 0.0
    var cycleEnd = 0.0
    var following = false
    var clockLine = MIDIClockFollower.Line(origin: 0, secondsPerTick: 60.0 / (24 * 120), startBeat: 0)
    var clockRunning = false
    /// Following `ExternalTransportPosition` (JACK's transport) rather than its own play/stop and position.
    var external = false
    /// This slice took its position from the external transport (so the end of the slice does not advance it).
    var externalThisSlice = false
}

/// The beat and tempo the last slice rendered with, for the status (render thread writes, any thread reads).
struct PublishedPosition: ~Copyable {
    let beat = Atomic<UInt64>(0)
    let tempo = Atomic<UInt64>(120.0.bitPattern)
}

/// The host's timeline (Core Audio's host beat/tempo/transport, on Linux): tempo map, time signature,
/// play/stop/record, cycle; or, when following an external MIDI clock, the clock's beat and tempo.
/// It advances sample-exactly with the slices and answers the units' host callbacks from one snapshot per
/// slice, valid only during render (elsewhere the callbacks return cannotDoInCurrentContext).
///
/// Threads: control thread for the API; the render notify (pre/post) on the render thread. Commands go
/// control → render and changes render → control through SPSC rings; nothing on the render side allocates.
public final class HostTransport: @unchecked Sendable {
    public let sampleRate: Double
    public let timeSignature: (numerator: Int, denominator: Int)
    private let snapshot: UnsafeMutablePointer<TransportSnapshot>
    private let timeline: UnsafeMutablePointer<TransportTimeline>
    private let commands = SPSCRing<TransportCommand>(minimumCapacity: 256)
    private let changes = SPSCRing<TransportChange>(minimumCapacity: 256)
    private var listeners: [(TransportChange) -> Void] = []
    private var follower = MIDIClockFollower()
    /// Another transport's position for the slice about to render (see `followExternal`).
    public let externalPosition: UnsafeMutablePointer<ExternalTransportPosition>
    private let published: UnsafeMutablePointer<PublishedPosition>

    /// `tempoMap`: (beat, BPM) pairs, sorted, starting at beat 0 (default: 120 BPM throughout).
    public init(
        sampleRate: Double, tempoMap: [(beat: Double, bpm: Double)] = [(0, 120)], timeSignature: (Int, Int) = (4, 4)
    ) {
        self.sampleRate = sampleRate
        self.timeSignature = (timeSignature.0, timeSignature.1)
        snapshot = .allocate(capacity: 1)
        snapshot.initialize(to: TransportSnapshot())
        externalPosition = .allocate(capacity: 1)
        externalPosition.initialize(to: ExternalTransportPosition())
        published = .allocate(capacity: 1)
        published.initialize(to: PublishedPosition())
        snapshot.pointee.timeSignatureNumerator = Float(timeSignature.0)
        snapshot.pointee.timeSignatureDenominator = UInt32(timeSignature.1)
        let capacity = max(64, tempoMap.count + 64)
        let segments = UnsafeMutablePointer<TempoSegment>.allocate(capacity: capacity)
        timeline = .allocate(capacity: 1)
        timeline.initialize(to: TransportTimeline(segments: segments, segmentCount: 0, segmentCapacity: capacity))
        var sample = 0.0
        var previous = (beat: 0.0, bpm: tempoMap.first?.bpm ?? 120)
        for (index, change) in (tempoMap.isEmpty ? [(0.0, 120.0)] : tempoMap).enumerated() {
            if index > 0 { sample += (change.0 - previous.beat) * 60 / previous.bpm * sampleRate }
            segments[index] = TempoSegment(sample: Int64(sample.rounded()), beat: change.0, bpm: change.1)
            previous = (change.0, change.1)
            timeline.pointee.segmentCount = index + 1
        }
    }

    deinit {
        if let renderContextStorage {
            renderContextStorage.deinitialize(count: 1)
            renderContextStorage.deallocate()
        }
        timeline.pointee.segments.deallocate()
        timeline.deallocate()
        snapshot.deallocate()
        externalPosition.deallocate()
        published.deinitialize(count: 1)
        published.deallocate()
        commands.deallocate()
        changes.deallocate()
    }

    // MARK: Control

    public func play() { send(.play) }
    public func stop() { send(.stop) }
    public func toggleRecord() { send(.toggleRecord) }
    public func locate(beat: Double) { send(.locate(beat: beat)) }
    public func rewind() { send(.locate(beat: 0)) }
    /// A new tempo from the current position on (replaces the rest of the map).
    public func setTempo(_ bpm: Double) { send(.tempo(max(1, min(1000, bpm)))) }
    /// One tempo for the whole timeline (replaces the map: a rewind or a locate back plays it too), the
    /// beat where the transport stands kept (its position moves to where that beat falls at the new tempo).
    /// What a player asks for when it says "tempo 90" during live play.
    public func setTempoThroughout(_ bpm: Double) { send(.tempoThroughout(max(1, min(1000, bpm)))) }
    public func setCycle(startBeat: Double, endBeat: Double) {
        send(.cycle(start: startBeat, end: max(startBeat + 1e-6, endBeat), enabled: true))
    }
    public func disableCycle() { send(.cycle(start: 0, end: 0, enabled: false)) }

    private func send(_ command: TransportCommand) { _ = commands.push(command) }

    /// Core Audio's remote control, from a unit or a controller.
    public func handle(remote event: RemoteControlEvent) {
        switch event {
        case .togglePlayPause:
            send(isPlaying ? .stop : .play)
        case .toggleRecord:
            send(.toggleRecord)
        case .rewindToStart:
            send(.locate(beat: 0))
        }
    }

    /// MIDI transport control: System Real-Time Start/Continue/Stop, Song Position Pointer and MIDI Machine
    /// Control (F0 7F dev 06 cmd F7: stop 01, play 02, deferred play 03, rewind 05, record strobe 06,
    /// record exit 07, pause 09). Timing clock goes to `receiveClock`.
    public func handle(_ message: MIDIMessage) {
        switch message {
        case .start:
            send(.locate(beat: 0))
            send(.play)
        case .continue: send(.play)
        case .stop: send(.stop)
        case .songPosition(let sixteenths): send(.locate(beat: Double(sixteenths) / 4))
        case .systemExclusive(let data) where data.count >= 4 && data[0] == 0x7F && data[2] == 0x06:
            switch data[3] {
            case 0x01, 0x09: send(.stop)
            case 0x02, 0x03: send(.play)
            case 0x05: send(.locate(beat: 0))
            case 0x06, 0x07: send(.toggleRecord)
            default: break
            }
        default:
            break
        }
    }

    /// Follows an external MIDI clock: clock, Start/Stop/Continue and Song Position with their arrival times
    /// (seconds on the same clock as sample time ÷ sample rate). The tempo is smoothed; the beat phase stays
    /// locked to the clock.
    public func receiveClock(_ message: MIDIMessage, at seconds: Double) {
        follower.receive(message, at: seconds)
        if let line = follower.line {
            send(.clock(line, running: follower.isRunning))
        } else if case .stop = message {
            send(.clock(MIDIClockFollower.Line(origin: 0, secondsPerTick: 1, startBeat: 0), running: false))
        }
    }

    /// Back to the internal clock.
    public func useInternalClock() { send(.internalClock) }

    /// Follows another transport (JACK's): from the next slice on, playing, position, and (when it has one)
    /// beat and tempo come from `externalPosition`, which the I/O unit fills before every pull. Off: back to
    /// this transport's own play/stop, from where the other one left it.
    public func followExternal(_ on: Bool) { send(.followExternal(on)) }

    /// The beat and tempo the last slice rendered with (quarter notes, BPM). Any thread.
    public var renderedPosition: (beat: Double, tempo: Double) {
        (
            Double(bitPattern: published.pointee.beat.load(ordering: .relaxed)),
            Double(bitPattern: published.pointee.tempo.load(ordering: .relaxed))
        )
    }

    /// This transport's tempo map, readable on the render thread (a JACK timebase master answers the
    /// server's position requests from it). Valid while the transport lives.
    public var tempoMap: TempoMapReader {
        TempoMapReader(
            context: renderContext, numerator: Double(timeSignature.numerator),
            denominator: Double(timeSignature.denominator))
    }

    /// The tempo the clock follower currently reports (nil before two ticks).
    public var followedTempo: Double? { follower.tempo }

    public func addListener(_ listener: @escaping (TransportChange) -> Void) { listeners.append(listener) }

    /// Delivers the changes the render thread reported. Call on the control thread (the offline renderer
    /// does it between slices; a live host from its main loop).
    public func dispatchChanges() {
        while let change = changes.pop() {
            isPlaying = change.isPlaying
            for listener in listeners { listener(change) }
        }
    }

    /// Last published playing state (control side).
    public private(set) var isPlaying = false

    // MARK: Units

    /// Core Audio's HostCallbackInfo for this transport; install with the HostCallbacks property.
    public var callbacks: HostCallbackInfo {
        HostCallbackInfo(
            hostUserData: UnsafeMutableRawPointer(snapshot), beatAndTempo: Self.beatAndTempo,
            musicalTimeLocation: Self.musicalTimeLocation, transportState: Self.transportState)
    }

    static let beatAndTempo: AulosHostBeatAndTempoProc = { user, beat, tempo in
        let s = user!.assumingMemoryBound(to: TransportSnapshot.self)
        guard s.pointee.valid == 1 else { return -10863 }
        beat?.pointee = s.pointee.beat
        tempo?.pointee = s.pointee.tempo
        return 0
    }

    static let musicalTimeLocation: AulosHostMusicalTimeLocationProc = {
        user, delta, numerator, denominator, downbeat in
        let s = user!.assumingMemoryBound(to: TransportSnapshot.self)
        guard s.pointee.valid == 1 else { return -10863 }
        delta?.pointee = s.pointee.deltaToNextBeat
        numerator?.pointee = s.pointee.timeSignatureNumerator
        denominator?.pointee = s.pointee.timeSignatureDenominator
        downbeat?.pointee = s.pointee.measureDownbeat
        return 0
    }

    static let transportState: AulosHostTransportStateProc = {
        user, playing, recording, changed, sample, cycling, start, end in
        let s = user!.assumingMemoryBound(to: TransportSnapshot.self)
        guard s.pointee.valid == 1 else { return -10863 }
        playing?.pointee = s.pointee.playing
        recording?.pointee = s.pointee.recording
        changed?.pointee = s.pointee.changed
        sample?.pointee = s.pointee.sampleInTimeline
        cycling?.pointee = s.pointee.cycling
        start?.pointee = s.pointee.cycleStart
        end?.pointee = s.pointee.cycleEnd
        return 0
    }

    // MARK: Render side

    /// Install with `AudioGraph.addRenderNotify` (before the instruments' scheduler is fine: callbacks are
    /// read during the pull, after every pre-render notification).
    public var renderNotify: RenderCallbackStruct {
        RenderCallbackStruct(Self.notify, refCon: UnsafeMutableRawPointer(self.renderContext))
    }

    struct RenderContext {
        var snapshot: UnsafeMutablePointer<TransportSnapshot>
        var external: UnsafeMutablePointer<ExternalTransportPosition>
        var published: UnsafeMutablePointer<PublishedPosition>
        var timeline: UnsafeMutablePointer<TransportTimeline>
        var commands: SPSCRing<TransportCommand>
        var changes: SPSCRing<TransportChange>
        var sampleRate: Double
        var beatsPerMeasure: Double
    }

    /// Made on first use of `renderNotify`, freed in deinit (LeakSanitizer found it was never freed).
    private var renderContextStorage: UnsafeMutablePointer<RenderContext>?
    private var renderContext: UnsafeMutablePointer<RenderContext> {
        if let renderContextStorage { return renderContextStorage }
        let context = UnsafeMutablePointer<RenderContext>.allocate(capacity: 1)
        context.initialize(
            to: RenderContext(
                snapshot: snapshot, external: externalPosition, published: published, timeline: timeline,
                commands: commands, changes: changes,
                sampleRate: sampleRate,
                beatsPerMeasure: Double(timeSignature.numerator) * 4 / Double(timeSignature.denominator)))
        renderContextStorage = context
        return context
    }

    static let notify: RenderCallback = { refCon, flags, timeStamp, _, frames, _ in
        let context = refCon!.assumingMemoryBound(to: RenderContext.self)
        if flags.pointee.contains(.preRender) {
            HostTransport.beginSlice(context, sampleTime: timeStamp.pointee.sampleTime)
        } else if flags.pointee.contains(.postRender) {
            HostTransport.endSlice(context, frames: Int64(frames))
        }
        return 0
    }

    @_noAllocation @_noLocks
    static func sample(_ t: UnsafeMutablePointer<TransportTimeline>, atBeat beat: Double, sampleRate: Double) -> Int64 {
        let segment = t.pointee.segments[TransportTimeline.lastSegment(t) { $0.beat <= beat }]
        // Clamped: a locate far beyond any file (or not a number) must not trap the render thread.
        let offset = (beat - segment.beat) * 60 / segment.bpm * sampleRate
        let bounded = offset.isNaN ? 0 : max(-4e15, min(4e15, offset))
        return segment.sample + Int64(bounded >= 0 ? bounded + 0.5 : bounded - 0.5)
    }

    @_noAllocation @_noLocks
    static func beginSlice(_ context: UnsafeMutablePointer<RenderContext>, sampleTime: Int64) {
        let t = context.pointee.timeline
        let rate = context.pointee.sampleRate
        while let command = context.pointee.commands.pop() {
            switch command {
            case .play:
                if !t.pointee.playing {
                    t.pointee.playing = true
                    t.pointee.changed = true
                }
            case .stop:
                if t.pointee.playing {
                    t.pointee.playing = false
                    t.pointee.changed = true
                }
            case .toggleRecord:
                t.pointee.recording.toggle()
                t.pointee.changed = true
            case .locate(let beat):
                t.pointee.position = sample(t, atBeat: beat, sampleRate: rate)
                t.pointee.changed = true
            case .tempo(let bpm):
                let now = TransportTimeline.beat(t, atSample: t.pointee.position, sampleRate: rate)
                // Keep the segments up to here, then the new tempo from the current position on.
                var count = 0
                while count < t.pointee.segmentCount && t.pointee.segments[count].sample <= t.pointee.position {
                    count += 1
                }
                count = min(max(count, 1), t.pointee.segmentCapacity - 1)
                t.pointee.segments[count] = TempoSegment(sample: t.pointee.position, beat: now.beat, bpm: bpm)
                t.pointee.segmentCount = count + 1
            case .tempoThroughout(let bpm):
                let now = TransportTimeline.beat(t, atSample: t.pointee.position, sampleRate: rate).beat
                t.pointee.segments[0] = TempoSegment(sample: 0, beat: 0, bpm: bpm)
                t.pointee.segmentCount = 1
                t.pointee.position = sample(t, atBeat: now, sampleRate: rate)
                t.pointee.changed = true
            case .cycle(let start, let end, let enabled):
                t.pointee.cycling = enabled
                t.pointee.cycleStart = start
                t.pointee.cycleEnd = end
                t.pointee.changed = true
            case .clock(let line, let running):
                t.pointee.following = true
                t.pointee.clockLine = line
                if running != t.pointee.clockRunning { t.pointee.changed = true }
                t.pointee.clockRunning = running
            case .internalClock:
                t.pointee.following = false
            case .followExternal(let on):
                t.pointee.external = on
                t.pointee.changed = true
            }
        }
        let external = context.pointee.external.pointee
        let followsExternal = t.pointee.external && external.valid
        t.pointee.externalThisSlice = followsExternal
        if followsExternal {
            // The other transport's frame is this timeline's position; a jump (a locate there) or a start or
            // stop is a change the units hear about.
            let position = external.frame + (sampleTime - external.sampleTime)
            if position != t.pointee.position || external.rolling != t.pointee.playing { t.pointee.changed = true }
            t.pointee.position = position
            t.pointee.playing = external.rolling
        }
        let s = context.pointee.snapshot
        var beat: Double
        var tempo: Double
        var playing = t.pointee.playing
        if t.pointee.following {
            let line = t.pointee.clockLine
            beat = line.startBeat + (Double(sampleTime) / rate - line.origin) / line.secondsPerTick / 24
            tempo = 60 / (24 * line.secondsPerTick)
            playing = t.pointee.clockRunning
            if !playing { beat = line.startBeat }
        } else if followsExternal && external.beat.isFinite && external.bpm > 0 {
            tempo = external.bpm
            beat = external.beat + Double(sampleTime - external.sampleTime) * tempo / 60 / rate
        } else {
            (beat, tempo) = TransportTimeline.beat(t, atSample: t.pointee.position, sampleRate: rate)
        }
        context.pointee.published.pointee.beat.store(beat.bitPattern, ordering: .relaxed)
        context.pointee.published.pointee.tempo.store(tempo.bitPattern, ordering: .relaxed)
        s.pointee.beat = beat
        s.pointee.tempo = tempo
        s.pointee.sampleInTimeline = Double(t.pointee.position)
        // No conversion here may trap, whatever a clock or a file did to the beat and tempo: values are
        // clamped into the integer types first (NaN reads as 0).
        let safeBeat = beat.isNaN ? 0 : max(-1e15, min(1e15, beat))
        let fraction = safeBeat - Double(Int64(safeBeat))
        let toNext = fraction > 0 ? (1 - fraction) * 60 / tempo * rate : 0
        let bounded = toNext >= 0 ? min(toNext, Double(UInt32.max - 1)) : 0
        let whole = Double(UInt32(bounded))
        s.pointee.deltaToNextBeat = UInt32(whole) + (bounded > whole ? 1 : 0)  // rounded up
        let measure = context.pointee.beatsPerMeasure
        s.pointee.measureDownbeat = Double(Int64(safeBeat / measure)) * measure
        s.pointee.playing = playing ? 1 : 0
        s.pointee.recording = t.pointee.recording ? 1 : 0
        s.pointee.changed = t.pointee.changed ? 1 : 0
        s.pointee.cycling = t.pointee.cycling ? 1 : 0
        s.pointee.cycleStart = t.pointee.cycleStart
        s.pointee.cycleEnd = t.pointee.cycleEnd
        s.pointee.valid = 1
        if t.pointee.changed {
            _ = context.pointee.changes.push(
                TransportChange(isPlaying: playing, isRecording: t.pointee.recording, beat: beat))
            t.pointee.changed = false
        }
    }

    @_noAllocation @_noLocks
    static func endSlice(_ context: UnsafeMutablePointer<RenderContext>, frames: Int64) {
        let t = context.pointee.timeline
        context.pointee.snapshot.pointee.valid = 0
        guard t.pointee.playing else { return }
        t.pointee.position += frames
        // Following another transport, the next slice's position comes from it (a cycle keeps its own).
        if t.pointee.externalThisSlice { return }
        if t.pointee.cycling {
            let rate = context.pointee.sampleRate
            if TransportTimeline.beat(t, atSample: t.pointee.position, sampleRate: rate).beat >= t.pointee.cycleEnd {
                t.pointee.position = sample(t, atBeat: t.pointee.cycleStart, sampleRate: rate)
                t.pointee.changed = true
            }
        }
    }
}

/// A transport's tempo map, read on the render thread: the beat and tempo at a timeline frame. A JACK
/// timebase master fills the server's bar/beat/tick position from it.
///
/// Threads: the render thread (the tempo map changes only there, at a slice's start).
public struct TempoMapReader: @unchecked Sendable {
    let context: UnsafeMutablePointer<HostTransport.RenderContext>
    /// The time signature: beats a bar, and the note value of a beat.
    public let numerator: Double
    public let denominator: Double

    /// Quarter-note beat and quarter notes a minute at timeline frame `frame`.
    @_noAllocation @_noLocks
    public func beat(atFrame frame: Int64) -> (beat: Double, bpm: Double) {
        TransportTimeline.beat(context.pointee.timeline, atSample: frame, sampleRate: context.pointee.sampleRate)
    }
}

extension TransportTimeline {
    /// The beat and tempo at a timeline sample, from the tempo segments.
    @_noAllocation @_noLocks
    static func beat(_ t: UnsafeMutablePointer<TransportTimeline>, atSample sample: Int64, sampleRate: Double) -> (
        beat: Double, bpm: Double
    ) {
        let segment = t.pointee.segments[lastSegment(t) { $0.sample <= sample }]
        return (segment.beat + Double(sample - segment.sample) * segment.bpm / 60 / sampleRate, segment.bpm)
    }

    /// The last segment for which `starts` holds (segment 0 when none does after it), by bisection: a file
    /// can hold a million tempo changes, and this runs on every slice.
    @_noAllocation @_noLocks
    static func lastSegment(_ t: UnsafeMutablePointer<TransportTimeline>, _ starts: (TempoSegment) -> Bool) -> Int {
        var (low, high) = (0, t.pointee.segmentCount - 1)
        while low < high {
            let middle = (low + high + 1) / 2
            if starts(t.pointee.segments[middle]) { low = middle } else { high = middle - 1 }
        }
        return low
    }
}
