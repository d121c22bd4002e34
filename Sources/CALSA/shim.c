#include "CALSA.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <poll.h>

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
    // Monotonic timestamps on every position update (snd_pcm_htimestamp): they tell when the frames being
    // written will be heard, for placing live MIDI. Not every plugin supports them; without, the I/O thread
    // estimates from its wake-up time.
    if (snd_pcm_sw_params_set_tstamp_mode(pcm, sw, SND_PCM_TSTAMP_ENABLE) == 0)
        snd_pcm_sw_params_set_tstamp_type(pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC);
    STEP(snd_pcm_sw_params(pcm, sw), "applying sw params");
done:
    if (hw) snd_pcm_hw_params_free(hw);
    if (sw) snd_pcm_sw_params_free(sw);
    return err;
}

// ---- Sequencer -------------------------------------------------------------------------------------

int aulos_seq_open(snd_seq_t **seq, const char *client_name) {
    int err = snd_seq_open(seq, "default", SND_SEQ_OPEN_DUPLEX, SND_SEQ_NONBLOCK);
    if (err < 0) return err;
    err = snd_seq_set_client_name(*seq, client_name);
    if (err < 0) { snd_seq_close(*seq); *seq = NULL; }
    return err;
}

int aulos_seq_create_port(snd_seq_t *seq, const char *name, unsigned capability, unsigned type, int timestamp_queue) {
    snd_seq_port_info_t *info;
    snd_seq_port_info_alloca(&info);
    snd_seq_port_info_set_name(info, name);
    snd_seq_port_info_set_capability(info, capability);
    snd_seq_port_info_set_type(info, type);
    if (timestamp_queue >= 0) {
        snd_seq_port_info_set_timestamping(info, 1);
        snd_seq_port_info_set_timestamp_real(info, 1);
        snd_seq_port_info_set_timestamp_queue(info, timestamp_queue);
    }
    int err = snd_seq_create_port(seq, info);
    return err < 0 ? err : snd_seq_port_info_get_port(info);
}

int aulos_seq_start_timestamp_queue(snd_seq_t *seq) {
    int queue = snd_seq_alloc_named_queue(seq, "Aulos arrival clock");
    if (queue < 0) return queue;
    int err = snd_seq_start_queue(seq, queue, NULL);
    if (err >= 0) err = snd_seq_drain_output(seq);
    if (err < 0) { snd_seq_free_queue(seq, queue); return err; }
    return queue;
}

int aulos_seq_queue_time(snd_seq_t *seq, int queue, int64_t *ns) {
    snd_seq_queue_status_t *status;
    snd_seq_queue_status_alloca(&status);
    int err = snd_seq_get_queue_status(seq, queue, status);
    if (err < 0) return err;
    const snd_seq_real_time_t *time = snd_seq_queue_status_get_real_time(status);
    *ns = (int64_t)time->tv_sec * 1000000000 + time->tv_nsec;
    return 0;
}

static void fill_port(snd_seq_client_info_t *client, const snd_seq_port_info_t *port, AulosSeqPort *out) {
    out->client = snd_seq_port_info_get_client(port);
    out->port = snd_seq_port_info_get_port(port);
    snprintf(out->client_name, sizeof out->client_name, "%s", snd_seq_client_info_get_name(client));
    snprintf(out->port_name, sizeof out->port_name, "%s", snd_seq_port_info_get_name(port));
    out->capability = snd_seq_port_info_get_capability(port);
    out->type = snd_seq_port_info_get_type(port);
    out->client_type = snd_seq_client_info_get_type(client);
}

int aulos_seq_list_ports(snd_seq_t *seq, AulosSeqPort *ports, int capacity) {
    snd_seq_client_info_t *client;
    snd_seq_port_info_t *port;
    snd_seq_client_info_alloca(&client);
    snd_seq_port_info_alloca(&port);
    int count = 0;
    snd_seq_client_info_set_client(client, -1);
    while (snd_seq_query_next_client(seq, client) >= 0) {
        snd_seq_port_info_set_client(port, snd_seq_client_info_get_client(client));
        snd_seq_port_info_set_port(port, -1);
        while (snd_seq_query_next_port(seq, port) >= 0) {
            if (count < capacity) fill_port(client, port, &ports[count]);
            count++;
        }
    }
    return count < capacity ? count : capacity;
}

int aulos_seq_port(snd_seq_t *seq, int client_id, int port_id, AulosSeqPort *out) {
    snd_seq_client_info_t *client;
    snd_seq_port_info_t *port;
    snd_seq_client_info_alloca(&client);
    snd_seq_port_info_alloca(&port);
    int err = snd_seq_get_any_client_info(seq, client_id, client);
    if (err < 0) return err;
    err = snd_seq_get_any_port_info(seq, client_id, port_id, port);
    if (err < 0) return err;
    fill_port(client, port, out);
    return 0;
}

int aulos_seq_connect_from(snd_seq_t *seq, int my_port, int client, int port) {
    return snd_seq_connect_from(seq, my_port, client, port);
}

int aulos_seq_disconnect_from(snd_seq_t *seq, int my_port, int client, int port) {
    return snd_seq_disconnect_from(seq, my_port, client, port);
}

static void put_channel(AulosSeqInput *out, int status, int data1, int data2) {
    AulosChannelMessage *message = &out->channel[out->channel_count++];
    message->status = (unsigned char)status;
    message->data1 = (unsigned char)(data1 & 0x7F);
    message->data2 = (unsigned char)(data2 & 0x7F);
}

/// Channel events become their channel messages from the event's own fields — the MIDI 1.0 meaning alsa-lib's
/// decoder gives them, without a round trip through bytes: the sequencer's signed bend (−8192…8191) becomes
/// 0…16383; a 14-bit controller below 32 becomes its MSB and LSB controllers (one above 31 is sent as is);
/// an (N)RPN becomes its parameter-number and data-entry controllers. Returns 0 for other events.
static int convert_channel(const snd_seq_event_t *event, AulosSeqInput *out) {
    int note_channel = event->data.note.channel & 0x0F;
    int channel = event->data.control.channel & 0x0F;
    unsigned param = event->data.control.param;
    int value = event->data.control.value;
    switch (event->type) {
    case SND_SEQ_EVENT_NOTEON: put_channel(out, 0x90 | note_channel, event->data.note.note, event->data.note.velocity); break;
    case SND_SEQ_EVENT_NOTEOFF: put_channel(out, 0x80 | note_channel, event->data.note.note, event->data.note.velocity); break;
    case SND_SEQ_EVENT_KEYPRESS: put_channel(out, 0xA0 | note_channel, event->data.note.note, event->data.note.velocity); break;
    case SND_SEQ_EVENT_CONTROLLER: put_channel(out, 0xB0 | channel, (int)param, value); break;
    case SND_SEQ_EVENT_PGMCHANGE: put_channel(out, 0xC0 | channel, value, 0); break;
    case SND_SEQ_EVENT_CHANPRESS: put_channel(out, 0xD0 | channel, value, 0); break;
    case SND_SEQ_EVENT_PITCHBEND: {
        int bend = value + 8192;
        bend = bend < 0 ? 0 : bend > 16383 ? 16383 : bend;
        put_channel(out, 0xE0 | channel, bend & 0x7F, bend >> 7);
        break;
    }
    case SND_SEQ_EVENT_CONTROL14:
        if (param < 32) {
            put_channel(out, 0xB0 | channel, (int)param, value >> 7);
            put_channel(out, 0xB0 | channel, (int)param + 32, value);
        } else {
            put_channel(out, 0xB0 | channel, (int)param, value);
        }
        break;
    case SND_SEQ_EVENT_NONREGPARAM:
    case SND_SEQ_EVENT_REGPARAM: {
        int registered = event->type == SND_SEQ_EVENT_REGPARAM;
        put_channel(out, 0xB0 | channel, registered ? 101 : 99, (int)(param >> 7));
        put_channel(out, 0xB0 | channel, registered ? 100 : 98, (int)param);
        put_channel(out, 0xB0 | channel, 6, value >> 7);
        put_channel(out, 0xB0 | channel, 38, value);
        break;
    }
    default:
        return 0;
    }
    out->kind = AULOS_SEQ_CHANNEL;
    return 1;
}

snd_midi_event_t *aulos_seq_decoder_new(void) {
    snd_midi_event_t *decoder = NULL;
    // The buffer size only matters for encoding (bytes → events); decoding writes into the caller's.
    if (snd_midi_event_new(256, &decoder) < 0) return NULL;
    snd_midi_event_no_status(decoder, 1);  // every message complete, never running status
    return decoder;
}

void aulos_seq_convert(snd_midi_event_t *decoder, const snd_seq_event_t *event, AulosSeqInput *out,
                       unsigned char *bytes, long capacity) {
    memset(out, 0, sizeof *out);
    out->source_client = event->source.client;
    out->source_port = event->source.port;
    if ((event->flags & SND_SEQ_TIME_STAMP_MASK) == SND_SEQ_TIME_STAMP_REAL && event->queue != SND_SEQ_QUEUE_DIRECT) {
        out->has_timestamp = 1;
        out->timestamp_ns = (int64_t)event->time.time.tv_sec * 1000000000 + event->time.time.tv_nsec;
    }
    switch (event->type) {
    case SND_SEQ_EVENT_CLIENT_START: out->kind = AULOS_SEQ_CLIENT_START; out->client = event->data.addr.client; return;
    case SND_SEQ_EVENT_CLIENT_EXIT: out->kind = AULOS_SEQ_CLIENT_EXIT; out->client = event->data.addr.client; return;
    case SND_SEQ_EVENT_PORT_START: out->kind = AULOS_SEQ_PORT_START; break;
    case SND_SEQ_EVENT_PORT_EXIT: out->kind = AULOS_SEQ_PORT_EXIT; break;
    case SND_SEQ_EVENT_PORT_CHANGE: out->kind = AULOS_SEQ_PORT_CHANGE; break;
    case SND_SEQ_EVENT_PORT_SUBSCRIBED:
    case SND_SEQ_EVENT_PORT_UNSUBSCRIBED:
        out->kind = event->type == SND_SEQ_EVENT_PORT_SUBSCRIBED ? AULOS_SEQ_PORT_SUBSCRIBED : AULOS_SEQ_PORT_UNSUBSCRIBED;
        out->client = event->data.connect.sender.client;
        out->port = event->data.connect.sender.port;
        out->dest_client = event->data.connect.dest.client;
        out->dest_port = event->data.connect.dest.port;
        return;
    default: {
        if (convert_channel(event, out)) return;
        snd_midi_event_reset_decode(decoder);
        long length = snd_midi_event_decode(decoder, bytes, capacity, event);
        // -ENOENT: not a MIDI event (queue control, user data, …). -ENOMEM: a sysex larger than `capacity`.
        if (length == -ENOENT || length == 0) { out->kind = AULOS_SEQ_OTHER; return; }
        out->kind = AULOS_SEQ_MIDI;
        out->length = length;
        return;
    }
    }
    out->client = event->data.addr.client;
    out->port = event->data.addr.port;
}

int aulos_seq_read(snd_seq_t *seq, snd_midi_event_t *decoder, AulosSeqInput *out, unsigned char *bytes,
                   long capacity, int echo_port) {
    snd_seq_event_t *event = NULL;
    int err = snd_seq_event_input(seq, &event);
    if (err == -EAGAIN) return 0;
    if (err < 0) return err;
    aulos_seq_convert(decoder, event, out, bytes, capacity);
    if (echo_port >= 0 && (out->kind == AULOS_SEQ_MIDI || out->kind == AULOS_SEQ_CHANNEL)) {
        snd_seq_event_t copy = *event;
        snd_seq_ev_set_source(&copy, echo_port);
        snd_seq_ev_set_subs(&copy);
        snd_seq_ev_set_direct(&copy);
        snd_seq_event_output_direct(seq, &copy);  // no subscribers: -ENOENT, harmless
    }
    return 1;
}

int aulos_seq_wait(snd_seq_t *seq, int timeout_ms) {
    if (snd_seq_event_input_pending(seq, 1) > 0) return 1;
    struct pollfd fds[4];
    int count = snd_seq_poll_descriptors(seq, fds, 4, POLLIN);
    int result = poll(fds, count, timeout_ms);
    return result < 0 ? -errno : result;
}

int aulos_seq_send_at(snd_seq_t *seq, int port, int queue, int64_t queue_time_ns, const unsigned char *bytes, long length) {
    snd_midi_event_t *encoder = NULL;
    int err = snd_midi_event_new(16, &encoder);
    if (err < 0) return err;
    snd_seq_event_t event;
    snd_seq_ev_clear(&event);
    long used = snd_midi_event_encode(encoder, bytes, length, &event);
    snd_midi_event_free(encoder);
    if (used <= 0 || event.type == SND_SEQ_EVENT_NONE) return -EINVAL;
    snd_seq_ev_set_source(&event, port);
    snd_seq_ev_set_subs(&event);
    if (queue >= 0 && queue_time_ns > 0) {
        snd_seq_real_time_t time = {(unsigned)(queue_time_ns / 1000000000), (unsigned)(queue_time_ns % 1000000000)};
        snd_seq_ev_schedule_real(&event, queue, 0, &time);
    } else {
        snd_seq_ev_set_direct(&event);
    }
    return snd_seq_event_output_direct(seq, &event);
}

void aulos_seq_make_event(snd_seq_event_t *event, int type, int channel, int a, int b, const void *data, unsigned length) {
    memset(event, 0, sizeof *event);
    event->type = type;
    event->flags = SND_SEQ_TIME_STAMP_TICK | SND_SEQ_EVENT_LENGTH_FIXED;
    event->queue = SND_SEQ_QUEUE_DIRECT;
    switch (type) {
    case SND_SEQ_EVENT_NOTEON: case SND_SEQ_EVENT_NOTEOFF: case SND_SEQ_EVENT_KEYPRESS:
        snd_seq_ev_set_fixed(event);
        event->data.note.channel = channel; event->data.note.note = a; event->data.note.velocity = b;
        break;
    case SND_SEQ_EVENT_SYSEX:
        snd_seq_ev_set_sysex(event, length, (void *)data);
        break;
    default:  // controller family: channel, param, value
        event->data.control.channel = channel; event->data.control.param = a; event->data.control.value = b;
        break;
    }
}
