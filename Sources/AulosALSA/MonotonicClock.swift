import Glibc

/// CLOCK_MONOTONIC in nanoseconds: the clock of the slices' host times, the MIDI arrival stamps and the
/// session's card polling. Any thread (one system call, no allocation).
public func monotonicNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}
