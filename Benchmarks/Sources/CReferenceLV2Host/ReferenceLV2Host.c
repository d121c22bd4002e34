// A bare lilv host for the LV2 hosting benchmark (see include/ReferenceLV2Host.h): one instrument, one
// effect, fixed buffers, nothing else. Written for this benchmark; only the render path is measured.
#include "ReferenceLV2Host.h"

#include <lilv/lilv.h>
#include <lv2/atom/atom.h>
#include <lv2/core/lv2.h>
#include <lv2/options/options.h>
#include <lv2/urid/urid.h>
#include <lv2/worker/worker.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    ATOM_CAPACITY = 8192,       // bytes per atom port buffer (also the sequenceSize option)
    RESPONSE_CAPACITY = 16384,  // worker responses waiting for the end of run()
};

#define URI_ATOM "http://lv2plug.in/ns/ext/atom#"
#define URI_BUF_SIZE "http://lv2plug.in/ns/ext/buf-size#"

typedef struct ReferenceLV2Host Host;

/// One plugin instance and the buffers its ports are connected to.
typedef struct {
    Host *host;
    const LilvPlugin *plugin;
    LilvInstance *instance;
    uint32_t portCount;
    float *controls;  // one value per port; control ports (inputs and outputs) point here
    int audioIn[2], audioInCount, audioOut[2], audioOutCount;
    int *atomIn, atomInCount, *atomOut, atomOutCount;
    uint8_t *atomOutBuffers;  // ATOM_CAPACITY bytes per atom output
    // worker:schedule for this instance, and the responses its work() sent during the current run().
    const LV2_Worker_Interface *worker;
    LV2_Worker_Schedule schedule;
    LV2_Feature scheduleFeature;
    uint8_t *responses;
    uint32_t responseBytes;
    int active;
    const LV2_Feature *features[8];
} Plugin;

struct ReferenceLV2Host {
    LilvWorld *world;
    int blockSize;
    // urid:map / urid:unmap: a growing array of URIs, id = index + 1 (only used while setting up).
    char **uris;
    uint32_t uriCount, uriCapacity;
    LV2_URID_Map map;
    LV2_URID_Unmap unmap;
    LV2_Feature mapFeature, unmapFeature, optionsFeature, boundedFeature, defaultStateFeature;
    // options:options: values and the zero-terminated option array pointing at them.
    float sampleRate;
    int32_t minBlock, maxBlock, nominalBlock, sequenceSize;
    LV2_Options_Option options[6];
    LV2_URID sequenceType, chunkType, midiType;
    Plugin synth, effect;
    int hasEffect;
    uint8_t *eventBuffer;  // the instrument's MIDI, rewritten every block
    uint8_t *emptyBuffer;  // the effect's event input: an empty sequence
    float *synthOut[2];    // the instrument's output, the effect's input
};

// MARK: urid:map, urid:unmap

static LV2_URID map_uri(LV2_URID_Map_Handle handle, const char *uri) {
    Host *host = handle;
    for (uint32_t index = 0; index < host->uriCount; index++) {
        if (strcmp(host->uris[index], uri) == 0) return index + 1;
    }
    if (host->uriCount == host->uriCapacity) {
        host->uriCapacity = host->uriCapacity ? 2 * host->uriCapacity : 64;
        host->uris = realloc(host->uris, host->uriCapacity * sizeof(char *));
    }
    host->uris[host->uriCount++] = strdup(uri);
    return host->uriCount;
}

static const char *unmap_uri(LV2_URID_Unmap_Handle handle, LV2_URID urid) {
    Host *host = handle;
    return urid >= 1 && urid <= host->uriCount ? host->uris[urid - 1] : NULL;
}

// MARK: worker:schedule
//
// Synchronous, for the benchmark: schedule_work() calls the plugin's work() at once, in the same thread and
// inside its run(); the responses are kept and handed to work_response() after run() returns, then
// end_run(). The worker specification allows this (it is how offline rendering runs a worker). A real-time
// host would run work() on a separate thread instead.

static LV2_Worker_Status respond(LV2_Worker_Respond_Handle handle, uint32_t size, const void *data) {
    Plugin *plugin = handle;
    uint32_t padded = (size + 7u) & ~7u;
    if (plugin->responseBytes + 8 + padded > RESPONSE_CAPACITY) return LV2_WORKER_ERR_NO_SPACE;
    uint8_t *slot = plugin->responses + plugin->responseBytes;
    memcpy(slot, &size, sizeof size);
    memcpy(slot + 8, data, size);
    plugin->responseBytes += 8 + padded;
    return LV2_WORKER_SUCCESS;
}

static LV2_Worker_Status schedule_work(LV2_Worker_Schedule_Handle handle, uint32_t size, const void *data) {
    Plugin *plugin = handle;
    if (!plugin->worker || !plugin->worker->work) return LV2_WORKER_ERR_UNKNOWN;
    return plugin->worker->work(lilv_instance_get_handle(plugin->instance), respond, plugin, size, data);
}

/// After run(): the responses of this cycle, then end_run() (every cycle, as the specification asks).
static void deliver_responses(Plugin *plugin) {
    if (!plugin->worker) return;
    LV2_Handle handle = lilv_instance_get_handle(plugin->instance);
    // work_response() may schedule more work, whose responses are appended and delivered in this loop.
    for (uint32_t offset = 0; offset < plugin->responseBytes;) {
        uint32_t size;
        memcpy(&size, plugin->responses + offset, sizeof size);
        if (plugin->worker->work_response) plugin->worker->work_response(handle, size, plugin->responses + offset + 8);
        offset += 8 + ((size + 7u) & ~7u);
    }
    plugin->responseBytes = 0;
    if (plugin->worker->end_run) plugin->worker->end_run(handle);
}

// MARK: state:loadDefaultState

/// lilv_state_restore's callback: a port value from the default state, stored as the port's float.
static void set_port_value(const char *symbol, void *userData, const void *value, uint32_t size, uint32_t type) {
    Plugin *plugin = userData;
    Host *host = plugin->host;
    float number;
    if (type == map_uri(host, URI_ATOM "Float") && size == sizeof(float)) {
        number = *(const float *)value;
    } else if (type == map_uri(host, URI_ATOM "Double") && size == sizeof(double)) {
        number = (float)*(const double *)value;
    } else if ((type == map_uri(host, URI_ATOM "Int") || type == map_uri(host, URI_ATOM "Bool"))
               && size == sizeof(int32_t)) {
        number = (float)*(const int32_t *)value;
    } else if (type == map_uri(host, URI_ATOM "Long") && size == sizeof(int64_t)) {
        number = (float)*(const int64_t *)value;
    } else {
        fprintf(stderr, "reference LV2 host: default state of port '%s' has a type it cannot set\n", symbol);
        return;
    }
    LilvNode *name = lilv_new_string(host->world, symbol);
    const LilvPort *port = lilv_plugin_get_port_by_symbol(plugin->plugin, name);
    lilv_node_free(name);
    if (port) plugin->controls[lilv_port_get_index(plugin->plugin, port)] = number;
}

static void restore_default_state(Plugin *plugin) {
    Host *host = plugin->host;
    const LilvNode *uri = lilv_plugin_get_uri(plugin->plugin);
    LilvState *state = lilv_state_new_from_world(host->world, &host->map, uri);
    if (!state) return;
    lilv_state_restore(state, plugin->instance, set_port_value, plugin, 0, plugin->features);
    lilv_state_free(state);
}

// MARK: Plugins

static int plugin_open(Host *host, Plugin *plugin, const char *uri) {
    plugin->host = host;
    LilvNode *node = lilv_new_uri(host->world, uri);
    plugin->plugin = lilv_plugins_get_by_uri(lilv_world_get_all_plugins(host->world), node);
    lilv_node_free(node);
    if (!plugin->plugin) {
        fprintf(stderr, "reference LV2 host: no plugin <%s>\n", uri);
        return 0;
    }
    const LilvPlugin *lv2 = plugin->plugin;
    plugin->portCount = lilv_plugin_get_num_ports(lv2);
    plugin->controls = calloc(plugin->portCount + 1, sizeof(float));
    plugin->atomIn = calloc(plugin->portCount + 1, sizeof(int));
    plugin->atomOut = calloc(plugin->portCount + 1, sizeof(int));
    plugin->responses = malloc(RESPONSE_CAPACITY);

    // Ports: kinds and, for controls, the declared default (else the minimum, else 0).
    float *minimum = calloc(plugin->portCount + 1, sizeof(float));
    float *maximum = calloc(plugin->portCount + 1, sizeof(float));
    float *defaults = calloc(plugin->portCount + 1, sizeof(float));
    lilv_plugin_get_port_ranges_float(lv2, minimum, maximum, defaults);
    LilvNode *input = lilv_new_uri(host->world, LV2_CORE__InputPort);
    LilvNode *audio = lilv_new_uri(host->world, LV2_CORE__AudioPort);
    LilvNode *control = lilv_new_uri(host->world, LV2_CORE__ControlPort);
    LilvNode *atom = lilv_new_uri(host->world, LV2_ATOM__AtomPort);
    LilvNode *optional = lilv_new_uri(host->world, LV2_CORE__connectionOptional);
    int ok = 1;
    for (uint32_t index = 0; index < plugin->portCount; index++) {
        const LilvPort *port = lilv_plugin_get_port_by_index(lv2, index);
        int isInput = lilv_port_is_a(lv2, port, input);
        if (lilv_port_is_a(lv2, port, control)) {
            plugin->controls[index] = !isnan(defaults[index]) ? defaults[index] : !isnan(minimum[index]) ? minimum[index] : 0;
        } else if (lilv_port_is_a(lv2, port, audio)) {
            int *count = isInput ? &plugin->audioInCount : &plugin->audioOutCount;
            if (*count == 2) {
                fprintf(stderr, "reference LV2 host: <%s> has more than two audio %ss\n", uri, isInput ? "input" : "output");
                ok = 0;
            } else {
                (isInput ? plugin->audioIn : plugin->audioOut)[(*count)++] = (int)index;
            }
        } else if (lilv_port_is_a(lv2, port, atom)) {
            if (isInput) plugin->atomIn[plugin->atomInCount++] = (int)index;
            else plugin->atomOut[plugin->atomOutCount++] = (int)index;
        } else if (!lilv_port_has_property(lv2, port, optional)) {
            fprintf(stderr, "reference LV2 host: <%s> port %u has a type this host cannot connect\n", uri, index);
            ok = 0;
        }
    }
    lilv_node_free(input);
    lilv_node_free(audio);
    lilv_node_free(atom);
    lilv_node_free(optional);
    free(minimum);
    free(maximum);
    free(defaults);
    if (!ok || plugin->audioOutCount == 0) {
        lilv_node_free(control);
        return 0;
    }
    plugin->atomOutBuffers = calloc((size_t)plugin->atomOutCount + 1, ATOM_CAPACITY);

    // Features: the host's shared ones plus this instance's worker:schedule.
    plugin->schedule.handle = plugin;
    plugin->schedule.schedule_work = schedule_work;
    plugin->scheduleFeature.URI = LV2_WORKER__schedule;
    plugin->scheduleFeature.data = &plugin->schedule;
    const LV2_Feature *features[] = {
        &host->mapFeature, &host->unmapFeature, &host->optionsFeature, &host->boundedFeature,
        &host->defaultStateFeature, &plugin->scheduleFeature, NULL};
    memcpy(plugin->features, features, sizeof features);

    plugin->instance = lilv_plugin_instantiate(lv2, host->sampleRate, plugin->features);
    if (!plugin->instance) {
        fprintf(stderr, "reference LV2 host: <%s> failed to instantiate\n", uri);
        lilv_node_free(control);
        return 0;
    }
    plugin->worker = lilv_instance_get_extension_data(plugin->instance, LV2_WORKER__interface);
    for (uint32_t index = 0; index < plugin->portCount; index++) {
        lilv_instance_connect_port(plugin->instance, index, NULL);
    }
    for (uint32_t index = 0; index < plugin->portCount; index++) {
        const LilvPort *port = lilv_plugin_get_port_by_index(lv2, index);
        if (lilv_port_is_a(lv2, port, control)) lilv_instance_connect_port(plugin->instance, index, plugin->controls + index);
    }
    lilv_node_free(control);
    for (int index = 0; index < plugin->atomOutCount; index++) {
        lilv_instance_connect_port(
            plugin->instance, (uint32_t)plugin->atomOut[index], plugin->atomOutBuffers + (size_t)index * ATOM_CAPACITY);
    }
    restore_default_state(plugin);
    return 1;
}

static void plugin_close(Plugin *plugin) {
    if (plugin->instance) {
        if (plugin->active) lilv_instance_deactivate(plugin->instance);
        lilv_instance_free(plugin->instance);
    }
    free(plugin->controls);
    free(plugin->atomIn);
    free(plugin->atomOut);
    free(plugin->atomOutBuffers);
    free(plugin->responses);
}

/// Atom outputs: an empty chunk of the buffer's capacity, for the plugin to write into.
static void prepare_atom_outputs(Host *host, Plugin *plugin) {
    for (int index = 0; index < plugin->atomOutCount; index++) {
        LV2_Atom *atom = (LV2_Atom *)(plugin->atomOutBuffers + (size_t)index * ATOM_CAPACITY);
        atom->size = ATOM_CAPACITY - sizeof(LV2_Atom);
        atom->type = host->chunkType;
    }
}

static void write_empty_sequence(Host *host, uint8_t *buffer) {
    LV2_Atom_Sequence *sequence = (LV2_Atom_Sequence *)buffer;
    sequence->atom.size = sizeof(LV2_Atom_Sequence_Body);
    sequence->atom.type = host->sequenceType;
    sequence->body.unit = 0;
    sequence->body.pad = 0;
}

// MARK: The host

ReferenceLV2Host *reference_lv2_host_create(const char *synthURI, const char *effectURI, double sampleRate, int blockSize) {
    Host *host = calloc(1, sizeof(Host));
    host->blockSize = blockSize;
    host->world = lilv_world_new();
    lilv_world_load_all(host->world);

    host->map = (LV2_URID_Map){host, map_uri};
    host->unmap = (LV2_URID_Unmap){host, unmap_uri};
    host->mapFeature = (LV2_Feature){LV2_URID__map, &host->map};
    host->unmapFeature = (LV2_Feature){LV2_URID__unmap, &host->unmap};
    host->boundedFeature = (LV2_Feature){URI_BUF_SIZE "boundedBlockLength", NULL};
    host->defaultStateFeature = (LV2_Feature){"http://lv2plug.in/ns/ext/state#loadDefaultState", NULL};

    host->sampleRate = (float)sampleRate;
    host->minBlock = 0;
    host->maxBlock = blockSize;
    host->nominalBlock = blockSize;
    host->sequenceSize = ATOM_CAPACITY;
    LV2_URID atomInt = map_uri(host, URI_ATOM "Int");
    LV2_URID atomFloat = map_uri(host, URI_ATOM "Float");
    LV2_Options_Option options[6] = {
        {LV2_OPTIONS_INSTANCE, 0, map_uri(host, "http://lv2plug.in/ns/ext/parameters#sampleRate"), sizeof(float),
         atomFloat, &host->sampleRate},
        {LV2_OPTIONS_INSTANCE, 0, map_uri(host, URI_BUF_SIZE "minBlockLength"), sizeof(int32_t), atomInt, &host->minBlock},
        {LV2_OPTIONS_INSTANCE, 0, map_uri(host, URI_BUF_SIZE "maxBlockLength"), sizeof(int32_t), atomInt, &host->maxBlock},
        {LV2_OPTIONS_INSTANCE, 0, map_uri(host, URI_BUF_SIZE "nominalBlockLength"), sizeof(int32_t), atomInt,
         &host->nominalBlock},
        {LV2_OPTIONS_INSTANCE, 0, map_uri(host, URI_BUF_SIZE "sequenceSize"), sizeof(int32_t), atomInt,
         &host->sequenceSize},
        {LV2_OPTIONS_INSTANCE, 0, 0, 0, 0, NULL},
    };
    memcpy(host->options, options, sizeof options);
    host->optionsFeature = (LV2_Feature){LV2_OPTIONS__options, host->options};
    host->sequenceType = map_uri(host, LV2_ATOM__Sequence);
    host->chunkType = map_uri(host, LV2_ATOM__Chunk);
    host->midiType = map_uri(host, "http://lv2plug.in/ns/ext/midi#MidiEvent");

    host->eventBuffer = aligned_alloc(8, ATOM_CAPACITY);
    host->emptyBuffer = aligned_alloc(8, ATOM_CAPACITY);
    write_empty_sequence(host, host->eventBuffer);
    write_empty_sequence(host, host->emptyBuffer);
    host->synthOut[0] = calloc((size_t)blockSize, sizeof(float));
    host->synthOut[1] = calloc((size_t)blockSize, sizeof(float));

    host->hasEffect = effectURI != NULL;
    if (!plugin_open(host, &host->synth, synthURI) || (host->hasEffect && !plugin_open(host, &host->effect, effectURI))) {
        reference_lv2_host_destroy(host);
        return NULL;
    }
    // Fixed connections: the instrument's MIDI and outputs, the effect's (empty) events and inputs.
    Plugin *synth = &host->synth;
    for (int index = 0; index < synth->atomInCount; index++) {
        lilv_instance_connect_port(synth->instance, (uint32_t)synth->atomIn[index], host->eventBuffer);
    }
    for (int channel = 0; channel < synth->audioOutCount; channel++) {
        lilv_instance_connect_port(synth->instance, (uint32_t)synth->audioOut[channel], host->synthOut[channel]);
    }
    if (host->hasEffect) {
        Plugin *effect = &host->effect;
        for (int index = 0; index < effect->atomInCount; index++) {
            lilv_instance_connect_port(effect->instance, (uint32_t)effect->atomIn[index], host->emptyBuffer);
        }
        for (int channel = 0; channel < effect->audioInCount; channel++) {
            lilv_instance_connect_port(effect->instance, (uint32_t)effect->audioIn[channel], host->synthOut[channel]);
        }
        lilv_instance_activate(effect->instance);
        effect->active = 1;
    }
    lilv_instance_activate(synth->instance);
    synth->active = 1;
    return host;
}

/// The block's MIDI as an atom sequence: header, then each event (frame time, size, type, bytes) padded to 8.
static void write_events(Host *host, const ReferenceMIDIEvent *events, int count) {
    uint8_t *buffer = host->eventBuffer;
    uint32_t offset = sizeof(LV2_Atom_Sequence);
    for (int index = 0; index < count && offset + sizeof(LV2_Atom_Event) + 8 <= ATOM_CAPACITY; index++) {
        LV2_Atom_Event *event = (LV2_Atom_Event *)(buffer + offset);
        event->time.frames = events[index].frame;
        event->body.size = (events[index].status & 0xE0) == 0xC0 ? 2 : 3;  // program change, channel pressure: 2
        event->body.type = host->midiType;
        uint8_t *bytes = (uint8_t *)(event + 1);
        bytes[0] = events[index].status;
        bytes[1] = events[index].data1;
        bytes[2] = events[index].data2;
        offset += sizeof(LV2_Atom_Event) + 8;
    }
    LV2_Atom_Sequence *sequence = (LV2_Atom_Sequence *)buffer;
    sequence->atom.size = offset - sizeof(LV2_Atom);
    sequence->atom.type = host->sequenceType;
    sequence->body.unit = 0;
    sequence->body.pad = 0;
}

void reference_lv2_host_render(
    ReferenceLV2Host *host, const ReferenceMIDIEvent *events, int eventCount, int frames, float *left, float *right) {
    Plugin *synth = &host->synth;
    write_events(host, events, eventCount);
    prepare_atom_outputs(host, synth);
    lilv_instance_run(synth->instance, (uint32_t)frames);
    deliver_responses(synth);
    if (synth->audioOutCount == 1) memcpy(host->synthOut[1], host->synthOut[0], (size_t)frames * sizeof(float));

    if (!host->hasEffect) {
        memcpy(left, host->synthOut[0], (size_t)frames * sizeof(float));
        memcpy(right, host->synthOut[1], (size_t)frames * sizeof(float));
        return;
    }
    Plugin *effect = &host->effect;
    write_empty_sequence(host, host->emptyBuffer);
    prepare_atom_outputs(host, effect);
    lilv_instance_connect_port(effect->instance, (uint32_t)effect->audioOut[0], left);
    if (effect->audioOutCount > 1) lilv_instance_connect_port(effect->instance, (uint32_t)effect->audioOut[1], right);
    lilv_instance_run(effect->instance, (uint32_t)frames);
    deliver_responses(effect);
    if (effect->audioOutCount == 1) memcpy(right, left, (size_t)frames * sizeof(float));
}

void reference_lv2_host_destroy(ReferenceLV2Host *host) {
    plugin_close(&host->synth);
    if (host->hasEffect) plugin_close(&host->effect);
    free(host->eventBuffer);
    free(host->emptyBuffer);
    free(host->synthOut[0]);
    free(host->synthOut[1]);
    for (uint32_t index = 0; index < host->uriCount; index++) free(host->uris[index]);
    free(host->uris);
    if (host->world) lilv_world_free(host->world);
    free(host);
}
