#!/usr/bin/env bash
# Runs a command with a real-time-paced ALSA playback PCM named `aulosjack`, on a machine with no
# sound card.
#
#   scripts/jack-pacing.sh [--period FRAMES] [--rate HZ] [--no-realtime] [--log FILE] -- COMMAND [ARGS...]
#
# Why: with no /dev/snd the only PCMs alsa-lib offers are `null` and `file`, and both accept audio as
# fast as it is written, so nothing can test or benchmark "keeps up with real time". JACK's `dummy`
# backend runs a timer-driven graph at the sample rate, and the ALSA `jack` PCM (libasound2-plugins)
# blocks writers on that graph, which gives a PCM that consumes exactly RATE frames per second.
#
# Inside COMMAND:
#   aulosjack      plug -> jack: any format, channel count and rate (converted in alsa-lib)
#   aulosjack_raw  the jack PCM itself: FLOAT_LE, 2 channels, the server's rate only, no conversion
#   Periods are whole multiples of the JACK period, from 1x to 64x, with 2..64 periods per buffer;
#   other requests are rounded (16 or 32 -> 64, 96 or 100 -> 128 with --period 64), so --period is
#   the smallest period a test can get.
#   An underrun shows up as -EPIPE from snd_pcm_writei (state XRUN), like a real card.
#   Environment: ALSA_CONFIG_PATH (points at our config), JACK_DEFAULT_SERVER (a private server name),
#   JACK_NO_START_SERVER=1, AULOS_JACK_PCM=aulosjack, AULOS_JACK_PERIOD, AULOS_JACK_RATE.
#
# Exits with COMMAND's status. Warns on stderr if jackd itself reported xruns (its timer woke late),
# because then the pacing during the run was not exact.
set -euo pipefail

period=64
rate=48000
realtime=1
log_copy=""

usage() {
  echo "usage: scripts/jack-pacing.sh [--period FRAMES] [--rate HZ] [--no-realtime] [--log FILE] -- COMMAND [ARGS...]" >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case "$1" in
    --period) period="${2:?--period needs a value}"; shift 2 ;;
    --period=*) period="${1#*=}"; shift ;;
    --rate) rate="${2:?--rate needs a value}"; shift 2 ;;
    --rate=*) rate="${1#*=}"; shift ;;
    --no-realtime) realtime=0; shift ;;
    --log) log_copy="${2:?--log needs a file}"; shift 2 ;;
    --log=*) log_copy="${1#*=}"; shift ;;
    --) shift; break ;;
    -h|--help) usage ;;
    *) echo "jack-pacing: unknown option '$1'" >&2; usage ;;
  esac
done
[ $# -gt 0 ] || usage
case "$period$rate" in *[!0-9]*) echo "jack-pacing: --period and --rate take whole numbers" >&2; exit 2 ;; esac
# The dummy driver accepts any period, but with -p 100 it logged 5 xruns in its first 2 s with no
# client at all, and JACK clients commonly assume powers of two. Below 16 the timer cannot keep up.
if [ $((period & (period - 1))) -ne 0 ] || [ "$period" -lt 16 ]; then
  echo "jack-pacing: --period must be a power of two, 16 or more (got $period)" >&2
  exit 2
fi

# --- packages -------------------------------------------------------------------------------------
# jackd2 brings jackd and the jack_* tools; libasound2-plugins brings ALSA's `jack` PCM type.
plugin_installed() {
  compgen -G '/usr/lib/*/alsa-lib/libasound_module_pcm_jack.so' >/dev/null ||
    [ -e /usr/lib/alsa-lib/libasound_module_pcm_jack.so ]
}
if ! command -v jackd >/dev/null || ! command -v jack_lsp >/dev/null || ! plugin_installed; then
  if [ "$(id -u)" -eq 0 ]; then
    as_root=()
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    echo "jack-pacing: jackd2 and libasound2-plugins are missing; run as root or with passwordless sudo" >&2
    exit 1
  fi
  echo "jack-pacing: installing jackd2 libasound2-plugins" >&2
  # jackd2's postinst asks (debconf) whether to grant the audio group realtime limits; noninteractive
  # takes the default "no", which is fine: we run jackd as the calling user.
  export DEBIAN_FRONTEND=noninteractive
  install=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends jackd2 libasound2-plugins)
  # A fresh machine has empty package lists, and install then finds nothing: update once and retry.
  if ! "${install[@]}" >&2; then
    "${as_root[@]}" apt-get update -qq >&2
    "${install[@]}" >&2
  fi
fi

alsa_conf=/usr/share/alsa/alsa.conf
if [ ! -r "$alsa_conf" ]; then
  echo "jack-pacing: $alsa_conf not found (is libasound2 installed?)" >&2
  exit 1
fi

# --- jackd ----------------------------------------------------------------------------------------
workdir="$(mktemp -d "${TMPDIR:-/tmp}/aulos-jack.XXXXXX")"
# A private server name so parallel runs (make -j, two worktrees) and any user's own default JACK
# server never meet; clients find it through JACK_DEFAULT_SERVER.
server="aulos-pacing-$$"
jack_log="$workdir/jackd.log"
jack_pid=""

cleanup() {
  if [ -n "$jack_pid" ] && kill -0 "$jack_pid" 2>/dev/null; then
    kill -TERM "$jack_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$jack_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$jack_pid" 2>/dev/null || true
    wait "$jack_pid" 2>/dev/null || true
  fi
  # jackd's log is the only record of server-side xruns; keep it when asked, since workdir goes away.
  if [ -n "$log_copy" ] && [ -f "$jack_log" ]; then cp "$jack_log" "$log_copy" || true; fi
  rm -rf "$workdir"
}
cmd_pid=""
trap cleanup EXIT
# Bash runs a trap only after the foreground command returns, so a TERM from a test runner's timeout
# would leave COMMAND and jackd running; COMMAND runs in the background (see below) and is passed the
# signal. It gets TERM even for INT: a background job of a non-interactive shell ignores SIGINT.
on_signal() {
  if [ -n "$cmd_pid" ]; then kill -TERM "$cmd_pid" 2>/dev/null || true; wait "$cmd_pid" 2>/dev/null || true; fi
  exit "$1"
}
trap 'on_signal 130' INT
trap 'on_signal 143' TERM

# Without this, a client that starts before the server (or after it died) would silently spawn a
# default jackd with whatever ~/.jackdrc says, instead of failing.
export JACK_NO_START_SERVER=1
export JACK_DEFAULT_SERVER="$server"

# Careful: jackd's own -r means --no-realtime, while the -r after `-d dummy` is the driver's rate.
# jackd -R does not fail without realtime rights (no CAP_SYS_NICE / rtprio limit 0): it logs
# "Cannot use real-time scheduling" and runs SCHED_OTHER, where the dummy timer wakes late under load
# and the rate falls short (46,700 frames/s measured as non-root vs 48,000 as root).
if [ "$realtime" -eq 1 ]; then rt_flag=(-R); else rt_flag=(--no-realtime); fi
jackd -n "$server" "${rt_flag[@]}" -d dummy -r "$rate" -p "$period" -P 2 -C 2 >"$jack_log" 2>&1 &
jack_pid=$!

# jack_wait -c exits 0 even when no server runs, so poll jack_lsp, whose status is meaningful; stop
# early if jackd has already died (bad option, stale socket) instead of waiting out the timeout.
up=0
for _ in $(seq 100); do
  if ! kill -0 "$jack_pid" 2>/dev/null; then break; fi
  if jack_lsp -s "$server" >/dev/null 2>&1; then up=1; break; fi
  sleep 0.1
done
if [ "$up" -ne 1 ]; then
  echo "jack-pacing: jackd did not come up within 10 s; its log:" >&2
  cat "$jack_log" >&2
  exit 1
fi
if grep -q "Cannot use real-time scheduling" "$jack_log"; then
  echo "jack-pacing: warning: jackd runs without SCHED_FIFO here; pacing may fall behind real time" >&2
fi

# The dummy backend names its sinks system:playback_N (and sources system:capture_N); check rather
# than assume, since a different JACK build could name them otherwise.
ports="$(jack_lsp -s "$server" 2>/dev/null)"
for port in system:playback_1 system:playback_2; do
  if ! grep -qx "$port" <<<"$ports"; then
    echo "jack-pacing: jackd offers no $port; ports are:" >&2
    echo "$ports" >&2
    exit 1
  fi
done

# --- ALSA configuration ---------------------------------------------------------------------------
# ALSA_CONFIG_PATH replaces alsa.conf entirely, so include it first (or whatever the caller's
# ALSA_CONFIG_PATH already listed, colon-separated) to keep `null`, `file`, `plug`, ~/.asoundrc etc.
# working. `!` overrides a same-named PCM from an included file instead of merging into it.
alsa_config="$workdir/asound.conf"
{
  echo "# Written by scripts/jack-pacing.sh for JACK server '$server'"
  IFS=: read -r -a bases <<<"${ALSA_CONFIG_PATH:-$alsa_conf}"
  for base in "${bases[@]}"; do [ -n "$base" ] && echo "<$base>"; done
  cat <<EOF
pcm.!aulosjack_raw {
  type jack
  playback_ports { 0 system:playback_1 1 system:playback_2 }
  capture_ports { 0 system:capture_1 1 system:capture_2 }
}
pcm.!aulosjack {
  type plug
  slave.pcm "aulosjack_raw"
}
EOF
} >"$alsa_config"

export ALSA_CONFIG_PATH="$alsa_config"
export AULOS_JACK_PCM=aulosjack AULOS_JACK_PERIOD="$period" AULOS_JACK_RATE="$rate"

# --- run ------------------------------------------------------------------------------------------
# Not exec: jackd must be stopped and the temporary files removed afterwards. `<&0` keeps our stdin
# (a background job would otherwise read /dev/null); `wait` returns early when a trapped signal comes.
"$@" <&0 &
cmd_pid=$!
status=0
wait "$cmd_pid" || status=$?
cmd_pid=""

xruns="$(grep -c 'XRun' "$jack_log" || true)"
if [ "${xruns:-0}" -gt 0 ]; then
  echo "jack-pacing: warning: jackd logged $xruns xrun line(s) during the run (late timer or a slow client):" >&2
  grep -m 5 'XRun' "$jack_log" >&2 || true
fi
exit "$status"
