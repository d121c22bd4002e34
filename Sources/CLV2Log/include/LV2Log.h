// The LV2 host's log feature (log:log), and the mark that tells the host's callbacks they are called from
// inside a plugin's run() on the render thread. Log's printf is a C variadic function, which Swift cannot
// define, so the feature lives in this small C file.
#ifndef AULOS_LV2_LOG_H
#define AULOS_LV2_LOG_H

#include <lv2/log/log.h>
#include <stdatomic.h>
#include <stdint.h>

/// One plugin instance's log: the LV2 struct first (its handle points back here), the log types' URIDs,
/// the plugin's name for the messages' prefix, and how many messages were dropped because they came
/// from the render thread.
typedef struct AulosLV2Log {
    LV2_Log_Log log;
    uint32_t error, warning, note, trace;
    char name[96];
    atomic_uint dropped;
} AulosLV2Log;

/// Fills `log` for a plugin called `name` with the given log-type URIDs.
void aulos_lv2_log_init(AulosLV2Log *log, const char *name, uint32_t error, uint32_t warning, uint32_t note,
                        uint32_t trace);

/// Marks the calling thread as the render thread (1) or not (0): a message logged on it while marked is
/// dropped and counted, never printed (printing can block and allocate).
void aulos_lv2_log_set_render_thread(int on);

/// Whether the calling thread is marked as the render thread (the worker's schedule asks).
int aulos_lv2_log_on_render_thread(void);

/// Messages dropped because they were logged on the render thread.
unsigned aulos_lv2_log_dropped(AulosLV2Log *log);

#endif
