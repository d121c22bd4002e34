// Counts heap allocations and frees made by the calling thread, for the zero-allocation tests.
//
// The test executable defines malloc/free and friends itself, forwarding to glibc's __libc_* entry points;
// because the Swift runtime and every shared library reference these symbols, the linker exports the
// executable's definitions and the whole process uses them. Counting is per thread (a __thread flag and
// counters), so the tests measure exactly the thread that renders and nothing the test runner does.
#ifndef ALLOCATION_COUNTER_H
#define ALLOCATION_COUNTER_H
#include <stdint.h>

typedef struct AllocationCount {
    int64_t allocations;
    int64_t frees;
} AllocationCount;

/// Starts counting on the calling thread (counters reset to zero).
void allocation_counter_begin(void);
/// Stops counting on the calling thread and returns what it counted.
AllocationCount allocation_counter_end(void);
/// Whether this process's malloc is the counting one (false would make every count meaningless).
int allocation_counter_is_active(void);
/// Whether this build defines the counting malloc at all. Sanitizer builds (TSan, ASan) bring their own
/// allocator, so there the interposer is left out and the allocation tests are skipped; everywhere else
/// it is compiled in and must be active.
int allocation_counter_is_compiled_in(void);

#endif
