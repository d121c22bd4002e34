// The floating-point control register, which Swift cannot reach: flush-to-zero and denormals-are-zero for
// the calling thread (x86_64: MXCSR bits 15 FTZ and 6 DAZ; aarch64: FPCR bit 24 FZ, which does both).
#ifndef AULOS_CAULOSREALTIME_H
#define AULOS_CAULOSREALTIME_H

#include <stdint.h>

/// The calling thread's floating-point control word (MXCSR on x86_64, FPCR on aarch64; 0 elsewhere).
uint64_t aulos_fp_control(void);
/// Sets the calling thread's floating-point control word (a value `aulos_fp_control` returned).
void aulos_fp_set_control(uint64_t control);
/// The bits that flush subnormal results to zero and read subnormal operands as zero, on this CPU (0: none).
uint64_t aulos_fp_flush_to_zero_bits(void);

#endif
