// The plain C voice (Sources/CPlainVoice) built by gcc instead of the package's clang, as the issue measured
// it: 256 voices, 100 warm-up slices of 64 frames, then N measured ones (default 2000). Prints the time per
// slice and the last slice's energy (the same checksum as `synth-render plain`). Build and run:
//
//   gcc -O3 -I../Sources/CPlainVoice/include main.c ../Sources/CPlainVoice/PlainVoice.c -lm -o /tmp/plain-gcc
//   /tmp/plain-gcc 20000
//   valgrind --tool=callgrind --toggle-collect=measure /tmp/plain-gcc 2000
#include "PlainVoice.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) void measure(PlainSynth *synth, int slices, float *left, float *right) {
    for (int i = 0; i < slices; i++) plain_synth_render(synth, 64, left, right);
}

int main(int argc, char **argv) {
    int slices = argc > 1 ? atoi(argv[1]) : 2000;
    PlainSynth *synth = plain_synth_create(256, 48000);
    plain_synth_start_all(synth);
    float left[64], right[64];
    for (int i = 0; i < 100; i++) plain_synth_render(synth, 64, left, right);
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    measure(synth, slices, left, right);
    clock_gettime(CLOCK_MONOTONIC, &end);
    double micros = ((end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec)) / 1e3 / slices;
    double energy = 0;
    for (int i = 0; i < 64; i++) energy += (double)left[i] * left[i] + (double)right[i] * right[i];
    printf("plain (gcc): %d slices, %.1f us per slice, %.0f voices per core at 48 kHz, checksum %.13g\n", slices,
           micros, 256 * (64 / 48000.0 * 1e6) / micros, energy);
    plain_synth_destroy(synth);
    return 0;
}
