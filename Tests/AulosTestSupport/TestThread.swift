#if canImport(Glibc)
import Glibc
#endif

/// A POSIX thread running a closure, joinable: the tests' second thread (a render thread or a producer).
/// A real pthread rather than a Swift task, so the code under test runs exactly as it would on the
/// real-time thread: one OS thread, no executor hops, per-thread allocation counting meaningful.
public final class TestThread: @unchecked Sendable {
    private var handle = pthread_t()
    private let body: () -> Void

    public init(_ body: @escaping () -> Void) {
        self.body = body
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(
            &handle, nil,
            { raw in
                Unmanaged<TestThread>.fromOpaque(raw!).takeRetainedValue().body()
                return nil
            }, context)
    }

    public func join() { pthread_join(handle, nil) }
}
