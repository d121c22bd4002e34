/// A known sequence of MIDI events for a graph's instruments — a MIDI file or score routed through a rig —
/// at absolute sample times, sorted, and immutable once made. The render thread reads it by sample time
/// (`MIDITimelinePlayer`), so nothing the control thread does, or fails to do in time, can delay, drop or
/// reorder an event: a file plays the same on a device as offline, however late the control loop runs.
///
/// Threads: made on the control thread; read on the render thread while a player plays it (the player
/// keeps it alive until the render thread has let go).
public final class MIDITimeline: @unchecked Sendable {
    /// What the render thread reads: a plain pointer and count (no ARC).
    struct Storage {
        let events: UnsafeMutablePointer<TimedMIDIEvent>
        let count: Int
    }

    let storage: UnsafeMutablePointer<Storage>

    /// `events` in time order; events at the same sample time keep their order (it is the order they reach
    /// the instrument, before the event list's same-frame rule).
    public init(_ events: [TimedMIDIEvent]) {
        let sorted = events.enumerated().sorted {
            ($0.element.sampleTime, $0.offset) < ($1.element.sampleTime, $1.offset)
        }
        let buffer = UnsafeMutablePointer<TimedMIDIEvent>.allocate(capacity: max(1, sorted.count))
        for (index, item) in sorted.enumerated() { (buffer + index).initialize(to: item.element) }
        storage = .allocate(capacity: 1)
        storage.initialize(to: Storage(events: buffer, count: sorted.count))
    }

    deinit {
        storage.pointee.events.deallocate()
        storage.deallocate()
    }

    public var count: Int { storage.pointee.count }

    /// The events, in order.
    public var events: UnsafeBufferPointer<TimedMIDIEvent> {
        UnsafeBufferPointer(start: storage.pointee.events, count: count)
    }

    /// The sample time of the last event (0 when empty).
    public var lastSampleTime: Int64 { count > 0 ? storage.pointee.events[count - 1].sampleTime : 0 }
}
