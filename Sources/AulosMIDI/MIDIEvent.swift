import AulosCore
import AulosRealtime
import Synchronization

/// A channel message for an instrument, positioned at a frame of the next slice: Core Audio's
/// MusicDeviceMIDIEvent(status, data1, data2, offsetSampleFrames) as a value the render thread can hold.
public struct MIDIEvent: BitwiseCopyable, Sendable, Equatable {
    public var offset: UInt32
    public var status: UInt8
    public var data1: UInt8
    public var data2: UInt8

    @_noAllocation @_noLocks
    public init(offset: UInt32, status: UInt8, data1: UInt8, data2: UInt8) {
        self.offset = offset
        self.status = status
        self.data1 = data1
        self.data2 = data2
    }

    /// `message` placed `offset` frames into the slice.
    @_noAllocation @_noLocks
    public init(offset: UInt32, message: ChannelMessage) {
        self.init(offset: offset, status: message.status, data1: message.data1, data2: message.data2)
    }

    /// Where an event goes among events at the same frame — the one documented order:
    /// 0 note-off (and note-on with velocity 0), 1 bank select (CC 0/32), 2 program change,
    /// 3 every other controller and channel message, 4 note-on.
    /// So a program change and a note at the same frame play the note with the new program, and a note
    /// released and struck again at the same frame is re-struck rather than cut.
    public var rank: UInt8 {
        switch status & 0xF0 {
        case 0x80: return 0
        case 0x90: return data2 == 0 ? 0 : 4
        case 0xB0: return data1 == 0 || data1 == 32 ? 1 : 3
        case 0xC0: return 2
        default: return 3
        }
    }
}

/// The render side of an instrument's incoming MIDI: the events of the current slice and later ones, kept in
/// (offset, rank, arrival) order, plus the ring that brings events from the control thread.
///
/// Threads: render thread only (`insert` is how the scheduler delivers during pre-render; `beginSlice`
/// drains what `MIDIEventQueue.send` queued from the control thread). A value handle over memory owned by
/// `MIDIEventQueue`. When full it drops the newest event and counts it.
///
/// Two links, set on the control thread before the instrument renders: a feed (`MIDIEventFeed`: the part's
/// MIDI effects, run at `beginSlice`) and a mirror (the list of the part's insert effect that takes MIDI:
/// every event inserted here is inserted there too, so it hears what the instrument hears, at its frame).
public struct MIDIEventList: @unchecked Sendable {
    @usableFromInline let events: UnsafeMutablePointer<MIDIEvent>
    @usableFromInline let count: UnsafeMutablePointer<Int>
    @usableFromInline let dropped: UnsafeMutablePointer<Atomic<Int>>
    @usableFromInline let inbox: SPSCRing<MIDIEvent>
    @usableFromInline let links: UnsafeMutablePointer<(feed: MIDIEventFeed?, mirror: MIDIEventList?)>
    public let capacity: Int

    init(capacity: Int, inbox: SPSCRing<MIDIEvent>) {
        self.capacity = capacity
        self.inbox = inbox
        events = .allocate(capacity: capacity)
        count = .allocate(capacity: 1)
        count.initialize(to: 0)
        dropped = .allocate(capacity: 1)
        dropped.initialize(to: Atomic(0))
        links = .allocate(capacity: 1)
        links.initialize(to: (nil, nil))
    }

    func deallocate() {
        events.deallocate()
        count.deallocate()
        dropped.deinitialize(count: 1)
        dropped.deallocate()
        links.deinitialize(count: 1)
        links.deallocate()
    }

    /// Adds an event, after every queued event with the same (offset, rank); and to the mirror's list.
    @_noAllocation @_noLocks
    public func insert(_ event: MIDIEvent) {
        links.pointee.mirror?.insert(event)
        let n = count.pointee
        guard n < capacity else {
            dropped.pointee.add(1, ordering: .relaxed)
            return
        }
        let rank = event.rank
        var position = n
        while position > 0 {
            let previous = events[position - 1]
            if previous.offset < event.offset || (previous.offset == event.offset && previous.rank <= rank) { break }
            events[position] = previous
            position -= 1
        }
        events[position] = event
        count.pointee = n + 1
    }

    /// Call at the start of every render cycle of `frameCount` frames: runs the feed (the MIDI effects
    /// before this instrument, which insert what they play), then takes in what the control thread sent.
    @_noAllocation @_noLocks
    public func beginSlice(frameCount: Int) {
        // (A C function whose code the checker cannot see: the feed's own entry is checked where it is
        // written.)
        if let feed = links.pointee.feed { _unsafePerformance { feed.function(feed.context, frameCount) } }
        while count.pointee < capacity, let event = inbox.pop() { insert(event) }
    }

    /// Whether any event is waiting in the list (after `beginSlice`).
    @inlinable
    public var hasPendingEvents: Bool { count.pointee > 0 }

    /// The next event due at or before `frame`, removed from the list; nil when none is due.
    @_noAllocation @_noLocks
    public func popDue(at frame: Int) -> MIDIEvent? {
        guard count.pointee > 0, Int(events[0].offset) <= frame else { return nil }
        let first = events[0]
        count.pointee -= 1
        if count.pointee > 0 {
            UnsafeMutableRawPointer(events).copyMemory(
                from: events + 1, byteCount: count.pointee * MemoryLayout<MIDIEvent>.stride)
        }
        return first
    }

    /// The first frame after `frame` where an event is due, or `frameCount`: render up to there, then apply.
    @_noAllocation @_noLocks
    public func nextOffset(after frame: Int, frameCount: Int) -> Int {
        for index in 0..<count.pointee where Int(events[index].offset) > frame {
            return min(Int(events[index].offset), frameCount)
        }
        return frameCount
    }

    /// Call at the end of every render cycle: events for later slices move one slice closer.
    @_noAllocation @_noLocks
    public func endSlice(frameCount: Int) {
        for index in 0..<count.pointee {
            events[index].offset -= UInt32(min(Int(events[index].offset), frameCount))
        }
    }

    public var pendingCount: Int { count.pointee }

    /// No room for another event (render thread: stop delivering, keep the rest queued).
    @_noAllocation @_noLocks
    public func isFull() -> Bool { count.pointee >= capacity }
}

/// An instrument's MIDI input, control side: owns the render-side `MIDIEventList` and its inbox ring.
///
/// Threads: `send` from one control (or MIDI) thread at a time; `list` is handed to the render kernel.
public final class MIDIEventQueue: @unchecked Sendable {
    public let list: MIDIEventList
    private let inbox: SPSCRing<MIDIEvent>

    public init(capacity: Int = 1024) {
        inbox = SPSCRing(minimumCapacity: capacity)
        list = MIDIEventList(capacity: capacity, inbox: inbox)
    }

    deinit {
        list.deallocate()
        inbox.deallocate()
    }

    /// Core Audio's MusicDeviceMIDIEvent from a non-render thread: the event lands `offset` frames into the
    /// next slice rendered. Returns false when the inbox is full.
    @discardableResult
    public func send(status: UInt8, data1: UInt8, data2: UInt8, offset: UInt32 = 0) -> Bool {
        inbox.push(MIDIEvent(offset: offset, status: status, data1: data1 & 0x7F, data2: data2 & 0x7F))
    }

    /// Events dropped because the list was full (render side), readable any time.
    public var droppedCount: Int { list.dropped.pointee.load(ordering: .relaxed) }

    /// What runs before this instrument each slice and inserts into its list (nil: nothing). Control
    /// thread, while the instrument does not render.
    public func setFeed(_ feed: MIDIEventFeed?) { list.links.pointee.feed = feed }

    /// Another list that gets every event this one does (nil: none): a part's insert effect that takes
    /// MIDI. Control thread, while neither renders; `mirror` must outlive this queue's use of it.
    public func setMirror(_ mirror: MIDIEventQueue?) { list.links.pointee.mirror = mirror?.list }
}

/// Follows one channel's RPN/NRPN selection (CC 101/100, 99/98) and data entry (CC 6/38, 96/97), and reports
/// the parameter value that results. RPN 127/127 (null) deselects. Render side, one per channel.
public struct ParameterNumberTracker: BitwiseCopyable, Sendable {
    public struct Change: Equatable, Sendable {
        public var isRegistered: Bool
        public var parameter: UInt16
        /// 14-bit value: data-entry MSB << 7 | LSB.
        public var value: UInt16

        public init(isRegistered: Bool, parameter: UInt16, value: UInt16) {
            self.isRegistered = isRegistered
            self.parameter = parameter
            self.value = value
        }
    }

    private var isRegistered = true
    private var parameterMSB: UInt8 = 127
    private var parameterLSB: UInt8 = 127
    private var valueMSB: UInt8 = 0
    private var valueLSB: UInt8 = 0

    @_noAllocation @_noLocks
    public init() {}

    public var parameter: UInt16 { UInt16(parameterMSB) << 7 | UInt16(parameterLSB) }
    var isNull: Bool { parameterMSB == 127 && parameterLSB == 127 }

    /// Feeds one control change; returns the parameter change it completes, if any. (Controller numbers are
    /// literals here, named in comments: the render-side checker cannot see through `MIDIController`'s
    /// lazily initialized statics.)
    @_noAllocation @_noLocks
    public mutating func handle(controller: UInt8, value: UInt8) -> Change? {
        switch controller {
        case 101:  // RPN MSB
            isRegistered = true
            parameterMSB = value
        case 100:  // RPN LSB
            isRegistered = true
            parameterLSB = value
        case 99:  // NRPN MSB
            isRegistered = false
            parameterMSB = value
        case 98:  // NRPN LSB
            isRegistered = false
            parameterLSB = value
        case 6:  // data entry MSB
            valueMSB = value
            valueLSB = 0
            return isNull ? nil : current
        case 38:  // data entry LSB
            valueLSB = value
            return isNull ? nil : current
        case 96, 97:  // data increment, decrement
            guard !isNull else { return nil }
            var combined = Int(valueMSB) << 7 | Int(valueLSB)
            combined = controller == 96 ? min(16383, combined + 1) : max(0, combined - 1)
            valueMSB = UInt8(combined >> 7)
            valueLSB = UInt8(combined & 0x7F)
            return current
        default:
            break
        }
        return nil
    }

    private var current: Change {
        Change(isRegistered: isRegistered, parameter: parameter, value: UInt16(valueMSB) << 7 | UInt16(valueLSB))
    }
}
