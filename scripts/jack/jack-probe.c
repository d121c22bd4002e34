// jack-probe: the JACK tests' other end, a plain C JACK client (cc -O2 jack-probe.c -ljack).
//
//   jack-probe capture NAME SECONDS FILE [SOURCE_1 SOURCE_2]
//       Two input ports; connects SOURCE_1/2 (default aulos's out_1/out_2 are given by the test) and writes
//       every frame of every cycle from activation, interleaved float32 stereo, for SECONDS. Prints
//       "buffer N" (the buffer size at the start), "cycles C" and "first frame F" (the server's frame time
//       of the first frame written).
//   jack-probe send NAME SECONDS DESTINATION CYCLE:FRAME:STATUS:DATA1:DATA2 ...
//       A MIDI output port connected to DESTINATION ("-": left for another client to connect); each event
//       is written at FRAME of the CYCLE-th cycle after the connection is made (cycle 0 = the first cycle
//       that sees it). Prints "sent E" and "first event frame F" (the server's frame time the first event
//       written was due at).
//   jack-probe tone NAME SECONDS
//       Two output ports (out_1, out_2) playing a 1 kHz sine at half scale, left and right alike.
//   jack-probe transport NAME SECONDS [--master BPM] [--start] [--stop] [--locate FRAME]
//       --master: timebase master at BPM in 4/4; --start/--stop: starts or stops JACK's transport;
//       --locate: moves it. At
//       the end prints the transport: "rolling R frame F bbt BAR|BEAT|TICK bpm B valid V".
// Exit status 0, or 1 with a line on stderr.
#include <jack/jack.h>
#include <jack/midiport.h>
#include <jack/transport.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_EVENTS 64

static jack_client_t *client;
static jack_port_t *ports[2];
static jack_port_t *midi_out;
static FILE *output;
static atomic_long cycles;
static atomic_int connected;
static long first_cycle = -1;
static struct { long cycle; unsigned frame; unsigned char bytes[3]; } events[MAX_EVENTS];
static int event_count;
static atomic_int sent;
// Server frame times (jack_last_frame_time: the first frame of the cycle being processed), or -1.
static atomic_long first_captured_frame = -1;
// Capture: cycles whose first frame was not where the last one ended (the server skipped this client or the
// whole graph for a cycle), and the frames missing between them. The file then lacks those frames.
static long next_captured_frame = -1;
static atomic_long capture_gaps;
static atomic_long capture_gap_frames;
static atomic_long first_event_frame = -1;
static double master_bpm;

static int capture(jack_nframes_t frames, void *arg) {
    (void)arg;
    float *left = jack_port_get_buffer(ports[0], frames), *right = jack_port_get_buffer(ports[1], frames);
    float interleaved[2 * 8192];
    for (jack_nframes_t i = 0; i < frames && i < 8192; i++) {
        interleaved[2 * i] = left[i];
        interleaved[2 * i + 1] = right[i];
    }
    long now = (long)jack_last_frame_time(client);
    if (atomic_load(&first_captured_frame) < 0) atomic_store(&first_captured_frame, now);
    if (next_captured_frame >= 0 && now != next_captured_frame) {
        atomic_fetch_add(&capture_gaps, 1);
        atomic_fetch_add(&capture_gap_frames, now - next_captured_frame);
    }
    next_captured_frame = now + (long)frames;
    fwrite(interleaved, sizeof(float) * 2, frames, output);  // a test client: stdio is fine here
    atomic_fetch_add(&cycles, 1);
    return 0;
}

static int send_midi(jack_nframes_t frames, void *arg) {
    (void)arg;
    void *buffer = jack_port_get_buffer(midi_out, frames);
    jack_midi_clear_buffer(buffer);
    if (!atomic_load(&connected)) {
        // Destination "-": wait until someone connects the port (aulos connecting it by name).
        if (jack_port_connected(midi_out) > 0) atomic_store(&connected, 1);
        else return 0;
    }
    if (first_cycle < 0) first_cycle = atomic_load(&cycles);
    long cycle = atomic_load(&cycles) - first_cycle;
    for (int i = 0; i < event_count; i++) {
        if (events[i].cycle == cycle && events[i].frame < frames) {
            if (jack_midi_event_write(buffer, events[i].frame, events[i].bytes, 3) == 0) {
                if (atomic_fetch_add(&sent, 1) == 0)
                    atomic_store(&first_event_frame, (long)jack_last_frame_time(client) + (long)events[i].frame);
            }
        }
    }
    atomic_fetch_add(&cycles, 1);
    return 0;
}

static double phase;

static int tone(jack_nframes_t frames, void *arg) {
    (void)arg;
    float *left = jack_port_get_buffer(ports[0], frames), *right = jack_port_get_buffer(ports[1], frames);
    double step = 2 * M_PI * 1000.0 / jack_get_sample_rate(client);
    for (jack_nframes_t i = 0; i < frames; i++) {
        left[i] = right[i] = (float)(0.5 * sin(phase));
        phase = fmod(phase + step, 2 * M_PI);
    }
    atomic_fetch_add(&cycles, 1);
    return 0;
}

static int idle(jack_nframes_t frames, void *arg) {
    (void)frames;
    (void)arg;
    atomic_fetch_add(&cycles, 1);
    return 0;
}

static void timebase(jack_transport_state_t state, jack_nframes_t frames, jack_position_t *pos, int new_pos, void *arg) {
    (void)state, (void)frames, (void)new_pos, (void)arg;
    double beats = (double)pos->frame / pos->frame_rate * master_bpm / 60.0;
    pos->valid = JackPositionBBT;
    pos->beats_per_bar = 4;
    pos->beat_type = 4;
    pos->ticks_per_beat = 1920;
    pos->beats_per_minute = master_bpm;
    pos->bar = (int32_t)(beats / 4) + 1;
    pos->beat = (int32_t)fmod(beats, 4) + 1;
    pos->tick = (int32_t)((beats - floor(beats)) * 1920);
    pos->bar_start_tick = (pos->bar - 1) * 4 * 1920.0;
}

static void fail(const char *what) {
    fprintf(stderr, "jack-probe: %s\n", what);
    exit(1);
}

static void open_client(const char *name) {
    jack_status_t status;
    client = jack_client_open(name, JackNoStartServer, &status);
    if (!client) fail("cannot connect to the JACK server");
}

int main(int argc, char **argv) {
    if (argc < 4) fail("usage: jack-probe capture|send|tone|transport NAME SECONDS ...");
    const char *mode = argv[1];
    double seconds = atof(argv[3]);
    open_client(argv[2]);
    if (strcmp(mode, "capture") == 0) {
        if (argc < 5) fail("capture needs a FILE");
        output = fopen(argv[4], "wb");
        if (!output) fail("cannot write the capture file");
        ports[0] = jack_port_register(client, "in_1", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
        ports[1] = jack_port_register(client, "in_2", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
        jack_set_process_callback(client, capture, NULL);
        printf("buffer %u\n", jack_get_buffer_size(client));
        if (jack_activate(client)) fail("cannot activate");
        for (int i = 0; i < 2 && argc >= 7; i++) {
            if (jack_connect(client, argv[5 + i], jack_port_name(ports[i]))) fail("cannot connect a source");
        }
    } else if (strcmp(mode, "send") == 0) {
        if (argc < 5) fail("send needs a DESTINATION");
        for (int i = 5; i < argc && event_count < MAX_EVENTS; i++) {
            unsigned s, d1, d2;
            if (sscanf(argv[i], "%ld:%u:%u:%u:%u", &events[event_count].cycle, &events[event_count].frame, &s, &d1, &d2) != 5)
                fail("events are CYCLE:FRAME:STATUS:DATA1:DATA2");
            events[event_count].bytes[0] = s, events[event_count].bytes[1] = d1, events[event_count].bytes[2] = d2;
            event_count++;
        }
        midi_out = jack_port_register(client, "midi_out", JACK_DEFAULT_MIDI_TYPE, JackPortIsOutput, 0);
        jack_set_process_callback(client, send_midi, NULL);
        if (jack_activate(client)) fail("cannot activate");
        if (strcmp(argv[4], "-") != 0) {
            if (jack_connect(client, jack_port_name(midi_out), argv[4])) fail("cannot connect to the destination");
            atomic_store(&connected, 1);
        }
    } else if (strcmp(mode, "tone") == 0) {
        ports[0] = jack_port_register(client, "out_1", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
        ports[1] = jack_port_register(client, "out_2", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
        jack_set_process_callback(client, tone, NULL);
        if (jack_activate(client)) fail("cannot activate");
    } else if (strcmp(mode, "transport") == 0) {
        jack_set_process_callback(client, idle, NULL);
        if (jack_activate(client)) fail("cannot activate");
        for (int i = 4; i < argc; i++) {
            if (strcmp(argv[i], "--master") == 0 && i + 1 < argc) {
                master_bpm = atof(argv[++i]);
                if (jack_set_timebase_callback(client, 0, timebase, NULL)) fail("cannot become timebase master");
            } else if (strcmp(argv[i], "--start") == 0) {
                jack_transport_start(client);
            } else if (strcmp(argv[i], "--stop") == 0) {
                jack_transport_stop(client);
            } else if (strcmp(argv[i], "--locate") == 0 && i + 1 < argc) {
                jack_transport_locate(client, (jack_nframes_t)atol(argv[++i]));
            } else {
                fail("transport takes --master BPM, --start, --stop, --locate FRAME");
            }
        }
    } else {
        fail("the mode is capture, send, tone or transport");
    }
    usleep((useconds_t)(seconds * 1e6));
    if (strcmp(mode, "transport") == 0) {
        jack_position_t pos;
        jack_transport_state_t state = jack_transport_query(client, &pos);
        printf("rolling %d frame %u bbt %d|%d|%d bpm %.3f valid %d\n", state == JackTransportRolling, pos.frame, pos.bar,
               pos.beat, pos.tick, pos.beats_per_minute, (pos.valid & JackPositionBBT) != 0);
    }
    jack_deactivate(client);
    if (strcmp(mode, "capture") == 0) {
        fclose(output);
        printf("cycles %ld\nfirst frame %ld\ngaps %ld (%ld frames)\n", atomic_load(&cycles),
               atomic_load(&first_captured_frame), atomic_load(&capture_gaps), atomic_load(&capture_gap_frames));
    }
    if (strcmp(mode, "send") == 0) printf("sent %d\nfirst event frame %ld\n", atomic_load(&sent), atomic_load(&first_event_frame));
    jack_client_close(client);
    return 0;
}
