import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Publishes a pointer (a render plan) from the control thread to one render thread, and tells the
/// control thread when a replaced pointer is no longer in use so it can be freed *off* the render thread.
///
/// Threads: the render thread calls `acquire()` at the start of a cycle and `release()` at its end; the
/// control thread calls `publish(_:)`, `isInUse(_:)` and `waitUntilUnused(_:timeout:)`.
///
/// It is a single hazard pointer: the reader announces the pointer it is about to use and re-checks that it
/// is still current. Because announce and re-check are sequentially consistent, a writer that has already
/// exchanged the pointer and then sees the hazard differ from the old pointer knows the reader will never
/// touch the old one again. The reader never waits, allocates or locks.
public struct HazardExchange: @unchecked Sendable {
    @usableFromInline struct State: ~Copyable {
        @usableFromInline let current = Atomic<UInt>(0)
        @usableFromInline let hazard = Atomic<UInt>(0)
    }

    @usableFromInline let state: UnsafeMutablePointer<State>

    public init() {
        state = .allocate(capacity: 1)
        state.initialize(to: State())
    }

    /// Frees the exchange itself (not the published pointer). Control thread, after rendering stopped.
    public func deallocate() {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Render thread: the current pointer, protected until `release()`.
    @inlinable @_noAllocation @_noLocks
    public func acquire() -> UnsafeMutableRawPointer? {
        var pointer = state.pointee.current.load(ordering: .acquiring)
        while true {
            state.pointee.hazard.store(pointer, ordering: .sequentiallyConsistent)
            let again = state.pointee.current.load(ordering: .sequentiallyConsistent)
            if again == pointer { break }
            pointer = again
        }
        return UnsafeMutableRawPointer(bitPattern: pointer)
    }

    /// Render thread: the pointer from `acquire()` is no longer used.
    @inlinable @_noAllocation @_noLocks
    public func release() {
        state.pointee.hazard.store(0, ordering: .releasing)
    }

    /// Control thread: makes `pointer` current and returns the pointer it replaced.
    public func publish(_ pointer: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
        let new = UInt(bitPattern: pointer)
        let old = state.pointee.current.exchange(new, ordering: .sequentiallyConsistent)
        return UnsafeMutableRawPointer(bitPattern: old)
    }

    /// Control thread: the pointer currently published.
    public var current: UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: state.pointee.current.load(ordering: .acquiring))
    }

    /// Control thread: whether the render thread may still be using a pointer that is no longer current.
    public func isInUse(_ pointer: UnsafeMutableRawPointer) -> Bool {
        state.pointee.hazard.load(ordering: .sequentiallyConsistent) == UInt(bitPattern: pointer)
    }

    /// Control thread: waits (sleeping, never spinning hot) until `pointer` is unused or `timeout` passes.
    /// Returns whether it is unused.
    public func waitUntilUnused(_ pointer: UnsafeMutableRawPointer, timeout: Duration) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while isInUse(pointer) {
            if clock.now >= deadline { return false }
            usleep(100)
        }
        return true
    }
}
