#include "CALSA.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

// One buffer for the whole process: alsa-lib errors are reported on the control thread (open, configure,
// recover); a race would only garble a diagnostic message.
static char last_error[512];

static void capture_error(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err;
    va_list args;
    va_start(args, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, args);
    va_end(args);
}

void aulos_alsa_capture_errors(void) { snd_lib_error_set_handler(capture_error); }
const char *aulos_alsa_last_error(void) { return last_error; }
void aulos_alsa_clear_error(void) { last_error[0] = 0; }

int aulos_alsa_open(snd_pcm_t **pcm, const char *name, const char *config_text, snd_pcm_stream_t stream, int mode) {
    if (!config_text) return snd_pcm_open(pcm, name, stream, mode);
    snd_config_t *top = NULL;
    snd_input_t *input = NULL;
    int err = snd_config_top(&top);
    if (err < 0) return err;
    err = snd_input_buffer_open(&input, config_text, strlen(config_text));
    if (err >= 0) {
        err = snd_config_load(top, input);
        snd_input_close(input);
    }
    if (err >= 0) err = snd_pcm_open_lconf(pcm, name, stream, mode, top);
    snd_config_delete(top);
    return err;
}

#define STEP(call, name) do { err = (call); if (err < 0) { *stage = name; goto done; } } while (0)

int aulos_alsa_configure(snd_pcm_t *pcm, AulosPCMConfig *config, const char **stage) {
    snd_pcm_hw_params_t *hw = NULL;
    snd_pcm_sw_params_t *sw = NULL;
    int err = 0, dir = 0;
    *stage = "";
    STEP(snd_pcm_hw_params_malloc(&hw), "allocating hw params");
    STEP(snd_pcm_sw_params_malloc(&sw), "allocating sw params");
    STEP(snd_pcm_hw_params_any(pcm, hw), "reading the device's capabilities");
    STEP(snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED), "interleaved read/write access");
    {
        const snd_pcm_format_t order[] = {config->format, SND_PCM_FORMAT_FLOAT_LE, SND_PCM_FORMAT_S32_LE,
                                          SND_PCM_FORMAT_S24_3LE, SND_PCM_FORMAT_S16_LE};
        err = -EINVAL;
        for (unsigned i = 0; i < sizeof order / sizeof order[0] && err < 0; i++) {
            if (snd_pcm_hw_params_test_format(pcm, hw, order[i]) == 0) {
                err = snd_pcm_hw_params_set_format(pcm, hw, order[i]);
                if (err == 0) config->format = order[i];
            }
        }
        if (err < 0) { *stage = "sample format (Float32, S32, S24 or S16)"; goto done; }
    }
    STEP(snd_pcm_hw_params_set_channels_near(pcm, hw, &config->channels), "channel count");
    STEP(snd_pcm_hw_params_set_rate_resample(pcm, hw, 0), "disabling alsa-lib resampling");
    STEP(snd_pcm_hw_params_set_rate_near(pcm, hw, &config->rate, &dir), "sample rate");
    dir = 0;
    STEP(snd_pcm_hw_params_set_period_size_near(pcm, hw, &config->period, &dir), "period size");
    dir = 0;
    STEP(snd_pcm_hw_params_set_periods_near(pcm, hw, &config->periods, &dir), "period count");
    STEP(snd_pcm_hw_params(pcm, hw), "applying hw params");
    // Read back what the device granted: "near" may have moved any of them.
    snd_pcm_hw_params_get_period_size(hw, &config->period, &dir);
    snd_pcm_hw_params_get_periods(hw, &config->periods, &dir);
    snd_pcm_hw_params_get_buffer_size(hw, &config->buffer);
    snd_pcm_hw_params_get_rate(hw, &config->rate, &dir);
    snd_pcm_hw_params_get_channels(hw, &config->channels);
    STEP(snd_pcm_sw_params_current(pcm, sw), "reading sw params");
    // Start once the buffer is full (the I/O thread pre-fills it), wake when a period is free.
    STEP(snd_pcm_sw_params_set_start_threshold(pcm, sw, config->buffer), "start threshold");
    STEP(snd_pcm_sw_params_set_avail_min(pcm, sw, config->period), "wake-up threshold");
    STEP(snd_pcm_sw_params(pcm, sw), "applying sw params");
done:
    if (hw) snd_pcm_hw_params_free(hw);
    if (sw) snd_pcm_sw_params_free(sw);
    return err;
}
