// A C reference for graph overhead: a chain of pass-through nodes pulled by function pointers, the way a
// hand-written C host would do it. It is what Aulos's graph is measured against.
#ifndef REFERENCE_GRAPH_H
#define REFERENCE_GRAPH_H
#include <stdint.h>

typedef struct ReferenceGraph ReferenceGraph;

/// A chain: source (fills a ramp like the Swift benchmark's callback) → `passThroughNodes` nodes → output.
ReferenceGraph *_Nonnull reference_graph_create(int passThroughNodes, int channels, int maxFrames);
void reference_graph_destroy(ReferenceGraph *_Nonnull graph);
/// Pulls one slice into `channels` buffers of `frames` floats; returns 0.
int32_t reference_graph_render(ReferenceGraph *_Nonnull graph, int64_t sampleTime, uint32_t frames, float *_Nonnull *_Nonnull io);
#endif
