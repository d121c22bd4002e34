// lilv (LV2 plugin discovery and instantiation) and the LV2 specification's URIs.
#include <lilv/lilv.h>
#include <lv2/core/lv2.h>
#include <lv2/atom/atom.h>
#include <lv2/midi/midi.h>
#include <lv2/urid/urid.h>
#include <lv2/options/options.h>
#include <lv2/buf-size/buf-size.h>
#include <lv2/worker/worker.h>
#include <lv2/log/log.h>
#include <lv2/state/state.h>
#include <lv2/port-props/port-props.h>
