#include "AllocationCounter.h"
#include <errno.h>
#include <stddef.h>

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZER_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SANITIZER_BUILD 1
#endif
#endif

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

static __thread int counting __attribute__((tls_model("initial-exec")));
static __thread int64_t allocations __attribute__((tls_model("initial-exec")));
static __thread int64_t frees __attribute__((tls_model("initial-exec")));
static volatile int interposed;

void allocation_counter_begin(void) {
    allocations = 0;
    frees = 0;
    counting = 1;
}

AllocationCount allocation_counter_end(void) {
    counting = 0;
    AllocationCount result = { allocations, frees };
    return result;
}

#ifdef SANITIZER_BUILD
int allocation_counter_is_compiled_in(void) { return 0; }
#else
int allocation_counter_is_compiled_in(void) { return 1; }
#endif

int allocation_counter_is_active(void) {
    interposed = 0;
    void *probe = __builtin_malloc(16);  // goes through the PLT, so through ours if we are the malloc
    __libc_free(probe);
    return interposed;
}

#ifndef SANITIZER_BUILD
#define COUNT_ALLOCATION() do { interposed = 1; if (counting) allocations++; } while (0)

void *malloc(size_t size) { COUNT_ALLOCATION(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { COUNT_ALLOCATION(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { COUNT_ALLOCATION(); return __libc_realloc(pointer, size); }
void *memalign(size_t alignment, size_t size) { COUNT_ALLOCATION(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { COUNT_ALLOCATION(); return __libc_memalign(alignment, size); }
void *valloc(size_t size) { COUNT_ALLOCATION(); return __libc_valloc(size); }
void *pvalloc(size_t size) { COUNT_ALLOCATION(); return __libc_pvalloc(size); }

int posix_memalign(void **out, size_t alignment, size_t size) {
    COUNT_ALLOCATION();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *out = pointer;
    return 0;
}

void free(void *pointer) {
    if (pointer != NULL && counting) frees++;
    __libc_free(pointer);
}
#endif
