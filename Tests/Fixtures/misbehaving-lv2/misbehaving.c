// LV2 effects that misbehave on purpose, for the tests that show one bad plugin costs only itself: each
// URI crashes, exits or spins forever in instantiate() or in run(), or writes NaN or absurd values. Built
// by the tests with the system's C compiler (`cc -shared -fPIC`), never shipped.
#include <lv2/core/lv2.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX "urn:aulos:test:misbehaving#"

typedef struct {
    const char *behaviour;
    const float *in;
    float *out;
} Plugin;

static volatile int spinning = 1;

static void misbehave(const char *behaviour, const char *when) {
    size_t length = strlen(when);
    if (strncmp(behaviour, "segv-", 5) == 0 && strcmp(behaviour + 5, when) == 0) {
        fprintf(stderr, "misbehaving: about to crash in %s\n", when);
        raise(SIGSEGV);
    }
    if (strncmp(behaviour, "exit-", 5) == 0 && strcmp(behaviour + 5, when) == 0) {
        fprintf(stderr, "misbehaving: exiting in %s\n", when);
        exit(3);
    }
    if (strncmp(behaviour, "spin-", 5) == 0 && strcmp(behaviour + 5, when) == 0) {
        while (spinning) {}
    }
    (void)length;
}

static LV2_Handle instantiate(const LV2_Descriptor *descriptor, double rate, const char *path,
                              const LV2_Feature *const *features) {
    (void)rate; (void)path; (void)features;
    Plugin *plugin = calloc(1, sizeof(Plugin));
    plugin->behaviour = descriptor->URI + strlen(PREFIX);
    misbehave(plugin->behaviour, "instantiate");
    return plugin;
}

static void connect_port(LV2_Handle instance, uint32_t port, void *data) {
    Plugin *plugin = instance;
    if (port == 0) plugin->in = data;
    if (port == 1) plugin->out = data;
}

static void run(LV2_Handle instance, uint32_t frames) {
    Plugin *plugin = instance;
    misbehave(plugin->behaviour, "run");
    for (uint32_t i = 0; i < frames; i++) {
        float value = plugin->in[i];
        if (strcmp(plugin->behaviour, "nan") == 0) value = NAN;
        if (strcmp(plugin->behaviour, "huge") == 0) value = 3e38f;
        plugin->out[i] = value;
    }
}

static void cleanup(LV2_Handle instance) { free(instance); }

#define DESCRIPTOR(name) { PREFIX name, instantiate, connect_port, NULL, run, NULL, cleanup, NULL }
static const LV2_Descriptor descriptors[] = {
    DESCRIPTOR("segv-run"), DESCRIPTOR("exit-run"), DESCRIPTOR("spin-run"),
    DESCRIPTOR("segv-instantiate"), DESCRIPTOR("exit-instantiate"), DESCRIPTOR("spin-instantiate"),
    DESCRIPTOR("nan"), DESCRIPTOR("huge"),
};

LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t index) {
    return index < sizeof descriptors / sizeof descriptors[0] ? &descriptors[index] : NULL;
}
