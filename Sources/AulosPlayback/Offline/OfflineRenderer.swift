import AulosAudioFile
import AulosCore
import AulosGraph
import AulosRealtime
import AulosUnits

/// Pulls a graph whose I/O unit is a Generic Output slice by slice, faster than real time: Core Audio's
/// offline rendering pattern, and the harness every Aulos audio test stands on. Bit-for-bit repeatable:
/// nothing depends on wall-clock time. Each slice renders with flush-to-zero on, as every live render
/// thread does (`FlushToZero`): a tail that reaches exact zero there a few samples sooner lets a unit rest
/// (and wake) at another frame, so without it a file played live would not be its offline render.
///
/// Threads: the calling thread is both control and render thread; `beforeSlice` may therefore schedule
/// parameter changes and MIDI for the coming slice.
public final class OfflineRenderer {
    public let graph: AudioGraph
    public let sliceFrames: UInt32
    private let entry: RenderEntry
    private let output: AudioBufferListStorage
    public private(set) var sampleTime: Int64 = 0
    /// Frames the file and memory renders still leave out at their start: the look-ahead of the graph's
    /// output stage (`PeakLimiterUnit.latencyFrames`), so frame n of what they hand on is what sounded at
    /// sample time n — a note on frame 37 is on frame 37 of the file, limiter or not.
    public private(set) var leadingFramesToDrop: Int64

    /// `graph` must be initialized, headed by a Generic Output; its output-scope format is what the sink gets.
    public init(graph: AudioGraph, sliceFrames: UInt32) throws(AudioUnitError) {
        guard let io = graph.outputUnit as? GenericOutputUnit, let entry = graph.renderEntry else {
            throw AudioUnitError(
                .invalidOfflineRender, "offline rendering needs an initialized graph headed by a Generic Output unit")
        }
        guard sliceFrames >= 1, sliceFrames <= io.maximumFramesPerSlice else {
            throw AudioUnitError(
                .tooManyFramesToProcess,
                "slice of \(sliceFrames) frames is outside 1...\(io.maximumFramesPerSlice) (MaximumFramesPerSlice)")
        }
        self.graph = graph
        self.sliceFrames = sliceFrames
        self.entry = entry
        output = AudioBufferListStorage(format: io.outputFormat(0), maximumFrames: sliceFrames)
        leadingFramesToDrop = Int64(graph.units.compactMap { ($0 as? PeakLimiterUnit)?.latencyFrames }.max() ?? 0)
        if !graph.isRunning { try graph.start() }
    }

    /// Renders `frameCount` frames, handing each slice to `sink` (buffers in the Generic Output's output
    /// format, and the slice's frame count). `beforeSlice` runs first with the slice's start time and length.
    public func render(
        frameCount: Int64, beforeSlice: (Int64, UInt32) throws -> Void = { _, _ in },
        sink: (UnsafePointer<AudioBufferList>, Int) throws -> Void
    ) throws {
        var remaining = frameCount
        while remaining > 0 {
            let frames = UInt32(min(Int64(sliceFrames), remaining))
            try beforeSlice(sampleTime, frames)
            var flags = RenderActionFlags(rawValue: 0)
            var stamp = AudioTimeStamp(sampleTime: sampleTime)
            output.list.pointee.setFrameCount(frames, bytesPerFrame: output.format.bytesPerFrame)
            let status = FlushToZero.scope {
                entry.render(flags: &flags, timeStamp: &stamp, frameCount: frames, ioData: output.list)
            }
            if status != 0 {
                let code = AudioUnitError.Code(rawValue: status) ?? .cannotDoInCurrentContext
                throw AudioUnitError(code, "rendering failed at sample \(sampleTime)")
            }
            try sink(output.list, Int(frames))
            sampleTime += Int64(frames)
            remaining -= Int64(frames)
        }
    }

    /// How many of a slice's `frames` to leave out (`leadingFramesToDrop`), counting them off.
    private func framesToDrop(of frames: Int) -> Int {
        let drop = Int(min(Int64(frames), leadingFramesToDrop))
        leadingFramesToDrop -= Int64(drop)
        return drop
    }

    /// Renders into an audio file; the Generic Output's output format must be interleaved. The file gets
    /// `frameCount` frames less what is left of `leadingFramesToDrop`: the caller renders that much longer.
    public func render(
        frameCount: Int64, to writer: AudioFileWriter, beforeSlice: (Int64, UInt32) throws -> Void = { _, _ in }
    ) throws {
        let bytesPerFrame = Int(output.format.bytesPerFrame)
        try render(frameCount: frameCount, beforeSlice: beforeSlice) { list, frames in
            let drop = framesToDrop(of: frames)
            guard frames > drop else { return }
            try writer.write(
                UnsafeRawPointer(list.pointee.buffers[0].data!) + drop * bytesPerFrame, frameCount: frames - drop)
        }
    }

    /// Renders `frameCount` frames into memory, one Float array per channel (rendering further by what is left
    /// of `leadingFramesToDrop`, which are left out); the output format must be canonical.
    public func renderChannels(frameCount: Int64, beforeSlice: (Int64, UInt32) throws -> Void = { _, _ in }) throws
        -> [[Float]]
    {
        let format = output.format
        guard format.isCanonical else {
            throw AudioUnitError(
                .formatNotSupported, "capturing to memory needs a Float32 non-interleaved output format")
        }
        var channels = Array(repeating: [Float](), count: Int(format.channelsPerFrame))
        for index in channels.indices { channels[index].reserveCapacity(Int(frameCount)) }
        try render(frameCount: frameCount + leadingFramesToDrop, beforeSlice: beforeSlice) { list, frames in
            let drop = framesToDrop(of: frames)
            for index in channels.indices {
                channels[index].append(
                    contentsOf: UnsafeBufferPointer(
                        start: list.pointee.floatChannel(index) + drop, count: frames - drop))
            }
        }
        return channels
    }
}
