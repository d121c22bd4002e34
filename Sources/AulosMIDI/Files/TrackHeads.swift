/// A binary min-heap of tracks by their next event's (tick, track): the merge in
/// `StandardMIDIFile.scheduledMessages`.
///
/// Threads: a value, used by one merge.
struct TrackHeads {
    private var items: [(tick: Int, track: Int)]

    init(_ items: [(tick: Int, track: Int)]) {
        self.items = []
        self.items.reserveCapacity(items.count)
        for item in items { insert(item) }
    }

    private static func before(_ a: (tick: Int, track: Int), _ b: (tick: Int, track: Int)) -> Bool {
        a.tick != b.tick ? a.tick < b.tick : a.track < b.track
    }

    mutating func insert(_ item: (tick: Int, track: Int)) {
        items.append(item)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popFirst() -> (tick: Int, track: Int)? {
        guard let first = items.first else { return nil }
        let last = items.removeLast()
        guard !items.isEmpty else { return first }
        items[0] = last
        var parent = 0
        while true {
            let (left, right) = (2 * parent + 1, 2 * parent + 2)
            var smallest = parent
            if left < items.count && Self.before(items[left], items[smallest]) { smallest = left }
            if right < items.count && Self.before(items[right], items[smallest]) { smallest = right }
            guard smallest != parent else { return first }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
