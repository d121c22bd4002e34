#!/usr/bin/env bash
# `make test-network-midi-vm`: scripts/network-midi-test.sh with the kernel's real `tc netem` delay, jitter and
# loss, in a QEMU VM (scripts/alsa-vm/run.sh: a stock Debian 12 kernel under TCG), because this project's
# machines run a kernel without netem (CONFIG_NET_SCH_NETEM unset) and cannot load modules; the guest loads
# sch_netem, veth, sch_prio and cls_u32. The guest chroots into the host's / (ALSA_VM_HOST_ROOT=1, shared
# read-only), so the test runs the host's bash, iproute2, python3, the pymidi venv and the aulos built here.
# Not part of `make test` (minutes, and everything is slower under emulation: latencies measured in the guest
# are inflated).
#
#   scripts/network-midi-vm.sh [NOTES [SECONDS [LOSSES [DELAY_MS [JITTER_MS [SEED]]]]]]
#   defaults:                   500    60       "0 1 5"  5          2           1   (the test's own)
#
# Builds the release aulos (swift build -c release --product aulos) unless AULOS=PATH names one. PYMIDI_PEER=FILE
# runs another copy of the sender (to check that the checks bite). Neither may be under /tmp, /run or /var/tmp:
# the guest has tmpfs there, over the host's. AULOS_DEVICE (default null) and AULOS_PLAY_OPTIONS (default
# --no-autoconnect: the guest's virmidi ports are no keyboards of the test) go to the test as they are; in the
# guest, AULOS_DEVICE=hw:Dummy is a device with a real clock (snd-dummy), so aulos places the network's events by
# their time instead of at the next slice. The guest's console goes to .build-vm/network-midi/out/console.log,
# the test's logs to .build-vm/network-midi/out/logs. Exit status: the test's (1: a check failed), or run.sh's
# (124: timed out, 125: the guest wrote no status, 2: the VM could not be set up).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
notes=${1:-500}
secs=${2:-60}
losses=${3:-"0 1 5"}
delay=${4:-5}
jitter=${5:-2}
seed=${6:-1}
for value in "$notes" "$secs" "$delay" "$jitter" "$seed" $losses; do
  [[ $value =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "network-midi-vm: '$value' is not a number" >&2; exit 2; }
done

if [ -z "${AULOS:-}" ]; then
  swift build -c release --product aulos
  AULOS=.build/release/aulos
fi
# The guest sees the host's files at their paths, so absolute, resolved ones (the pymidi venv is a symlink in
# worktrees).
aulos=$(realpath "$AULOS")
peer=$(realpath "${PYMIDI_PEER:-scripts/pymidi-peer.py}")
"$repo/.build-pymidi/venv/bin/python3" -c 'import pymidi.packets' 2>/dev/null ||
  { echo "network-midi-vm: no pymidi: run scripts/setup.sh --tests" >&2; exit 2; }
for path in "$aulos" "$peer" "$(realpath .build-pymidi)" "$repo"; do
  case $path in /tmp/* | /run/* | /var/tmp/*)
    echo "network-midi-vm: $path is under a folder the guest replaces with a tmpfs" >&2; exit 2 ;;
  esac
done

case "${AULOS_DEVICE:-}${AULOS_PLAY_OPTIONS:-}" in *"'"*)
  echo "network-midi-vm: no single quotes in AULOS_DEVICE or AULOS_PLAY_OPTIONS, please" >&2; exit 2 ;;
esac

work=.build-vm/network-midi
rm -rf "$work" && mkdir -p "$work/bin" "$work/out"
cat >"$work/bin/settings" <<EOF
REPO='$repo'
AULOS='$aulos'
PYMIDI_PEER='$peer'
NOTES='$notes'
SECS='$secs'
LOSSES='$losses'
DELAY='$delay'
JITTER='$jitter'
SEED='$seed'
AULOS_DEVICE='${AULOS_DEVICE:-null}'
AULOS_PLAY_OPTIONS='${AULOS_PLAY_OPTIONS---no-autoconnect}'
EOF

# Time: each loss rate plays SECONDS and then waits for RS, 3 s of quiet and the goodbyes (~30 s more under
# TCG); the boot and the first loading of aulos and Python over 9p take a minute or two.
count=$(wc -w <<<"$losses")
timeout_s=${ALSA_VM_TIMEOUT:-$((count * (${secs%.*} + 90) + 240))}
ALSA_VM_HOST_ROOT=1 ALSA_VM_MODULES="veth sch_netem sch_prio cls_u32" ALSA_VM_MEMORY=${ALSA_VM_MEMORY:-2048} \
  ALSA_VM_TIMEOUT=$timeout_s scripts/alsa-vm/run.sh "$work/bin" scripts/alsa-vm/network-midi-guest.sh "$work/out"
