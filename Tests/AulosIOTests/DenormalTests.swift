import AulosDSP
import AulosIO
import AulosRealtime
import Glibc
import Testing

/// Denormal protection: a resonant filter's decay passes through the subnormal floats on a plain thread
/// and never on a thread `RealtimeThread` started (FTZ/DAZ on x86_64, FPCR.FZ on aarch64). Counted, not
/// timed: the subnormals either appear or they do not, whatever the machine's load. (The cost they carry is
/// measured in docs/performance.md, "Denormals", not here.)
@Suite struct DenormalTests {
    /// An impulse into a state-variable low-pass at full resonance (Q 25 at 1 kHz), then silence: what the
    /// tail produces. `subnormals` counts outputs in the subnormal range, `zeros` the exact zeros.
    struct Tail {
        var subnormals = 0
        var zeros = 0
        var flushing = false
    }

    /// The flush bits of this CPU's control register (MXCSR FTZ | DAZ, FPCR.FZ).
    static var flushBits: UInt64 {
        #if arch(x86_64)
        0x8040
        #elseif arch(arm64)
        1 << 24
        #else
        0
        #endif
    }

    /// Clears FTZ/DAZ on the calling thread. A test thread is not necessarily plain: in the full test run
    /// (`make test`) the pool's threads already had FTZ/DAZ on — a thread inherits its creator's mode, so a
    /// worker created from a flushing thread flushes (and a library built with -ffast-math sets it on the
    /// thread that loads it); which did it there was not found. Returns the mode before, for `restore`.
    static func clearFlushToZero() -> UInt64 {
        let before = FlushToZero.enable()
        FlushToZero.restore(before & ~flushBits)
        return before
    }

    static func decay(samples: Int = 200_000) -> Tail {
        var filter = StateVariableFilter()
        filter.setCoefficients(cutoff: 1_000, resonance: 1, sampleRate: 48_000)
        var tail = Tail(flushing: FlushToZero.isEnabled)
        for index in 0..<samples {
            let output = filter.process(index == 0 ? 1 : 0, mode: 0)
            if output.isSubnormal { tail.subnormals += 1 }
            if output == 0 { tail.zeros += 1 }
        }
        return tail
    }

    /// Runs `decay` on a new thread: a real-time one (`RealtimeThread`, at normal priority where SCHED_FIFO
    /// is refused), or a plain pthread.
    static func decayOnThread(realtime: Bool) throws -> Tail {
        let result = UnsafeMutablePointer<Tail>.allocate(capacity: 1)
        defer { result.deallocate() }
        result.initialize(to: Tail())
        let body: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { raw in
            raw!.assumingMemoryBound(to: Tail.self).pointee = DenormalTests.decay()
            return nil
        }
        // Both threads are created from a thread with FTZ/DAZ off, so only RealtimeThread can turn it on.
        let mode = clearFlushToZero()
        defer { FlushToZero.restore(mode) }
        if realtime {
            let thread = try RealtimeThread.start(priority: 10, body, argument: result)
            thread.join()
        } else {
            var thread = pthread_t()
            #expect(pthread_create(&thread, nil, body, result) == 0)
            pthread_join(thread, nil)
        }
        return result.pointee
    }

    @Test func aRealtimeThreadFlushesTheTailToZero() throws {
        let plain = try Self.decayOnThread(realtime: false)
        let realtime = try Self.decayOnThread(realtime: true)
        #expect(!plain.flushing)
        #expect(plain.subnormals > 100, "the filter's tail never reached the subnormals: the test proves nothing")
        #expect(realtime.flushing)
        #expect(realtime.subnormals == 0)
        #expect(realtime.zeros > plain.zeros)
    }

    @Test func theScopeRestoresTheThreadsMode() {
        let mode = Self.clearFlushToZero()
        defer { FlushToZero.restore(mode) }
        #expect(!FlushToZero.isEnabled)
        let inside = FlushToZero.scope { (FlushToZero.isEnabled, Self.decay().subnormals) }
        #expect(inside.0 && inside.1 == 0)
        #expect(!FlushToZero.isEnabled)
        #expect(Self.decay().subnormals > 0)
    }
}
