// The LV2 log feature: errors and warnings from a plugin go to standard error with the plugin's name;
// notes and traces are dropped (plugins use them for debugging chatter). Nothing is printed from the
// render thread: there a message is counted and dropped, since printing may block or allocate.

#include "LV2Log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local int on_render_thread = 0;

void aulos_lv2_log_set_render_thread(int on) { on_render_thread = on; }

int aulos_lv2_log_on_render_thread(void) { return on_render_thread; }

unsigned aulos_lv2_log_dropped(AulosLV2Log *log) { return atomic_load(&log->dropped); }

static int aulos_lv2_vprintf(LV2_Log_Handle handle, LV2_URID type, const char *format, va_list arguments) {
    AulosLV2Log *log = (AulosLV2Log *)handle;
    if (on_render_thread) {
        atomic_fetch_add(&log->dropped, 1);
        return 0;
    }
    if (type != log->error && type != log->warning) return 0;
    char message[512];
    int length = vsnprintf(message, sizeof message, format, arguments);
    if (length < 0) return length;
    size_t end = strlen(message);
    while (end > 0 && (message[end - 1] == '\n' || message[end - 1] == '\r')) message[--end] = '\0';
    fprintf(stderr, "%s: %s%s\n", log->name, type == log->error ? "error: " : "warning: ", message);
    return length;
}

static int aulos_lv2_printf(LV2_Log_Handle handle, LV2_URID type, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int result = aulos_lv2_vprintf(handle, type, format, arguments);
    va_end(arguments);
    return result;
}

void aulos_lv2_log_init(AulosLV2Log *log, const char *name, uint32_t error, uint32_t warning, uint32_t note,
                        uint32_t trace) {
    log->log.handle = log;
    log->log.printf = aulos_lv2_printf;
    log->log.vprintf = aulos_lv2_vprintf;
    log->error = error;
    log->warning = warning;
    log->note = note;
    log->trace = trace;
    snprintf(log->name, sizeof log->name, "%s", name);
    atomic_init(&log->dropped, 0);
}
