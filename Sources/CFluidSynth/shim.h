#include <fluidsynth.h>

// GLib's log hook. Debian's libfluidsynth links GLib, and libinstpatch (which it uses to read some
// SoundFonts) reports a corrupt file as a GLib CRITICAL line straight on stderr. Aulos takes GLib's
// messages itself, so a bad font is one line of its own. Declared here rather than by including glib.h:
// this one function is all Aulos uses, with GLib's own C types spelt out (GLogLevelFlags is an int).
typedef void (*AulosGLogFunc)(const char *log_domain, int log_level, const char *message, void *user_data);
AulosGLogFunc g_log_set_default_handler(AulosGLogFunc log_func, void *user_data);
