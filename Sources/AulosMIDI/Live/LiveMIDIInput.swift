import AulosCore
import AulosRealtime
import Synchronization

/// A live MIDI event as the MIDI thread queues it: the message, which instrument gets it, and when it
/// arrived (CLOCK_MONOTONIC ns) — or, from an input that stamps frames (JACK MIDI), the sample time it is
/// due at.
public struct LiveMIDIEvent: BitwiseCopyable, Sendable, Equatable {
    public var arrivalNanos: Int64
    public var destination: UInt16
    public var message: ChannelMessage
    /// The sample time to play it at, latency included; -1: place it by `arrivalNanos`.
    public var dueFrame: Int64 = -1

    public init(arrivalNanos: Int64, destination: UInt16, message: ChannelMessage) {
        self.arrivalNanos = arrivalNanos
        self.destination = destination
        self.message = message
    }

    public init(dueFrame: Int64, destination: UInt16, message: ChannelMessage) {
        self.init(arrivalNanos: 0, destination: destination, message: message)
        self.dueFrame = dueFrame
    }

    public init(arrivalNanos: Int64, destination: UInt16, status: UInt8, data1: UInt8, data2: UInt8) {
        self.init(
            arrivalNanos: arrivalNanos, destination: destination,
            message: ChannelMessage(status: status, data1: data1, data2: data2))
    }
}

/// How live MIDI is placed in the slices.
public enum LiveMIDIPlacement: Sendable, Equatable {
    /// Each event at its arrival time plus a constant latency (one I/O period): no jitter. This is
    /// the method of JACK's alsa_seqmidi bridge.
    case constantLatency
    /// Each event at the start of the next slice rendered: the least latency, but the event's position
    /// within a period is lost (up to one period of jitter).
    case lowestLatency
}

/// Places live MIDI on frames. The MIDI thread stamps and queues (`send`); the pre-render notification
/// maps each arrival time through the I/O unit's clock (`MIDIPlacementClock`, fed by the slices' host
/// times) to a sample time, adds the fixed latency, and inserts the event into its instrument's event list
/// at that offset. Events not yet due wait for their slice; events whose frame has already passed play at
/// offset 0 and are counted as late — except note-ons overdue by more than half a second, which are
/// dropped (counted as stale) so a device coming back does not start a burst of old notes. Slices without
/// a host time (offline rendering) use lowest latency.
///
/// Threads: `send` from one thread (the MIDI thread); `renderNotify` on the render thread; counters and
/// `sampleTime(atNanos:)` from any thread.
public final class LiveMIDIInput: @unchecked Sendable {
    /// What any thread reads (atomics only, so no thread ever modifies the struct itself).
    struct Shared: ~Copyable {
        let late = Atomic<Int>(0)
        let delivered = Atomic<Int>(0)
        let dropped = Atomic<Int>(0)
        /// The clock line, published for other threads: frame 0's host time and ns per frame (as bits).
        let publishedOrigin = Atomic<Int64>(0)
        let publishedNanosPerFrame = Atomic<UInt64>(0)
        /// Largest lateness seen, in frames (for the status report).
        let worstLateFrames = Atomic<Int>(0)
        /// Note-ons dropped for being long overdue.
        let stale = Atomic<Int>(0)
        /// The clock's restarts and its current jitter margin (ns), for the status report.
        let clockResets = Atomic<Int>(0)
        let clockMargin = Atomic<Int64>(0)
    }

    /// The render thread's own state (mutated only there). Kept apart from `Shared` and from the producer's
    /// copy of the ring: the render thread's writes must not be accesses to memory other threads read.
    struct RenderState {
        let inbox: SPSCRing<LiveMIDIEvent>
        var clock: MIDIPlacementClock
        let latencyFrames: Int64
        let placement: LiveMIDIPlacement
        let destinations: MIDIDestinationLists
        let shared: UnsafeMutablePointer<Shared>
        /// Overdue by more than this (half a second), a note-on is dropped rather than started.
        let staleFrames: Int64
    }

    private let state: UnsafeMutablePointer<RenderState>
    private let shared: UnsafeMutablePointer<Shared>
    private let inbox: SPSCRing<LiveMIDIEvent>
    private let destinationQueues: [MIDIEventQueue]
    public let placement: LiveMIDIPlacement
    public let latencyFrames: Int

    /// `latencyFrames`: the constant latency (normally the I/O period); `periodFrames` sets the clock's
    /// update interval.
    public init(
        destinations: [MIDIEventQueue], sampleRate: Double, periodFrames: Int, latencyFrames: Int? = nil,
        placement: LiveMIDIPlacement = .constantLatency, capacity: Int = 4096
    ) {
        destinationQueues = destinations
        self.placement = placement
        self.latencyFrames = latencyFrames ?? periodFrames
        inbox = SPSCRing(minimumCapacity: capacity)
        shared = .allocate(capacity: 1)
        shared.initialize(to: Shared())
        state = .allocate(capacity: 1)
        state.initialize(
            to: RenderState(
                inbox: inbox, clock: MIDIPlacementClock(sampleRate: sampleRate, periodFrames: periodFrames),
                latencyFrames: Int64(self.latencyFrames), placement: placement,
                destinations: MIDIDestinationLists(destinations), shared: shared, staleFrames: Int64(sampleRate / 2)))
    }

    deinit {
        inbox.deallocate()
        state.pointee.destinations.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
        shared.deinitialize(count: 1)
        shared.deallocate()
    }

    /// Queues an event (MIDI thread). Returns false, and counts it, when the queue is full.
    @discardableResult
    public func send(_ event: LiveMIDIEvent) -> Bool {
        precondition(Int(event.destination) < destinationQueues.count, "no MIDI destination \(event.destination)")
        if inbox.push(event) { return true }
        shared.pointee.dropped.add(1, ordering: .relaxed)
        return false
    }

    /// Events delivered to instruments.
    public var deliveredCount: Int { shared.pointee.delivered.load(ordering: .relaxed) }
    /// Events that reached the render thread after their frame had passed (played at once).
    public var lateCount: Int { shared.pointee.late.load(ordering: .relaxed) }
    /// The latest a late event was, in frames.
    public var worstLateFrames: Int { shared.pointee.worstLateFrames.load(ordering: .relaxed) }
    /// Note-ons dropped because they reached the render thread more than half a second after they were
    /// due (the device was away, the machine stalled): a burst of stale notes is worse than none.
    public var staleCount: Int { shared.pointee.stale.load(ordering: .relaxed) }
    /// Times the placement clock started over (a discontinuity: an xrun, a reopened device).
    public var clockResets: Int { shared.pointee.clockResets.load(ordering: .relaxed) }
    /// The jitter margin the clock adds (ns): the earliest host time seen before its line.
    public var clockMarginNanos: Int64 { shared.pointee.clockMargin.load(ordering: .relaxed) }
    /// Events dropped because the queue or an instrument's list was full.
    public var droppedCount: Int {
        shared.pointee.dropped.load(ordering: .relaxed) + destinationQueues.reduce(0) { $0 + $1.droppedCount }
    }

    /// The sample time at a host time, from the render thread's latest clock line; nil before the first
    /// slice with a host time. For other threads (the MIDI clock follower wants seconds on the sample clock).
    public func sampleTime(atNanos nanos: Int64) -> Double? {
        let bits = shared.pointee.publishedNanosPerFrame.load(ordering: .acquiring)
        guard bits != 0 else { return nil }
        return (Double(nanos) - Double(shared.pointee.publishedOrigin.load(ordering: .relaxed)))
            / Double(bitPattern: bits)
    }

    /// Install with `AudioGraph.addRenderNotify`. Valid while this object lives.
    public var renderNotify: RenderCallbackStruct {
        RenderCallbackStruct(LiveMIDIInput.preRender, refCon: UnsafeMutableRawPointer(state))
    }

    static let preRender: RenderCallback = { refCon, flags, timeStamp, _, frameCount, _ in
        guard flags.pointee.contains(.preRender) else { return 0 }
        let stamp = timeStamp.pointee
        let hasHostTime = stamp.flags.contains(.hostTimeValid)
        LiveMIDIInput.deliver(
            refCon!.assumingMemoryBound(to: RenderState.self), sliceStart: stamp.sampleTime,
            hostNanos: hasHostTime ? Int64(bitPattern: stamp.hostTime) : nil, frameCount: Int64(frameCount))
        return 0
    }

    /// Moves every queued event due in this slice to its instrument at its frame offset.
    @_noAllocation @_noLocks
    static func deliver(
        _ state: UnsafeMutablePointer<RenderState>, sliceStart: Int64, hostNanos: Int64?, frameCount: Int64
    ) {
        let constantLatency = state.pointee.placement == .constantLatency
        let clocked = hostNanos != nil
        if let hostNanos {
            state.pointee.clock.update(frame: sliceStart, hostNanos: hostNanos)
            let clock = state.pointee.clock
            let shared = state.pointee.shared
            shared.pointee.publishedOrigin.store(
                Int64(clock.referenceNanos - clock.marginNanos - Double(clock.referenceFrame) * clock.nanosPerFrame),
                ordering: .relaxed)
            shared.pointee.publishedNanosPerFrame.store(clock.nanosPerFrame.bitPattern, ordering: .releasing)
            shared.pointee.clockResets.store(clock.resets, ordering: .relaxed)
            shared.pointee.clockMargin.store(Int64(clock.marginNanos), ordering: .relaxed)
        }
        // Events that would share a frame are spread one frame apart in arrival order: the event list
        // orders same-frame events by kind (note-off first), which for a key tapped within one period
        // (note-on and note-off landing together) would put the release before the strike and hang it.
        var nextFree: Int64 = 0
        while let event = state.pointee.inbox.peek() {
            // A full instrument list: leave the rest queued for the next slice rather than drop it (the
            // MIDI thread may keep queueing while this loop runs, so it must not run unbounded).
            if state.pointee.destinations.isFull(event.destination) { break }
            var offset: Int64 = 0
            if event.dueFrame >= 0 {
                // Stamped with its frame by its input (JACK MIDI): exactly there, with no clock and no headroom.
                offset = event.dueFrame - sliceStart
                if offset >= frameCount { break }
                if offset < 0 {
                    if -offset > state.pointee.staleFrames && event.message.isNoteOn {
                        _ = state.pointee.inbox.pop()
                        state.pointee.shared.pointee.stale.add(1, ordering: .relaxed)
                        continue
                    }
                    state.pointee.shared.pointee.late.add(1, ordering: .relaxed)
                    if Int(-offset) > state.pointee.shared.pointee.worstLateFrames.load(ordering: .relaxed) {
                        state.pointee.shared.pointee.worstLateFrames.store(Int(-offset), ordering: .relaxed)
                    }
                    offset = 0
                }
            } else if clocked {
                // floor() without FloatingPointRoundingRule, which the real-time checker rejects.
                let exact = state.pointee.clock.frame(atNanos: event.arrivalNanos)
                var arrivalFrame = Int64(exact)
                if Double(arrivalFrame) > exact { arrivalFrame -= 1 }
                let due = arrivalFrame + state.pointee.latencyFrames
                // Long overdue (the device was gone, the machine stalled): starting the note now would
                // be a burst of stale notes. Drop note-ons; everything else (note-offs, pedals,
                // controllers) still applies, so nothing is left hanging.
                if sliceStart - due > state.pointee.staleFrames && event.message.isNoteOn {
                    _ = state.pointee.inbox.pop()
                    state.pointee.shared.pointee.stale.add(1, ordering: .relaxed)
                    continue
                }
                if constantLatency {
                    offset = due - sliceStart
                    // Arrivals are in order, so everything behind this one is due later too.
                    if offset >= frameCount { break }
                    if offset < 0 {
                        state.pointee.shared.pointee.late.add(1, ordering: .relaxed)
                        if Int(-offset) > state.pointee.shared.pointee.worstLateFrames.load(ordering: .relaxed) {
                            state.pointee.shared.pointee.worstLateFrames.store(Int(-offset), ordering: .relaxed)
                        }
                        offset = 0
                    }
                }
            }
            // No frame left in this slice (a burst of more events than frames): the rest wait for the next.
            if offset < nextFree {
                if nextFree >= frameCount { break }
                offset = nextFree
            }
            _ = state.pointee.inbox.pop()
            nextFree = offset + 1
            if state.pointee.destinations.insert(
                MIDIEvent(offset: UInt32(offset), message: event.message), into: event.destination)
            {
                state.pointee.shared.pointee.delivered.add(1, ordering: .relaxed)
            }
        }
    }
}
