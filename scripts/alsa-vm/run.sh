#!/usr/bin/env bash
# Runs a test script inside a small QEMU virtual machine that has a real ALSA kernel stack.
#
# Why: development and CI machines have no sound card, no /dev/snd and cannot load kernel modules.
# A stock Debian 12 kernel booted under qemu-system-x86_64 (TCG) can: it loads snd-aloop (loopback
# PCM: what is played on hw:Loopback,0,N is captured on hw:Loopback,1,N), snd-dummy, snd-seq,
# snd-seq-dummy ("Midi Through", client 14) and snd-virmidi (card VirMIDI, card 2 here, so clients 24..27: 16 + 4 × card).
# Background and measurements: /work/shared/reference/alsa-vm.md.
#
# Usage:
#   scripts/alsa-vm/run.sh BINARY_DIR GUEST_SCRIPT OUTDIR
#   scripts/alsa-vm/run.sh --deps      (only install the missing host packages)
#
#   BINARY_DIR    host folder shared read-only into the guest at /bin-under-test (9p). Put the binaries
#                 under test there (e.g. a copy of .build/release/aulos) and any data they need
#                 (SoundFonts, WAVs, MIDI files). Every ELF file in it gets its shared libraries (ldd,
#                 the full closure) copied into the initramfs, so dynamically linked binaries run.
#   GUEST_SCRIPT  a /bin/sh (busybox) script run inside the guest as root, cwd /tmp, with
#                 OUT=/out and BIN=/bin-under-test in the environment. Its exit status becomes
#                 this script's exit status. Tools available: busybox, aplay, arecord, aplaymidi,
#                 arecordmidi, aseqdump, amidi, aconnect, amixer, alsactl; /usr/share/alsa is there.
#   OUTDIR        host folder shared read-write at /out (9p). The guest writes results there; this
#                 script also writes OUTDIR/console.log (the whole serial console) and OUTDIR/status.
#
# Example (a later test of the synth):
#   mkdir -p /tmp/vmbin && cp .build/release/aulos soundfonts/Some.sf2 /tmp/vmbin/
#   cat > /tmp/play-test.sh <<'EOF'
#   arecord -D hw:Loopback,1,0 -f S16_LE -r 48000 -c 2 -d 5 --buffer-time=2000000 /tmp/capture.wav &
#   sleep 0.5
#   /bin-under-test/aulos play --device hw:Loopback,0,0 --duration 3 ... || exit 1
#   wait && cp /tmp/capture.wav /out/
#   EOF
#   (Record into the guest's /tmp and copy at the end: writing a real-time capture straight into the
#   9p share /out can stall arecord into an overrun when the host is busy. The loopback's two sides
#   must agree on rate/format/channels: whichever side opens first fixes them.)
#   scripts/alsa-vm/run.sh /tmp/vmbin /tmp/play-test.sh /tmp/vmout && sox /tmp/vmout/capture.wav -n stat
#
# Environment (all optional):
#   ALSA_VM_TIMEOUT      seconds before qemu is killed (default 300); exit status 124 then.
#   ALSA_VM_MEMORY       guest RAM in MB (default 1024); the initramfs lives in it.
#   ALSA_VM_CPUS         guest CPUs (default 2).
#   ALSA_VM_CACHE        cache folder (default REPO/.build-vm, gitignored by '.build-*/').
#   ALSA_VM_KERNEL_PKG   kernel package, e.g. linux-image-6.1.0-56-amd64 (default: whatever
#                        linux-image-amd64 depends on the first time; then the cached one is reused).
#   ALSA_VM_MODULES      extra kernel modules to load after the sound ones (space separated).
#   ALSA_VM_EXTRA_FILES  extra host files or folders copied into the initramfs at the same path
#                        (e.g. /usr/share/sounds/sf2/TimGM6mb.sf2); ELF files get their libraries.
#   ALSA_VM_HOST_ROOT    1: the host's whole / shared read-only (9p) at /host, with the guest's own proc,
#                        sys, dev, dev/pts, dev/shm and tmpfs on tmp, run and var/tmp mounted inside it, and
#                        OUTDIR mounted read-write at its host path inside it; GUEST_SCRIPT gets HOST=/host.
#                        `chroot /host CMD` then runs the host's own programs (bash, iproute2, python3, a
#                        venv, a dynamically linked aulos) on the guest's kernel without copying them into
#                        the initramfs. Files under /host are the host's as they are now: read-only, and
#                        cached by the guest (do not change them during a run); the host's tmp, run and
#                        var/tmp are not seen (the guest's tmpfs are over them).
#
# Host requirements: Debian 12 (bookworm) x86_64. Missing packages are installed with apt-get (as root,
# or through 'sudo -n'). /dev/kvm is not used on purpose: on these machines it hangs a stock kernel.
set -euo pipefail

log() { echo "alsa-vm: $*" >&2; }
die() { log "error: $*"; exit 2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

deps_only=false
if [ "${1:-}" = "--deps" ]; then deps_only=true
else
  [ $# -eq 3 ] || { sed -n '10,50p' "$0" >&2; die "expected 3 arguments: BINARY_DIR GUEST_SCRIPT OUTDIR"; }
  [ -d "$1" ] || die "BINARY_DIR '$1' is not a folder"
  [ -f "$2" ] || die "GUEST_SCRIPT '$2' is not a file"
  mkdir -p "$3"
  # qemu's -virtfs needs absolute paths.
  bin_dir=$(realpath "$1")
  guest_script=$(realpath "$2")
  out_dir=$(realpath "$3")
fi

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(cd "$script_dir/../.." && pwd)
cache=${ALSA_VM_CACHE:-$repo_dir/.build-vm}
timeout_s=${ALSA_VM_TIMEOUT:-300}
memory=${ALSA_VM_MEMORY:-1024}
cpus=${ALSA_VM_CPUS:-2}
t_start=$(now)

# ---------------------------------------------------------------------------------------------------
# 1. Host packages. Installed only if missing, so a warm machine does not touch apt at all.
host_packages=(qemu-system-x86 qemu-utils busybox-static alsa-utils kmod cpio sox)
missing=()
for p in "${host_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then as_root=(); else as_root=(sudo -n); fi
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine has empty apt lists: 'apt-get update' once, only if the first attempt fails.
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    { "${as_root[@]}" apt-get update -qq && "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
    die "could not install ${missing[*]}"
fi
# modprobe/depmod live in /usr/sbin, which a non-root PATH may lack.
export PATH="$PATH:/usr/sbin:/sbin"
$deps_only && exit 0

mkdir -p "$cache"
# Several runs may share the cache: serialise kernel download and base-initramfs build.
exec 9>"$cache/lock"
flock 9

# ---------------------------------------------------------------------------------------------------
# 2. Kernel and modules: a stock Debian kernel package, unpacked (not installed) into the cache.
t_kernel=$(now)
kernel_pkg=${ALSA_VM_KERNEL_PKG:-}
if [ -z "$kernel_pkg" ] && [ -f "$cache/kernel/current" ]; then
  kernel_pkg=$(cat "$cache/kernel/current")
fi
if [ -z "$kernel_pkg" ]; then
  kernel_pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/ { print $2; exit }')
  if [ -z "$kernel_pkg" ]; then
    if [ "$(id -u)" -eq 0 ]; then apt-get update -qq; else sudo -n apt-get update -qq; fi
    kernel_pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ { print $2; exit }')
  fi
  [ -n "$kernel_pkg" ] || die "cannot tell which kernel package linux-image-amd64 depends on"
fi
kdir=$cache/kernel/$kernel_pkg
if [ ! -f "$kdir/ready" ]; then
  log "fetching $kernel_pkg"
  rm -rf "$kdir" && mkdir -p "$kdir/deb"
  # 'apt-get download' needs no root; as root it warns about an unsandboxed download (harmless).
  (cd "$kdir/deb" && apt-get download -q "$kernel_pkg" 2>&1 | grep -v -e '^Get:' -e 'unsandboxed' >&2 || true)
  deb=$(ls "$kdir"/deb/*.deb 2>/dev/null | head -n1) || true
  [ -n "$deb" ] || die "apt-get download $kernel_pkg failed"
  dpkg-deb -x "$deb" "$kdir/root"
  rm -rf "$kdir/deb"
  kver=$(ls "$kdir/root/lib/modules" | head -n1)
  # The package ships no modules.dep: generate it so the host's modprobe can resolve dependencies.
  depmod -b "$kdir/root" "$kver"
  # Debian's kernel has CONFIG_PVH=y, so QEMU can boot the uncompressed ELF directly. The bzImage
  # holds it XZ-compressed after the magic FD 37 7A 58 5A 00; decompressing on the host saves ~6 s
  # of emulated decompression on every boot.
  python3 - "$kdir/root/boot/vmlinuz-$kver" "$kdir/vmlinux" <<'EOF'
import lzma, sys
data = open(sys.argv[1], "rb").read()
magic = b"\xfd7zXZ\x00"
start = data.find(magic)
while start >= 0:
    try:
        elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data[start:])
        if elf[:4] == b"\x7fELF":
            open(sys.argv[2], "wb").write(elf)
            sys.exit(0)
    except lzma.LZMAError:
        pass
    start = data.find(magic, start + 1)
sys.exit("no XZ-compressed ELF found in " + sys.argv[1])
EOF
  echo "$kver" > "$kdir/kver"
  touch "$kdir/ready"
  log "kernel $kver ready in $(since "$t_kernel") s"
fi
echo "$kernel_pkg" > "$cache/kernel/current"
kver=$(cat "$kdir/kver")
kroot=$kdir/root

# ---------------------------------------------------------------------------------------------------
# 3. Initramfs, in two cpio archives that the kernel unpacks one after the other:
#    - base (cached): busybox, ALSA utilities and their libraries, /usr/share/alsa, modules, /init;
#    - per run: the guest script, the libraries of BINARY_DIR's ELF files, ALSA_VM_EXTRA_FILES.
#    The binaries themselves stay on the host and come in over a read-only 9p share, so a rebuilt
#    binary needs no new initramfs. Both archives stay uncompressed: unpacking gzip under TCG is
#    slow, copying a few tens of MB is not.
t_initrd=$(now)
modules=(virtio_pci 9p 9pnet_virtio snd-aloop snd-dummy snd-seq snd-seq-dummy snd-virmidi ${ALSA_VM_MODULES:-})
tools=(/usr/bin/aplay /usr/bin/arecord /usr/bin/aplaymidi /usr/bin/arecordmidi /usr/bin/aseqdump
       /usr/bin/amidi /usr/bin/aconnect /usr/bin/amixer /usr/sbin/alsactl)

# Copies a host file to the same path under a staging root. The folder part is canonicalised
# (/lib/x86_64-linux-gnu -> /usr/lib/x86_64-linux-gnu on merged-/usr hosts) so that the archives
# only ever contain real folders, never paths through the /lib -> usr/lib symlink; the file name is
# kept because that is the name (soname) the dynamic loader looks for.
stage_file() {
  local src=$1 root=$2 dest
  dest=$root$(realpath "$(dirname "$src")")/$(basename "$src")
  mkdir -p "$(dirname "$dest")"
  cp -L --preserve=mode "$src" "$dest"
}
is_elf() { [ "$(head -c4 "$1" 2>/dev/null | od -An -c | tr -d ' \n')" = '177ELF' ]; }
# Every shared library an ELF file needs (ldd lists the whole closure, not only direct needs).
stage_libs() {
  local f=$1 root=$2 lib
  is_elf "$f" || return 0
  for lib in $(ldd "$f" 2>/dev/null | awk '/=> \// { print $3 } /^[ \t]*\/[^ ]+ \(/ { print $1 }'); do
    [ -e "$root$(realpath "$(dirname "$lib")")/$(basename "$lib")" ] || stage_file "$lib" "$root"
  done
}
make_cpio() { (cd "$1" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) > "$2"; }

# The guest's PID 1. Written here so the whole harness is one file.
read -r -d '' init_script <<'EOF' || true
#!/bin/sh
# PID 1 in the ALSA test VM (written by scripts/alsa-vm/run.sh).
/usr/bin/busybox --install -s
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root OUT=/out BIN=/bin-under-test
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev   # creates /dev/snd/* as the sound modules register
mkdir -p /dev/shm /dev/pts && mount -t tmpfs shm /dev/shm
mount -t tmpfs tmp /tmp
halt_vm() { sync; umount /out 2>/dev/null; poweroff -f; exit 1; }   # exit = panic = qemu exits too
while read -r m; do insmod "$m" || echo "alsa-vm: insmod $m failed"; done < /etc/alsa-vm/modules
# cache=none on /out: every write reaches the host at once, nothing is lost at power-off.
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none hostout /out ||
  { echo "alsa-vm: cannot mount /out"; halt_vm; }
# The binaries do not change during a run: cache=loose makes loading them much faster.
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=loose,ro bins /bin-under-test ||
  { echo "alsa-vm: cannot mount /bin-under-test"; halt_vm; }
# ALSA_VM_HOST_ROOT: the host's / at /host, made usable for chroot (see the header of run.sh).
if [ -f /etc/alsa-vm/hostroot ]; then
  mkdir -p /host
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=loose,ro hostroot /host ||
    { echo "alsa-vm: cannot mount /host"; halt_vm; }
  ok=true
  mount -t proc proc /host/proc && mount -t sysfs sys /host/sys && mount -t devtmpfs dev /host/dev &&
    mount -t devpts devpts /host/dev/pts && mount -t tmpfs shm /host/dev/shm || ok=false
  for d in tmp run var/tmp; do mount -t tmpfs -o mode=1777 tmp "/host/$d" || ok=false; done
  # OUTDIR at the path it has on the host, so scripts run in the chroot write their results there (made
  # first when it is under one of the tmpfs just mounted).
  mkdir -p "/host$(cat /etc/alsa-vm/hostroot)" 2>/dev/null
  mount --bind /out "/host$(cat /etc/alsa-vm/hostroot)" || ok=false
  $ok || { echo "alsa-vm: cannot prepare /host"; halt_vm; }
  export HOST=/host
fi
echo "alsa-vm: guest up after $(cut -d' ' -f1 /proc/uptime) s (kernel uptime); cards:"
cat /proc/asound/cards
echo "alsa-vm: running test"
cd /tmp
/bin/sh /test.sh
echo $? > /out/status
echo "alsa-vm: test exited with $(cat /out/status) at $(cut -d' ' -f1 /proc/uptime) s"
halt_vm
EOF

busybox_bin=$(command -v busybox)
# Rebuild the base archive whenever anything that goes into it changes.
base_key=$(
  {
    echo "$kver ${modules[*]}"; cat "${BASH_SOURCE[0]}"   # this script holds /init and the build steps
    dpkg-query -W -f='${Package} ${Version}\n' busybox-static alsa-utils libasound2 libasound2-data libc6
  } | sha256sum | cut -c1-16)
base=$cache/initramfs/base-$base_key.cpio
if [ ! -f "$base" ]; then
  log "building base initramfs ($base_key)"
  mkdir -p "$cache/initramfs"
  stage=$(mktemp -d "$cache/initramfs/stage.XXXXXX")
  # Mirror the host's merged-/usr layout, so paths like /lib64/ld-linux-x86-64.so.2 resolve.
  for d in bin sbin lib lib64; do
    if [ -L "/$d" ]; then ln -s "$(readlink "/$d")" "$stage/$d"; mkdir -p "$stage/$(readlink -f "/$d")"
    else mkdir -p "$stage/$d"; fi
  done
  mkdir -p "$stage"/{proc,sys,dev,tmp,out,bin-under-test,root,etc/alsa-vm} "$stage/usr/bin" "$stage/usr/sbin"
  stage_file "$busybox_bin" "$stage"
  # Without /bin/sh the kernel cannot run /init ("Failed to execute /init") and panics.
  ln -sf busybox "$stage/usr/bin/sh"
  for t in "${tools[@]}"; do stage_file "$t" "$stage"; stage_libs "$t" "$stage"; done
  # alsa-lib needs alsa.conf (and the cards/ folder) to resolve names such as hw:Loopback,0,0.
  mkdir -p "$stage/usr/share" && cp -a /usr/share/alsa "$stage/usr/share/"
  # Kernel modules in dependency order, as the host's modprobe resolves them against the tree.
  : > "$stage/etc/alsa-vm/modules"
  for m in "${modules[@]}"; do
    modprobe -d "$kroot" -S "$kver" --show-depends "$m" || die "module $m not found in $kver"
  done | awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++' | while read -r ko; do
    rel=${ko#"$kroot"}
    dest=$stage${rel%.xz}
    mkdir -p "$(dirname "$dest")"
    case $ko in *.xz) xz -dc "$ko" > "$dest" ;; *) cp "$ko" "$dest" ;; esac   # busybox insmod: plain .ko
    echo "${rel%.xz}" >> "$stage/etc/alsa-vm/modules"
  done
  printf '%s\n' "$init_script" > "$stage/init"
  chmod 755 "$stage/init"
  make_cpio "$stage" "$base.tmp" && mv "$base.tmp" "$base"
  rm -rf "$stage"
  find "$cache/initramfs" -name 'base-*.cpio' ! -name "base-$base_key.cpio" -delete
fi
flock -u 9

run_dir=$(mktemp -d "$cache/run.XXXXXX")
trap 'rm -rf "$run_dir"' EXIT
mkdir -p "$run_dir/stage/usr/bin"
cp "$guest_script" "$run_dir/stage/test.sh"
while IFS= read -r -d '' f; do stage_libs "$f" "$run_dir/stage"; done < <(find "$bin_dir" -type f -print0)
for x in ${ALSA_VM_EXTRA_FILES:-}; do
  while IFS= read -r -d '' f; do
    stage_file "$f" "$run_dir/stage"; stage_libs "$f" "$run_dir/stage"
  done < <(find "$x" -type f -print0)
done
host_root_share=()
if [ "${ALSA_VM_HOST_ROOT:-0}" = 1 ]; then
  # The marker tells /init to mount the share; its content is where OUTDIR goes inside /host.
  mkdir -p "$run_dir/stage/etc/alsa-vm"
  echo "$out_dir" > "$run_dir/stage/etc/alsa-vm/hostroot"
  # multidevs=remap: / spans several host file systems, whose inode numbers would otherwise collide.
  host_root_share=(-virtfs
    "local,path=/,mount_tag=hostroot,security_model=none,id=hostroot,readonly=on,multidevs=remap")
fi
make_cpio "$run_dir/stage" "$run_dir/run.cpio"
cat "$base" "$run_dir/run.cpio" > "$run_dir/initrd.cpio"
log "initramfs ready in $(since "$t_initrd") s ($(du -m "$run_dir/initrd.cpio" | cut -f1) MB)"

# ---------------------------------------------------------------------------------------------------
# 4. Boot. TCG, not KVM (see above). -nic none also skips the network boot ROM. -no-reboot and
#    panic=-1 make any guest failure end qemu instead of rebooting; 'timeout' bounds a hung guest.
rm -f "$out_dir/status"
t_boot=$(now)
log "booting (timeout ${timeout_s} s); console -> $out_dir/console.log"
set +e
timeout -k 10 "$timeout_s" qemu-system-x86_64 \
  -accel tcg -m "$memory" -smp "$cpus" -nographic -no-reboot -nic none \
  -kernel "$kdir/vmlinux" -initrd "$run_dir/initrd.cpio" \
  -append "console=ttyS0 quiet panic=-1 rdinit=/init" \
  -virtfs "local,path=$out_dir,mount_tag=hostout,security_model=none,id=hostout" \
  -virtfs "local,path=$bin_dir,mount_tag=bins,security_model=none,id=bins,readonly=on" \
  "${host_root_share[@]}" \
  </dev/null 2>&1 | tee "$out_dir/console.log"
qemu_rc=${PIPESTATUS[0]}
set -e
log "vm ran $(since "$t_boot") s; whole run $(since "$t_start") s"

if [ "$qemu_rc" -eq 124 ] || [ "$qemu_rc" -eq 137 ]; then
  log "error: timed out after ${timeout_s} s"
  exit 124
fi
if [ ! -s "$out_dir/status" ]; then
  log "error: the guest wrote no status (qemu exit $qemu_rc; see $out_dir/console.log)"
  exit 125
fi
status=$(tr -dc '0-9' < "$out_dir/status")
log "guest test exit status: $status"
exit "${status:-125}"
