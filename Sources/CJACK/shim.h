// JACK's client API (libjack-jackd2-dev, or PipeWire's libjack through pw-jack): the process callback,
// ports, JACK MIDI and the transport.
#include <jack/jack.h>
#include <jack/midiport.h>
#include <jack/transport.h>

// jack_client_open is variadic (a server name may follow), which Swift cannot call: this fixes the
// arguments to the three every caller here uses.
static inline jack_client_t *aulos_jack_client_open(const char *name, jack_options_t options, jack_status_t *status) {
    return jack_client_open(name, options, status);
}
