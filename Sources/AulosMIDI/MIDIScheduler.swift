import AulosCore
import AulosRealtime
import Synchronization

/// An event at an absolute sample time for one destination instrument.
public struct TimedMIDIEvent: BitwiseCopyable, Sendable, Equatable {
    public var sampleTime: Int64
    public var destination: UInt16
    /// The message whole: its bytes, and its MIDI 2.0 value when it has one.
    public var message: ChannelMessage

    public init(sampleTime: Int64, destination: UInt16 = 0, status: UInt8, data1: UInt8, data2: UInt8) {
        self.init(
            sampleTime: sampleTime, destination: destination,
            message: ChannelMessage(status: status, data1: data1, data2: data2))
    }

    public init(sampleTime: Int64, destination: UInt16 = 0, message: ChannelMessage) {
        self.sampleTime = sampleTime
        self.destination = destination
        self.message = message
    }

    public var status: UInt8 { message.status }
    public var data1: UInt8 { message.data1 }
    public var data2: UInt8 { message.data2 }
}

/// Places MIDI events given at absolute sample times onto the exact frames of the slices that contain them
/// (Core Audio: call MusicDeviceMIDIEvent from the graph's render notify, on the render thread, for the
/// cycle about to render). Events for later slices wait; events already in the past play at offset 0 of
/// the next slice and are counted as late.
///
/// Threads: `schedule` from one control thread; the pre-render notification (`renderNotify`) runs on the
/// render thread and never allocates, locks or blocks.
public final class MIDIScheduler: @unchecked Sendable {
    struct State: ~Copyable {
        var inbox: SPSCRing<TimedMIDIEvent>
        var held: UnsafeMutablePointer<TimedMIDIEvent>
        var heldCount: Int
        var heldCapacity: Int
        let destinations: MIDIDestinationLists
        let late: Atomic<Int>
    }

    private let state: UnsafeMutablePointer<State>
    private let destinationQueues: [MIDIEventQueue]

    /// `destinations[i]` receives the events scheduled with destination `i`.
    public init(destinations: [MIDIEventQueue], capacity: Int = 8192) {
        destinationQueues = destinations
        state = .allocate(capacity: 1)
        state.initialize(
            to: State(
                inbox: SPSCRing(minimumCapacity: capacity), held: .allocate(capacity: capacity), heldCount: 0,
                heldCapacity: capacity, destinations: MIDIDestinationLists(destinations), late: Atomic(0)))
    }

    deinit {
        state.pointee.inbox.deallocate()
        state.pointee.held.deallocate()
        state.pointee.destinations.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Queues an event; returns false when the queue is full (schedule less far ahead, or raise `capacity`).
    @discardableResult
    public func schedule(_ event: TimedMIDIEvent) -> Bool {
        precondition(Int(event.destination) < destinationQueues.count, "no MIDI destination \(event.destination)")
        return state.pointee.inbox.push(event)
    }

    /// Convenience for a channel message.
    @discardableResult
    public func schedule(_ message: MIDIMessage, at sampleTime: Int64, destination: UInt16 = 0) -> Bool {
        guard let channel = ChannelMessage(message.normalized) else { return false }
        return schedule(TimedMIDIEvent(sampleTime: sampleTime, destination: destination, message: channel))
    }

    /// Events that arrived after their time (played at the start of the next slice).
    public var lateCount: Int { state.pointee.late.load(ordering: .relaxed) }
    /// Events dropped because a destination's list was full.
    public var droppedCount: Int { destinationQueues.reduce(0) { $0 + $1.droppedCount } }
    /// Events queued and not yet delivered (approximate while rendering).
    public var pendingCount: Int { state.pointee.inbox.count + state.pointee.heldCount }

    /// Install with `AudioGraph.addRenderNotify`. Valid while this scheduler lives.
    public var renderNotify: RenderCallbackStruct {
        RenderCallbackStruct(MIDIScheduler.preRender, refCon: UnsafeMutableRawPointer(state))
    }

    static let preRender: RenderCallback = { refCon, flags, timeStamp, _, frameCount, _ in
        guard flags.pointee.contains(.preRender) else { return 0 }
        MIDIScheduler.deliver(
            refCon!.assumingMemoryBound(to: State.self), sliceStart: timeStamp.pointee.sampleTime,
            frameCount: Int64(frameCount))
        return 0
    }

    /// Moves every event due before the end of this slice to its destination, at its offset in the slice.
    @_noAllocation @_noLocks
    static func deliver(_ state: UnsafeMutablePointer<State>, sliceStart: Int64, frameCount: Int64) {
        let held = state.pointee.held
        // Take in what the control thread queued, keeping `held` sorted by time (stable).
        while state.pointee.heldCount < state.pointee.heldCapacity, let event = state.pointee.inbox.pop() {
            var position = state.pointee.heldCount
            while position > 0 && held[position - 1].sampleTime > event.sampleTime {
                held[position] = held[position - 1]
                position -= 1
            }
            held[position] = event
            state.pointee.heldCount += 1
        }
        let end = sliceStart + frameCount
        var delivered = 0
        while delivered < state.pointee.heldCount && held[delivered].sampleTime < end {
            let event = held[delivered]
            var offset = event.sampleTime - sliceStart
            if offset < 0 {
                offset = 0
                state.pointee.late.add(1, ordering: .relaxed)
            }
            state.pointee.destinations.insert(
                MIDIEvent(offset: UInt32(offset), message: event.message), into: event.destination)
            delivered += 1
        }
        if delivered > 0 {
            state.pointee.heldCount -= delivered
            UnsafeMutableRawPointer(held).copyMemory(
                from: held + delivered, byteCount: state.pointee.heldCount * MemoryLayout<TimedMIDIEvent>.stride)
        }
    }
}
