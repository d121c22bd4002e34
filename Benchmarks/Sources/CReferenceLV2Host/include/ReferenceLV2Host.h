// A bare LV2 host in plain C on lilv, written for the benchmark: an instrument plugin followed by an effect
// plugin, run block by block with no framework around them. It is what Aulos's LV2 units in an AudioGraph
// are measured against (Benchmarks/Benchmarks/LV2Host).
//
// Host features given to both plugins: urid:map and urid:unmap, options:options (sample rate; minimum,
// maximum and nominal block length; sequence size), buf-size:boundedBlockLength, worker:schedule (run
// synchronously, see ReferenceLV2Host.c) and state:loadDefaultState (each plugin's default state is restored
// after instantiation).
#ifndef REFERENCE_LV2_HOST_H
#define REFERENCE_LV2_HOST_H
#include <stdint.h>

typedef struct ReferenceLV2Host ReferenceLV2Host;

/// One MIDI channel message, `frame` frames into the block it is rendered with.
typedef struct {
    uint32_t frame;
    uint8_t status, data1, data2;
} ReferenceMIDIEvent;

/// Loads every installed plugin description (lilv_world_load_all), then instantiates the instrument at
/// `synthURI` and, unless `effectURI` is NULL, the effect at `effectURI`, restores their default states and
/// activates them. NULL when a plugin is missing, fails to instantiate or has ports this host cannot connect
/// (reason on stderr). Blocks never exceed `blockSize` frames.
ReferenceLV2Host *_Nullable reference_lv2_host_create(
    const char *_Nonnull synthURI, const char *_Nullable effectURI, double sampleRate, int blockSize);
/// Renders one block of `frames` frames (≤ blockSize): the instrument with `events` (in time order) as
/// an atom sequence on its event input, then the effect on the instrument's stereo output. The result
/// goes to `left` and `right` (overwritten).
void reference_lv2_host_render(
    ReferenceLV2Host *_Nonnull host, const ReferenceMIDIEvent *_Nullable events, int eventCount, int frames,
    float *_Nonnull left, float *_Nonnull right);
void reference_lv2_host_destroy(ReferenceLV2Host *_Nonnull host);
#endif
