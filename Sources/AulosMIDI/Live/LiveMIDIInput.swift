import AulosCore
import AulosRealtime
import Synchronization

/// A live MIDI event as it is queued for the render thread: a message for one part (`direct`), a message
/// for the rig's router to route there (`route`, from `source`), or a router command (a rig switch, a
/// source gone, MIDI-learn) — commands travel with the events so they take effect in arrival order. It
/// carries when it arrived (CLOCK_MONOTONIC ns) or, from an input that stamps frames (JACK MIDI), the
/// sample time it is due at.
public struct LiveMIDIEvent: BitwiseCopyable, Sendable, Equatable {
    public enum Kind: UInt8, BitwiseCopyable, Sendable {
        /// `message` for part `destination`, past the router.
        case direct
        /// `message` from `source`, for the rig's router to route (no router: like `direct`).
        case route
        /// Switch to rig `destination` as a program change on the control channel would.
        case selectRig
        /// `source` is gone: its notes and pedal are released where they sound.
        case releaseSource
        /// The next controller moved gets mapped to the next target in the input's learn queue.
        case learn
        case cancelLearning
    }

    public var arrivalNanos: Int64
    public var destination: UInt16
    public var message: ChannelMessage
    /// The sample time to play it at, latency included; -1: place it by `arrivalNanos`.
    public var dueFrame: Int64 = -1
    public var kind = Kind.direct
    /// The `MIDISource` raw value, for routed messages and releases.
    public var source: UInt32 = 0

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

    /// A channel message for the router, from `source`.
    public static func routed(_ message: ChannelMessage, from source: MIDISource, arrivalNanos: Int64)
        -> LiveMIDIEvent
    {
        var event = LiveMIDIEvent(arrivalNanos: arrivalNanos, destination: 0, message: message)
        event.kind = .route
        event.source = source.rawValue
        return event
    }

    /// A router command, in order with the events around it.
    public static func command(_ kind: Kind, rig: Int = 0, source: MIDISource? = nil, arrivalNanos: Int64)
        -> LiveMIDIEvent
    {
        var event = LiveMIDIEvent(
            arrivalNanos: arrivalNanos, destination: UInt16(clamping: rig),
            message: ChannelMessage(status: 0x80, data1: 0))
        event.kind = kind
        event.source = source?.rawValue ?? 0
        return event
    }
}

/// Where a driver that reads MIDI on its own process thread (JACK MIDI) puts each channel message, stamped
/// with the frame it is due at in the cycle being processed: the render thread routes and places it in that
/// same cycle, before the slice that contains its frame renders. Any future frame-stamped source (network
/// MIDI, a file player) uses the same entry.
///
/// Threads: `push` from one thread, the driver's process thread (which is also the render thread).
public struct FramedMIDIInput: @unchecked Sendable {
    let ring: SPSCRing<LiveMIDIEvent>

    /// Queues `message` from the source with raw value `source` for the frame `dueFrame`; false (and
    /// counted by the driver) when full.
    @_noAllocation @_noLocks
    public func push(_ message: ChannelMessage, fromSource source: UInt32, dueFrame: Int64) -> Bool {
        var event = LiveMIDIEvent(dueFrame: dueFrame, destination: 0, message: message)
        event.kind = .route
        event.source = source
        return ring.push(event)
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

/// Places live MIDI on frames, and routes it there. The MIDI thread stamps and queues (`send`); a driver
/// that reads MIDI in its process cycle queues frame-stamped messages (`framedInput`); the pre-render
/// notification maps each arrival time through the I/O unit's clock (`MIDIPlacementClock`, fed by the
/// slices' host times) to a sample time, adds the fixed latency, routes what is due in the slice through the
/// rig's `RoutingKernel` (which parts hear it, as what; mapped controllers set their parameter with one
/// atomic store) and inserts it into its instruments' event lists at that offset. Events not yet due wait
/// for their slice; events whose frame has already passed play at offset 0 and are counted as late — except
/// note-ons overdue by more than half a second, which are dropped (counted as stale) so a device coming back
/// does not start a burst of old notes. Slices without a host time (offline rendering) use lowest latency.
/// What the control thread must do (a rig switched, an EQ preset, a mapping learned) comes back through
/// `takeActions()`.
///
/// Routing on the render thread is what lets a frame-stamped message sound at its frame in the cycle it
/// arrived in: nothing crosses to another thread and back between the driver reading it and the
/// instrument playing it.
///
/// Threads: `send` and `learn` from one thread at a time (the MIDI thread, or the control thread, behind the
/// caller's lock); `framedInput.push` from the driver's process thread; `renderNotify` on the render thread;
/// `takeActions` on the control thread; counters and `sampleTime(atNanos:)` from any thread.
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
        /// Router actions the control thread did not take in time (its queue was full).
        let actionsDropped = Atomic<Int>(0)
    }

    /// The render thread's own state (mutated only there). Kept apart from `Shared` and from the producer's
    /// copy of the ring: the render thread's writes must not be accesses to memory other threads read.
    struct RenderState {
        let inbox: SPSCRing<LiveMIDIEvent>
        let scheduled: SPSCRing<LiveMIDIEvent>
        let framed: SPSCRing<LiveMIDIEvent>
        let learnQueue: SPSCRing<RoutedControl>
        let actions: SPSCRing<RoutedAction>
        /// The rig's router, owned by the render thread while the input is installed (nil: events are
        /// delivered as addressed).
        let router: UnsafeMutablePointer<RoutingKernel>?
        var clock: MIDIPlacementClock
        let latencyFrames: Int64
        let placement: LiveMIDIPlacement
        let destinations: MIDIDestinationLists
        let shared: UnsafeMutablePointer<Shared>
        /// Overdue by more than this (half a second), a note-on is dropped rather than started.
        let staleFrames: Int64

        @_noAllocation @_noLocks
        func ring(_ inbox: Inbox) -> SPSCRing<LiveMIDIEvent> {
            switch inbox {
            case .framed: framed
            case .scheduled: scheduled
            case .arrived: self.inbox
            }
        }
    }

    private let state: UnsafeMutablePointer<RenderState>
    private let shared: UnsafeMutablePointer<Shared>
    private let inbox: SPSCRing<LiveMIDIEvent>
    private let scheduled: SPSCRing<LiveMIDIEvent>
    private let framed: SPSCRing<LiveMIDIEvent>
    private let learnQueue: SPSCRing<RoutedControl>
    private let actions: SPSCRing<RoutedAction>
    private let destinationQueues: [MIDIEventQueue]
    /// Keeps the router's tables alive while the render thread routes with them.
    private let routerOwner: AnyObject?
    public let placement: LiveMIDIPlacement
    public let latencyFrames: Int

    /// `latencyFrames`: the constant latency (normally the I/O period); `periodFrames` sets the clock's
    /// update interval. With `router` (and its owner, kept alive), `route` events go through it; from the
    /// first render on the render thread alone changes it.
    public init(
        destinations: [MIDIEventQueue], sampleRate: Double, periodFrames: Int, latencyFrames: Int? = nil,
        placement: LiveMIDIPlacement = .constantLatency, capacity: Int = 4096,
        router: (kernel: UnsafeMutablePointer<RoutingKernel>, owner: AnyObject)? = nil
    ) {
        destinationQueues = destinations
        self.placement = placement
        self.latencyFrames = latencyFrames ?? periodFrames
        inbox = SPSCRing(minimumCapacity: capacity)
        scheduled = SPSCRing(minimumCapacity: capacity)
        framed = SPSCRing(minimumCapacity: 1024)
        learnQueue = SPSCRing(minimumCapacity: 16)
        actions = SPSCRing(minimumCapacity: 256)
        routerOwner = router?.owner
        shared = .allocate(capacity: 1)
        shared.initialize(to: Shared())
        state = .allocate(capacity: 1)
        state.initialize(
            to: RenderState(
                inbox: inbox, scheduled: scheduled, framed: framed, learnQueue: learnQueue, actions: actions,
                router: router?.kernel,
                clock: MIDIPlacementClock(sampleRate: sampleRate, periodFrames: periodFrames),
                latencyFrames: Int64(self.latencyFrames), placement: placement,
                destinations: MIDIDestinationLists(destinations), shared: shared, staleFrames: Int64(sampleRate / 2)))
    }

    deinit {
        inbox.deallocate()
        scheduled.deallocate()
        framed.deallocate()
        learnQueue.deallocate()
        actions.deallocate()
        state.pointee.destinations.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
        shared.deinitialize(count: 1)
        shared.deallocate()
    }

    /// Queues an event (MIDI thread). Returns false, and counts it, when the queue is full.
    @discardableResult
    public func send(_ event: LiveMIDIEvent) -> Bool {
        precondition(
            event.kind != .direct || Int(event.destination) < destinationQueues.count,
            "no MIDI destination \(event.destination)")
        if inbox.push(event) { return true }
        shared.pointee.dropped.add(1, ordering: .relaxed)
        return false
    }

    /// Queues an event stamped with the time it should be heard at rather than the time it arrived: network
    /// MIDI, whose sender's clock puts each event a playout latency ahead of now (MIDI thread, in turn with
    /// `send`). Such times run ahead of the sequencer's arrivals, so they wait in an inbox of their own,
    /// merged frame by frame with the others: a keyboard played meanwhile is not held behind them. Returns
    /// false, and counts it, when the queue is full.
    @discardableResult
    public func sendScheduled(_ event: LiveMIDIEvent) -> Bool {
        precondition(event.kind == .route, "only routed messages are scheduled")
        if scheduled.push(event) { return true }
        shared.pointee.dropped.add(1, ordering: .relaxed)
        return false
    }

    /// MIDI-learn: the next controller moved (after what is already queued) gets mapped to `control`.
    /// False when the queue is full.
    @discardableResult
    public func learn(_ control: RoutedControl, arrivalNanos: Int64) -> Bool {
        guard learnQueue.push(control) else { return false }
        return send(.command(.learn, arrivalNanos: arrivalNanos))
    }

    /// Whether this input routes with `kernel` (a live path checks it is given the pair it was built with).
    public func routes(with kernel: UnsafeMutablePointer<RoutingKernel>) -> Bool { state.pointee.router == kernel }

    /// The entry for a driver that reads MIDI in its process cycle (one producer: that thread).
    public var framedInput: FramedMIDIInput { FramedMIDIInput(ring: framed) }

    /// What the router decided that the control thread must do, oldest first (control thread).
    public func takeActions() -> [RoutedAction] {
        var taken: [RoutedAction] = []
        while let action = actions.pop() { taken.append(action) }
        return taken
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

    /// Whether any slice has had a host time, so events could be placed by their arrival at all (ALSA's `null`
    /// PCM never starts: its slices have none).
    public var hasClock: Bool { shared.pointee.publishedNanosPerFrame.load(ordering: .acquiring) != 0 }

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

    /// The live input's inboxes, in the order a tie between their heads is decided.
    enum Inbox: Int {
        /// Frame-stamped in the render thread's own cycle (JACK MIDI).
        case framed
        /// Stamped with the time to be heard at (network MIDI).
        case scheduled
        /// Stamped with their arrival (the sequencer, the control socket, commands).
        case arrived
    }

    /// Where a queued event goes in the slice: not yet (a later slice), never (a long-overdue note-on), or at
    /// an offset (negative: its frame has passed).
    enum Placement {
        case later
        case stale
        case at(Int64)
    }

    /// Moves every queued event due in this slice, from the three inboxes in frame order, to its instruments at
    /// its frame offset, routing on the way.
    @_noAllocation @_noLocks
    static func deliver(
        _ state: UnsafeMutablePointer<RenderState>, sliceStart: Int64, hostNanos: Int64?, frameCount: Int64
    ) {
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
        let clocked = hostNanos != nil
        // Events that would share a frame are spread one frame apart in arrival order: the event list
        // orders same-frame events by kind (note-off first), which for a key tapped within one period
        // (note-on and note-off landing together) would put the release before the strike and hang it.
        var nextFree: Int64 = 0
        nextEvent: while true {
            // A full instrument list: leave the rest queued for the next slice rather than drop it (the
            // producers may keep queueing while this loop runs, so it must not run unbounded).
            if state.pointee.destinations.anyFull() { break }
            // The earliest of the three inboxes' heads. On a tie the frame-stamped one wins (it is exact), then
            // the scheduled one: a source's release, queued with the sequencer's, must follow its last notes.
            var from = Inbox.framed
            var offset: Int64 = 0
            var found = false
            for raw in 0..<3 {
                let inbox = Inbox(rawValue: raw)!
                guard let event = state.pointee.ring(inbox).peek() else { continue }
                switch place(event, state, sliceStart: sliceStart, frameCount: frameCount, clocked: clocked) {
                case .later: break
                case .stale:
                    _ = state.pointee.ring(inbox).pop()
                    state.pointee.shared.pointee.stale.add(1, ordering: .relaxed)
                    continue nextEvent
                case .at(let at):
                    if !found || at < offset { (from, offset, found) = (inbox, at, true) }
                }
            }
            guard found else { break }
            if offset < 0 {
                state.pointee.shared.pointee.late.add(1, ordering: .relaxed)
                if Int(-offset) > state.pointee.shared.pointee.worstLateFrames.load(ordering: .relaxed) {
                    state.pointee.shared.pointee.worstLateFrames.store(Int(-offset), ordering: .relaxed)
                }
                offset = 0
            }
            // No frame left in this slice (a burst of more events than frames): the rest wait for the next.
            if offset < nextFree {
                if nextFree >= frameCount { break }
                offset = nextFree
            }
            let event = state.pointee.ring(from).pop()!
            nextFree = offset + 1
            handle(event, state, offset: UInt32(offset))
        }
    }

    /// Where `event` goes in the slice starting at `sliceStart`.
    @_noAllocation @_noLocks
    static func place(
        _ event: LiveMIDIEvent, _ state: UnsafeMutablePointer<RenderState>, sliceStart: Int64, frameCount: Int64,
        clocked: Bool
    ) -> Placement {
        let isNoteOn = event.kind != .selectRig && event.kind != .releaseSource && event.message.isNoteOn
        if event.dueFrame >= 0 {
            // Stamped with its frame by its input (JACK MIDI): exactly there, with no clock and no headroom.
            let offset = event.dueFrame - sliceStart
            if offset >= frameCount { return .later }
            if -offset > state.pointee.staleFrames && isNoteOn { return .stale }
            return .at(offset)
        }
        guard clocked else { return .at(0) }
        // floor() without FloatingPointRoundingRule, which the real-time checker rejects.
        let exact = state.pointee.clock.frame(atNanos: event.arrivalNanos)
        var arrivalFrame = Int64(exact)
        if Double(arrivalFrame) > exact { arrivalFrame -= 1 }
        let due = arrivalFrame + state.pointee.latencyFrames
        // Long overdue (the device was gone, the machine stalled): starting the note now would be a burst of
        // stale notes. Drop note-ons; everything else (note-offs, pedals, controllers) still applies, so
        // nothing is left hanging.
        if sliceStart - due > state.pointee.staleFrames && isNoteOn { return .stale }
        guard state.pointee.placement == .constantLatency else { return .at(0) }
        // Arrivals are in order, so everything behind this one is due later too. (Scheduled events are in order
        // per session; two sessions' may interleave by their clocks' skew, and one waits behind the other's.)
        let offset = due - sliceStart
        return offset >= frameCount ? .later : .at(offset)
    }

    /// Plays `event` at `offset`: as addressed, or through the router; runs router commands.
    @_noAllocation @_noLocks
    static func handle(_ event: LiveMIDIEvent, _ state: UnsafeMutablePointer<RenderState>, offset: UInt32) {
        guard let router = state.pointee.router else {
            if event.kind == .direct || event.kind == .route {
                insert(event.message, into: event.destination, state, offset: offset)
            }
            return
        }
        switch event.kind {
        case .direct:
            insert(event.message, into: event.destination, state, offset: offset)
        case .route:
            let result = router.pointee.route(event.message, from: event.source)
            insertDeliveries(result.count, from: router, state, offset: offset)
            take(result.action, state)
        case .selectRig:
            insertDeliveries(router.pointee.select(rig: Int(event.destination)), from: router, state, offset: offset)
        case .releaseSource:
            var key = 0
            var done = false
            while !done {
                let step = router.pointee.releaseStep(event.source, key: &key)
                insertDeliveries(step.count, from: router, state, offset: offset)
                done = step.done
            }
        case .learn:
            if let control = state.pointee.learnQueue.pop() { router.pointee.learn(control) }
        case .cancelLearning:
            router.pointee.cancelLearning()
        }
    }

    /// A router action: a parameter moves here (one atomic store); the rest is for the control thread.
    @_noAllocation @_noLocks
    static func take(_ action: RoutedAction, _ state: UnsafeMutablePointer<RenderState>) {
        switch action {
        case .none:
            return
        case .control(let control, let value):
            if control.store(value) { return }
        case .learned(_, _, let control, let value):
            control.store(value)
        case .rigSwitched, .snapshotRecalled, .songChosen:
            break
        }
        if !state.pointee.actions.push(action) {
            state.pointee.shared.pointee.actionsDropped.add(1, ordering: .relaxed)
        }
    }

    @_noAllocation @_noLocks
    static func insertDeliveries(
        _ count: Int, from router: UnsafeMutablePointer<RoutingKernel>, _ state: UnsafeMutablePointer<RenderState>,
        offset: UInt32
    ) {
        for index in 0..<count {
            let delivery = router.pointee.deliveries[index]
            insert(delivery.message, into: delivery.destination, state, offset: offset)
        }
    }

    @_noAllocation @_noLocks
    static func insert(
        _ message: ChannelMessage, into destination: UInt16, _ state: UnsafeMutablePointer<RenderState>,
        offset: UInt32
    ) {
        if state.pointee.destinations.insert(MIDIEvent(offset: offset, message: message), into: destination) {
            state.pointee.shared.pointee.delivered.add(1, ordering: .relaxed)
        }
    }
}
