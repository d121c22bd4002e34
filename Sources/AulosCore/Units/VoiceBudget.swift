import Synchronization

/// Voice counters an instrument shares with its host: how many voices sound, the most it may sound right
/// now, and how many it has shed to get under that. The host lowers the limit under overload (before the
/// device underruns) and raises it back as the load falls; the instrument ends the excess voices itself —
/// released ones first, then the oldest — with a short fade.
///
/// Threads: the render thread stores `active` and adds to `shed`, and reads `limit`; any other thread
/// reads the counters and stores `limit`. All atomics, no locks.
public final class VoiceBudget: @unchecked Sendable {
    public struct Counters: ~Copyable {
        public let active = Atomic<Int>(0)
        public let limit = Atomic<Int>(Int.max)
        public let shed = Atomic<Int>(0)
    }

    /// Stable for the unit's life, so a kernel can hold it without retaining the budget.
    public let counters: UnsafeMutablePointer<Counters>

    public init() {
        counters = .allocate(capacity: 1)
        counters.initialize(to: Counters())
    }

    deinit {
        counters.deinitialize(count: 1)
        counters.deallocate()
    }

    public var active: Int { counters.pointee.active.load(ordering: .relaxed) }
    public var shed: Int { counters.pointee.shed.load(ordering: .relaxed) }
    /// The most voices the instrument may sound now (`Int.max`: its own polyphony).
    public var limit: Int {
        get { counters.pointee.limit.load(ordering: .relaxed) }
        set { counters.pointee.limit.store(max(1, newValue), ordering: .relaxed) }
    }
}
