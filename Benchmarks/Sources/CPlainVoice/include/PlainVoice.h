// A plain C synth voice written for the benchmark, not shaped like Aulos's synth: what a C programmer writes
// for "two saws, a resonant low-pass with an envelope, an ADSR, a pan" when speed is the point. Two PolyBLEP
// saws (osc 2 seven cents up), a TPT state-variable low-pass whose cutoff follows a filter envelope (its
// coefficients computed every 16 frames), linear ADSRs for amplitude and filter, constant-power pan, velocity.
// It is the peer the oscillator synth's speed is measured against (compiled with -O3).
#ifndef PLAIN_VOICE_H
#define PLAIN_VOICE_H
#include <stdint.h>

#ifndef __clang__  /* gcc builds it too (the standalone comparison in docs/performance.md) */
#define _Nonnull
#endif

typedef struct PlainSynth PlainSynth;

PlainSynth *_Nonnull plain_synth_create(int voices, float sampleRate);
void plain_synth_destroy(PlainSynth *_Nonnull synth);
/// Starts every voice on a note (voice i plays note 36 + i % 60, velocity 100), as the synth benchmark does.
void plain_synth_start_all(PlainSynth *_Nonnull synth);
/// Renders `frames` frames (at most 4096) into left/right (overwriting them).
void plain_synth_render(PlainSynth *_Nonnull synth, int frames, float *_Nonnull left, float *_Nonnull right);
#endif
