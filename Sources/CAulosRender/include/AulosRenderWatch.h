// What the render thread is doing, for the two that must know when it goes wrong: the watchdog, which
// notices a cycle stuck inside one unit (a plugin that spins) and names it, and the crash report, which
// names the unit (or the plugin being created) when the process dies of a fatal signal or an exit() it
// did not choose. In C because a signal handler may only do async-signal-safe things, and because the render
// thread marks its place with two plain stores per unit, never a lock or an allocation.
#ifndef AULOS_RENDER_WATCH_H
#define AULOS_RENDER_WATCH_H

#include <stdint.h>

/// Zeroes `count` floats when any is NaN, infinite or beyond ±`limit`; returns 1 when it did. The guard at
/// every unit's output and at the master: one bad sample must not latch a reverb or a filter into NaN
/// forever, nor send full-scale DC to the speakers.
int aulos_guard_floats(float *_Nonnull samples, uint32_t count, float limit);

/// Render thread: this thread is about to run the kernel of the unit named `name` (a string that outlives
/// the process's render plans); returns the unit it was in before (a unit pulls its inputs from inside).
const char *_Nullable aulos_watch_enter_unit(const char *_Nullable name);
/// Render thread: back in `previous` (what `aulos_watch_enter_unit` returned).
void aulos_watch_leave_unit(const char *_Nullable previous);
/// Render thread: a live render cycle starts (the watchdog watches the thread that called this last).
void aulos_watch_begin_cycle(void);
/// Render thread: the cycle is done.
void aulos_watch_end_cycle(void);

/// What the watched render thread was doing when read: the start of its current cycle (CLOCK_MONOTONIC ns;
/// 0 between cycles), the cycles it has finished, the unit it is inside (NULL: none).
typedef struct AulosWatchReading {
    uint64_t cycleStart;
    uint64_t cyclesDone;
    const char *_Nullable unit;
} AulosWatchReading;

/// Any thread: the watched render thread, now.
AulosWatchReading aulos_watch_read(void);
/// CLOCK_MONOTONIC in nanoseconds.
uint64_t aulos_watch_now(void);

/// Installs the crash report: on SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT, and at an exit() called while
/// a unit renders or a plugin is being created, one line on stderr naming that unit or plugin (after any of
/// the plugin's own last words held back by a capture of stderr), then the process ends as it would have.
void aulos_crash_report_install(void);
/// Control thread: what the process is doing that a plugin may crash ("creating LV2 plugin <URI>"); copied.
/// NULL clears it.
void aulos_crash_report_set_activity(const char *_Nullable text);
/// Control thread: stderr is being captured into `captured` (a file) and the real stderr is `real`: a crash
/// meanwhile copies what was captured to `real` first. (-1, -1) when the capture ends.
void aulos_crash_report_capturing(int captured, int real);

#endif
