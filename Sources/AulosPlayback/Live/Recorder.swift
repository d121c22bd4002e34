import AulosAudioFile
import AulosCore
import AulosRealtime
import Foundation
import Synchronization

/// Records what a live session plays — the master output, after every part, return and the master EQ —
/// into a WAV (32-bit float) or FLAC (24-bit) file.
///
/// The render thread copies each cycle's output into a lock-free ring from a post-render notification; a
/// disk thread of its own drains the ring into the file. The render thread never waits on the disk: if the
/// disk stalls longer than the ring holds (`ringSeconds`), whole cycles are dropped and counted, never
/// half of one. The file is written beside its name and renamed into place when the recording stops (the
/// end of the run, or SIGINT/SIGTERM), so it is always whole.
///
/// Threads: created and finished on the control thread; `renderNotify` runs on the render thread; the disk
/// thread is the recorder's own.
public final class Recorder: @unchecked Sendable {
    /// Seconds of audio the ring holds before cycles are dropped.
    public static let ringSeconds = 10.0

    public let path: String
    let writer: AudioFileWriter
    let channels = 2
    /// Interleaved stereo samples, from the render thread to the disk thread.
    let ring: SPSCRing<Float>
    /// Render-side state: the ring and the dropped-frame counter, reached from the notification's refCon.
    let tap: UnsafeMutablePointer<RecorderTap>
    private let stopping = Atomic<Bool>(false)
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    private var failure: AudioFileError?
    /// Fault injection: the disk thread sleeps `stall.seconds` once, `stall.after` seconds in, as a stalled
    /// disk would hold it. From AULOS_RECORD_STALL_SECONDS (one second in) for `make`'s live tests.
    private let stall: (after: Double, seconds: Double)?

    /// Opens the file (beside `path` until it is finished) and starts the disk thread. `ringSeconds` and
    /// `stall` are for tests.
    public init(
        path: String, sampleRate: Double, ringSeconds: Double = Recorder.ringSeconds,
        stall: (after: Double, seconds: Double)? = ProcessInfo.processInfo.environment["AULOS_RECORD_STALL_SECONDS"]
            .flatMap(Double.init).map { (after: 1, seconds: $0) }
    ) throws(AudioFileError) {
        self.stall = stall
        let type = AudioFileType(path: path)
        let sample: SampleFormat = type == .flac ? .int24 : .float32
        writer = try AudioFileWriter(
            path: path, format: StreamFormat(sample: sample, channels: 2, sampleRate: sampleRate, interleaved: true))
        self.path = path
        ring = SPSCRing(minimumCapacity: max(256, Int(ringSeconds * sampleRate) * 2))
        tap = .allocate(capacity: 1)
        tap.initialize(to: RecorderTap(ring: ring))
        let thread = Thread { [unowned self] in self.drain() }
        thread.name = "aulos-recorder"
        self.thread = thread
        thread.start()
    }

    deinit {
        tap.deinitialize(count: 1)
        tap.deallocate()
        ring.deallocate()
    }

    /// The post-render notification that feeds the ring.
    public var renderNotify: RenderCallbackStruct {
        RenderCallbackStruct(RecorderTap.postRender, refCon: UnsafeMutableRawPointer(tap))
    }

    /// Frames dropped because the ring was full (the disk fell more than `ringSeconds` behind).
    public var droppedFrames: Int { tap.pointee.dropped.load(ordering: .relaxed) }

    /// Stops the disk thread once the ring is drained, finishes the file and renames it into place. Call
    /// after the render thread has stopped feeding it. Returns the frames written.
    public func finish() throws(AudioFileError) -> Int64 {
        stopping.store(true, ordering: .releasing)
        finished.wait()
        if let failure { throw failure }
        try writer.close()
        return writer.framesWritten
    }

    /// The disk thread: write what the ring holds, in chunks; nap briefly when it is empty.
    private func drain() {
        let chunkFrames = 4096
        var interleaved = [Float](repeating: 0, count: chunkFrames * channels)
        var stalled = false
        let started = Date()
        while true {
            let done = stopping.load(ordering: .acquiring)
            var count = 0
            while count < interleaved.count, let sample = ring.pop() {
                interleaved[count] = sample
                count += 1
            }
            let frames = count / channels
            if frames > 0 && failure == nil {
                do {
                    try write(interleaved, frames: frames)
                } catch {
                    failure = error
                }
            }
            if let stall, !stalled, Date().timeIntervalSince(started) >= stall.after {
                stalled = true
                Thread.sleep(forTimeInterval: stall.seconds)
            }
            if count < interleaved.count {
                if done && ring.count == 0 { break }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        finished.signal()
    }

    /// Writes interleaved float frames in the file's format (24-bit integers for FLAC, clipped).
    private func write(_ samples: [Float], frames: Int) throws(AudioFileError) {
        var failure: AudioFileError?
        if writer.format.sampleFormat == .float32 {
            samples.withUnsafeBytes { bytes in
                do throws(AudioFileError) {
                    try writer.write(bytes.baseAddress!, frameCount: frames)
                } catch { failure = error }
            }
        } else {
            // Packed 24-bit little-endian, three bytes a sample.
            var packed = [UInt8](repeating: 0, count: frames * channels * 3)
            for index in 0..<(frames * channels) {
                let value = Int32(max(-8_388_608, min(8_388_607, (Double(samples[index]) * 8_388_608).rounded())))
                packed[3 * index] = UInt8(truncatingIfNeeded: value)
                packed[3 * index + 1] = UInt8(truncatingIfNeeded: value >> 8)
                packed[3 * index + 2] = UInt8(truncatingIfNeeded: value >> 16)
            }
            packed.withUnsafeBytes { bytes in
                do throws(AudioFileError) {
                    try writer.write(bytes.baseAddress!, frameCount: frames)
                } catch { failure = error }
            }
        }
        if let failure { throw failure }
    }
}

/// The recorder's render-side half: the ring and the dropped-frame count.
///
/// Threads: render thread (the post-render notification); `dropped` read by the control thread.
struct RecorderTap: ~Copyable {
    let ring: SPSCRing<Float>
    let dropped = Atomic<Int>(0)

    /// After each cycle: the output's frames (stereo, non-interleaved or interleaved float) into the ring,
    /// or all of them counted as dropped when they do not fit.
    static let postRender: RenderCallback = { refCon, flags, _, _, frameCount, ioData in
        guard flags.pointee.contains(.postRender), let refCon else { return 0 }
        let tap = refCon.assumingMemoryBound(to: RecorderTap.self)
        return tap.pointee.take(frameCount: Int(frameCount), ioData)
    }

    @_noAllocation @_noLocks
    func take(frameCount: Int, _ ioData: UnsafeMutablePointer<AudioBufferList>) -> AulosStatus {
        guard ring.capacity - ring.count >= 2 * frameCount else {
            dropped.add(frameCount, ordering: .relaxed)
            return 0
        }
        let list = ioData.pointee
        if list.bufferCount >= 2 {
            let (left, right) = (list.floatChannel(0), list.floatChannel(1))
            for frame in 0..<frameCount {
                _ = ring.push(left[frame])
                _ = ring.push(right[frame])
            }
        } else if list.bufferCount == 1 {
            let data = list.floatChannel(0)
            for index in 0..<(2 * frameCount) { _ = ring.push(data[index]) }
        }
        return 0
    }
}
