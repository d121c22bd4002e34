// alsa-lib for Aulos: the headers plus a few shims for what Swift cannot call directly (alsa-lib's
// variadic error handler, hw_params negotiation that needs alloca-style temporaries).
#ifndef AULOS_CALSA_H
#define AULOS_CALSA_H

#include <alsa/asoundlib.h>

/// Routes alsa-lib's own error printing (e.g. "ALSA lib pcm.c:...: Unknown PCM default") into a buffer
/// instead of stderr, so the program can report one clear line of its own. Idempotent.
void aulos_alsa_capture_errors(void);

/// The last message alsa-lib reported (empty if none), and clearing it.
const char *aulos_alsa_last_error(void);
void aulos_alsa_clear_error(void);

/// Opens a PCM by name. With `config_text`, the name is looked up only in that configuration (used by
/// tests and by `--alsa-config`: no files or environment needed); otherwise in the system configuration.
int aulos_alsa_open(snd_pcm_t **pcm, const char *name, const char *config_text, snd_pcm_stream_t stream, int mode);

/// What was asked for and what the device granted.
typedef struct {
    snd_pcm_format_t format;     // in: preferred; out: granted
    unsigned int channels;       // in: wanted; out: granted
    unsigned int rate;           // in: preferred; out: granted
    snd_pcm_uframes_t period;    // in: preferred frames per period (the slice); out: granted
    unsigned int periods;        // in: preferred; out: granted
    snd_pcm_uframes_t buffer;    // out: granted buffer size in frames
} AulosPCMConfig;

/// Negotiates hw and sw params: access RW interleaved; format = the preferred one if the device takes it,
/// else the first of FLOAT_LE, S32_LE, S24_3LE, S16_LE it takes; rate, period and periods nearest to the
/// preferred ones. Returns 0 or a negative errno; on error `stage` names the step that failed.
int aulos_alsa_configure(snd_pcm_t *pcm, AulosPCMConfig *config, const char **stage);

#endif
