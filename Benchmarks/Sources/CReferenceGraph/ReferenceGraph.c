#include "ReferenceGraph.h"
#include <stdlib.h>

typedef struct Node Node;
typedef int32_t (*render_fn)(const Node *node, int64_t sampleTime, uint32_t frames, float **io, int channels);

struct Node {
    render_fn render;
    const Node *input;
};

struct ReferenceGraph {
    Node *nodes;   /* nodes[0] is the output, nodes[count-1] the source */
    int count;
    int channels;
};

/* Same work as the Swift benchmark's render callback: a per-channel ramp. */
static int32_t source_render(const Node *node, int64_t sampleTime, uint32_t frames, float **io, int channels) {
    (void)node;
    for (int c = 0; c < channels; c++) {
        for (uint32_t i = 0; i < frames; i++) io[c][i] = (float)((sampleTime + i) % 1000) / 1000.0f + (float)c;
    }
    return 0;
}

/* A pass-through node pulls its input straight into the caller's buffers (no copy), like Aulos's converter. */
static int32_t pass_render(const Node *node, int64_t sampleTime, uint32_t frames, float **io, int channels) {
    return node->input->render(node->input, sampleTime, frames, io, channels);
}

ReferenceGraph *reference_graph_create(int passThroughNodes, int channels, int maxFrames) {
    (void)maxFrames;
    ReferenceGraph *graph = malloc(sizeof *graph);
    graph->count = passThroughNodes + 2;
    graph->channels = channels;
    graph->nodes = calloc((size_t)graph->count, sizeof(Node));
    for (int i = 0; i < graph->count - 1; i++) {
        graph->nodes[i].render = pass_render;
        graph->nodes[i].input = &graph->nodes[i + 1];
    }
    graph->nodes[graph->count - 1].render = source_render;
    return graph;
}

void reference_graph_destroy(ReferenceGraph *graph) {
    free(graph->nodes);
    free(graph);
}

int32_t reference_graph_render(ReferenceGraph *graph, int64_t sampleTime, uint32_t frames, float **io) {
    return graph->nodes[0].render(&graph->nodes[0], sampleTime, frames, io, graph->channels);
}
