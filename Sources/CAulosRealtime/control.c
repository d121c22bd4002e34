#include "CAulosRealtime.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>

uint64_t aulos_fp_control(void) { return _mm_getcsr(); }
void aulos_fp_set_control(uint64_t control) { _mm_setcsr((unsigned int)control); }
// FTZ (bit 15): subnormal results become 0. DAZ (bit 6): subnormal inputs read as 0.
uint64_t aulos_fp_flush_to_zero_bits(void) { return (1u << 15) | (1u << 6); }

#elif defined(__aarch64__)

uint64_t aulos_fp_control(void) {
    uint64_t fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    return fpcr;
}
void aulos_fp_set_control(uint64_t control) { __asm__ volatile("msr fpcr, %0" : : "r"(control)); }
// FZ (bit 24): subnormal inputs and results of single and double precision flush to zero.
uint64_t aulos_fp_flush_to_zero_bits(void) { return 1ull << 24; }

#else

uint64_t aulos_fp_control(void) { return 0; }
void aulos_fp_set_control(uint64_t control) { (void)control; }
uint64_t aulos_fp_flush_to_zero_bits(void) { return 0; }

#endif
