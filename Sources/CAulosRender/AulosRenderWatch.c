// See AulosRenderWatch.h.
#define _GNU_SOURCE
#include "AulosRenderWatch.h"

#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int aulos_guard_floats(float *samples, uint32_t count, float limit) {
    // A comparison with NaN is false, so !(|x| <= limit) catches NaN, infinity and absurd magnitudes in one
    // branch-free pass the compiler can vectorise.
    int bad = 0;
    for (uint32_t index = 0; index < count; index++) bad |= !(fabsf(samples[index]) <= limit);
    if (bad) memset(samples, 0, (size_t)count * sizeof(float));
    return bad;
}

typedef struct RenderWatch {
    _Atomic(const char *) unit;
    _Atomic uint64_t cycleStart;
    _Atomic uint64_t cyclesDone;
} RenderWatch;

static _Thread_local RenderWatch threadWatch;
static _Atomic(RenderWatch *) watched;

uint64_t aulos_watch_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

const char *aulos_watch_enter_unit(const char *name) {
    const char *previous = atomic_load_explicit(&threadWatch.unit, memory_order_relaxed);
    atomic_store_explicit(&threadWatch.unit, name, memory_order_relaxed);
    return previous;
}

void aulos_watch_leave_unit(const char *previous) {
    atomic_store_explicit(&threadWatch.unit, previous, memory_order_relaxed);
}

void aulos_watch_begin_cycle(void) {
    atomic_store_explicit(&watched, &threadWatch, memory_order_relaxed);
    atomic_store_explicit(&threadWatch.cycleStart, aulos_watch_now(), memory_order_relaxed);
}

void aulos_watch_end_cycle(void) {
    atomic_store_explicit(&threadWatch.cycleStart, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&threadWatch.cyclesDone, 1, memory_order_relaxed);
}

AulosWatchReading aulos_watch_read(void) {
    AulosWatchReading reading = {0, 0, NULL};
    RenderWatch *watch = atomic_load_explicit(&watched, memory_order_relaxed);
    if (!watch) return reading;
    reading.cycleStart = atomic_load_explicit(&watch->cycleStart, memory_order_relaxed);
    reading.cyclesDone = atomic_load_explicit(&watch->cyclesDone, memory_order_relaxed);
    reading.unit = atomic_load_explicit(&watch->unit, memory_order_relaxed);
    return reading;
}

// MARK: The crash report

static char activity[512];
static _Atomic int activitySet;
static _Atomic int capturedFD = -1;
static _Atomic int realFD = -1;

void aulos_crash_report_set_activity(const char *text) {
    atomic_store(&activitySet, 0);
    if (!text) return;
    strncpy(activity, text, sizeof activity - 1);
    activity[sizeof activity - 1] = 0;
    atomic_store(&activitySet, 1);
}

void aulos_crash_report_capturing(int captured, int real) {
    atomic_store(&capturedFD, captured);
    atomic_store(&realFD, real);
}

static void say(int fd, const char *text) {
    size_t length = strlen(text);
    while (length > 0) {
        ssize_t written = write(fd, text, length);
        if (written <= 0) return;
        text += written;
        length -= (size_t)written;
    }
}

/// Where the report goes (the real stderr, also while it is being captured), after what the capture holds.
static int reportFD(void) {
    int captured = atomic_load(&capturedFD), real = atomic_load(&realFD);
    if (captured < 0 || real < 0) return 2;
    char buffer[4096];
    ssize_t count;
    off_t offset = 0;
    while ((count = pread(captured, buffer, sizeof buffer, offset)) > 0) {
        ssize_t written = write(real, buffer, (size_t)count);
        if (written <= 0) break;
        offset += count;
    }
    return real;
}

/// "while rendering unit 'X'", "while creating LV2 plugin <URI>", or nothing known.
static void sayWhere(int fd) {
    const char *unit = atomic_load_explicit(&threadWatch.unit, memory_order_relaxed);
    if (unit) {
        say(fd, " while rendering unit '");
        say(fd, unit);
        say(fd, "'");
    } else if (atomic_load(&activitySet)) {
        say(fd, " while ");
        say(fd, activity);
    }
}

static const char *signalName(int number) {
    switch (number) {
    case SIGSEGV: return "SIGSEGV (a segmentation fault)";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT (aborted)";
    default: return "a fatal signal";
    }
}

static void fatalSignal(int number) {
    int fd = reportFD();
    say(fd, "aulos: fatal: ");
    say(fd, signalName(number));
    sayWhere(fd);
    say(fd, "\n");
    signal(number, SIG_DFL);
    raise(number);
}

static void atExit(void) {
    const char *unit = atomic_load_explicit(&threadWatch.unit, memory_order_relaxed);
    if (!unit && !atomic_load(&activitySet)) return;
    int fd = reportFD();
    say(fd, "aulos: fatal: exit() called");
    sayWhere(fd);
    say(fd, "; a plugin ended the process\n");
}

void aulos_crash_report_install(void) {
    static int installed;
    if (installed) return;
    installed = 1;
    // Its own stack, so a stack overflow still gets its line.
    static char alternate[65536];
    stack_t stack = {.ss_sp = alternate, .ss_size = sizeof alternate, .ss_flags = 0};
    sigaltstack(&stack, NULL);
    int signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t index = 0; index < sizeof signals / sizeof signals[0]; index++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = fatalSignal;
        action.sa_flags = SA_ONSTACK | SA_RESETHAND;
        sigemptyset(&action.sa_mask);
        sigaction(signals[index], &action, NULL);
    }
    atexit(atExit);
}
