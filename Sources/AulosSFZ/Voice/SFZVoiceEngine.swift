import AulosDSP
import AulosRealtime
import Synchronization

/// A started voice: its slot and which start in that slot it was, so a note-off for a voice already stolen
/// and started again does nothing.
///
/// Threads: a value.
public struct SFZVoiceHandle: Sendable, BitwiseCopyable, Equatable {
    public var slot: Int32
    public var generation: UInt32
}

/// How a choke ends the voices of a group: SFZ's `off_mode`.
///
/// Threads: a value.
public enum SFZChokeMode: UInt8, Sendable, BitwiseCopyable {
    /// A fade over `SFZVoiceEngine.Configuration.fadeSeconds` (3 ms), as a stolen voice.
    case fast
    /// The voice's own release.
    case normal
}

/// The engine's counters: written on the render thread, read by any thread for the status.
///
/// Threads: render thread writes, any thread reads.
public struct SFZVoiceCounters: ~Copyable {
    public let activeVoices = Atomic<Int>(0)
    /// Voice-blocks (of `SFZVoice.blockFrames` frames) in which a voice's streamed data was late and it played
    /// silence instead of waiting.
    public let underruns = Atomic<Int>(0)
    /// The frames of silence those late voices played.
    public let lateFrames = Atomic<Int>(0)
    /// Voices stolen (faded out) to make room for a new one at the polyphony limit.
    public let steals = Atomic<Int>(0)
    /// Stolen voices cut without their fade because every fade slot was busy.
    public let cuts = Atomic<Int>(0)
    /// Stream requests the loader's queue had no room for (the voice plays its head, then silence).
    public let droppedRequests = Atomic<Int>(0)
}

/// The status numbers of an engine, read at once.
///
/// Threads: a value.
public struct SFZVoiceStatus: Sendable, Equatable {
    public var activeVoices: Int
    public var underruns: Int
    public var lateFrames: Int
    public var steals: Int
    public var cuts: Int
    public var droppedRequests: Int
    public var streamedBytes: Int
    public var preloadedBytes: Int
}

/// Plays SFZ voices: a fixed pool allocated when it is made, started, released and choked by the instrument
/// unit's kernel and rendered in slices of any size.
///
/// - Polyphony: at most `polyphony` voices sound; a start beyond it steals one — released voices first, the
///   oldest of them first, else the quietest — which fades out over `fadeSeconds` (3 ms) in one of
///   `fadeSlots` extra slots while the new voice starts at once. Only when every fade slot is busy is a
///   stolen voice cut (counted: `cuts`).
/// - Sample-accurate: `start`, `release` and `choke` take a frame offset into the next `render` call (or any
///   later one); the voice changes first at that frame.
/// - Slice-independent: each voice computes its control values per block of 16 frames counted from its own
///   start and smooths what moves within it; output never depends on where slices end. With streamed
///   samples that holds offline (`waitsForData`: the render waits for the loader); live, late data plays
///   silence and is counted.
///
/// A value handle over memory made at `init` (copies share it), freed by `deallocate()`.
///
/// Threads: made and freed on the control thread; every other method on the render thread only (they are
/// allocation-free, lock-free and never wait, but for `waitsForData`); `status` from any thread.
public struct SFZVoiceEngine: @unchecked Sendable {
    /// How an engine is made.
    ///
    /// Threads: a value.
    public struct Configuration: Sendable {
        public var sampleRate: Double
        /// Voices sounding at once. 64 suits a Pi 5, 48 a Pi 4, 32 a Pi 3 (what Zynthian sets for its sampler).
        public var polyphony = 64
        /// Extra slots where stolen voices fade out.
        public var fadeSlots = 16
        public var fadeSeconds = 0.003
        /// Seconds the controller inputs take to glide most of the way to a new value (one-pole, per block).
        public var inputGlideSeconds = 0.01
        /// Offline: wait for streamed data instead of playing silence, so a render is the same at any disk
        /// speed (never set it on a live render thread).
        public var waitsForData = false
        /// How carefully voices resample. `.live` by default: under half of `.high`'s work for images and
        /// aliases still below −70 dB (FluidSynth's default 4-point sits near −30 to −40 dB), so a Pi keeps its
        /// polyphony; offline renders, which have time, should ask for `.high` (docs/performance.md).
        public var quality: SFZInterpolationQuality = .live
        public init(sampleRate: Double, polyphony: Int = 64, waitsForData: Bool = false) {
            self.sampleRate = sampleRate
            self.polyphony = polyphony
            self.waitsForData = waitsForData
        }
        /// Slots the engine (and its streamer) needs.
        public var slots: Int { max(1, polyphony) + max(1, fadeSlots) }
    }

    public let configuration: Configuration
    let voices: UnsafeMutablePointer<SFZVoice>
    let slotCount: Int
    let polyphony: Int
    let infos: UnsafeMutablePointer<SFZSampleInfo>
    let sampleCount: Int
    let context: SFZVoiceContext
    /// The engine frame at the start of the next render, and the age the next voice gets.
    let clock: UnsafeMutablePointer<(now: Int64, age: UInt64)>
    public let counters: UnsafeMutablePointer<SFZVoiceCounters>
    let preloadedBytes: Int

    /// An engine playing `store`'s samples (load them first: the engine sees the samples loaded by now),
    /// streaming through `streamer` (made with `configuration.slots` slots or more; nil when every sample is
    /// resident).
    public init(store: SFZSampleStore, streamer: SFZStreamer?, configuration: Configuration) {
        precondition(streamer.map { $0.streams.slotCount >= configuration.slots } ?? true, "too few stream slots")
        self.configuration = configuration
        polyphony = max(1, configuration.polyphony)
        slotCount = configuration.slots
        infos = store.infos
        sampleCount = store.count
        preloadedBytes = store.preloadedBytes
        let blank = SFZSampleInfo(
            frames: 0, channels: 1, sampleRate: configuration.sampleRate, headFrames: 0,
            head: UnsafeMutablePointer(bitPattern: 64)!, loopStart: -1, loopEnd: -1)
        voices = .allocate(capacity: slotCount)
        voices.initialize(repeating: SFZVoice(info: blank), count: slotCount)
        let reach = SFZInterpolator.maximumReach
        let weights = UnsafeMutablePointer<Float>.allocate(capacity: 2 * reach + 2)
        weights.initialize(repeating: 0, count: 2 * reach + 2)
        let gathered = UnsafeMutablePointer<Float>.allocate(capacity: 2 * (2 * reach + 2))
        gathered.initialize(repeating: 0, count: 2 * (2 * reach + 2))
        let rate = configuration.sampleRate
        let blockSeconds = Double(SFZVoice.blockFrames) / rate
        context = SFZVoiceContext(
            interpolator: SFZInterpolator(quality: configuration.quality), streams: streamer?.streams, weights: weights,
            gathered: gathered,
            sampleRate: rate, waitsForData: configuration.waitsForData,
            glide: Float(1 - FastMath.exp(-blockSeconds / max(blockSeconds, configuration.inputGlideSeconds))),
            fadeFrames: max(1, Int(configuration.fadeSeconds * rate + 0.5)),
            runLeft: .allocate(capacity: SFZVoice.blockFrames), runRight: .allocate(capacity: SFZVoice.blockFrames))
        clock = .allocate(capacity: 1)
        clock.initialize(to: (0, 0))
        counters = .allocate(capacity: 1)
        counters.initialize(to: SFZVoiceCounters())
    }

    /// Frees the engine's memory; once, after the render thread has stopped using it.
    public func deallocate() {
        voices.deallocate()
        context.weights.deallocate()
        context.gathered.deallocate()
        context.runLeft.deallocate()
        context.runRight.deallocate()
        context.interpolator.deallocate()
        clock.deallocate()
        counters.deinitialize(count: 1)
        counters.deallocate()
    }

    /// The longest loop (frames) a streamed sample can play from its ring; a region looping a longer span
    /// past its sample's head needs the sample loaded with `residentFrames` through the loop's end.
    public func streamableLoopFrames(ringFrames: Int) -> Int {
        ringFrames - 4 * SFZInterpolator.maximumReach - SFZStreamer.chunkFrames
    }

    /// Starts a voice playing `parameters` at frame `offset` of the next render (nil: the sample is unknown).
    @discardableResult @_noAllocation @_noLocks
    public func start(_ parameters: SFZVoiceParameters, at offset: Int = 0) -> SFZVoiceHandle? {
        let sample = Int(parameters.sample.index)
        guard sample >= 0 && sample < sampleCount else { return nil }
        let when = clock.pointee.now &+ Int64(max(0, offset))
        var sounding = 0
        for index in 0..<slotCount where voices[index].active && !voices[index].fading && voices[index].fadeAt > when {
            sounding &+= 1
        }
        if sounding >= polyphony, let victim = victim(at: when) {
            voices[victim].fadeAt = min(voices[victim].fadeAt, max(when, voices[victim].startAt))
            counters.pointee.steals.add(1, ordering: .relaxed)
        }
        var slot = -1
        for index in 0..<slotCount where !voices[index].active {
            slot = index
            break
        }
        if slot < 0 {
            // Every fade slot busy: cut the fading voice closest to silence.
            var quietest: Float = .infinity
            for index in 0..<slotCount where voices[index].fading || voices[index].fadeAt <= when {
                if voices[index].fadeGain < quietest {
                    quietest = voices[index].fadeGain
                    slot = index
                }
            }
            if slot < 0 { slot = 0 }
            finish(slot)
            counters.pointee.cuts.add(1, ordering: .relaxed)
        }
        let age = clock.pointee.age
        clock.pointee.age = age &+ 1
        voices[slot].start(parameters, info: infos[sample], at: when, age: age, slot: slot, context: context)
        if voices[slot].lateInBlock && voices[slot].streaming {
            counters.pointee.droppedRequests.add(1, ordering: .relaxed)
        }
        return SFZVoiceHandle(slot: Int32(slot), generation: voices[slot].generation)
    }

    /// The voice to steal: released voices first (oldest first), else the quietest (oldest on a tie).
    @_noAllocation @_noLocks
    func victim(at when: Int64) -> Int? {
        var best = -1
        var bestReleased = false
        var bestLoudness: Float = .infinity
        var bestAge: UInt64 = .max
        for index in 0..<slotCount {
            let voice = voices[index]
            guard voice.active && !voice.fading && voice.fadeAt > when else { continue }
            let released = voice.released || voice.releaseAt <= when
            let loudness = voice.loudness
            let better: Bool
            if released != bestReleased {
                better = released
            } else if released {
                better = voice.age < bestAge
            } else {
                better = loudness < bestLoudness || (loudness == bestLoudness && voice.age < bestAge)
            }
            if best < 0 || better {
                (best, bestReleased, bestLoudness, bestAge) = (index, released, loudness, voice.age)
            }
        }
        return best < 0 ? nil : best
    }

    /// The note-off of one voice, at frame `offset` of the next render.
    @_noAllocation @_noLocks
    public func release(_ voice: SFZVoiceHandle, at offset: Int = 0) {
        let slot = Int(voice.slot)
        guard slot >= 0 && slot < slotCount, voices[slot].active, voices[slot].generation == voice.generation
        else { return }
        voices[slot].releaseAt = min(voices[slot].releaseAt, clock.pointee.now &+ Int64(max(0, offset)))
    }

    /// Ends every voice of choke group `group` at frame `offset` of the next render: a fast fade or their
    /// own release.
    @_noAllocation @_noLocks
    public func choke(group: UInt32, mode: SFZChokeMode, at offset: Int = 0) {
        let when = clock.pointee.now &+ Int64(max(0, offset))
        for index in 0..<slotCount where voices[index].active && voices[index].parameters.group == group {
            switch mode {
            case .fast: voices[index].fadeAt = min(voices[index].fadeAt, when)
            case .normal: voices[index].releaseAt = min(voices[index].releaseAt, when)
            }
        }
    }

    /// Ends one voice at frame `offset` of the next render with the fast fade a stolen voice gets: what the
    /// instrument unit needs for `off_by` with `off_mode=fast`, group polyphony and overload shedding, which
    /// pick voices one by one (`choke(group:)` picks by the engine's group alone).
    @_noAllocation @_noLocks
    public func stop(_ voice: SFZVoiceHandle, at offset: Int = 0) {
        let slot = Int(voice.slot)
        guard slot >= 0 && slot < slotCount, voices[slot].active, voices[slot].generation == voice.generation
        else { return }
        voices[slot].fadeAt = min(voices[slot].fadeAt, clock.pointee.now &+ Int64(max(0, offset)))
    }

    /// The controller-driven values a voice follows from frame `offset` of the next render on (it glides to
    /// them). One change waits per voice: a second before the first is due replaces it (a unit that splits
    /// its slice at events, as Aulos's instruments do, sets them at offset 0 and never meets that).
    @_noAllocation @_noLocks
    public func setInputs(_ voice: SFZVoiceHandle, _ inputs: SFZVoiceInputs, at offset: Int = 0) {
        let slot = Int(voice.slot)
        guard slot >= 0 && slot < slotCount, voices[slot].active, voices[slot].generation == voice.generation
        else { return }
        voices[slot].pendingInputs = inputs
        voices[slot].inputsAt = clock.pointee.now &+ Int64(max(0, offset))
    }

    /// Whether a started voice still sounds.
    @_noAllocation @_noLocks
    public func isActive(_ voice: SFZVoiceHandle) -> Bool {
        let slot = Int(voice.slot)
        return slot >= 0 && slot < slotCount && voices[slot].active && voices[slot].generation == voice.generation
    }

    /// Silences every voice at once (a reset; clicks are the caller's choice).
    @_noAllocation @_noLocks
    public func stopAll() {
        for index in 0..<slotCount where voices[index].active { finish(index) }
        counters.pointee.activeVoices.store(0, ordering: .relaxed)
    }

    /// Renders `frameCount` frames of every voice into `left` and `right` (overwriting them).
    @_noAllocation @_noLocks
    public func render(frameCount: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        left.update(repeating: 0, count: frameCount)
        right.update(repeating: 0, count: frameCount)
        let now = clock.pointee.now
        var active = 0
        for index in 0..<slotCount where voices[index].active {
            let from = max(0, Int(min(Int64(frameCount), voices[index].startAt &- now)))
            if from < frameCount {
                voices[index].render(
                    left: left, right: right, from: from, to: frameCount, time: now, context: context)
            }
            collectLateness(index)
            if voices[index].active {
                active &+= 1
            } else {
                finish(index)
            }
        }
        clock.pointee.now = now &+ Int64(frameCount)
        counters.pointee.activeVoices.store(active, ordering: .relaxed)
    }

    @inline(__always) @_noAllocation @_noLocks
    func collectLateness(_ index: Int) {
        let voice = voices[index]
        let blocks = voice.lateBlocks &+ (voice.lateInBlock && !voice.active ? 1 : 0)
        if blocks > 0 { counters.pointee.underruns.add(blocks, ordering: .relaxed) }
        if voice.lateFrames > 0 { counters.pointee.lateFrames.add(voice.lateFrames, ordering: .relaxed) }
        voices[index].lateBlocks = 0
        voices[index].lateFrames = 0
    }

    /// Ends a voice's slot: inactive, and its stream request withdrawn.
    @_noAllocation @_noLocks
    func finish(_ index: Int) {
        voices[index].active = false
        if voices[index].streaming, let streams = context.streams {
            voices[index].streaming = false
            _ = streams.commands.push(
                SFZStreamCommand(slot: Int32(index), generation: voices[index].generation, sample: -1, from: 0))
        }
    }

    /// The counters, read at once (any thread).
    public var status: SFZVoiceStatus {
        let c = counters
        return SFZVoiceStatus(
            activeVoices: c.pointee.activeVoices.load(ordering: .relaxed),
            underruns: c.pointee.underruns.load(ordering: .relaxed),
            lateFrames: c.pointee.lateFrames.load(ordering: .relaxed),
            steals: c.pointee.steals.load(ordering: .relaxed), cuts: c.pointee.cuts.load(ordering: .relaxed),
            droppedRequests: c.pointee.droppedRequests.load(ordering: .relaxed),
            streamedBytes: context.streams.map { $0.counters.pointee.streamedBytes.load(ordering: .relaxed) } ?? 0,
            preloadedBytes: preloadedBytes)
    }
}
