#if canImport(Glibc)
import Glibc
#endif

/// A value behind a pthread mutex, for state that non-real-time threads share (the MIDI thread and the
/// control thread; never the render thread).
///
/// Why not `Synchronization.Mutex`: on Linux it is a bare futex that ThreadSanitizer cannot see, so
/// `make tsan` reported every contended use as a data race; pthread mutexes are intercepted and
/// understood.
///
/// Threads: any but the render thread.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
