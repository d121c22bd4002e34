// See PlainVoice.h. Threads: whichever thread calls it (the benchmark's).
#include "PlainVoice.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { CONTROL = 16 };

typedef struct { float attack, decay, sustain, release; } Rates;  /* per-sample steps; sustain a level */
typedef struct { int stage; float level; } ADSR;                   /* 0 off 1 attack 2 decay 3 sustain 4 release */

typedef struct {
    int note;
    float phase1, phase2, step1, step2;
    float ic1, ic2;               /* the SVF's two integrator states */
    float g, k, a1, a2, a3;       /* its coefficients */
    ADSR amp, filter;
    float left, right;            /* velocity × constant-power pan */
} Voice;

struct PlainSynth {
    int count;
    float rate;
    Voice *voices;
    Rates ampRates, filterRates;
    float cutoff, resonance, envelopeOctaves, keyTracking;
};

static Rates rates(float attack, float decay, float sustain, float release, float rate) {
    Rates r = { 1 / (attack * rate), (1 - sustain) / (decay * rate), sustain, sustain / (release * rate) };
    return r;
}

static inline float adsr(ADSR *e, const Rates *r) {
    switch (e->stage) {
    case 1: e->level += r->attack; if (e->level >= 1) { e->level = 1; e->stage = 2; } break;
    case 2: e->level -= r->decay; if (e->level <= r->sustain) { e->level = r->sustain; e->stage = 3; } break;
    case 4: e->level -= r->release; if (e->level <= 0) { e->level = 0; e->stage = 0; } break;
    default: break;
    }
    return e->level;
}

/* The PolyBLEP residual of a saw at phase t (0..1) stepping dt per sample. */
static inline float blep(float t, float dt) {
    if (t < dt) { t /= dt; return t + t - t * t - 1; }
    if (t > 1 - dt) { t = (t - 1) / dt; return t * t + t + t + 1; }
    return 0;
}

static void coefficients(const PlainSynth *s, Voice *v) {
    float octaves = v->filter.level * s->envelopeOctaves + s->keyTracking * (float)(v->note - 60) / 12;
    float cutoff = fminf(s->cutoff * exp2f(octaves), 0.45f * s->rate);
    v->g = tanf(3.14159265f * cutoff / s->rate);
    v->k = 2 - 1.96f * s->resonance;
    v->a1 = 1 / (1 + v->g * (v->g + v->k));
    v->a2 = v->g * v->a1;
    v->a3 = v->g * v->a2;
}

PlainSynth *plain_synth_create(int voices, float rate) {
    PlainSynth *s = calloc(1, sizeof *s);
    s->count = voices;
    s->rate = rate;
    s->voices = calloc((size_t)voices, sizeof(Voice));
    /* The oscillator synth's default patch. */
    s->ampRates = rates(0.005f, 0.3f, 0.8f, 0.3f, rate);
    s->filterRates = rates(0.01f, 0.4f, 0.5f, 0.4f, rate);
    s->cutoff = 5000; s->resonance = 0.1f; s->envelopeOctaves = 0; s->keyTracking = 0.5f;
    return s;
}

void plain_synth_destroy(PlainSynth *s) { free(s->voices); free(s); }

void plain_synth_start_all(PlainSynth *s) {
    for (int i = 0; i < s->count; i++) {
        Voice *v = &s->voices[i];
        memset(v, 0, sizeof *v);
        v->note = 36 + i % 60;
        float hz = 440 * exp2f((float)(v->note - 69) / 12);
        v->step1 = hz / s->rate;
        v->step2 = hz * exp2f(7.0f / 1200) / s->rate;
        v->phase1 = v->phase2 = 0.25f;
        v->amp.stage = v->filter.stage = 1;
        float velocity = 100.0f / 127, pan = 0.5f;  /* centre */
        v->left = 0.5f * velocity * cosf(pan * 1.5707963f);
        v->right = 0.5f * velocity * sinf(pan * 1.5707963f);
        coefficients(s, v);
    }
}

void plain_synth_render(PlainSynth *s, int frames, float *restrict left, float *restrict right) {
    memset(left, 0, sizeof(float) * (size_t)frames);
    memset(right, 0, sizeof(float) * (size_t)frames);
    for (int i = 0; i < s->count; i++) {
        Voice *restrict v = &s->voices[i];
        if (v->amp.stage == 0) continue;
        float p1 = v->phase1, p2 = v->phase2, ic1 = v->ic1, ic2 = v->ic2;
        for (int start = 0; start < frames; start += CONTROL) {
            int end = start + CONTROL < frames ? start + CONTROL : frames;
            coefficients(s, v);
            float a1 = v->a1, a2 = v->a2, a3 = v->a3;
            for (int n = start; n < end; n++) {
                p1 += v->step1; if (p1 >= 1) p1 -= 1;
                p2 += v->step2; if (p2 >= 1) p2 -= 1;
                float x = 0.5f * ((2 * p1 - 1 - blep(p1, v->step1)) + (2 * p2 - 1 - blep(p2, v->step2)));
                float v3 = x - ic2, v1 = a1 * ic1 + a2 * v3, v2 = ic2 + a2 * ic1 + a3 * v3;
                ic1 = 2 * v1 - ic1; ic2 = 2 * v2 - ic2;
                adsr(&v->filter, &s->filterRates);
                float sample = v2 * adsr(&v->amp, &s->ampRates);
                left[n] += sample * v->left;
                right[n] += sample * v->right;
            }
        }
        v->phase1 = p1; v->phase2 = p2; v->ic1 = ic1; v->ic2 = ic2;
    }
}
