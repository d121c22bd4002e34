#include "ReferenceVoice.h"
#include <stdlib.h>
#include <string.h>

enum { LENGTH = 2048, STRIDE = 2049, BANDS = 24, TICK = 16 };

typedef struct { float attackStep, decayCoefficient, releaseCoefficient, sustainLevel; } Shape;
typedef struct { int stage; float level; } Envelope;  /* 0 idle 1 attack 2 decay 3 sustain 4 release */
typedef struct { float g, k, a1, a2, a3, ic1, ic2; } Filter;

typedef struct {
    int active;
    double pitch;
    uint32_t phase1, phase2, increment1, increment2;
    int band1, band2;
    Filter filter;
    Envelope amp, filterEnvelope;
    float velocityGain, gainLeft, gainRight, gainLeftStep, gainRightStep;
} Voice;

struct ReferenceSynth {
    int count;
    double sampleRate;
    const float *saw;
    Voice *voices;
    Shape ampShape, filterShape;
    float mix, resonance;
    int wave1, wave2, filterMode;
    double cutoff, filterEnvAmount, keyTracking, osc2Offset;
};

static double exp2_poly(double x) {
    double whole = (double)(long)x;
    if (whole > x) whole -= 1;
    double f = x - whole, y = f * 0.6931471805599453;
    double p = 1 + y * (1 + y * (0.5 + y * (1.0 / 6 + y * (1.0 / 24 + y * (1.0 / 120 + y * (1.0 / 720
        + y * (1.0 / 5040 + y * (1.0 / 40320 + y * (1.0 / 362880)))))))));
    union { double d; uint64_t u; } scale = { .u = (uint64_t)(1023 + (long)whole) << 52 };
    return p * scale.d;
}

static double sine_poly(double phase) {
    double x = phase - (double)(long)phase;
    if (x < 0) x += 1;
    if (x > 0.75) x -= 1; else if (x > 0.25) x = 0.5 - x;
    double t = x * 2 * 3.141592653589793, t2 = t * t;
    return t * (1 + t2 * (-1.0 / 6 + t2 * (1.0 / 120 + t2 * (-1.0 / 5040 + t2 * (1.0 / 362880
        + t2 * (-1.0 / 39916800 + t2 * (1.0 / 6227020800.0)))))));
}

static int band_for(double note) {
    double position = 2 * ((note - 69) / 12 + 5.78135971352466);
    int band = position <= 0 ? 0 : (int)position;
    return band < BANDS - 1 ? band : BANDS - 1;
}

static float table(const float *saw, int band, uint32_t phase) {
    int index = (int)(phase >> 21);
    float fraction = (float)(phase & 0x1FFFFF) * (1.0f / 2097152);
    const float *t = saw + band * STRIDE;
    return t[index] + (t[index + 1] - t[index]) * fraction;
}

static uint32_t increment(double cycles) {
    if (cycles < 0) cycles = 0;
    if (cycles > 0.5) cycles = 0.5;
    return (uint32_t)(int64_t)(cycles * 4294967296.0);
}

static float envelope_next(Envelope *e, const Shape *s) {
    switch (e->stage) {
    case 0: return 0;
    case 1: e->level += s->attackStep; if (e->level >= 1) { e->level = 1; e->stage = 2; } break;
    case 2: e->level = s->sustainLevel + (e->level - s->sustainLevel) * s->decayCoefficient;
            if (e->level - s->sustainLevel < 1e-4f) { e->level = s->sustainLevel; e->stage = 3; } break;
    case 3: e->level = s->sustainLevel; break;
    default: e->level *= s->releaseCoefficient; if (e->level < 1e-5f) { e->level = 0; e->stage = 0; } break;
    }
    return e->level;
}

static Shape shape(double attack, double decay, float sustain, double release, double rate) {
    Shape s;
    s.attackStep = attack <= 0 ? 1 : (float)(1 / (attack * rate));
    s.decayCoefficient = (float)exp2_poly(-4.605170185988091 / (decay * rate) * 1.4426950408889634);
    s.releaseCoefficient = (float)exp2_poly(-4.605170185988091 / (release * rate) * 1.4426950408889634);
    s.sustainLevel = sustain;
    return s;
}

static void update(ReferenceSynth *s, Voice *v, int interpolate) {
    double pitch = v->pitch;
    v->increment1 = increment(440 * exp2_poly((pitch - 69) / 12) / s->sampleRate);
    v->band1 = band_for(pitch);
    double pitch2 = pitch + s->osc2Offset;
    v->increment2 = increment(440 * exp2_poly((pitch2 - 69) / 12) / s->sampleRate);
    v->band2 = band_for(pitch2);
    double octaves = v->filterEnvelope.level * s->filterEnvAmount + s->keyTracking * (pitch - 60) / 12;
    double cutoff = s->cutoff * exp2_poly(octaves);
    if (cutoff > 0.45 * s->sampleRate) cutoff = 0.45 * s->sampleRate;
    if (cutoff < 10) cutoff = 10;
    double turns = cutoff / s->sampleRate / 2;
    v->filter.g = (float)(sine_poly(turns) / sine_poly(turns + 0.25));
    v->filter.k = 2 - 1.96f * s->resonance;
    v->filter.a1 = 1 / (1 + v->filter.g * (v->filter.g + v->filter.k));
    v->filter.a2 = v->filter.g * v->filter.a1;
    v->filter.a3 = v->filter.g * v->filter.a2;
    float gain = 0.5f * v->velocityGain;
    float left = gain * (float)sine_poly(63.0 / 126 / 4 + 0.25), right = gain * (float)sine_poly(63.0 / 126 / 4);
    if (interpolate) {
        v->gainLeftStep = (left - v->gainLeft) / TICK;
        v->gainRightStep = (right - v->gainRight) / TICK;
    } else {
        v->gainLeft = left; v->gainRight = right; v->gainLeftStep = 0; v->gainRightStep = 0;
    }
}

ReferenceSynth *reference_synth_create(int voices, double sampleRate, const float *saw) {
    ReferenceSynth *s = calloc(1, sizeof *s);
    s->count = voices;
    s->sampleRate = sampleRate;
    s->saw = saw;
    s->voices = calloc((size_t)voices, sizeof(Voice));
    /* The synth's defaults. */
    s->ampShape = shape(0.005, 0.3, 0.8f, 0.3, sampleRate);
    s->filterShape = shape(0.01, 0.4, 0.5f, 0.4, sampleRate);
    s->mix = 0.5f; s->resonance = 0.1f; s->cutoff = 5000; s->filterEnvAmount = 0; s->keyTracking = 0.5;
    s->osc2Offset = 0.07;
    return s;
}

void reference_synth_destroy(ReferenceSynth *s) { free(s->voices); free(s); }

void reference_synth_start_all(ReferenceSynth *s) {
    for (int i = 0; i < s->count; i++) {
        Voice *v = &s->voices[i];
        memset(v, 0, sizeof *v);
        v->active = 1;
        v->pitch = 36 + i % 60;
        v->phase1 = v->phase2 = 1u << 30;
        v->velocityGain = 1;
        v->amp.stage = 1;
        v->filterEnvelope.stage = 1;
        update(s, v, 0);
    }
}

static void fill(const ReferenceSynth *s, float *out, int count, int wave, uint32_t *phase, uint32_t step, int band) {
    uint32_t p = *phase;
    switch (wave) {
    case 0:
        for (int i = 0; i < count; i++) { out[i] = table(s->saw, band, p); p += step; }
        break;
    default:  /* pulse: difference of two saws */
        for (int i = 0; i < count; i++) { out[i] = table(s->saw, band, p) - table(s->saw, band, p + (1u << 31)); p += step; }
        break;
    }
    *phase = p;
}

void reference_synth_render(ReferenceSynth *s, int64_t time, int frames, float *left, float *right) {
    memset(left, 0, sizeof(float) * (size_t)frames);
    memset(right, 0, sizeof(float) * (size_t)frames);
    int frame = 0;
    while (frame < frames) {
        int into = (int)((time + frame) % TICK);
        if (into == 0) for (int i = 0; i < s->count; i++) if (s->voices[i].active) update(s, &s->voices[i], 1);
        int end = frame + TICK - into;
        if (end > frames) end = frames;
        int count = end - frame;
        float a[TICK], b[TICK];
        for (int i = 0; i < s->count; i++) {
            Voice *v = &s->voices[i];
            if (!v->active) continue;
            /* Same structure as the Swift kernel: oscillators by block (waveform chosen per block), then
               mix, filter (mode chosen per sample), envelopes and gains. */
            fill(s, a, count, s->wave1, &v->phase1, v->increment1, v->band1);
            fill(s, b, count, s->wave2, &v->phase2, v->increment2, v->band2);
            for (int n = 0; n < count; n++) {
                float x = a[n] + (b[n] - a[n]) * s->mix;
                Filter *f = &v->filter;
                float v3 = x - f->ic2, v1 = f->a1 * f->ic1 + f->a2 * v3, v2 = f->ic2 + f->a2 * f->ic1 + f->a3 * v3;
                f->ic1 = 2 * v1 - f->ic1; f->ic2 = 2 * v2 - f->ic2;
                float filtered;
                switch (s->filterMode) {
                case 1: filtered = x - f->k * v1 - v2; break;
                case 2: filtered = v1; break;
                case 3: filtered = x - f->k * v1; break;
                default: filtered = v2; break;
                }
                envelope_next(&v->filterEnvelope, &s->filterShape);
                float sample = filtered * envelope_next(&v->amp, &s->ampShape);
                v->gainLeft += v->gainLeftStep; v->gainRight += v->gainRightStep;
                left[frame + n] += sample * v->gainLeft; right[frame + n] += sample * v->gainRight;
                if (v->amp.stage == 0) { v->active = 0; break; }
            }
        }
        frame = end;
    }
}
