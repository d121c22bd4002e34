import AulosCore
import Testing

/// The tests' one render harness: pulls a render entry (a graph's) slice by slice, as the I/O unit's thread
/// or the offline renderer would, into buffers of the graph's output format, advancing the sample time;
/// and counts the allocations each pulled slice makes on this thread, when asked.
///
/// Threads: one thread renders (the test's, or a render thread it starts); read the results after that
/// thread is joined.
public final class RenderHarness: @unchecked Sendable {
    public let entry: RenderEntry
    public let buffers: AudioBufferListStorage
    /// The sample time of the next slice.
    public var sampleTime: Int64 = 0
    /// What the counted slices allocated.
    public var allocations = AllocationTally()

    /// `format` is the output format of the graph's I/O unit (canonical Float32 stereo by default).
    public init(
        _ entry: RenderEntry, format: StreamFormat = .canonical(channels: 2, sampleRate: 48_000),
        maximumFrames: UInt32 = 4096
    ) {
        self.entry = entry
        buffers = AudioBufferListStorage(format: format, maximumFrames: maximumFrames)
    }

    /// The render flags the last slice came back with (`outputIsSilence`).
    public private(set) var lastFlags = RenderActionFlags(rawValue: 0)

    /// Renders one slice of `frames` at `sampleTime` (then advanced), with a host time when given; counts its
    /// allocations when `counting`. Returns the render status.
    @discardableResult
    public func renderSlice(_ frames: UInt32, hostTime: UInt64? = nil, counting: Bool = false) -> AulosStatus {
        var flags = RenderActionFlags(rawValue: 0)
        var stamp =
            hostTime.map { AudioTimeStamp(sampleTime: sampleTime, hostTime: $0) }
            ?? AudioTimeStamp(sampleTime: sampleTime)
        buffers.list.pointee.setFrameCount(frames, bytesPerFrame: buffers.format.bytesPerFrame)
        let status =
            counting
            ? allocations.count {
                entry.render(flags: &flags, timeStamp: &stamp, frameCount: frames, ioData: buffers.list)
            }
            : entry.render(flags: &flags, timeStamp: &stamp, frameCount: frames, ioData: buffers.list)
        sampleTime += Int64(frames)
        lastFlags = flags
        return status
    }

    /// Renders `total` frames in slices of `slice` (the last one shorter) and returns every channel's
    /// samples; the format must be canonical (non-interleaved Float32). `beforeSlice` runs before each
    /// slice with its start and length (schedule events there). Each slice must render without error.
    public func render(
        _ total: Int, slice: Int, counting: Bool = false, sourceLocation: SourceLocation = #_sourceLocation,
        beforeSlice: (Int64, UInt32) throws -> Void
    ) rethrows -> [[Float]] {
        precondition(buffers.format.isCanonical, "render(_:slice:) returns canonical channels")
        var channels = [[Float]](repeating: [], count: Int(buffers.format.channelsPerFrame))
        for index in channels.indices { channels[index].reserveCapacity(total) }
        var remaining = total
        while remaining > 0 {
            let frames = UInt32(min(slice, remaining))
            try beforeSlice(sampleTime, frames)
            let status = renderSlice(frames, counting: counting)
            #expect(
                status == 0, "render failed at sample \(sampleTime - Int64(frames))", sourceLocation: sourceLocation)
            for index in channels.indices { channels[index] += channel(index, frames: Int(frames)) }
            remaining -= Int(frames)
        }
        return channels
    }

    /// `total` frames in slices of `slice`, with nothing to do between slices.
    public func render(
        _ total: Int, slice: Int, counting: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) -> [[Float]] {
        render(total, slice: slice, counting: counting, sourceLocation: sourceLocation) { _, _ in }
    }

    /// The last slice's samples of channel `index` (canonical formats).
    public func channel(_ index: Int, frames: Int) -> [Float] {
        Array(UnsafeBufferPointer(start: buffers.list.pointee.floatChannel(index), count: frames))
    }

    /// The last slice's samples as they are in the buffer, interleaved (an interleaved output format).
    public func interleaved(frames: Int) -> [Float] {
        let count = frames * Int(buffers.format.channelsPerFrame)
        return Array(
            UnsafeBufferPointer(
                start: buffers.list.pointee.buffers[0].data!.assumingMemoryBound(to: Float.self), count: count))
    }
}
