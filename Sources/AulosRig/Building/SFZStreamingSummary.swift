import AulosSFZ

/// What a rig's SFZ parts have done with their samples, summed over the parts: the voice-blocks whose
/// streamed data came late (played as silence, never waited for, live) and their frames, the bytes the
/// loaders read from disk, the bytes of sample heads held in memory, and stream requests that found the
/// loader's queue full. The counters start again when a part's engine is made (a rig reload).
///
/// Threads: a value.
public struct SFZStreamingSummary: Sendable, Equatable {
    public var parts = 0
    public var underruns = 0
    public var lateFrames = 0
    public var streamedBytes = 0
    public var preloadedBytes = 0
    public var droppedRequests = 0

    public init() {}
}

extension PlaybackRig {
    /// The SFZ parts' streaming counters, summed; nil when the rig has no SFZ part. Control thread.
    public var sfzStreaming: SFZStreamingSummary? {
        var summary = SFZStreamingSummary()
        for case let player as SFZInstrumentUnit in instruments {
            let status = player.status
            summary.parts += 1
            summary.underruns += status.underruns
            summary.lateFrames += status.lateFrames
            summary.streamedBytes += status.streamedBytes
            summary.preloadedBytes += status.preloadedBytes
            summary.droppedRequests += status.droppedRequests
        }
        return summary.parts > 0 ? summary : nil
    }
}
