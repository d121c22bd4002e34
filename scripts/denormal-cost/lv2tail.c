// An LV2 effect's tail, with and without FTZ/DAZ: 1 s of noise in, then silence; CPU ns per 64-frame block
// while the noise plays and after 5 s and 30 s of silence, and how many output samples are subnormal.
// Usage: lv2tail URI [ftz]
#include <lilv/lilv.h>
#include <lv2/core/lv2.h>
#include <lv2/urid/urid.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xmmintrin.h>

static char *uris[4096];
static int nuris;
static LV2_URID map(LV2_URID_Map_Handle h, const char *uri) {
    for (int i = 0; i < nuris; i++) if (!strcmp(uris[i], uri)) return i + 1;
    uris[nuris] = strdup(uri);
    return ++nuris;
}
static long long cpu_ns(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }

int main(int argc, char **argv) {
    int ftz = argc > 2;
    LilvWorld *world = lilv_world_new();
    lilv_world_load_all(world);
    LilvNode *uri = lilv_new_uri(world, argv[1]);
    const LilvPlugin *plugin = lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world), uri);
    if (!plugin) { fprintf(stderr, "no plugin %s\n", argv[1]); return 1; }
    LV2_URID_Map m = {NULL, map};
    LV2_Feature mapf = {LV2_URID__map, &m};
    const LV2_Feature *features[] = {&mapf, NULL};
    LilvInstance *inst = lilv_plugin_instantiate(plugin, 48000, features);
    if (!inst) { fprintf(stderr, "cannot instantiate\n"); return 1; }
    uint32_t n = lilv_plugin_get_num_ports(plugin);
    float *mins = calloc(n, 4), *maxs = calloc(n, 4), *defs = calloc(n, 4), *controls = calloc(n, 4);
    lilv_plugin_get_port_ranges_float(plugin, mins, maxs, defs);
    LilvNode *audio = lilv_new_uri(world, LV2_CORE__AudioPort), *control = lilv_new_uri(world, LV2_CORE__ControlPort);
    LilvNode *input = lilv_new_uri(world, LV2_CORE__InputPort);
    enum { B = 64 };
    static float in[8][B], out[8][B];
    int nin = 0, nout = 0, outs[8];
    for (uint32_t p = 0; p < n; p++) {
        const LilvPort *port = lilv_plugin_get_port_by_index(plugin, p);
        if (lilv_port_is_a(plugin, port, control)) {
            controls[p] = isnan(defs[p]) ? 0 : defs[p];
            lilv_instance_connect_port(inst, p, &controls[p]);
        } else if (lilv_port_is_a(plugin, port, audio)) {
            if (lilv_port_is_a(plugin, port, input)) lilv_instance_connect_port(inst, p, in[nin++]);
            else { outs[nout] = nout; lilv_instance_connect_port(inst, p, out[nout++]); }
        } else lilv_instance_connect_port(inst, p, NULL);
    }
    if (ftz) _mm_setcsr(_mm_getcsr() | 0x8040);
    lilv_instance_activate(inst);
    srand(1);
    const int second = 48000 / B;
    long long signal = 0, tail5 = 0, tail30 = 0;
    long subnormal = 0, zero = 0, total = 0;
    for (int block = 0; block < 31 * second; block++) {
        for (int c = 0; c < nin; c++)
            for (int i = 0; i < B; i++) in[c][i] = block < second ? (rand() / (float)RAND_MAX - 0.5f) : 0;
        long long t = cpu_ns();
        lilv_instance_run(inst, B);
        t = cpu_ns() - t;
        if (block < second) signal += t;
        else if (block >= 5 * second && block < 6 * second) tail5 += t;
        else if (block >= 30 * second) tail30 += t;
        if (block >= 5 * second)
            for (int c = 0; c < nout; c++) for (int i = 0; i < B; i++) {
                total++;
                if (fpclassify(out[c][i]) == FP_SUBNORMAL) subnormal++;
                if (out[c][i] == 0) zero++;
            }
    }
    printf("%s ftz=%d: ns/block signal %.0f, 5 s into the tail %.0f, 30 s %.0f (tail/signal %.2f, %.2f); "
           "outputs after 5 s: %ld subnormal, %ld zero of %ld\n", argv[1], ftz, signal / (double)second,
           tail5 / (double)second, tail30 / (double)second, tail5 / (double)signal, tail30 / (double)signal,
           subnormal, zero, total);
    return 0;
}
