// latency-probe: measures how long a live MIDI synth takes from a sequencer event to the sound.
//
// It plays the keyboard and listens to the speaker at once: it captures the loopback side of the
// synth's output (hw:Loopback,1,0 by default, S16_LE 48 kHz stereo), sends NOTES note-ons/note-offs
// to DEST as direct sequencer events and notes CLOCK_MONOTONIC at each send. Afterwards it finds each
// note's onset in the capture, converts that frame back to monotonic time, and prints the latency per
// note, the mean/min/max/standard deviation (jitter) and each note's pitch error in cents.
//
// Time -> frame: while capturing, it samples snd_pcm_status (monotonic htstamp + hw position) about
// once a millisecond. snd-aloop advances its position in timer ticks (4 ms at HZ=250), so a single
// sample lags the true clock by up to one tick; a least-squares line through thousands of samples
// gives the rate, and the line moved up to the samples' upper envelope gives the continuous clock.
//
// Placement relative to the synth's own arrival stamps (what "jitter-free" promises): if DEST's client
// has an echo port DEST+1 that re-sends what it receives with its kernel arrival stamp (Aulos's port 1
// does), the probe subscribes to it and records each note-on's stamp. Onsets (the first non-zero sample
// after silence: sample-exact, whatever the pitch) against stamps, fitted by a line, leave residuals in
// frames: the placement jitter itself, free of this probe's capture-clock mapping and its timer ticks.
//
// Build: cc -O2 -Wall -o latency-probe latency-probe.c -lasound -lm
// Usage: latency-probe [-n NOTES] [-c CAPTURE_PCM] [-w OUT.wav] [-W WAIT_S] [-s SEED] [-t DBFS] DEST
//   DEST      sequencer port to play, e.g. Aulos:0 or 128:0 (snd_seq_parse_address)
//   -W WAIT_S wait up to WAIT_S seconds for DEST to appear, capturing meanwhile: start the probe
//             first so the capture fixes the loopback's format (S16) before the synth opens it
// Exit status: 0 all notes found at their pitch (within 50 cents); 1 a note missing or off pitch;
// 2 setup error (device, destination, capture overrun).
#define _GNU_SOURCE
#include <alsa/asoundlib.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RATE 48000
#define CHANNELS 2
#define MAX_NOTES 200

typedef struct { double t; double pos; } Sample;  // status sample: monotonic s, capture frame
typedef struct { int key; double on, off; double stamp; } Note;  // monotonic s of the sends; echo stamp (s, 0 = none)

static snd_pcm_t *pcm;
static int16_t *audio;            // the whole capture, interleaved
static size_t frames, capacity;  // frames captured so far / allocated
static Sample *samples;
static size_t nsamples, samples_cap;

static void die(const char *what, int err) {
  fprintf(stderr, "latency-probe: %s: %s\n", what, err ? snd_strerror(err) : "failed");
  exit(2);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Reads whatever the capture holds (non-blocking) and takes one status sample. Called about every
// millisecond, so the 1 s buffer never overruns and the clock fit gets dense samples.
static void pump(void) {
  for (;;) {
    if (capacity - frames < 4096) {
      capacity = capacity ? capacity * 2 : RATE * 16;
      audio = realloc(audio, capacity * CHANNELS * sizeof *audio);
      if (!audio) die("out of memory", 0);
    }
    snd_pcm_sframes_t n = snd_pcm_readi(pcm, audio + frames * CHANNELS, 4096);
    if (n == -EAGAIN || n == 0) break;
    if (n < 0) die("capture read (overrun: the clock fit would be wrong)", (int)n);
    frames += (size_t)n;
  }
  snd_pcm_status_t *st;
  snd_pcm_status_alloca(&st);
  if (snd_pcm_status(pcm, st) < 0 || snd_pcm_status_get_state(st) != SND_PCM_STATE_RUNNING) return;
  snd_htimestamp_t ts;
  snd_pcm_status_get_htstamp(st, &ts);
  double t = ts.tv_sec + ts.tv_nsec * 1e-9;
  if (fabs(t - now()) > 0.5) return;  // not yet stamped (zero) right after the start: seen in the VM
  if (nsamples == samples_cap) {
    samples_cap = samples_cap ? samples_cap * 2 : 16384;
    samples = realloc(samples, samples_cap * sizeof *samples);
    if (!samples) die("out of memory", 0);
  }
  samples[nsamples++] = (Sample){t, (double)(frames + snd_pcm_status_get_avail(st))};
}

// Keeps capturing until the monotonic time `until`.
static void pump_until(double until) {
  while (now() < until) {
    pump();
    struct timespec d = {0, 1000000};
    nanosleep(&d, NULL);
  }
}

static int peak(size_t from, size_t to) {  // largest |sample| in frames [from, to)
  int p = 0;
  if (to > frames) to = frames;
  for (size_t i = from * CHANNELS; i < to * CHANNELS; i++) p = abs(audio[i]) > p ? abs(audio[i]) : p;
  return p;
}

// Fundamental frequency of frames [from, from+len) with YIN (de Cheveigné & Kawahara 2002): the
// cumulative-mean-normalised difference function is robust to strong harmonics, unlike zero crossings.
static double pitch(size_t from, size_t len) {
  if (from + len + RATE / 50 > frames) return 0;
  int maxlag = RATE / 50, minlag = RATE / 2000;  // 50 Hz .. 2 kHz
  double *x = malloc((len + maxlag) * sizeof *x), *d = calloc(maxlag + 2, sizeof *d), sum = 0;
  for (size_t i = 0; i < len + maxlag; i++)
    x[i] = (audio[(from + i) * 2] + audio[(from + i) * 2 + 1]) / 65536.0;
  for (int tau = 1; tau <= maxlag + 1; tau++) {
    double s = 0;
    for (size_t i = 0; i < len; i++) { double e = x[i] - x[i + tau]; s += e * e; }
    sum += s;
    d[tau] = sum > 0 ? s * tau / sum : 1;
  }
  int best = 0, lowest = minlag;
  for (int tau = minlag; tau <= maxlag; tau++) {
    if (d[tau] < d[lowest]) lowest = tau;
    if (d[tau] < 0.15) {  // first dip under the threshold, then its local minimum
      while (tau < maxlag && d[tau + 1] < d[tau]) tau++;
      best = tau;
      break;
    }
  }
  // None (an xrun's discontinuity in the window can do that): YIN's fallback, the global minimum.
  if (!best && d[lowest] < 0.5) best = lowest;
  double f = 0;
  if (best) {  // parabolic interpolation between lags
    double a = d[best - 1], b = d[best], c = d[best + 1], den = a - 2 * b + c;
    f = RATE / (best + (den != 0 ? 0.5 * (a - c) / den : 0));
  }
  free(x);
  free(d);
  return f;
}

static void write_wav(const char *path) {
  FILE *f = fopen(path, "wb");
  if (!f) { perror(path); return; }
  uint32_t data = (uint32_t)(frames * CHANNELS * 2), u32;
  uint16_t u16;
#define W32(v) (u32 = (v), fwrite(&u32, 4, 1, f))
#define W16(v) (u16 = (v), fwrite(&u16, 2, 1, f))
  fwrite("RIFF", 1, 4, f); W32(36 + data); fwrite("WAVEfmt ", 1, 8, f);
  W32(16); W16(1); W16(CHANNELS); W32(RATE); W32(RATE * CHANNELS * 2); W16(CHANNELS * 2); W16(16);
  fwrite("data", 1, 4, f); W32(data);
  fwrite(audio, 2, frames * CHANNELS, f);
  fclose(f);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int count = 20, opt, err;
  const char *device = "hw:Loopback,1,0", *wav = NULL;
  double wait_s = 0, thr_db = -40;
  unsigned seed = 1;
  while ((opt = getopt(argc, argv, "n:c:w:W:s:t:")) != -1) {
    switch (opt) {
      case 'n': count = atoi(optarg); break;
      case 'c': device = optarg; break;
      case 'w': wav = optarg; break;
      case 'W': wait_s = atof(optarg); break;
      case 's': seed = (unsigned)atoi(optarg); break;
      case 't': thr_db = atof(optarg); break;
      default: fprintf(stderr, "usage: %s [-n NOTES] [-c PCM] [-w OUT.wav] [-W WAIT_S] [-s SEED] [-t DBFS] DEST\n", argv[0]); return 2;
    }
  }
  if (optind != argc - 1 || count < 1 || count > MAX_NOTES) { fprintf(stderr, "latency-probe: one DEST, 1..%d notes\n", MAX_NOTES); return 2; }
  const char *dest = argv[optind];
  srand(seed);

  // Capture: S16_LE 48 kHz stereo, 1 s buffer, non-blocking, monotonic timestamps on every update.
  snd_pcm_hw_params_t *hw;
  snd_pcm_sw_params_t *sw;
  snd_pcm_hw_params_alloca(&hw);
  snd_pcm_sw_params_alloca(&sw);
  unsigned buffer_us = 1000000, period_us = 10000;
  if ((err = snd_pcm_open(&pcm, device, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)) < 0) die(device, err);
  if ((err = snd_pcm_hw_params_any(pcm, hw)) < 0 ||
      (err = snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED)) < 0 ||
      (err = snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_S16_LE)) < 0 ||
      (err = snd_pcm_hw_params_set_channels(pcm, hw, CHANNELS)) < 0 ||
      (err = snd_pcm_hw_params_set_rate(pcm, hw, RATE, 0)) < 0 ||
      (err = snd_pcm_hw_params_set_buffer_time_near(pcm, hw, &buffer_us, NULL)) < 0 ||
      (err = snd_pcm_hw_params_set_period_time_near(pcm, hw, &period_us, NULL)) < 0 ||
      (err = snd_pcm_hw_params(pcm, hw)) < 0)
    die("capture hw params (S16_LE/48000/2: does the playback side use another format?)", err);
  if ((err = snd_pcm_sw_params_current(pcm, sw)) < 0 ||
      (err = snd_pcm_sw_params_set_tstamp_mode(pcm, sw, SND_PCM_TSTAMP_ENABLE)) < 0 ||
      (err = snd_pcm_sw_params_set_tstamp_type(pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC)) < 0 ||
      (err = snd_pcm_sw_params(pcm, sw)) < 0)
    die("capture sw params", err);
  if ((err = snd_pcm_start(pcm)) < 0) die("capture start", err);

  // Sequencer: one output port, subscribed to DEST (a destination that ignores unsubscribed
  // senders, like a virmidi port, still gets the notes). Waits for DEST while capturing.
  snd_seq_t *seq;
  snd_seq_addr_t addr;
  if ((err = snd_seq_open(&seq, "default", SND_SEQ_OPEN_DUPLEX, 0)) < 0) die("sequencer", err);
  snd_seq_set_client_name(seq, "latency-probe");
  int port = snd_seq_create_simple_port(seq, "probe out", SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ,
                                        SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION);
  if (port < 0) die("sequencer port", port);
  // Both steps are retried: a starting client has its name a moment before its ports.
  double deadline = now() + wait_s;
  while ((err = snd_seq_parse_address(seq, &addr, dest)) < 0 ||
         (err = snd_seq_connect_to(seq, port, addr.client, addr.port)) < 0) {
    if (now() >= deadline) die(dest, err);
    pump_until(now() + 0.05);
  }
  // The echo port, if the destination has one: its events carry the destination's arrival stamps.
  int echo_in = snd_seq_create_simple_port(seq, "probe echo in", SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE,
                                           SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION);
  // Retried for a second: a client just started creates its ports one after another, so DEST may
  // exist a moment before its echo port (a destination without one costs the probe that second).
  int have_echo = 0;
  for (double until = now() + 1.0; echo_in >= 0 && !have_echo; pump_until(now() + 0.02)) {
    have_echo = snd_seq_connect_from(seq, echo_in, addr.client, addr.port + 1) >= 0;
    if (!have_echo && now() >= until) break;
  }
  printf("latency-probe: capturing %s, playing %d notes to %s (%d:%d)%s\n", device, count, dest, addr.client, addr.port,
         have_echo ? ", reading its arrival stamps from the echo port" : "");
  fflush(stdout);

  // Let the synth settle (a client just started may not play yet), then take the noise floor:
  // the onset threshold sits well above it.
  pump_until(now() + 1.5);
  size_t quiet_from = frames > RATE / 4 ? frames - RATE / 4 : 0;
  int noise = peak(quiet_from, frames), threshold = (int)(32768 * pow(10, thr_db / 20));
  if (threshold < 4 * noise) threshold = 4 * noise;

  Note notes[MAX_NOTES];
  int prev = 0;
  for (int i = 0; i < count; i++) {
    // A random gap of 200-400 ms (so the sends don't lock to the synth's period), then wait
    // until the last 50 ms were silent (the previous release has faded), at most 2 s more.
    pump_until(now() + 0.2 + 0.2 * rand() / (double)RAND_MAX);
    for (double limit = now() + 2; now() < limit && frames > RATE / 20 && peak(frames - RATE / 20, frames) >= threshold;)
      pump_until(now() + 0.005);
    int key;
    do key = 55 + rand() % 25; while (key == prev);  // G3..G5, never the same twice in a row
    prev = key;
    snd_seq_event_t ev;
    snd_seq_ev_clear(&ev);
    snd_seq_ev_set_source(&ev, port);
    snd_seq_ev_set_subs(&ev);
    snd_seq_ev_set_direct(&ev);
    snd_seq_ev_set_noteon(&ev, 0, key, 100);
    notes[i].key = key;
    notes[i].stamp = 0;
    notes[i].on = now();
    if ((err = snd_seq_event_output_direct(seq, &ev)) < 0) die("note-on", err);
    pump_until(notes[i].on + 0.15);
    snd_seq_ev_set_noteoff(&ev, 0, key, 0);
    notes[i].off = now();
    if ((err = snd_seq_event_output_direct(seq, &ev)) < 0) die("note-off", err);
    // The echoed note-on (read without blocking: only what is already there).
    while (have_echo && snd_seq_event_input_pending(seq, 1) > 0) {
      snd_seq_event_t *in = NULL;
      if (snd_seq_event_input(seq, &in) < 0 || !in) break;
      if (in->type == SND_SEQ_EVENT_NOTEON && in->data.note.velocity > 0 && in->data.note.note == key &&
          (in->flags & SND_SEQ_TIME_STAMP_MASK) == SND_SEQ_TIME_STAMP_REAL)
        notes[i].stamp = in->time.time.tv_sec + in->time.time.tv_nsec / 1e9;
    }
  }
  pump_until(now() + 0.5);
  snd_pcm_close(pcm);
  snd_seq_close(seq);
  if (wav) write_wav(wav);

  // Clock fit: pos = a*t + b by least squares (t relative to the first sample for precision), then
  // b raised to the samples' upper envelope (the 99th percentile residual, robust to a stray sample).
  if (nsamples < 100) { fprintf(stderr, "latency-probe: only %zu status samples\n", nsamples); return 2; }
  double t0 = samples[0].t, st = 0, sp = 0, stt = 0, stp = 0, n = (double)nsamples;
  for (size_t i = 0; i < nsamples; i++) {
    double t = samples[i].t - t0;
    st += t; sp += samples[i].pos; stt += t * t; stp += t * samples[i].pos;
  }
  double a = (n * stp - st * sp) / (n * stt - st * st), b = (sp - a * st) / n;
  double *res = malloc(nsamples * sizeof *res);
  for (size_t i = 0; i < nsamples; i++) res[i] = samples[i].pos - (a * (samples[i].t - t0) + b);
  qsort(res, nsamples, sizeof *res, cmp_double);
  double lift = res[(size_t)(0.99 * (nsamples - 1))], spread = res[nsamples - 1] - res[0];
  b += lift;
  printf("latency-probe: clock fit %.1f frames/s over %.1f s, %zu status samples, residual spread %.2f ms (timer tick)\n",
         a, samples[nsamples - 1].t - t0, nsamples, 1000 * spread / a);
  printf("latency-probe: noise floor peak %d, onset threshold %d (%.1f dBFS)\n", noise, threshold, 20 * log10(threshold / 32768.0));

  // Onsets: the first frame over the threshold after the note-on's frame, which must come after
  // 20 ms of silence; searched up to the next note-on (at most 1 s).
  double lat[MAX_NOTES], cents_max = 0, stamp_x[MAX_NOTES], stamp_y[MAX_NOTES];
  int stamped = 0;
  int found = 0, missing = 0, off_pitch = 0;
  for (int i = 0; i < count; i++) {
    double f_on = a * (notes[i].on - t0) + b;
    double f_end = i + 1 < count ? a * (notes[i + 1].on - t0) + b : (double)frames;
    if (f_end > f_on + RATE) f_end = f_on + RATE;
    size_t from = f_on > 0 ? (size_t)f_on : 0, onset = 0;
    const char *names[] = {"C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"};
    double expect = 440 * pow(2, (notes[i].key - 69) / 12.0);
    printf("note %2d  key %2d %-2s%d %7.2f Hz", i + 1, notes[i].key, names[notes[i].key % 12], notes[i].key / 12 - 1, expect);
    int before = peak(from > RATE / 50 ? from - RATE / 50 : 0, from);
    for (size_t k = from; k < (size_t)f_end && k < frames && !onset; k++)
      if (abs(audio[k * 2]) >= threshold || abs(audio[k * 2 + 1]) >= threshold) onset = k;
    if (!onset || before >= threshold) {
      printf("  MISSING (%s)\n", before >= threshold ? "not silent before the note-on" : "no onset");
      missing++;
      continue;
    }
    lat[found] = ((onset - b) / a + t0 - notes[i].on) * 1000;
    if (notes[i].stamp > 0) {
      // The note's first sample: back from the threshold crossing to the end of the exact silence
      // (16 all-zero frames) before it, at most 50 ms.
      size_t first = onset;
      for (size_t limit = onset > RATE / 20 ? onset - RATE / 20 : 16; first > limit && first >= 16; first--) {
        int zeros = 1;
        for (size_t z = first - 16; z < first && zeros; z++) zeros = audio[z * 2] == 0 && audio[z * 2 + 1] == 0;
        if (zeros) break;
      }
      stamp_x[stamped] = notes[i].stamp;
      stamp_y[stamped] = (double)first;
      stamped++;
    }
    double f = pitch(onset + RATE / 100, RATE / 20);  // 50 ms, past the first 10 ms of attack
    double cents = f > 0 ? 1200 * log2(f / expect) : INFINITY;
    if (fabs(cents) > 50) off_pitch++;
    if (fabs(cents) > cents_max) cents_max = fabs(cents);
    printf("  latency %7.2f ms  pitch %7.2f Hz  %+7.1f cents%s\n", lat[found], f, cents, fabs(cents) > 50 ? "  OFF PITCH" : "");
    found++;
  }
  if (found) {
    double mean = 0, var = 0, lo = lat[0], hi = lat[0];
    for (int i = 0; i < found; i++) { mean += lat[i]; lo = fmin(lo, lat[i]); hi = fmax(hi, lat[i]); }
    mean /= found;
    for (int i = 0; i < found; i++) var += (lat[i] - mean) * (lat[i] - mean);
    double sd = found > 1 ? sqrt(var / (found - 1)) : 0;
    printf("latency-probe: %d notes, %d missing, %d off pitch; latency mean %.2f ms, min %.2f, max %.2f, jitter (std dev) %.2f ms; pitch error max %.1f cents\n",
           count, missing, off_pitch, mean, lo, hi, sd, cents_max);
    // Onset frame against arrival stamp: a line (the device's rate and the constant latency); what is
    // left is the placement's jitter, in frames.
    double stamp_sd = -1, stamp_max = -1;
    if (stamped >= 3) {
      double x0 = stamp_x[0], sx = 0, sy = 0, sxx = 0, sxy = 0, m = stamped;
      for (int i = 0; i < stamped; i++) {
        double x = stamp_x[i] - x0;
        sx += x; sy += stamp_y[i]; sxx += x * x; sxy += x * stamp_y[i];
      }
      double slope = (m * sxy - sx * sy) / (m * sxx - sx * sx), icpt = (sy - slope * sx) / m, ss = 0;
      stamp_max = 0;
      for (int i = 0; i < stamped; i++) {
        double r = stamp_y[i] - (icpt + slope * (stamp_x[i] - x0));
        printf("stamp %2d  arrival %.6f s  first sample %8.0f  residual %+8.2f frames\n", i + 1, stamp_x[i], stamp_y[i], r);
        ss += r * r;
        if (fabs(r) > stamp_max) stamp_max = fabs(r);
      }
      stamp_sd = sqrt(ss / (stamped - 2));
      printf("latency-probe: onset against the synth's arrival stamps (%d notes): rate %.1f frames/s, residual std dev %.2f frames, max %.2f frames\n",
             stamped, slope, stamp_sd, stamp_max);
    }
    // One key=value line for scripts.
    printf("RESULT notes=%d missing=%d off_pitch=%d mean_ms=%.2f min_ms=%.2f max_ms=%.2f jitter_ms=%.2f max_cents=%.1f stamped=%d stamp_jitter_frames=%.2f stamp_max_frames=%.2f\n",
           count, missing, off_pitch, mean, lo, hi, sd, cents_max, stamped, stamp_sd, stamp_max);
  } else {
    printf("latency-probe: %d notes, all missing\nRESULT notes=%d missing=%d\n", count, count, count);
  }
  return missing || off_pitch ? 1 : 0;
}
