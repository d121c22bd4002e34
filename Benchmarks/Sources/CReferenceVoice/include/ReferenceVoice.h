// A plain-C reference of the oscillator synth's voice, written for the benchmark: the same per-sample work
// (two interpolated wavetable reads, a TPT state-variable filter, two ADSR envelopes, per-sample gain ramps)
// and the same 16-frame control tick (exp2/sine polynomials for pitch, filter and pan). It is what the
// Swift kernel's speed is measured against.
#ifndef REFERENCE_VOICE_H
#define REFERENCE_VOICE_H
#include <stdint.h>

typedef struct ReferenceSynth ReferenceSynth;

/// `saw` points at the Swift-built saw tables (24 bands × 2049 floats), shared so both sides read the same data.
ReferenceSynth *_Nonnull reference_synth_create(int voices, double sampleRate, const float *_Nonnull saw);
void reference_synth_destroy(ReferenceSynth *_Nonnull synth);
/// Starts every voice on a note (voice i plays note 36 + i % 60).
void reference_synth_start_all(ReferenceSynth *_Nonnull synth);
/// Renders `frames` frames (additively) into left/right, starting at absolute time `time`.
void reference_synth_render(ReferenceSynth *_Nonnull synth, int64_t time, int frames, float *_Nonnull left, float *_Nonnull right);
#endif
