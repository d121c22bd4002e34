// scripts/cpu-stall-probe.sh: one thread per CPU, pinned, reading the monotonic clock and its own CPU-time
// clock in a tight loop. A gap of more than a millisecond between two readings is a stall. If the thread's
// CPU time did not advance across it, the thread was not running (preempted, or the virtual CPU stolen with
// steal-time accounting): the scheduler's. If it did, the stall was charged to the thread as its own work
// (an interrupt, on a kernel without IRQ time accounting; a host-side pause the guest cannot see): exactly
// what a render thread would report as a late render of its own.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int64_t nanos(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int64_t seconds;
static atomic_int charged, preempted;
static _Atomic int64_t longestCharged;

static void *probe(void *argument) {
    int cpu = (int)(intptr_t)argument;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    int64_t start = nanos(CLOCK_MONOTONIC), previous = start, previousCPU = nanos(CLOCK_THREAD_CPUTIME_ID);
    while (previous - start < seconds * 1000000000) {
        int64_t now = nanos(CLOCK_MONOTONIC), cpuNow = nanos(CLOCK_THREAD_CPUTIME_ID);
        int64_t gap = now - previous, ran = cpuNow - previousCPU;
        if (gap > 1000000) {
            if (ran > gap / 2) {
                atomic_fetch_add(&charged, 1);
                int64_t longest = atomic_load(&longestCharged);
                while (gap > longest && !atomic_compare_exchange_weak(&longestCharged, &longest, gap)) {}
                printf("cpu-stall-probe: cpu %d at %.3f s: %.2f ms charged to the thread as its own\n", cpu,
                       (now - start) / 1e9, gap / 1e6);
            } else {
                atomic_fetch_add(&preempted, 1);
            }
        }
        previous = now;
        previousCPU = cpuNow;
    }
    return NULL;
}

int main(int argc, char **argv) {
    seconds = argc > 1 ? atoll(argv[1]) : 10;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (seconds <= 0 || cpus <= 0 || cpus > 256) {
        fprintf(stderr, "usage: cpu-stall-probe SECONDS (a positive number)\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_t threads[256];
    for (long cpu = 0; cpu < cpus; cpu++) pthread_create(&threads[cpu], NULL, probe, (void *)(intptr_t)cpu);
    for (long cpu = 0; cpu < cpus; cpu++) pthread_join(threads[cpu], NULL);
    printf("cpu-stall-probe: %lld s on %ld CPUs: %d stalls over 1 ms charged to the running thread (longest %.2f ms), "
           "%d with the thread not running\n",
           (long long)seconds, cpus, atomic_load(&charged), atomic_load(&longestCharged) / 1e6,
           atomic_load(&preempted));
    return 0;
}
