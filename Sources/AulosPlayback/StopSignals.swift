import Glibc

/// SIGINT and SIGTERM ask a run to stop — live play with every note released and the device closed
/// cleanly, a render with a valid file of what was rendered — and SIGHUP asks live play to reload its rig,
/// instead of the signal killing the process. Flags a signal handler may set; the control loop (or the
/// render loop) reads them between slices.
///
/// Threads: the handlers run wherever the kernel delivers the signal; everything else on the control thread.
public enum StopSignals {
    nonisolated(unsafe) public static var stopRequested: sig_atomic_t = 0
    nonisolated(unsafe) static var reloadRequested: sig_atomic_t = 0
    /// The signal that asked to stop (SIGINT or SIGTERM), for the exit status (128 + it, as shells do).
    nonisolated(unsafe) public static var stopSignal: sig_atomic_t = 0

    /// Catches the signals from now on (the flags cleared), on the calling thread too: a parent may have
    /// started aulos with them blocked (the mask is inherited through exec — test runners and some
    /// supervisors do it), and then SIGTERM would never arrive and the instrument could not be stopped.
    /// With `hangupStops` (a render, whose terminal may close), SIGHUP stops like SIGTERM instead of asking
    /// for a reload.
    public static func catchThem(hangupStops: Bool = false) {
        stopRequested = 0
        reloadRequested = 0
        stopSignal = 0
        signal(SIGINT) { number in
            StopSignals.stopSignal = number
            StopSignals.stopRequested = 1
        }
        signal(SIGTERM) { number in
            StopSignals.stopSignal = number
            StopSignals.stopRequested = 1
        }
        if hangupStops {
            signal(SIGHUP) { number in
                StopSignals.stopSignal = number
                StopSignals.stopRequested = 1
            }
        } else {
            signal(SIGHUP) { _ in StopSignals.reloadRequested = 1 }
        }
        var caught = sigset_t()
        sigemptyset(&caught)
        for number in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&caught, number) }
        pthread_sigmask(SIG_UNBLOCK, &caught, nil)
    }

    /// Back to the default actions.
    public static func release() {
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
        signal(SIGHUP, SIG_DFL)
    }
}
