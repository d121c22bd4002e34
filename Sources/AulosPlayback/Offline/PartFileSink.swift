import AulosAudioFile
import AulosCore

/// One part's own output written to a file as an offline render pulls it (`aulos render --parts`): a
/// `PartTaps` sink that converts each slice to the render's sample format and writes it at once. Offline
/// there is no real-time thread to protect, and nothing may be dropped: the render waits for the disk.
///
/// Threads: the render's thread (offline, the control thread pulls the graph itself).
final class PartFileSink {
    let writer: AudioFileWriter
    /// What `PartTaps.attach` points at: this sink's callback and itself.
    let sink: UnsafeMutablePointer<RenderCallbackStruct>
    /// The first write that failed; the render stops on it.
    private(set) var failure: AudioFileError?
    private let conversion: FormatConversion
    private let encoded: AudioBufferListStorage
    private let scratch: UnsafeMutablePointer<Float>
    /// Frames still to write: a part's file is as long as the master's, though the render runs on past it by
    /// the output stage's look-ahead (which the part taps, before it, do not have).
    private var framesLeft: Int64

    /// A file at `path` in `format` (interleaved, the render's), fed slices of at most `sliceFrames`.
    init(path: String, format: StreamFormat, sliceFrames: UInt32, expectedFrames: Int64) throws(AudioFileError) {
        writer = try AudioFileWriter(path: path, format: format, expectedFrames: expectedFrames)
        framesLeft = expectedFrames
        let source = StreamFormat.canonical(channels: format.channelsPerFrame, sampleRate: format.sampleRate)
        do { conversion = try FormatConversion(from: source, to: format) } catch {
            throw AudioFileError("cannot write \(path): \(error.detail)")
        }
        encoded = AudioBufferListStorage(format: format, maximumFrames: sliceFrames)
        scratch = .allocate(capacity: Int(sliceFrames) * Int(format.channelsPerFrame))
        sink = .allocate(capacity: 1)
        sink.initialize(to: RenderCallbackStruct(Self.slice, refCon: nil))
        sink.pointee.refCon = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        sink.deallocate()
        scratch.deallocate()
    }

    /// A part's slice: converted and written (the tap's sink).
    private static let slice: RenderCallback = { refCon, _, _, _, frameCount, ioData in
        guard let refCon else { return 0 }
        Unmanaged<PartFileSink>.fromOpaque(refCon).takeUnretainedValue().write(ioData, frameCount: Int(frameCount))
        return 0
    }

    private func write(_ slice: UnsafeMutablePointer<AudioBufferList>, frameCount: Int) {
        let frames = Int(min(Int64(frameCount), framesLeft))
        guard failure == nil, frames > 0 else { return }
        framesLeft -= Int64(frames)
        conversion.convert(slice, into: encoded.list, frameCount: frameCount, scratch: scratch)
        do {
            try writer.write(UnsafeRawPointer(encoded.list.pointee.buffers[0].data!), frameCount: frames)
        } catch {
            failure = error
        }
    }
}
