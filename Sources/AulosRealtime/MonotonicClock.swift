import Glibc

/// CLOCK_MONOTONIC in nanoseconds: the clock of the slices' host times, the MIDI arrival stamps and the
/// session's card polling. Any thread (one system call, no allocation).
@inlinable
public func monotonicNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// The calling thread's CPU time in nanoseconds (CLOCK_THREAD_CPUTIME_ID): what a render actually ran,
/// without the time the thread was preempted or its virtual CPU was stolen by the host. One system call, no
/// allocation.
@inlinable
public func threadCPUNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}
