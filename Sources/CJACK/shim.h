// JACK's client API (libjack-jackd2-dev, or PipeWire's libjack through pw-jack): the process callback,
// ports, JACK MIDI and the transport.
#include <jack/jack.h>
#include <jack/midiport.h>
#include <jack/transport.h>

// jack_client_open is variadic (a server name follows JackServerName), which Swift cannot call: this fixes
// its arguments. A NULL server is the default one (JACK_DEFAULT_SERVER, or "default").
static inline jack_client_t *aulos_jack_client_open(const char *name, jack_options_t options, jack_status_t *status,
                                                    const char *server) {
    if (server) return jack_client_open(name, (jack_options_t)(options | JackServerName), status, server);
    return jack_client_open(name, options, status);
}
