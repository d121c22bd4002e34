#if canImport(Glibc)
import Glibc
#endif

/// Waiting for something another thread or process does: on the condition itself, never for a fixed time
/// (too short on a loaded machine, where the test fails for nothing, and too long on an idle one).
public enum Wait {
    /// Asks `condition` every `pollMicroseconds` (1 ms) until it holds — true, at once — or `seconds` of the
    /// monotonic clock pass — false, after one last look.
    @discardableResult
    public static func until(seconds: Double, pollMicroseconds: UInt32 = 1000, _ condition: () throws -> Bool)
        rethrows -> Bool
    {
        let deadline = now() + seconds
        while try !condition() {
            if now() >= deadline { return try condition() }
            usleep(pollMicroseconds)
        }
        return true
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
