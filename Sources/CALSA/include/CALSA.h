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


// ---- Sequencer -------------------------------------------------------------------------------------
// The sequencer API is mostly macros and opaque structs allocated with alloca-style helpers; these shims
// give Swift plain functions and plain structs. All run on the MIDI thread or the control thread.

/// One sequencer port as `aulos devices` and the connection manager see it.
typedef struct {
    int client, port;
    char client_name[64];
    char port_name[64];
    unsigned capability;   // SND_SEQ_PORT_CAP_*
    unsigned type;         // SND_SEQ_PORT_TYPE_*
    int client_type;       // SND_SEQ_KERNEL_CLIENT or SND_SEQ_USER_CLIENT
} AulosSeqPort;

/// A channel message as its three bytes (program change and channel pressure leave data2 0).
typedef struct {
    unsigned char status, data1, data2;
} AulosChannelMessage;

/// What the MIDI thread read: channel messages (straight from the event's fields), a system message as
/// raw bytes, or a System:Announce notification.
typedef enum {
    AULOS_SEQ_NONE = 0,
    AULOS_SEQ_MIDI,             // a system message: `bytes[0..<length]` hold it (SysEx, song position, clock, …)
    AULOS_SEQ_CHANNEL,          // `channel[0..<channel_count]`: one channel message, or the controller
                                // sequence of a 14-bit controller (2) or an (N)RPN (4)
    AULOS_SEQ_CLIENT_START,     // `client`
    AULOS_SEQ_CLIENT_EXIT,      // `client`
    AULOS_SEQ_PORT_START,       // `client`, `port`
    AULOS_SEQ_PORT_EXIT,        // `client`, `port`
    AULOS_SEQ_PORT_CHANGE,      // `client`, `port`
    AULOS_SEQ_PORT_SUBSCRIBED,  // `client`:`port` (sender) → `dest_client`:`dest_port`
    AULOS_SEQ_PORT_UNSUBSCRIBED,
    AULOS_SEQ_OTHER             // nothing Aulos uses (queue control, user events, …)
} AulosSeqInputKind;

typedef struct {
    AulosSeqInputKind kind;
    int source_client, source_port;  // who sent it (MIDI: the keyboard's address)
    int client, port;                // announce: the address it is about
    int dest_client, dest_port;      // (un)subscribed: the receiver
    int has_timestamp;               // 1 if the kernel stamped the arrival on the timestamping queue
    int64_t timestamp_ns;            // queue real time of arrival (ns since the queue started)
    long length;                     // MIDI: bytes written; negative errno if the message did not fit
    int channel_count;               // CHANNEL: how many of `channel` are set
    AulosChannelMessage channel[4];
} AulosSeqInput;

/// Opens the sequencer (duplex, non-blocking) and names the client. Returns 0 or a negative errno.
int aulos_seq_open(snd_seq_t **seq, const char *client_name);

/// Creates a port; `capability` and `type` are SND_SEQ_PORT_CAP_* / SND_SEQ_PORT_TYPE_* bits. With
/// `timestamp_queue` >= 0, the kernel stamps every event arriving on the port with that queue's real time.
int aulos_seq_create_port(snd_seq_t *seq, const char *name, unsigned capability, unsigned type, int timestamp_queue);

/// Allocates and starts a queue used only to timestamp arrivals. Returns the queue id or a negative errno.
int aulos_seq_start_timestamp_queue(snd_seq_t *seq);

/// The queue's current real time in ns (for mapping arrival stamps onto CLOCK_MONOTONIC).
int aulos_seq_queue_time(snd_seq_t *seq, int queue, int64_t *ns);

/// Every port of every client (up to `capacity`); returns the count or a negative errno.
int aulos_seq_list_ports(snd_seq_t *seq, AulosSeqPort *ports, int capacity);

/// One port's description. Returns 0 or a negative errno (-ENOENT: gone).
int aulos_seq_port(snd_seq_t *seq, int client, int port, AulosSeqPort *out);

/// Subscribes `my_port` to `client:port` (or undoes it).
int aulos_seq_connect_from(snd_seq_t *seq, int my_port, int client, int port);
int aulos_seq_disconnect_from(snd_seq_t *seq, int my_port, int client, int port);

/// A MIDI-bytes decoder for sequencer events (alsa-lib's snd_midi_event, running status off), for the
/// system messages (channel messages are converted from the event's fields directly).
snd_midi_event_t *aulos_seq_decoder_new(void);

/// Converts one sequencer event into `out` (+ `bytes` for a system message). Pure: no sequencer handle
/// needed, so it is unit-tested without a kernel.
void aulos_seq_convert(snd_midi_event_t *decoder, const snd_seq_event_t *event, AulosSeqInput *out,
                       unsigned char *bytes, long capacity);

/// Reads one pending event (non-blocking) and converts it. With `echo_port` >= 0, a MIDI event is also
/// re-sent unchanged from that port to its subscribers (monitoring). Returns 1 (got one), 0 (nothing
/// pending), or a negative errno (-ENOSPC: the kernel's input buffer overflowed and events were lost).
int aulos_seq_read(snd_seq_t *seq, snd_midi_event_t *decoder, AulosSeqInput *out, unsigned char *bytes,
                   long capacity, int echo_port);

/// Waits up to `timeout_ms` for input. Returns >0 when there is some, 0 on timeout, negative errno.
int aulos_seq_wait(snd_seq_t *seq, int timeout_ms);

/// Sends a short MIDI message (1–3 bytes: clock, start, stop, continue, song position, …) from `port` to its
/// subscribers, delivered by the kernel when `queue`'s real time reaches `queue_time_ns` (at once if that
/// has passed; with `queue` < 0, at once). Returns 0 or a negative errno.
int aulos_seq_send_at(snd_seq_t *seq, int port, int queue, int64_t queue_time_ns, const unsigned char *bytes, long length);

/// Builds a sequencer event the way a sending client would (for tests): `type` is SND_SEQ_EVENT_*;
/// `a`, `b` are its fields (note: note/velocity; controller: param/value; pitch bend/pressure/program:
/// value; song position: value; sysex: `data`/`length`).
void aulos_seq_make_event(snd_seq_event_t *event, int type, int channel, int a, int b, const void *data, unsigned length);

#endif
