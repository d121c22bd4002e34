import AulosAudioFile
import AulosCore
import AulosRealtime
import Foundation
import Synchronization

/// What one recorder wrote: its file, the frames in it, the frames dropped while the disk fell behind, and,
/// when the disk failed (full, a size limit), what happened and what was kept.
///
/// Threads: a value.
public struct RecordingOutcome: Sendable, Equatable {
    public var path: String
    public var frames: Int64
    public var dropped: Int
    public var failure: String?
}

/// Records what a live session plays — the master output, after every part, return and the master EQ, or
/// one part's own output through its tap — into a WAV (32-bit float) or FLAC (24-bit) file.
///
/// The render thread copies each cycle's output into a lock-free ring from a post-render notification; a
/// disk thread of its own drains the ring into the file. The render thread never waits on the disk: if the
/// disk stalls longer than the ring holds (`ringSeconds`), whole cycles are dropped and counted, never
/// half of one. The file is written beside its name and renamed into place when the recording stops (the
/// end of the run, or SIGINT/SIGTERM), so it is always whole. Every `checkpointSeconds` of audio the disk
/// thread rewrites the WAV header's sizes, so a process killed outright leaves a file that plays up to then;
/// the next recording to the same name moves such a leftover aside (`NAME.recovered-PID.wav`), never over
/// it. When the disk fails (full, a size limit) the disk thread finishes the file with what fitted and
/// renames it into place there and then; `failure` says so, and the rest of the take is not written.
///
/// Threads: created and finished on the control thread; `renderNotify` runs on the render thread; the disk
/// thread is the recorder's own.
public final class Recorder: @unchecked Sendable {
    /// Seconds of audio the ring holds before cycles are dropped.
    public static let ringSeconds = 10.0
    /// Seconds of audio (and of wall-clock time) between the disk thread's checkpoints (a WAV's header
    /// rewritten, the data synced): what a recording killed outright can lose from its header, at most.
    /// Short enough to lose little; long enough that the header rewrite and the sync cost nothing next to the
    /// writes.
    public static let checkpointSeconds = 2.0

    public let path: String
    /// Leftovers of earlier recordings to the same name (processes killed outright) moved aside when this
    /// one opened its file, and the frames each WAV holds.
    public let recovered: [(from: String, to: String, frames: Int64?)]
    /// Render-side state: the ring and the dropped-frame counter, reached from the notification's refCon.
    let tap: UnsafeMutablePointer<RecorderTap>
    /// The disk thread's side (the thread holds it too, so it outlives whichever lets go last).
    private let disk: RecorderDisk
    private var finished = false

    /// Opens the file (beside `path` until it is finished) and starts the disk thread. `ringSeconds` and
    /// `stall` are for tests; `stall` defaults to AULOS_RECORD_STALL_SECONDS (one second in), the fault
    /// injection `make`'s live tests use. The first `framesToSkip` frames are left out of the file (the
    /// master's output-stage look-ahead).
    public init(
        path: String, sampleRate: Double, skippingFirst framesToSkip: Int = 0,
        ringSeconds: Double = Recorder.ringSeconds,
        stall: (after: Double, seconds: Double)? = ProcessInfo.processInfo.environment["AULOS_RECORD_STALL_SECONDS"]
            .flatMap(Double.init).map { (after: 1, seconds: $0) }
    ) throws(AudioFileError) {
        let sample: SampleFormat = AudioFileType(path: path) == .flac ? .int24 : .float32
        // Before the writer opens its own temporary file, which would remove them.
        recovered = AudioFileWriter.recoverAbandonedPartials(of: path)
        let writer = try AudioFileWriter(
            path: path, format: StreamFormat(sample: sample, channels: 2, sampleRate: sampleRate, interleaved: true))
        self.path = path
        let ring = SPSCRing<Float>(minimumCapacity: max(256, Int(ringSeconds * sampleRate) * 2))
        disk = try RecorderDisk(ring: ring, writer: writer, stall: stall)
        disk.framesToSkip = framesToSkip
        tap = .allocate(capacity: 1)
        tap.initialize(to: RecorderTap(ring: ring))
        sliceSink = .allocate(capacity: 1)
        sliceSink.initialize(to: RenderCallbackStruct(RecorderTap.slice, refCon: UnsafeMutableRawPointer(tap)))
        let disk = disk
        let thread = Thread { disk.drain() }
        thread.name = "aulos-recorder"
        thread.start()
    }

    deinit {
        // Not finished (a run that failed to start): stop the disk thread; the temporary file goes with the
        // writer, the user's file stays as it was.
        if !finished {
            _ = disk.stop()
            disk.writer.discard()
        }
        tap.deinitialize(count: 1)
        tap.deallocate()
        sliceSink.deallocate()
    }

    /// The post-render notification that feeds the ring.
    public var renderNotify: RenderCallbackStruct {
        RenderCallbackStruct(RecorderTap.postRender, refCon: UnsafeMutableRawPointer(tap))
    }

    /// The same ring fed by every slice it is called with: what a part's tap is attached to
    /// (`PartTaps.attach`). Lives as long as the recorder.
    public let sliceSink: UnsafeMutablePointer<RenderCallbackStruct>

    /// Records the slices' frames from graph frame `first` on, up to (not including) `end`: set before the
    /// render thread reaches them (see `RecorderTap`). Control thread.
    public func window(from first: Int64, to end: Int64 = .max) {
        tap.pointee.firstFrame.store(first, ordering: .relaxed)
        tap.pointee.endFrame.store(end, ordering: .relaxed)
    }

    /// Frames dropped because the ring was full (the disk fell more than `ringSeconds` behind).
    public var droppedFrames: Int { tap.pointee.dropped.load(ordering: .relaxed) }

    /// Why the recording stopped writing, and what it kept, once the disk has failed (nil while it writes).
    /// Control thread (the disk thread sets it).
    public var failure: String? { disk.failureMessage }

    /// Stops the disk thread once the ring is drained, finishes the file and renames it into place — after a
    /// disk failure too: the file then holds what fitted, and `failure` in the outcome says what happened.
    /// Call after the render thread has stopped feeding it. Throws only when the file cannot be put in place
    /// (it is left beside its name, never removed).
    public func finish() throws(AudioFileError) -> RecordingOutcome {
        finished = true
        let failed = disk.stop()
        let (frames, closeFailure) = try disk.writer.closeKeepingWhatWasWritten()
        let seconds = String(format: "%.1f", Double(frames) / disk.writer.format.sampleRate)
        let failure =
            failed.map { _ in disk.failureMessage! }
            ?? closeFailure.map { "cannot finish \(path): \($0); the \(seconds) s written are kept in it" }
        return RecordingOutcome(path: path, frames: frames, dropped: droppedFrames, failure: failure)
    }
}

/// The recorder's disk side: drains the ring into the file on a thread of its own, checkpoints it, and on
/// a write error finishes it with what fitted.
///
/// Threads: `drain` on the recorder's disk thread; `stop` and `failureMessage` on the control thread.
final class RecorderDisk: @unchecked Sendable {
    let ring: SPSCRing<Float>
    let writer: AudioFileWriter
    let channels = 2
    let stall: (after: Double, seconds: Double)?
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    /// Set by the disk thread only; the control thread reads it after `stop` (the semaphore orders them).
    private var failure: AudioFileError?
    /// The failure as the user reads it, published by the disk thread when it happens (a lock between two
    /// threads that may block: neither is the render thread).
    private let published = Mutex<String?>(nil)
    var failureMessage: String? { published.withLock { $0 } }

    /// Frames written at a time; the ring's interleaved floats, and the file's samples made from them by the
    /// project's conversion (rounding and clipping as every other writer's; 24-bit for FLAC).
    static let chunkFrames = 4096
    private let floats: AudioBufferListStorage
    private let encoded: AudioBufferListStorage
    private let conversion: FormatConversion
    private let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 2 * RecorderDisk.chunkFrames)
    /// Frames still to leave out at the start of the take (the output stage's look-ahead, for the master), so
    /// the recording lines up with the music's time as an offline render does. Disk thread only.
    var framesToSkip = 0

    init(ring: SPSCRing<Float>, writer: AudioFileWriter, stall: (after: Double, seconds: Double)?)
        throws(AudioFileError)
    {
        (self.ring, self.writer, self.stall) = (ring, writer, stall)
        let source = StreamFormat(
            sample: .float32, channels: 2, sampleRate: writer.format.sampleRate, interleaved: true)
        do { conversion = try FormatConversion(from: source, to: writer.format) } catch {
            throw AudioFileError("cannot record \(writer.path): \(error.detail)")
        }
        floats = AudioBufferListStorage(format: source, maximumFrames: UInt32(Self.chunkFrames))
        encoded = AudioBufferListStorage(format: writer.format, maximumFrames: UInt32(Self.chunkFrames))
    }

    deinit {
        ring.deallocate()
        scratch.deallocate()
    }

    /// Asks the thread to finish once the ring is empty and waits for it; what went wrong, if anything.
    func stop() -> AudioFileError? {
        stopping.store(true, ordering: .releasing)
        done.wait()
        return failure
    }

    /// The disk thread: write what the ring holds, in chunks; nap briefly when it is empty.
    func drain() {
        let chunk = floats.list.pointee.floatChannel(0)
        let capacity = Self.chunkFrames * channels
        var stalled = false
        let started = Date()
        var lastCheckpoint: Int64 = 0
        var lastCheckpointTime = Date()
        while true {
            let finishing = stopping.load(ordering: .acquiring)
            var count = 0
            // Whole frames only: the render thread may be between a frame's left and right samples, and a
            // lone left sample taken now would be lost and the channels swapped from there on.
            while count < capacity, ring.count >= channels {
                for channel in 0..<channels { chunk[count + channel] = ring.pop()! }
                count += channels
            }
            let frames = count / channels
            if frames > 0 && failure == nil {
                do {
                    try write(frames: frames)
                    // Every 2 s of audio and of wall-clock time both. Played much faster than real time (an
                    // unpaced device) the data is not synced, only the header rewritten: syncing tens of
                    // megabytes at a time stalled the disk thread past the ring (a quarter of a second of
                    // wall-clock time there), and a power cut is no concern of a file rendered that fast.
                    let wall = Date().timeIntervalSince(lastCheckpointTime)
                    let audio = Double(writer.framesWritten - lastCheckpoint) / writer.format.sampleRate
                    if audio >= Recorder.checkpointSeconds, wall >= Recorder.checkpointSeconds {
                        writer.checkpoint(syncing: audio <= 2 * wall)
                        lastCheckpoint = writer.framesWritten
                        lastCheckpointTime = Date()
                    }
                } catch {
                    failure = error
                    giveUp()
                }
            }
            // After a failure the ring is still drained (into nothing), so the render side counts no drops.
            if let stall, !stalled, Date().timeIntervalSince(started) >= stall.after {
                stalled = true
                Thread.sleep(forTimeInterval: stall.seconds)
            }
            if count < capacity {
                if finishing && ring.count < channels { break }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        done.signal()
    }

    /// After a write error: the file is finished with what fitted and put in place now, not when the
    /// recording stops — the process may yet be killed — and the failure published for the control thread.
    private func giveUp() {
        let kept: String
        do {
            let (frames, _) = try writer.closeKeepingWhatWasWritten()
            kept = "the \(String(format: "%.1f", Double(frames) / writer.format.sampleRate)) s recorded are kept in it"
        } catch {
            kept = error.message
        }
        let message =
            "the recording to \(writer.path) stopped: \(writer.failureReason ?? failure?.message ?? "write error"); "
            + kept
        published.withLock { $0 = message }
    }

    /// Writes the chunk's first `frames` frames in the file's format (less what is left of `framesToSkip`).
    private func write(frames: Int) throws(AudioFileError) {
        let skipped = min(frames, framesToSkip)
        framesToSkip -= skipped
        guard frames > skipped else { return }
        var list = floats.list
        if !conversion.isIdentity {
            conversion.convert(floats.list, into: encoded.list, frameCount: frames, scratch: scratch)
            list = encoded.list
        }
        try writer.write(
            UnsafeRawPointer(list.pointee.buffers[0].data!) + skipped * Int(writer.format.bytesPerFrame),
            frameCount: frames - skipped)
    }
}

/// The recorder's render-side half: the ring, the dropped-frame count, and the graph frames it records
/// (`firstFrame..<endFrame` of the slices' sample times). A recording's recorders share one window: the
/// master's notification reaches the render thread with a new render plan, a part's tap at once, so a
/// window set ahead of both is what makes the master's file and the parts' start and end on the same frame
/// (they were a slice apart under load).
///
/// Threads: render thread (the post-render notification, a part's tap); the rest on the control thread.
struct RecorderTap: ~Copyable {
    let ring: SPSCRing<Float>
    let dropped = Atomic<Int>(0)
    let firstFrame = Atomic<Int64>(0)
    let endFrame = Atomic<Int64>(.max)

    /// After each cycle: the output's frames (stereo, non-interleaved or interleaved float) into the ring,
    /// or all of them counted as dropped when they do not fit.
    static let postRender: RenderCallback = { refCon, flags, timeStamp, _, frameCount, ioData in
        guard flags.pointee.contains(.postRender), let refCon else { return 0 }
        let tap = refCon.assumingMemoryBound(to: RecorderTap.self)
        return tap.pointee.take(frameCount: Int(frameCount), at: timeStamp.pointee.sampleTime, ioData)
    }

    /// A part's slice (a tap's sink): its frames into the ring, as after a cycle.
    static let slice: RenderCallback = { refCon, _, timeStamp, _, frameCount, ioData in
        guard let refCon else { return 0 }
        return refCon.assumingMemoryBound(to: RecorderTap.self).pointee.take(
            frameCount: Int(frameCount), at: timeStamp.pointee.sampleTime, ioData)
    }

    /// The frames of a slice starting at graph frame `sampleTime` that fall in the window, into the ring.
    @_noAllocation @_noLocks
    func take(frameCount: Int, at sampleTime: Int64, _ ioData: UnsafeMutablePointer<AudioBufferList>)
        -> AulosStatus
    {
        let from = max(sampleTime, firstFrame.load(ordering: .relaxed))
        let to = min(sampleTime + Int64(frameCount), endFrame.load(ordering: .relaxed))
        guard to > from else { return 0 }
        let (offset, count) = (Int(from - sampleTime), Int(to - from))
        guard ring.capacity - ring.count >= 2 * count else {
            dropped.add(count, ordering: .relaxed)
            return 0
        }
        let list = ioData.pointee
        if list.bufferCount >= 2 {
            let (left, right) = (list.floatChannel(0), list.floatChannel(1))
            for frame in offset..<(offset + count) {
                _ = ring.push(left[frame])
                _ = ring.push(right[frame])
            }
        } else if list.bufferCount == 1 {
            let data = list.floatChannel(0)
            for index in (2 * offset)..<(2 * (offset + count)) { _ = ring.push(data[index]) }
        }
        return 0
    }
}
