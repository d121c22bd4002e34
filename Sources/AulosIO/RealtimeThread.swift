import AulosRealtime
import Glibc

/// The one way Aulos starts a real-time thread (the ALSA I/O thread, the sequencer's MIDI thread): asks
/// for SCHED_FIFO at creation, so the answer is immediate — refused (no rtprio limit), the thread starts at
/// normal priority and the caller gets a warning naming the fix; locks the process's memory where the
/// memlock limit allows (`lockMemory`); and turns on flush-to-zero/denormals-are-zero on the new thread
/// before its body runs (`FlushToZero`). JACK creates its process thread itself: its thread-init callback
/// sets the same flags.
///
/// Threads: `start` and `join` on the control thread; the body on the new thread.
public struct RealtimeThread {
    /// What became of the request for real-time priority.
    public enum Priority: Sendable, Equatable {
        case realtime(Int32)
        /// SCHED_FIFO was refused (EPERM): the thread runs at normal priority.
        case normal
    }

    public let handle: pthread_t
    public let priority: Priority

    /// The body and its argument, carried to the new thread (freed there).
    private struct Start {
        let body: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?
        let argument: UnsafeMutableRawPointer?
        let flushesDenormals: Bool
    }

    private static let trampoline: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { raw in
        let start = raw!.assumingMemoryBound(to: Start.self)
        let (body, argument, flushes) = (start.pointee.body, start.pointee.argument, start.pointee.flushesDenormals)
        start.deinitialize(count: 1)
        start.deallocate()
        if flushes { FlushToZero.enable() }
        return body(argument)
    }

    /// Starts `body(argument)` on a new thread at SCHED_FIFO `priority` (1…99), or at normal priority when
    /// that is refused. With `flushesDenormals` (the default) the thread runs with FTZ/DAZ on. Throws the
    /// system's error (`strerror`) when no thread can be created at all.
    public static func start(
        priority: Int32, flushesDenormals: Bool = true,
        _ body: @escaping @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?,
        argument: UnsafeMutableRawPointer?
    ) throws(RealtimeThreadError) -> RealtimeThread {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setinheritsched(&attributes, Int32(PTHREAD_EXPLICIT_SCHED))
        pthread_attr_setschedpolicy(&attributes, SCHED_FIFO)
        var parameters = sched_param(sched_priority: priority)
        pthread_attr_setschedparam(&attributes, &parameters)
        let start = UnsafeMutablePointer<Start>.allocate(capacity: 1)
        start.initialize(to: Start(body: body, argument: argument, flushesDenormals: flushesDenormals))
        var thread = pthread_t()
        var granted = Priority.realtime(priority)
        var created = pthread_create(&thread, &attributes, trampoline, start)
        if created == EPERM {
            granted = .normal
            created = pthread_create(&thread, nil, trampoline, start)
        }
        guard created == 0 else {
            start.deinitialize(count: 1)
            start.deallocate()
            throw RealtimeThreadError(message: String(cString: strerror(created)))
        }
        return RealtimeThread(handle: thread, priority: granted)
    }

    /// Waits for the thread's body to return.
    public func join() { pthread_join(handle, nil) }

    /// The warning for a thread (`role`, e.g. "the I/O thread") that was refused real-time priority.
    public static func priorityRefusedWarning(_ role: String) -> String {
        "real-time priority refused: \(role) runs at normal priority and may glitch under load; "
            + "allow it with an rtprio limit (e.g. '@audio - rtprio 95' in /etc/security/limits.d/, or "
            + "LimitRTPRIO=95 in the systemd unit)"
    }

    /// Locks the process's pages (no page faults on a real-time thread) when the memlock limit allows it.
    /// With a small limit, MCL_FUTURE would make later allocations fail, so then it only warns. Returns the
    /// warnings (none when locked).
    public static func lockMemory() -> [String] {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(8), &limit)  // RLIMIT_MEMLOCK (the macro is not imported)
        if limit.rlim_cur == rlim_t.max, mlockall(MCL_CURRENT | MCL_FUTURE) == 0 { return [] }
        let memlock = limit.rlim_cur == rlim_t.max ? "unlimited but mlockall failed" : "\(limit.rlim_cur / 1024) KiB"
        return [
            "memory not locked (memlock limit \(memlock)): "
                + "page faults can glitch the audio; allow it with '@audio - memlock unlimited' in "
                + "/etc/security/limits.d/ or LimitMEMLOCK=infinity"
        ]
    }
}

/// No thread could be created (not a refused priority: that falls back to normal priority).
public struct RealtimeThreadError: Error, Sendable, Equatable {
    public let message: String
}
