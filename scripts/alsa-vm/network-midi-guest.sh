#!/bin/sh
# Guest script (scripts/alsa-vm/run.sh with ALSA_VM_HOST_ROOT=1; host side: scripts/network-midi-vm.sh): runs
# scripts/network-midi-test.sh with the guest kernel's own netem (sch_netem, veth, sch_prio and cls_u32 loaded
# by run.sh), chrooted into the host's / at $HOST, so the host's bash, iproute2, python3, pymidi venv and the
# aulos under test run as they are, without being copied into the initramfs. $BIN/settings (written by the
# host side) says what to run; the test's output goes to the console (OUT/console.log on the host), its kept
# logs, without the recordings, to OUT/logs.
set -u
# REPO, AULOS, PYMIDI_PEER, AULOS_DEVICE, AULOS_PLAY_OPTIONS, and the test's arguments NOTES SECS LOSSES DELAY
# JITTER SEED.
# shellcheck source=/dev/null  # written by the host side
. "$BIN/settings"
# A clean environment: only what the test reads. NETEM=1: fail rather than fall back to the relay.
chroot "$HOST" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  LANG=C.UTF-8 NETEM=1 KEEP=1 AULOS="$AULOS" PYMIDI_PEER="$PYMIDI_PEER" AULOS_DEVICE="$AULOS_DEVICE" \
  AULOS_PLAY_OPTIONS="$AULOS_PLAY_OPTIONS" \
  /bin/bash "$REPO/scripts/network-midi-test.sh" "$NOTES" "$SECS" "$LOSSES" "$DELAY" "$JITTER" "$SEED"
status=$?
# KEEP=1 left the test's folder in the guest's /tmp (a tmpfs, gone at power-off): the logs and reports to OUT;
# not the WAVs (tens of MB each, through 9p) nor the control socket.
for dir in "$HOST"/tmp/aulos-network-midi.*; do
  [ -d "$dir" ] || continue
  (cd "$dir" && find . -type f ! -name '*.wav') | while read -r file; do
    mkdir -p "$OUT/logs/${file%/*}" && cp "$dir/$file" "$OUT/logs/$file"
  done
done
exit "$status"
