import AulosCore
import AulosRealtime
import Synchronization

/// A channel message for an instrument, positioned at a frame of the next slice: Core Audio's
/// MusicDeviceMIDIEvent(status, data1, data2, offsetSampleFrames) as a value the render thread can hold, with the
/// MIDI 2.0 value beside the bytes when the message came as MIDI 2.0 (`resolution`, `wide`: see `MIDIResolution`).
/// An instrument that knows only MIDI 1.0 reads the bytes, always filled with the value scaled down; 12 bytes.
public struct MIDIEvent: BitwiseCopyable, Sendable, Equatable {
    public var offset: UInt32
    public var status: UInt8
    public var data1: UInt8
    public var data2: UInt8
    public var resolution = MIDIResolution.midi1
    public var wide: UInt32 = 0

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
        resolution = message.resolution
        wide = message.wide
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
    /// Each channel's program as the instrument took it (`ChannelPrograms`): written here as events are
    /// taken, read by the control thread.
    @usableFromInline let programs: ChannelPrograms
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
        programs = ChannelPrograms()
        links = .allocate(capacity: 1)
        links.initialize(to: (nil, nil))
    }

    func deallocate() {
        events.deallocate()
        count.deallocate()
        dropped.deinitialize(count: 1)
        dropped.deallocate()
        programs.deallocate()
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
        programs.take(first)
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

    /// The bank and program channel `channel` (0…15) plays, as its instrument last took them (nil: none
    /// known). Any thread.
    public func program(onChannel channel: Int) -> ChannelPrograms.Choice? { list.programs.choice(channel) }

    /// Records what an instrument chose by itself (a preset at load, FluidSynth's drum kit on channel 10),
    /// before or between the program changes it takes. Control thread.
    public func noteProgram(_ choice: ChannelPrograms.Choice, onChannel channel: Int) {
        list.programs.store(choice, channel: channel)
    }
}

/// What each of an instrument's 16 channels was last told to play: the bank selected (CC 0 · 128 + CC 32)
/// when its program change came, and the program. Tracked where the instrument takes its events, so it
/// counts whatever road a program change came by (a keyboard, a file, the panel, the rig's start). The
/// panel's preset menus and `aulos save` read it.
///
/// Threads: the render thread takes events (and alone keeps the bank selected, which waits for a program
/// change); the choices are atomics any thread reads.
public struct ChannelPrograms: @unchecked Sendable {
    public struct Choice: Equatable, Sendable {
        public var bank: Int
        public var program: Int

        public init(bank: Int, program: Int) {
            self.bank = bank
            self.program = program
        }

        /// What chooses it on channel `channel` (1…16): bank select MSB and LSB, then the program change.
        public func messages(onChannel channel: Int) -> [ChannelMessage] {
            let status = UInt8(channel - 1)
            return [
                ChannelMessage(status: 0xB0 | status, data1: 0, data2: UInt8(bank >> 7)),
                ChannelMessage(status: 0xB0 | status, data1: 32, data2: UInt8(bank & 0x7F)),
                ChannelMessage(status: 0xC0 | status, data1: UInt8(program)),
            ]
        }
    }

    /// Per channel: 1 << 31 | bank << 7 | program, or 0 for none known.
    @usableFromInline let choices: UnsafeMutablePointer<Atomic<UInt32>>
    /// Per channel: the bank selected so far, which the next program change takes (atomics too: a choice
    /// noted from the control thread selects its bank).
    @usableFromInline let selected: UnsafeMutablePointer<Atomic<UInt16>>

    init() {
        choices = .allocate(capacity: 16)
        for channel in 0..<16 { (choices + channel).initialize(to: Atomic(0)) }
        selected = .allocate(capacity: 16)
        for channel in 0..<16 { (selected + channel).initialize(to: Atomic(0)) }
    }

    func deallocate() {
        choices.deinitialize(count: 16)
        choices.deallocate()
        selected.deinitialize(count: 16)
        selected.deallocate()
    }

    /// Notes a bank select or program change the instrument takes.
    @inlinable @_noAllocation @_noLocks
    func take(_ event: MIDIEvent) {
        let channel = Int(event.status & 0x0F)
        let bank = selected[channel].load(ordering: .relaxed)
        switch event.status & 0xF0 {
        case 0xB0 where event.data1 == 0:
            selected[channel].store(UInt16(event.data2 & 0x7F) << 7 | bank & 0x7F, ordering: .relaxed)
        case 0xB0 where event.data1 == 32:
            selected[channel].store(bank & ~0x7F | UInt16(event.data2 & 0x7F), ordering: .relaxed)
        case 0xC0:
            choices[channel].store(1 << 31 | UInt32(bank) << 7 | UInt32(event.data1 & 0x7F), ordering: .relaxed)
        default:
            break
        }
    }

    func store(_ choice: Choice, channel: Int) {
        guard (0..<16).contains(channel) else { return }
        let bank = UInt32(max(0, min(16383, choice.bank)))
        selected[channel].store(UInt16(bank), ordering: .relaxed)
        choices[channel].store(1 << 31 | bank << 7 | UInt32(max(0, min(127, choice.program))), ordering: .relaxed)
    }

    func choice(_ channel: Int) -> Choice? {
        guard (0..<16).contains(channel) else { return nil }
        let value = choices[channel].load(ordering: .relaxed)
        guard value != 0 else { return nil }
        return Choice(bank: Int(value >> 7 & 0x3FFF), program: Int(value & 0x7F))
    }
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
