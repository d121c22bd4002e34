import AulosRealtime
import CSndfile
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A voice slot's request to the loader: stream `sample` into the slot's ring from frame `from` on (sample
/// −1: stop streaming into the slot). `generation` tells a request from the ones before it in the same slot.
///
/// Threads: a value, sent from the render thread to the loader thread.
public struct SFZStreamCommand: BitwiseCopyable, Sendable {
    public var slot: Int32
    public var generation: UInt32
    public var sample: Int32
    public var from: Int64

    @_noAllocation @_noLocks
    public init(slot: Int32, generation: UInt32, sample: Int32, from: Int64) {
        (self.slot, self.generation, self.sample, self.from) = (slot, generation, sample, from)
    }
}

/// What a voice slot's ring holds, shared by the render thread (one writer of `need`) and the loader (one
/// writer of `filled`). Each word packs a generation (the top 24 bits) with a frame (the low 40 bits), so a
/// reader never pairs a frame with the wrong request, and each side has one atomic to read.
///
/// Threads: render thread writes `need`, loader writes `filled`; both read both.
public struct SFZStreamSlot: ~Copyable {
    /// The frame after the last one the loader has written for this generation.
    let filled = Atomic<UInt64>(0)
    /// The lowest frame the voice may still read: the loader writes at most a ring's length past it.
    let need = Atomic<UInt64>(0)

    static var frameBits: UInt64 { @inline(__always) @_noAllocation @_noLocks get { 40 } }

    @inline(__always) @_noAllocation @_noLocks
    static func pack(_ generation: UInt32, _ frame: Int) -> UInt64 {
        UInt64(generation & 0xFF_FFFF) << frameBits | UInt64(max(0, frame)) & ((1 << frameBits) - 1)
    }

    @inline(__always) @_noAllocation @_noLocks
    static func unpack(_ word: UInt64) -> (generation: UInt32, frame: Int) {
        (UInt32(truncatingIfNeeded: word >> frameBits), Int(word & ((1 << frameBits) - 1)))
    }
}

/// Counters the loader keeps; any thread reads them.
///
/// Threads: the loader writes, any thread reads.
public struct SFZStreamCounters: ~Copyable {
    public let streamedBytes = Atomic<Int>(0)
    /// Reads that failed (a file gone or damaged since it was loaded): its voices play silence.
    public let readFailures = Atomic<Int>(0)
    /// Files open now (at most `SFZStreamer.maximumOpenFiles`).
    public let openFiles = Atomic<Int>(0)
}

/// The render thread's handle on the streams: every slot's ring and state, and the request queue. Copies
/// share them; the `SFZStreamer` that made it frees them.
///
/// Threads: render thread (reads rings, writes `need`, sends requests); made by the control thread.
public struct SFZStreams: @unchecked Sendable {
    public let slots: UnsafeMutablePointer<SFZStreamSlot>
    /// `slotCount` rings of `ringFrames` stereo frames (a mono sample uses the first half, one float a frame).
    public let buffers: UnsafeMutablePointer<Float>
    public let slotCount: Int
    /// A power of two: a frame's place in a ring is `frame & (ringFrames - 1)`.
    public let ringFrames: Int
    public let commands: SPSCRing<SFZStreamCommand>
    public let counters: UnsafeMutablePointer<SFZStreamCounters>
    /// Seconds the render thread waits for late data before it gives up on it (offline rendering only).
    public let waitLimit: Double

    /// Slot `slot`'s ring.
    @inline(__always) @_noAllocation @_noLocks
    public func ring(_ slot: Int) -> UnsafeMutablePointer<Float> { buffers + slot &* ringFrames &* 2 }
}

/// Streams the parts of samples that are not resident into per-voice rings, on a loader thread of its own,
/// so the render thread never touches a file.
///
/// Each voice slot has a ring of `ringFrames` frames (allocated here, up front). A voice that starts a
/// sample longer than its head sends a request (through a lock-free SPSC queue); the loader reads the file
/// in chunks of `chunkFrames` into the slot's ring, ahead of the frames the voice reads, never more than a
/// ring past the lowest frame the voice still needs (which the voice publishes as it plays). A voice whose
/// data has not arrived plays silence for those frames and counts an underrun (`SFZVoiceEngine`); it never
/// waits, unless the engine renders offline (`waitsForData`).
///
/// Open files are bounded: at most `maximumOpenFiles`, the least recently read closed first.
///
/// The loader runs at SCHED_FIFO `loaderPriority` (40: below the audio thread's 70 and the MIDI thread's 65,
/// above every normal thread) where the system allows it, else at normal priority: a machine busy with
/// other work (a build, a browser) would otherwise starve it of the CPU for longer than a sample's head
/// lasts, and voices would go silent at full disk speed. It sleeps whenever every ring is full, so it
/// cannot hold a core.
///
/// Fault injection: `AULOS_SFZ_DISK_DELAY_MS` (or `diskDelay`) makes the loader sleep that long before each
/// chunk it reads, a disk slower than any real one, so tests can show late data is counted, not waited for.
///
/// Threads: made and stopped on the control thread; its loader thread reads files; the render thread uses
/// `streams`. Stop it (or drop it) only after the render thread has stopped using `streams`.
public final class SFZStreamer: @unchecked Sendable {
    /// Frames read from a file at a time: 85 ms at 48 kHz; a 16,384-frame ring holds four.
    public static let chunkFrames = 4096
    /// The loader thread's SCHED_FIFO priority, when the system grants real-time priority.
    public static let loaderPriority: Int32 = 40
    /// The loader thread's name (what `top -H` and /proc show).
    public static let loaderName = "aulos-sfz-load"

    public let streams: SFZStreams
    private let loader: SFZLoader

    /// `slots`: one per voice the engine may sound at once (its polyphony plus its fade slots). `ringFrames`
    /// is rounded up to a power of two (16,384 frames: 341 ms at 48 kHz, 128 KiB a slot).
    public init(
        store: SFZSampleStore, slots: Int, ringFrames: Int = 16384, maximumOpenFiles: Int = 32,
        diskDelay: Double? = ProcessInfo.processInfo.environment["AULOS_SFZ_DISK_DELAY_MS"].flatMap(Double.init)
            .map { $0 / 1000 },
        waitLimit: Double = 10
    ) {
        var frames = 1
        while frames < max(2 * Self.chunkFrames, ringFrames) { frames <<= 1 }
        let count = max(1, slots)
        let slotMemory = UnsafeMutablePointer<SFZStreamSlot>.allocate(capacity: count)
        for index in 0..<count { (slotMemory + index).initialize(to: SFZStreamSlot()) }
        let buffers = UnsafeMutablePointer<Float>.allocate(capacity: count * frames * 2)
        buffers.initialize(repeating: 0, count: count * frames * 2)
        let counters = UnsafeMutablePointer<SFZStreamCounters>.allocate(capacity: 1)
        counters.initialize(to: SFZStreamCounters())
        streams = SFZStreams(
            slots: slotMemory, buffers: buffers, slotCount: count, ringFrames: frames,
            commands: SPSCRing(minimumCapacity: 4 * count), counters: counters, waitLimit: waitLimit)
        loader = SFZLoader(
            store: store, streams: streams, maximumOpenFiles: max(1, maximumOpenFiles), delay: diskDelay ?? 0)
        let loader = loader
        let thread = Thread { loader.run() }
        thread.name = "aulos-sfz-loader"
        thread.start()
    }

    deinit {
        loader.stop()
        streams.slots.deinitialize(count: streams.slotCount)
        streams.slots.deallocate()
        streams.buffers.deallocate()
        streams.counters.deinitialize(count: 1)
        streams.counters.deallocate()
        streams.commands.deallocate()
    }

    /// Bytes read from disk into the rings so far.
    public var streamedBytes: Int { streams.counters.pointee.streamedBytes.load(ordering: .relaxed) }
    public var openFiles: Int { streams.counters.pointee.openFiles.load(ordering: .relaxed) }
    public var readFailures: Int { streams.counters.pointee.readFailures.load(ordering: .relaxed) }
    /// The SCHED_FIFO priority the loader thread got, 0 when it runs at normal priority (or has not started).
    public var loaderRealtimePriority: Int32 { loader.grantedPriority.load(ordering: .acquiring) }
}

/// The loader thread's side: the jobs (one per slot), the open files, the reads.
///
/// Threads: `run` on the loader thread; `stop` on the control thread.
final class SFZLoader: @unchecked Sendable {
    struct Job {
        var generation: UInt32
        var sample: Int
        var filledEnd: Int
    }

    let store: SFZSampleStore
    let streams: SFZStreams
    let maximumOpenFiles: Int
    let delay: Double
    private let stopping = Atomic<Bool>(false)
    let grantedPriority = Atomic<Int32>(0)
    private let done = DispatchSemaphore(value: 0)
    // Loader thread only from here on.
    private var jobs: [Job?]
    private var files: [Int: (file: OpaquePointer, channels: Int, lastUse: UInt64)] = [:]
    private var clock: UInt64 = 0
    private let paths: [String]

    init(store: SFZSampleStore, streams: SFZStreams, maximumOpenFiles: Int, delay: Double) {
        (self.store, self.streams, self.maximumOpenFiles, self.delay) = (store, streams, maximumOpenFiles, delay)
        jobs = Array(repeating: nil, count: streams.slotCount)
        paths = store.paths
    }

    func stop() {
        stopping.store(true, ordering: .releasing)
        done.wait()
    }

    func run() {
        Thread.current.name = SFZStreamer.loaderName  // the kernel's name too (top -H, /proc)
        var parameters = sched_param(sched_priority: SFZStreamer.loaderPriority)
        if pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0 {
            grantedPriority.store(SFZStreamer.loaderPriority, ordering: .releasing)
        }
        while !stopping.load(ordering: .acquiring) {
            while let command = streams.commands.pop() { take(command) }
            var worked = false
            // A pass reads a chunk for every job: with a slow disk that is a long time, so a stop ends it.
            for slot in jobs.indices where jobs[slot] != nil && !stopping.load(ordering: .relaxed) {
                if fill(slot) { worked = true }
            }
            // Nothing to read: a short nap. The head of every sample covers far more than a nap.
            if !worked { usleep(1000) }
        }
        for (_, entry) in files { sf_close(entry.file) }
        files.removeAll()
        done.signal()
    }

    private func take(_ command: SFZStreamCommand) {
        let slot = Int(command.slot)
        guard slot >= 0, slot < jobs.count else { return }
        // Only the samples loaded before the streamer was made (`paths`): the store's count belongs to the
        // control thread.
        guard command.sample >= 0, Int(command.sample) < paths.count else {
            jobs[slot] = nil
            return
        }
        let from = Int(command.from)
        jobs[slot] = Job(generation: command.generation, sample: Int(command.sample), filledEnd: from)
        streams.slots[slot].filled.store(SFZStreamSlot.pack(command.generation, from), ordering: .releasing)
    }

    /// One chunk into the slot's ring if the voice has room for it; whether anything was read.
    private func fill(_ slot: Int) -> Bool {
        guard var job = jobs[slot] else { return false }
        let info = store.infos[job.sample]
        let need = SFZStreamSlot.unpack(streams.slots[slot].need.load(ordering: .acquiring))
        // A newer request for the slot is on its way (or the voice ended): nothing to do for this one.
        guard need.generation == job.generation & 0xFF_FFFF else { return false }
        let target = min(info.frames, need.frame + streams.ringFrames)
        if job.filledEnd >= info.frames {
            jobs[slot] = nil
            return false
        }
        guard job.filledEnd < target else { return false }
        let place = job.filledEnd & (streams.ringFrames - 1)
        let count = min(SFZStreamer.chunkFrames, target - job.filledEnd, streams.ringFrames - place)
        guard let (file, channels) = open(job.sample) else {
            streams.counters.pointee.readFailures.add(1, ordering: .relaxed)
            jobs[slot] = nil
            return false
        }
        if delay > 0 {
            // The injected slow disk, in naps of at most 10 ms so a stop is not kept waiting for it.
            var left = delay
            while left > 0 && !stopping.load(ordering: .relaxed) {
                usleep(UInt32(min(left, 0.01) * 1_000_000))
                left -= 0.01
            }
            if stopping.load(ordering: .relaxed) { return false }
        }
        let destination = streams.ring(slot) + place * info.channels
        let read = SFZSampleStore.read(
            file, into: destination, from: job.filledEnd, frames: count, fileChannels: channels)
        guard read > 0 else {
            streams.counters.pointee.readFailures.add(1, ordering: .relaxed)
            jobs[slot] = nil
            return false
        }
        job.filledEnd += read
        jobs[slot] = job
        streams.counters.pointee.streamedBytes.add(read * info.channels * 4, ordering: .relaxed)
        streams.slots[slot].filled.store(SFZStreamSlot.pack(job.generation, job.filledEnd), ordering: .releasing)
        return true
    }

    /// The sample's open file, opening it (and closing the least recently read one past the cap).
    private func open(_ sample: Int) -> (OpaquePointer, Int)? {
        clock += 1
        if let entry = files[sample] {
            files[sample]!.lastUse = clock
            return (entry.file, entry.channels)
        }
        if files.count >= maximumOpenFiles, let oldest = files.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            sf_close(oldest.value.file)
            files[oldest.key] = nil
        }
        var format = SF_INFO()
        guard let file = sf_open(paths[sample], Int32(SFM_READ), &format) else { return nil }
        files[sample] = (file, Int(format.channels), clock)
        streams.counters.pointee.openFiles.store(files.count, ordering: .relaxed)
        return (file, Int(format.channels))
    }
}
