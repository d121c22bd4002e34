import AulosCore
import AulosRealtime

/// Plays a `MIDITimeline` into a graph's instruments by sample time: a pre-render notification that, each
/// slice, hands every event falling inside the slice to its instrument at its exact frame offset. The
/// timeline is published to the render thread like a render plan (one atomic exchange) and the one it
/// replaces is freed on the control thread once the render thread has let go of it.
///
/// A timeline's events are absolute sample times: one published before the graph starts plays from its
/// beginning; one published while the graph runs plays from the slice that first sees it (earlier events
/// are skipped, not played late).
///
/// An instrument takes at most its event list's capacity (2,048) in one slice. Past that, nothing is dropped:
/// the rest of the timeline waits for the next slice, in order, and lands at its start — late, and counted
/// (`lateEvents`, `worstLateFrames`), so a burst of controllers before a note-off delays the note-off instead
/// of losing it and leaving the note hanging.
///
/// Threads: `play` on the control thread; the notification on the render thread (no allocation, lock or
/// ARC).
public final class MIDITimelinePlayer: @unchecked Sendable {
    struct RenderState {
        let exchange: HazardExchange
        let destinations: MIDIDestinationLists
        /// The timeline being read and where in it; render thread only.
        var reading: UnsafeMutableRawPointer?
        var cursor: Int
        /// Events carried into a later slice because an instrument's list was full, and the most frames one
        /// was late (written by the render thread, read by the control thread after or between renders).
        var lateEvents: Int
        var worstLateFrames: Int64
    }

    private let state: UnsafeMutablePointer<RenderState>
    private let exchange = HazardExchange()
    private var current: MIDITimeline?
    /// Timelines replaced while the render thread may still read them.
    private var retired: [MIDITimeline] = []

    /// `destinations[i]` receives the timeline's events for destination `i`.
    public init(destinations: [MIDIEventQueue]) {
        state = .allocate(capacity: 1)
        state.initialize(
            to: RenderState(
                exchange: exchange, destinations: MIDIDestinationLists(destinations), reading: nil, cursor: 0,
                lateEvents: 0, worstLateFrames: 0))
    }

    deinit {
        _ = exchange.publish(nil)
        state.pointee.destinations.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
        exchange.deallocate()
    }

    /// Makes `timeline` the one played (nil: none). Control thread.
    public func play(_ timeline: MIDITimeline?) {
        _ = exchange.publish(timeline.map { UnsafeMutableRawPointer($0.storage) })
        if let current { retired.append(current) }
        current = timeline
        // Once a timeline is no longer current, only a render thread that announced it before the exchange
        // can still read it; one that is not announced now never will.
        retired.removeAll { !exchange.isInUse(UnsafeMutableRawPointer($0.storage)) }
    }

    /// The timeline being played.
    public var timeline: MIDITimeline? { current }

    /// Events played after their frame because more than an instrument's list holds fell in one slice (read
    /// when the render has stopped, or between offline slices).
    public var lateEvents: Int { state.pointee.lateEvents }

    /// The latest such an event was, in frames.
    public var worstLateFrames: Int64 { state.pointee.worstLateFrames }

    /// Install with `AudioGraph.addRenderNotify`. Valid while this player lives.
    public var renderNotify: RenderCallbackStruct {
        RenderCallbackStruct(MIDITimelinePlayer.preRender, refCon: UnsafeMutableRawPointer(state))
    }

    static let preRender: RenderCallback = { refCon, flags, timeStamp, _, frameCount, _ in
        guard flags.pointee.contains(.preRender) else { return 0 }
        MIDITimelinePlayer.deliver(
            refCon!.assumingMemoryBound(to: RenderState.self), sliceStart: timeStamp.pointee.sampleTime,
            frameCount: Int64(frameCount))
        return 0
    }

    /// Hands the events of [sliceStart, sliceStart + frameCount) to their instruments.
    @_noAllocation @_noLocks
    static func deliver(_ state: UnsafeMutablePointer<RenderState>, sliceStart: Int64, frameCount: Int64) {
        let exchange = state.pointee.exchange
        defer { exchange.release() }
        guard let raw = exchange.acquire() else {
            state.pointee.reading = nil
            return
        }
        let timeline = raw.assumingMemoryBound(to: MIDITimeline.Storage.self).pointee
        if raw != state.pointee.reading {
            // A timeline seen for the first time: start at the first event not before this slice.
            state.pointee.reading = raw
            var low = 0
            var high = timeline.count
            while low < high {
                let middle = (low + high) / 2
                if timeline.events[middle].sampleTime < sliceStart { low = middle + 1 } else { high = middle }
            }
            state.pointee.cursor = low
        }
        let end = sliceStart + frameCount
        var cursor = state.pointee.cursor
        while cursor < timeline.count && timeline.events[cursor].sampleTime < end {
            let event = timeline.events[cursor]
            // A full list: this event and every later one wait for the next slice (order kept).
            if state.pointee.destinations.isFull(event.destination) { break }
            let lateness = sliceStart - event.sampleTime
            if lateness > 0 {
                state.pointee.lateEvents += 1
                state.pointee.worstLateFrames = max(state.pointee.worstLateFrames, lateness)
            }
            let offset = UInt32(max(0, event.sampleTime - sliceStart))
            state.pointee.destinations.insert(
                MIDIEvent(offset: offset, message: event.message), into: event.destination)
            cursor += 1
        }
        state.pointee.cursor = cursor
    }
}
