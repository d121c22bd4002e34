import AulosCore
import Foundation
import Glibc
import Synchronization

/// Notices a render cycle stuck inside one unit — a plugin that spins in run() — and names it: the status,
/// the panel and the journal say which unit hangs instead of "playing, DSP 0 %" over silence. While a cycle
/// is stuck, SIGTERM ends the process at once (a clean stop would wait for the render thread forever), and
/// systemd's watchdog (`WatchdogSec=`) is fed only while cycles complete, so a hung instrument is restarted.
/// It reads the render thread's watch (`aulos_watch_read`), which costs that thread two plain stores a unit.
///
/// Threads: its own thread polls every 100 ms; `stuck` is read by the control thread.
public final class RenderWatchdog: @unchecked Sendable {
    /// How long one cycle may take before it counts as stuck: a thousand times a 1 ms slice.
    public static let stuckAfterNanos: UInt64 = 1_000_000_000

    /// The unit a stuck cycle is inside and how long it has been there, while one is.
    public struct Stuck: Sendable, Equatable {
        public var unit: String
        public var seconds: Double

        public var message: String {
            "the render thread has been inside '\(unit)' for \(String(format: "%.1f", seconds)) s: it hangs, and "
                + "nothing sounds until it returns; remove it from the rig (SIGTERM ends aulos)"
        }
    }

    private let state = Mutex<Stuck?>(nil)
    private let running = Atomic<Bool>(true)
    private let finished = DispatchSemaphore(value: 0)
    /// The first moment a stuck cycle was seen, for the detection time (nanoseconds after its start).
    private let detectedAfter = Atomic<UInt64>(0)

    public init() {
        let thread = Thread { [self] in watch() }
        thread.name = "aulos watchdog"
        thread.start()
    }

    /// The stuck cycle now, if any.
    public var stuck: Stuck? { state.withLock { $0 } }

    /// How long after the stuck cycle began the watchdog first saw it (ns; 0: never).
    public var detectionNanos: UInt64 { detectedAfter.load(ordering: .relaxed) }

    public func stop() {
        running.store(false, ordering: .relaxed)
        finished.wait()
    }

    private func watch() {
        defer { finished.signal() }
        var lastFed: UInt64 = 0
        let feedsSystemd = getenv("WATCHDOG_USEC") != nil && ServiceNotifier.isSupervised
        while running.load(ordering: .relaxed) {
            usleep(100_000)
            let reading = aulos_watch_read()
            let now = aulos_watch_now()
            if reading.cycleStart != 0, now > reading.cycleStart, now - reading.cycleStart > Self.stuckAfterNanos {
                let unit = reading.unit.map { String(cString: $0) } ?? "the render thread (between units)"
                let seconds = Double(now - reading.cycleStart) / 1e9
                let first = state.withLock { stuck in
                    defer { stuck = Stuck(unit: unit, seconds: seconds) }
                    return stuck == nil
                }
                if first {
                    detectedAfter.store(now - reading.cycleStart, ordering: .relaxed)
                    say("aulos: error: " + Stuck(unit: unit, seconds: seconds).message)
                }
                if StopSignals.stopRequested != 0 {
                    // A clean stop joins the render thread, which never returns: end here, saying why.
                    say("aulos: stopping with the render thread stuck in '\(unit)'; ending at once")
                    _exit(StopSignals.stopSignal == 0 ? 1 : 128 + StopSignals.stopSignal)
                }
                continue
            }
            state.withLock { $0 = nil }
            if feedsSystemd, now - lastFed > 1_000_000_000 {
                ServiceNotifier.notify("WATCHDOG=1")
                lastFed = now
            }
        }
    }

    /// One line on stderr from this thread (the control thread may be the one that is waiting).
    private func say(_ line: String) {
        let text = line + "\n"
        _ = text.withCString { write(2, $0, strlen($0)) }
    }
}
