/// The render-side event lists of a graph's instruments, by destination index: where the MIDI scheduler,
/// the timeline player and the live input put events for the slice about to render.
///
/// Threads: made and freed on the control thread (from the instruments' queues, which own the lists);
/// `insert` on the render thread only.
struct MIDIDestinationLists {
    let lists: UnsafeMutablePointer<MIDIEventList>
    let count: Int

    init(_ queues: [MIDIEventQueue]) {
        lists = .allocate(capacity: max(1, queues.count))
        for (index, queue) in queues.enumerated() { (lists + index).initialize(to: queue.list) }
        count = queues.count
    }

    func deallocate() { lists.deallocate() }

    /// Puts `event` into destination `index`'s list (a full list drops and counts it); false when there is
    /// no such destination.
    @_noAllocation @_noLocks
    @discardableResult
    func insert(_ event: MIDIEvent, into index: UInt16) -> Bool {
        guard Int(index) < count else { return false }
        lists[Int(index)].insert(event)
        return true
    }

    /// Whether destination `index`'s list has no room left (the caller keeps the event for later).
    @_noAllocation @_noLocks
    func isFull(_ index: UInt16) -> Bool { Int(index) < count && lists[Int(index)].isFull() }

    /// Whether any destination's list has no room left: routing may deliver to any of them.
    @_noAllocation @_noLocks
    func anyFull() -> Bool {
        for index in 0..<count where lists[index].isFull() { return true }
        return false
    }
}
