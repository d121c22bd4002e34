import Glibc

/// SIGINT and SIGTERM ask a live run to stop (with every note released and the device closed cleanly),
/// SIGHUP to reload its rig, instead of killing the process. Flags a signal handler may set; the control
/// loop reads them on its tick.
///
/// Threads: the handlers run wherever the kernel delivers the signal; everything else on the control thread.
enum StopSignals {
    nonisolated(unsafe) static var stopRequested: sig_atomic_t = 0
    nonisolated(unsafe) static var reloadRequested: sig_atomic_t = 0

    /// Catches the signals from now on (both flags cleared), on the calling thread too: a parent may have
    /// started aulos with them blocked (the mask is inherited through exec — test runners and some
    /// supervisors do it), and then SIGTERM would never arrive and the instrument could not be stopped.
    static func catchThem() {
        stopRequested = 0
        reloadRequested = 0
        signal(SIGINT) { _ in StopSignals.stopRequested = 1 }
        signal(SIGTERM) { _ in StopSignals.stopRequested = 1 }
        signal(SIGHUP) { _ in StopSignals.reloadRequested = 1 }
        var caught = sigset_t()
        sigemptyset(&caught)
        for number in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&caught, number) }
        pthread_sigmask(SIG_UNBLOCK, &caught, nil)
    }

    /// Back to the default actions.
    static func release() {
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
        signal(SIGHUP, SIG_DFL)
    }
}
