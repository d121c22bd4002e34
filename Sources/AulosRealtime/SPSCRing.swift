import Synchronization

/// A bounded, lock-free, wait-free single-producer/single-consumer ring of plain values.
///
/// Threads: exactly one producer thread calls `push`, exactly one consumer thread calls `pop`; any thread
/// may read `count`. Typically the control thread produces and the render thread consumes (parameter
/// events, MIDI), or the other way round (meters, retired resources).
///
/// `push`/`pop`/`peek` are generic, so they carry no `@_noAllocation` themselves: they are `@inlinable`,
/// and the compiler checks them after specialization inside the annotated render functions that call them.
///
/// It is a value handle over unmanaged storage so that a render kernel can hold it without ARC traffic:
/// copies share one ring. The control thread that created it calls `deallocate()` once no thread uses it.
public struct SPSCRing<Element: BitwiseCopyable>: @unchecked Sendable {
    @usableFromInline struct Indices: ~Copyable {
        /// Next slot to read; written by the consumer only.
        @usableFromInline let head = Atomic<Int>(0)
        /// Next slot to write; written by the producer only.
        @usableFromInline let tail = Atomic<Int>(0)
    }

    @usableFromInline let indices: UnsafeMutablePointer<Indices>
    @usableFromInline let slots: UnsafeMutablePointer<Element>
    @usableFromInline let mask: Int

    /// Capacity is rounded up to a power of two so that wrapping is a mask, not a division.
    public init(minimumCapacity: Int) {
        precondition(minimumCapacity > 0, "SPSCRing capacity must be positive")
        var capacity = 1
        while capacity < minimumCapacity { capacity <<= 1 }
        indices = UnsafeMutablePointer<Indices>.allocate(capacity: 1)
        indices.initialize(to: Indices())
        slots = UnsafeMutablePointer<Element>.allocate(capacity: capacity)
        mask = capacity - 1
    }

    @inlinable public var capacity: Int { mask + 1 }

    /// Frees the storage. Call once, from the owning thread, after both sides have stopped using the ring.
    public func deallocate() {
        indices.deinitialize(count: 1)
        indices.deallocate()
        slots.deallocate()
    }

    /// Producer side. Returns false (and drops nothing already queued) when the ring is full.
    @inlinable
    public func push(_ element: Element) -> Bool {
        let tail = indices.pointee.tail.load(ordering: .relaxed)
        let head = indices.pointee.head.load(ordering: .acquiring)
        if tail &- head > mask { return false }
        slots[tail & mask] = element
        indices.pointee.tail.store(tail &+ 1, ordering: .releasing)
        return true
    }

    /// Consumer side. Returns nil when the ring is empty.
    @inlinable
    public func pop() -> Element? {
        let head = indices.pointee.head.load(ordering: .relaxed)
        let tail = indices.pointee.tail.load(ordering: .acquiring)
        if head == tail { return nil }
        let element = slots[head & mask]
        indices.pointee.head.store(head &+ 1, ordering: .releasing)
        return element
    }

    /// Consumer side: the oldest element without removing it.
    @inlinable
    public func peek() -> Element? {
        let head = indices.pointee.head.load(ordering: .relaxed)
        let tail = indices.pointee.tail.load(ordering: .acquiring)
        if head == tail { return nil }
        return slots[head & mask]
    }

    /// Approximate when read by a third thread; exact from either side.
    @inlinable public var count: Int {
        indices.pointee.tail.load(ordering: .acquiring) &- indices.pointee.head.load(ordering: .acquiring)
    }
}
