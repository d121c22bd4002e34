#!/usr/bin/env bash
# install-test.sh: proves the Aulos Debian package installs, works and leaves nothing behind on a clean
# Debian 12 that has never seen this source tree (`make test-install`). Needs root.
#
#   scripts/install-test.sh [PATH/TO/aulos_VERSION_amd64.deb]
#       default: the newest dist/aulos_*_amd64.deb (`make deb` makes it)
#
# How it goes:
#  - .install-test/bookworm-minbase.tar is a pristine `debootstrap --variant=minbase bookworm` (Debian's own
#    packages from deb.debian.org, plus man-db so that the man page check is real), with apt sources for
#    bookworm, bookworm-updates and bookworm-security and their package lists fetched. It is made once (a few
#    minutes); delete it to make it anew. Each run starts from a fresh extraction of it in
#    .install-test/chroot, which is left as it ended for a post-mortem and wiped at the start of the next run.
#  - Everything that touches the chroot runs in a new mount + PID namespace: the chroot's /proc, /sys, /dev and
#    apt cache mounts exist only in that namespace, so none leaks to the host, and they (and any process the
#    package started) vanish with it on every exit path. The checkout is not visible inside: besides the
#    chroot, an empty tmpfs covers the checkout's path in the namespace (so /proc/1/root does not lead to it
#    either) and in the chroot should it have one; the test checks that too.
#  - The demo's sampler render (make demo's command: the bundled font named) is compared with the same render
#    by the checkout's release build (built first when missing: ~10 minutes); with no font named, the sampler
#    must take the system's General MIDI font that Debian's libfluidsynth3 brings, and say so.
#  - The dependency .debs apt downloads are kept in .install-test/apt-archives between runs (apt checks their
#    hashes), so a warm run downloads only what changed. The transcript of the last run is
#    .install-test/last-run.log; its file lists and outputs are in .install-test/run/.
#
# Exit status: 0 when every check passes, 1 when any fails, 2 when the test could not run at all.
# It deletes nothing outside .install-test/.

# shellcheck disable=SC2016  # the single-quoted $ are for dpkg-query formats and the chroot's shell
set -euo pipefail

SELF=$(realpath "${BASH_SOURCE[0]}")
ROOT=$(cd "$(dirname "$SELF")/.." && pwd -P)   # the checkout
WORK=$ROOT/.install-test
HOST_WORK=$WORK
BASE_TAR=$WORK/bookworm-minbase.tar
CHROOT=$WORK/chroot
RUN=$WORK/run
ARCHIVES=$WORK/apt-archives
SUITE=bookworm
MIRROR=http://deb.debian.org/debian
SECURITY_MIRROR=http://deb.debian.org/debian-security
# apt-get in the chroot; dpkg writes to apt's output directly, not through a pty: no progress meters in the
# transcript.
APT="apt-get -o Dpkg::Use-Pty=0"
CHROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# What the before/after file lists leave out: kernel and device trees, scratch, caches, apt's and dpkg's own
# databases and logs (they change with any package operation, so they say nothing about what aulos left).
SNAPSHOT_EXCLUDES=(/proc /sys /dev /tmp /var/cache /var/lib/apt /var/lib/dpkg /var/log)

die() {
    echo "install-test: $*" >&2
    exit 2
}

# ---------------------------------------------------------------------------------------------------------------
# Helpers shared by the host side and the namespace side.

# Deletes a path, but only inside .install-test/ and only when nothing is mounted under it (rm would descend
# into a mount, and a mount there would be a leak from an earlier run anyway).
wipe() {
    local path
    path=$(realpath -m -- "$1")
    [[ $path == "$WORK"/?* ]] || die "refusing to delete $path: it is outside $WORK"
    if awk -v p="$path" '$2 == p || index($2, p "/") == 1 { found = 1 } END { exit !found }' /proc/self/mounts; then
        die "refusing to delete $path: something is mounted under it (see /proc/self/mounts)"
    fi
    rm -rf --one-file-system -- "$path"
}

# One result row: PASS, FAIL or INFO, a name, and the figure that backs it (kept on one line). The rows go to
# $RUN/results, which the host side prints as the summary.
record() {
    local figure=${3//$'\n'/ }
    figure=${figure//\/mnt\/work/$HOST_WORK}   # the namespace side's name for .install-test/, as the host sees it
    printf '%s\t%s\t%s\n' "$1" "$2" "$figure" >>"$RUN/results"
    echo "==> $1 $2: $figure"
}
pass() { record PASS "$@"; }
fail() { record FAIL "$@"; }
info() { record INFO "$@"; }

# The first N lines of a text, joined with " | " (a figure for a summary row).
firstlines() { head -n "$1" <<<"$2" | paste -sd'|' | sed 's/|/ | /g'; }

# ---------------------------------------------------------------------------------------------------------------
# Namespace side: runs as PID 1 of a new PID namespace, in a new mount namespace (see run_namespace).

# Hides the checkout from the whole namespace, not only from the chroot: the namespace's first process is not
# chrooted, and /proc/1/root would otherwise lead from the chroot to the host's tree. .install-test/ is first
# bound at /mnt/work (on a tmpfs over /mnt, in this namespace only), then an empty read-only tmpfs covers the
# checkout; from here on the test's paths are under /mnt/work. (bash keeps this script open: it reads on.)
hide_checkout() {
    local old=$WORK
    mount --make-rprivate /
    [[ -d /mnt ]] || die "no /mnt to stage the chroot in"
    mount -t tmpfs -o mode=0755,size=1m tmpfs /mnt
    mkdir /mnt/work
    mount --bind "$WORK" /mnt/work
    mount -t tmpfs -o ro,mode=0755,size=4k tmpfs "$ROOT"
    WORK=/mnt/work
    BASE_TAR=$WORK/${BASE_TAR#"$old"/}
    CHROOT=$WORK/${CHROOT#"$old"/}
    RUN=$WORK/${RUN#"$old"/}
    ARCHIVES=$WORK/${ARCHIVES#"$old"/}
}

# Mounts what programs in the chroot need, all private to this namespace: /proc of the new PID namespace (its
# own processes only), /sys read-only, a minimal /dev (a tmpfs with the host's harmless character devices bound
# in, a private devpts and shm), and, with "cache", the kept apt archive cache. An empty read-only tmpfs covers
# the checkout's path if the chroot has it.
mount_chroot() {
    local root=$1 cache=${2:-} node
    mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
    mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys"
    mount -t tmpfs -o nosuid,mode=0755,size=16m tmpfs "$root/dev"
    for node in null zero full random urandom tty; do
        touch "$root/dev/$node"
        mount --bind "/dev/$node" "$root/dev/$node"
    done
    mkdir -m 0755 "$root/dev/pts"
    mkdir -m 1777 "$root/dev/shm"
    mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts"
    mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs "$root/dev/shm"
    ln -s pts/ptmx "$root/dev/ptmx"
    ln -s /proc/self/fd "$root/dev/fd"
    ln -s /proc/self/fd/0 "$root/dev/stdin"
    ln -s /proc/self/fd/1 "$root/dev/stdout"
    ln -s /proc/self/fd/2 "$root/dev/stderr"
    if [[ $cache == cache ]]; then
        mkdir -p "$ARCHIVES/partial"
        mount --bind "$ARCHIVES" "$root/var/cache/apt/archives"
    fi
    if [[ -e $root$ROOT ]]; then mount -t tmpfs -o ro,mode=0755,size=4k tmpfs "$root$ROOT"; fi
}

# Unmounts everything under the chroot, deepest first. The namespace's end would do it as well; this makes the
# exit path explicit and lets a post-mortem see the chroot as plain files.
unmount_chroot() {
    local target
    awk -v p="$1" 'index($2, p "/") == 1 { print $2 }' /proc/self/mounts | sort -r | while read -r target; do
        umount -l "$target" 2>/dev/null || true
    done
}

# Runs a command in the chroot with a clean environment (nothing of the host's leaks in).
in_chroot() {
    chroot "$CHROOT" /usr/bin/env -i PATH="$CHROOT_PATH" HOME=/root TERM=dumb LANG=C.UTF-8 \
        DEBIAN_FRONTEND=noninteractive "$@"
}

# Runs a shell command in the chroot, showing it and its output (indented) in the transcript; the output is
# left in $OUT and its exit status returned.
OUT=""
sh_in() {
    local rc=0
    echo "+ (chroot) $1"
    OUT=$(in_chroot /bin/bash -c "$1" 2>&1) || rc=$?
    if [[ -n $OUT ]]; then printf '    %s\n' "${OUT//$'\n'/$'\n'    }"; fi
    if ((rc != 0)); then echo "    (exit status $rc)"; fi
    return "$rc"
}

# The chroot's file list, one line per path: path, type, mode, owner:group, link target; sorted.
snapshot() {
    local prune=() path
    for path in "${SNAPSHOT_EXCLUDES[@]}"; do prune+=(-path "$path" -o); done
    unset 'prune[-1]'
    in_chroot find / \( "${prune[@]}" \) -prune -o -printf '%p\t%y\t%m\t%u:%g\t%l\n' | LC_ALL=C sort >"$1"
}

installed_packages() { in_chroot dpkg-query -W -f='${Package}\n' | LC_ALL=C sort; }

# Lines of a snapshot diff whose path is a difference the test allows: the user's state (/var/lib/aulos) and
# the account files holding the aulos user's and group's lines, with their "-" backups.
ALLOWED='^[+-] (/var/lib/aulos(/[^\t]*)?|/etc/(passwd|group|shadow|gshadow)-?)\t'

# The account files' lines, each prefixed with its file, less the aulos user's and group's own lines and with
# aulos taken out of other groups' member lists (e.g. audio): what remains must be the same before and after.
accounts() {
    local file
    for file in passwd group shadow gshadow; do
        in_chroot cat "/etc/$file" | awk -F: -v OFS=: -v file="$file" '
            function drop(list,    n, i, parts, out) {
                n = split(list, parts, ",")
                out = ""
                for (i = 1; i <= n; i++) if (parts[i] != "aulos") out = out (out == "" ? "" : ",") parts[i]
                return out
            }
            $1 == "aulos" { next }
            file == "group" { $4 = drop($4) }
            file == "gshadow" { $3 = drop($3); $4 = drop($4) }
            { print "/etc/" file ": " $0 }'
    done | LC_ALL=C sort >"$1"
}

# "+ line" for what is in the second file only, "- line" for what is in the first only.
snapshot_diff() {
    LC_ALL=C comm -23 "$1" "$2" | sed 's/^/- /'
    LC_ALL=C comm -13 "$1" "$2" | sed 's/^/+ /'
}

# The base's steps that need the chroot running: fetch the package lists, apply the updates a Debian 12 installed
# today would have (security and point-release), drop the downloaded .debs.
inside_base() {
    trap 'unmount_chroot "$CHROOT"' EXIT
    mount_chroot "$CHROOT"
    in_chroot apt-get update
    # shellcheck disable=SC2086  # $APT is a command and its options
    in_chroot $APT -y upgrade
    in_chroot apt-get clean
}

# The dependencies' own leftovers: on a second fresh extraction of the base, install the packages that aulos
# pulled in (from the kept cache), purge them, and diff as for aulos; the result is in $RUN/files-diff-deps-only.
deps_only() {
    local main=$CHROOT
    CHROOT=$WORK/chroot-deps
    wipe "$CHROOT"
    mkdir -p "$CHROOT"
    tar --numeric-owner --xattrs --xattrs-include='*' -C "$CHROOT" -xpf "$BASE_TAR"
    cp --remove-destination -L /etc/resolv.conf "$CHROOT/etc/resolv.conf"
    mount_chroot "$CHROOT" cache
    printf '%s\n' "$1" >"$CHROOT/tmp/dependencies"
    sh_in "$APT update >/dev/null && $APT install -y --no-install-recommends \$(cat /tmp/dependencies) >/dev/null && $APT purge -y \$(cat /tmp/dependencies) >/dev/null && $APT autoremove --purge -y >/dev/null" || true
    snapshot "$RUN/files-deps-only"
    accounts "$RUN/accounts-deps-only"
    {
        snapshot_diff "$RUN/files-before" "$RUN/files-deps-only"
        snapshot_diff "$RUN/accounts-before" "$RUN/accounts-deps-only"
    } | LC_ALL=C sort >"$RUN/files-diff-deps-only"
    unmount_chroot "$CHROOT"
    CHROOT=$main
}

# The test proper: install, exercise, remove, compare. Checks record PASS/FAIL rows; a failed check does not
# stop the run unless nothing after it could mean anything.
inside_test() {
    local debname=$1 pkg=$2 version=$3 t0 rc
    trap 'unmount_chroot "$WORK"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    mount_chroot "$CHROOT" cache

    echo "--- isolation"
    # The package must work without the source tree: it must not be reachable from inside.
    local seen="" path
    for path in "$ROOT/Package.swift" "$ROOT/soundfonts/AulosGM.sf2" "/proc/1/root$ROOT/Package.swift"; do
        if in_chroot test -e "$path"; then seen+="$path "; fi
    done
    if [[ -z $seen ]]; then
        pass "source tree hidden" "$ROOT/Package.swift, …/soundfonts/AulosGM.sf2, /proc/1/root$ROOT/Package.swift: none there"
    else
        fail "source tree hidden" "visible in the chroot: $seen"
    fi
    info "system" "Debian $(in_chroot cat /etc/debian_version), $(installed_packages | wc -l) packages (minbase + man-db)"

    echo "--- apt-get update"
    if sh_in "$APT update"; then
        pass "apt-get update" "$SUITE, $SUITE-updates, $SUITE-security main from deb.debian.org"
    else
        fail "apt-get update" "$(firstlines 2 "$(grep -E '^(E|W):' <<<"$OUT")")"
    fi

    # What the system looks like before the package: its files and its packages.
    snapshot "$RUN/files-before"
    accounts "$RUN/accounts-before"
    installed_packages >"$RUN/packages-before"
    echo "    $(wc -l <"$RUN/files-before") paths, $(wc -l <"$RUN/packages-before") packages before the install"

    echo "--- install"
    t0=$SECONDS
    rc=0
    sh_in "cd /tmp && $APT install -y ./$debname" || rc=$?
    local install_out=$OUT need disk pulled
    installed_packages >"$RUN/packages-installed"
    pulled=$(LC_ALL=C comm -13 "$RUN/packages-before" "$RUN/packages-installed" | grep -vx "$pkg" || true)
    # "Need to get 25.3 MB of archives." or, with part of it in the kept cache, "Need to get 0 B/25.3 MB ...".
    need=$(sed -n 's/^Need to get \(.*\) of archives\.$/\1/p' <<<"$install_out")
    disk=$(sed -n 's/^After this operation, \(.*\) of additional disk space will be used\.$/\1/p' <<<"$install_out")
    # apt counts the local .deb in the total as already there; dependencies found in the kept cache too.
    local download="download ${need:-nothing}"
    if [[ $need == */* ]]; then
        download="apt: need to get ${need%/*} of ${need#*/} (the total counts the local .deb and the kept cache)"
    fi
    if ((rc == 0)) && [[ $(in_chroot dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null) == "install ok installed" ]]
    then
        pass "install" "apt-get install ./$debname in $((SECONDS - t0)) s; $(grep -c . <<<"$pulled" || true) packages pulled in; $download; +${disk:-?} on disk"
    else
        fail "install" "apt-get install ./$debname exited $rc: $(firstlines 3 "$(grep -E '^(E|W|dpkg):' <<<"$install_out")")"
        return 0
    fi
    info "pulled in" "$(paste -sd' ' <<<"$pulled")"
    sh_in "dpkg -s $pkg" || true
    info "dpkg -s $pkg" "Version $(sed -n 's/^Version: //p' <<<"$OUT"); Installed-Size $(sed -n 's/^Installed-Size: //p' <<<"$OUT") KiB; Depends: $(sed -n 's/^Depends: //p' <<<"$OUT"); Recommends: $(sed -n 's/^Recommends: //p' <<<"$OUT")"
    in_chroot dpkg -L "$pkg" | LC_ALL=C sort >"$RUN/dpkg-L"
    echo "    dpkg -L $pkg: $(wc -l <"$RUN/dpkg-L") paths (in $HOST_WORK/run/dpkg-L)"

    echo "--- the program"
    # --version: the package's version and where the data is. The Debian revision and epoch are not aulos's.
    local upstream=${version#*:}
    upstream=${upstream%-*}
    if sh_in 'aulos --version' && grep -qF -- "$upstream" <<<"$OUT" && grep -qx 'data: /usr/share/aulos' <<<"$OUT"
    then
        pass "aulos --version" "$(firstlines 3 "$OUT")"
    else
        fail "aulos --version" "wanted $upstream and a line 'data: /usr/share/aulos'; got: $(firstlines 4 "$OUT")"
    fi

    # presets: the factory presets come from /usr/share/aulos, never from a build tree.
    if sh_in 'aulos presets'; then
        if grep -q /work <<<"$OUT"; then
            fail "aulos presets" "mentions /work: $(grep -m2 /work <<<"$OUT")"
        elif grep -q 'none found' <<<"$OUT" || ! grep -qE '^  [0-9]+: ' <<<"$OUT"; then
            fail "aulos presets" "no presets listed: $(firstlines 3 "$OUT")"
        else
            pass "aulos presets" "$(grep -cE '^  (bank [0-9]+ )?[0-9]+: ' <<<"$OUT") numbered entries, $(wc -l <<<"$OUT") lines, no /work"
        fi
    else
        fail "aulos presets" "exited non-zero: $(firstlines 2 "$OUT")"
    fi

    # make demo's sampler render (the bundled font, named by where the package put it) must be the checkout's
    # release build's, bit for bit.
    local sampler_md5="" sf2_md5 font expected
    if sh_in 'aulos render --instrument sampler --soundfont /usr/share/aulos/soundfonts/AulosGM.sf2 \
              --output /tmp/demo-sampler.wav && ls -l /tmp/demo-sampler.wav'; then
        sampler_md5=$(in_chroot md5sum /tmp/demo-sampler.wav | cut -d' ' -f1)
        if grep -q /work <<<"$OUT"; then
            fail "render demo (sampler)" "mentions /work: $(firstlines 2 "$OUT")"
        else
            pass "render demo (sampler)" "$(in_chroot stat -c %s /tmp/demo-sampler.wav) bytes, md5 $sampler_md5"
        fi
    else
        fail "render demo (sampler)" "$(firstlines 3 "$OUT")"
    fi
    sf2_md5=$(in_chroot md5sum /usr/share/aulos/soundfonts/AulosGM.sf2 2>/dev/null | cut -d' ' -f1 || true)
    if [[ -z $REF_MD5 ]]; then
        fail "demo md5 = checkout's" "no reference: $REF_NOTE"
    elif [[ $sampler_md5 == "$REF_MD5" ]]; then
        pass "demo md5 = checkout's" "$sampler_md5 both"
    else
        fail "demo md5 = checkout's" "package ${sampler_md5:-none}, checkout $REF_MD5 (AulosGM.sf2: package ${sf2_md5:-missing}, checkout $REF_SF2_MD5)"
    fi

    # With no --soundfont the sampler takes a General MIDI font the system has installed before the bundled
    # one (SearchPaths.soundFontCandidates, docs/install.md): Debian's libfluidsynth3 pulls in one
    # (timgm6mb-soundfont | sf3-soundfont-gm, the default-GM alternative). Which one is played, and why, is named.
    if in_chroot test -e /usr/share/sounds/sf2/default-GM.sf2; then
        expected="the system's General MIDI font"
    else
        expected="the bundled font"
    fi
    if sh_in 'aulos render --instrument sampler --output /tmp/default-font.wav'; then
        font=$(grep -o 'sampler ([^)]*)' <<<"$OUT" | head -n 1 || true)
        if [[ $font == *"$expected"* ]]; then
            pass "sampler's own font" "$font"
        else
            fail "sampler's own font" "expected $expected, got: ${font:-$(firstlines 1 "$OUT" | cut -c1-160)}"
        fi
    else
        fail "sampler's own font" "$(firstlines 3 "$OUT")"
    fi

    if sh_in 'aulos render --rig band --output /tmp/band.wav && ls -l /tmp/band.wav'; then
        pass "render --rig band" "$(in_chroot stat -c %s /tmp/band.wav) bytes, md5 $(in_chroot md5sum /tmp/band.wav | cut -d' ' -f1)"
    else
        fail "render --rig band" "$(firstlines 3 "$OUT")"
    fi

    echo "--- documentation and shell completion"
    # man-db is in the base, so man finds the page the way a user's would.
    if sh_in 'man -w aulos && man -w 5 aulos-rig && man aulos >/tmp/aulos.man 2>&1; rc=$?; head -n 12 /tmp/aulos.man; exit $rc' \
        && grep -q '/usr/share/man/man1/aulos.1.gz' <<<"$OUT" && grep -qi 'aulos' <<<"$(sed 1,2d <<<"$OUT")"; then
        pass "man aulos" "$(firstlines 2 "$OUT"); $(grep -cE '^/usr/share/man/' "$RUN/dpkg-L") man paths in the package"
    else
        fail "man aulos" "$(firstlines 3 "$OUT")"
    fi
    if sh_in 'bash -c "source /usr/share/bash-completion/completions/aulos && complete -p aulos"' \
        && grep -q 'aulos$' <<<"$OUT"; then
        pass "bash completion" "$OUT"
    else
        fail "bash completion" "$(firstlines 2 "$OUT")"
    fi
    local zsh fish
    zsh=$(grep -E '^/usr/share/zsh/.*/_aulos$' "$RUN/dpkg-L" || true)
    fish=$(grep -E '^/usr/share/fish/.*/aulos\.fish$' "$RUN/dpkg-L" || true)
    if [[ -n $zsh && -n $fish ]]; then
        pass "zsh, fish completion" "$zsh $fish"
    else
        fail "zsh, fish completion" "zsh: ${zsh:-none}; fish: ${fish:-none}"
    fi

    echo "--- files where the package put them"
    # The data the program reads and the files systemd reads, as listed by dpkg -L and present on disk.
    local path missing=() unit=""
    for path in /usr/bin/aulos /usr/share/aulos/presets /usr/share/aulos/soundfonts/AulosGM.sf2 \
        /usr/share/aulos/web /usr/share/aulos/sfz; do
        if ! grep -qx "$path" "$RUN/dpkg-L" || ! in_chroot test -e "$path"; then missing+=("$path"); fi
    done
    if ((${#missing[@]} == 0)); then
        pass "program and data" "/usr/bin/aulos, /usr/share/aulos/{presets,soundfonts/AulosGM.sf2,web,sfz}"
    else
        fail "program and data" "missing: ${missing[*]}"
    fi
    unit=$(grep -xE '(/usr)?/lib/systemd/system/aulos\.service' "$RUN/dpkg-L" | head -n 1 || true)
    if [[ -n $unit ]] && sh_in "grep -E '^(ExecStart|User)=' $unit" \
        && grep -qE '^ExecStart=/usr/bin/aulos ' <<<"$OUT"; then
        pass "systemd unit" "$unit: $(grep ^ExecStart= <<<"$OUT" | cut -c1-60)…"
    else
        fail "systemd unit" "${unit:-no aulos.service under /lib/systemd/system or /usr/lib/systemd/system}${unit:+: $(firstlines 2 "$OUT")}"
    fi
    for path in /usr/lib/sysusers.d/aulos.conf /usr/lib/tmpfiles.d/aulos.conf; do
        if grep -qx "$path" "$RUN/dpkg-L" && sh_in "cat $path"; then
            pass "${path#/usr/lib/}" "$(grep -v '^#' <<<"$OUT" | grep . | paste -sd';')"
        else
            fail "${path#/usr/lib/}" "not in dpkg -L $pkg, or unreadable"
        fi
    done

    echo "--- the aulos system user"
    if sh_in 'getent passwd aulos && getent group aulos; id aulos' && grep -q '^aulos:' <<<"$OUT"; then
        pass "aulos user" "$(grep '^aulos:' <<<"$OUT" | paste -sd' ')"
    else
        fail "aulos user" "no aulos user after install: $(firstlines 2 "$OUT")"
    fi

    echo "--- aulos service install/uninstall --root /"
    # The packaged binary is used in place: the unit runs /usr/bin/aulos and nothing lands in /usr/local.
    in_chroot find /usr/local -printf '%p\t%y\n' | LC_ALL=C sort >"$RUN/usr-local-before"
    if sh_in 'aulos service install --root /'; then
        local printed=$OUT
        in_chroot find /usr/local -printf '%p\t%y\n' | LC_ALL=C sort >"$RUN/usr-local-after-install"
        local added
        added=$(LC_ALL=C comm -13 "$RUN/usr-local-before" "$RUN/usr-local-after-install" | cut -f1)
        if ! sh_in 'grep ^ExecStart= /etc/systemd/system/aulos.service'; then
            fail "service install" "no /etc/systemd/system/aulos.service; printed: $(firstlines 3 "$printed")"
        elif ! grep -qE '^ExecStart=/usr/bin/aulos ' <<<"$OUT"; then
            fail "service install" "unit runs $(cut -d' ' -f1 <<<"$OUT"), not /usr/bin/aulos"
        elif [[ -n $added ]]; then
            fail "service install" "copied into /usr/local: $(paste -sd' ' <<<"$added" | cut -c1-200)"
        else
            pass "service install" "$(firstlines 4 "$printed")"
        fi
    else
        fail "service install" "exited non-zero: $(firstlines 3 "$OUT")"
    fi
    if sh_in 'aulos service uninstall --root /'; then
        local printed=$OUT problems=""
        if in_chroot test -e /etc/systemd/system/aulos.service; then problems+="unit still in /etc/systemd/system; "; fi
        in_chroot find /usr/local -printf '%p\t%y\n' | LC_ALL=C sort >"$RUN/usr-local-after-uninstall"
        if ! cmp -s "$RUN/usr-local-before" "$RUN/usr-local-after-uninstall"; then problems+="/usr/local changed; "; fi
        # The package's own files must be untouched by the service commands.
        sh_in "dpkg --verify $pkg" || true
        if [[ -n $OUT ]]; then problems+="dpkg --verify: $(firstlines 3 "$OUT"); "; fi
        if [[ -z $problems ]]; then
            pass "service uninstall" "$(firstlines 3 "$printed"); package files intact (dpkg --verify)"
        else
            fail "service uninstall" "$problems"
        fi
    else
        fail "service uninstall" "exited non-zero: $(firstlines 3 "$OUT")"
    fi

    echo "--- purge"
    if sh_in "$APT purge -y $pkg" && ! in_chroot dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -q 'ok installed\|config-files'; then
        pass "apt-get purge" "$pkg purged"
    else
        fail "apt-get purge" "$(firstlines 3 "$OUT")"
    fi
    if sh_in "$APT autoremove --purge -y"; then
        installed_packages >"$RUN/packages-after"
        local extra
        extra=$(snapshot_diff "$RUN/packages-before" "$RUN/packages-after")
        if [[ -z $extra ]]; then
            pass "autoremove --purge" "$(grep -c . <<<"$pulled" || true) dependencies removed; same packages as before"
        else
            fail "autoremove --purge" "packages differ from before: $(paste -sd' ' <<<"$extra")"
        fi
    else
        fail "autoremove --purge" "$(firstlines 3 "$OUT")"
    fi
    info "aulos user after purge" "$(in_chroot getent passwd aulos || echo removed)"

    echo "--- leftovers"
    # Two comparisons with the system before the install: the file lists, and the account files' lines with
    # the aulos user's and group's own left out (see accounts).
    snapshot "$RUN/files-after"
    accounts "$RUN/accounts-after"
    {
        snapshot_diff "$RUN/files-before" "$RUN/files-after"
        snapshot_diff "$RUN/accounts-before" "$RUN/accounts-after"
    } >"$RUN/files-diff"
    local allowed volatile from_deps=""
    allowed=$(grep -cP "$ALLOWED" "$RUN/files-diff" || true)
    # /run is a tmpfs on a real system, emptied at boot: what is left there is shown, but not a failure.
    grep -P '^[+-] /run(/|\t)' "$RUN/files-diff" >"$RUN/files-run" || true
    volatile=$(wc -l <"$RUN/files-run")
    grep -vP "$ALLOWED" "$RUN/files-diff" | grep -vP '^[+-] /run(/|\t)' | LC_ALL=C sort >"$RUN/files-unexplained" || true
    # What is left may have been left by a dependency's own scripts rather than by aulos: install and purge
    # the same dependencies without aulos, on a second fresh extraction of the base (from the kept cache: no
    # download), and what that leaves too is theirs.
    if [[ -s $RUN/files-unexplained && -n $pulled ]]; then
        echo "    $(wc -l <"$RUN/files-unexplained") differences besides the allowed ones: do the dependencies alone leave them?"
        deps_only "$pulled"
        from_deps=$(LC_ALL=C comm -12 "$RUN/files-unexplained" "$RUN/files-diff-deps-only" | wc -l)
        LC_ALL=C comm -23 "$RUN/files-unexplained" "$RUN/files-diff-deps-only" >"$RUN/files-leftover"
    else
        cp "$RUN/files-unexplained" "$RUN/files-leftover"
    fi
    if ((volatile > 0)); then
        info "left in /run" "$volatile (tmpfs on a real system): $(cut -f1 "$RUN/files-run" | head -n 6 | paste -sd' ')"
    fi
    local figure="$allowed allowed (under /var/lib/aulos, account file backups)"
    figure+="${from_deps:+, $from_deps left by the dependencies alone}"
    if [[ ! -s $RUN/files-leftover ]]; then
        pass "nothing left after purge" "$figure; none else"
    else
        sed 's/^/    /' "$RUN/files-leftover"
        fail "nothing left after purge" "$(wc -l <"$RUN/files-leftover") leftover: $(cut -f1 "$RUN/files-leftover" | head -n 8 | paste -sd' ') ($figure; all in $RUN/files-leftover)"
    fi
    return 0
}

# ---------------------------------------------------------------------------------------------------------------
# Host side.

# Runs this script's namespace side: a new mount namespace (private: nothing mounted there reaches the host)
# and a new PID namespace with its own /proc (its processes die with it). unshare runs in the background so
# that an interrupt or a TERM reaches this shell's trap at once: the trap kills unshare (it ignores INT and TERM
# while it waits), and --kill-child then kills the namespace's first process, which takes every process and
# mount of the namespace with it.
NS_PID=""
run_namespace() {
    local rc=0
    unshare --mount --pid --fork --mount-proc --propagation private --kill-child "$SELF" --in-namespace "$@" &
    NS_PID=$!
    wait "$NS_PID" || rc=$?
    NS_PID=""
    return "$rc"
}
stop_namespace() {
    if [[ -n $NS_PID ]]; then
        kill -KILL "$NS_PID" 2>/dev/null || true
        wait "$NS_PID" 2>/dev/null || true
    fi
}

# The host's mounts on the checkout, under it, or under /mnt (where the namespace side stages the chroot).
host_mounts() {
    awk -v r="$ROOT" '$2 == r || index($2, r "/") == 1 || $2 == "/mnt" || index($2, "/mnt/") == 1 { print $2 }' \
        /proc/self/mounts | LC_ALL=C sort
}

# The pristine base: debootstrap once, then keep it as a tarball that each run extracts afresh.
make_base() {
    local dir=$WORK/base.tmp t0=$SECONDS
    echo "--- making the pristine Debian 12 minbase (once; a few minutes): $BASE_TAR"
    wipe "$dir"
    # debootstrap mounts /proc and /sys in the target and may leave them mounted if it fails: in a mount
    # namespace of its own they go away with it.
    if ! unshare --mount --propagation private \
        debootstrap --variant=minbase --include=man-db "$SUITE" "$dir" "$MIRROR" >"$WORK/debootstrap.log" 2>&1; then
        tail -n 15 "$WORK/debootstrap.log"
        die "debootstrap failed (full log: $WORK/debootstrap.log)"
    fi
    # Debian's own archive only: the release, its point-release updates and its security updates.
    cat >"$dir/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb $SECURITY_MIRROR $SUITE-security main
EOF
    cp --remove-destination -L /etc/resolv.conf "$dir/etc/resolv.conf"
    # The package lists, fetched once here so that each run's apt-get update fetches only what changed.
    run_namespace base "$dir" || die "apt-get update failed in the new base (see above)"
    tar --numeric-owner --xattrs --xattrs-include='*' -C "$dir" -cf "$BASE_TAR.tmp" .
    mv "$BASE_TAR.tmp" "$BASE_TAR"
    wipe "$dir"
    echo "    base made in $((SECONDS - t0)) s ($(du -h "$BASE_TAR" | cut -f1))"
}

# The reference for the sampler render: the checkout's release build, with the checkout's font.
reference_render() {
    local bin=$ROOT/.build/release/aulos out=$RUN/checkout-demo-sampler.wav
    REF_MD5=""
    REF_NOTE=""
    REF_SF2_MD5=$(md5sum <"$ROOT/soundfonts/AulosGM.sf2" | cut -d' ' -f1)
    if [[ ! -x $bin ]]; then
        echo "--- no $bin: building it (swift build -c release --product aulos; ~10 minutes)"
        if ! (cd "$ROOT" && swift build -c release --product aulos); then
            REF_NOTE="the checkout's release build failed (see the transcript)"
            return 0
        fi
    fi
    echo "+ (host) $bin render --instrument sampler --soundfont $ROOT/soundfonts/AulosGM.sf2 --output $out"
    if "$bin" render --instrument sampler --soundfont "$ROOT/soundfonts/AulosGM.sf2" --output "$out" 2>&1 \
        | sed 's/^/    /'; then
        REF_MD5=$(md5sum <"$out" | cut -d' ' -f1)
        echo "    md5 $REF_MD5"
    else
        REF_NOTE="the checkout's release build failed to render (see the transcript)"
    fi
}

host_main() {
    ((EUID == 0)) || die "needs root (debootstrap, chroot, mounts): sudo make test-install"
    # On an interrupt, end the namespace (and with it every mount and process of the test) before leaving.
    trap 'stop_namespace; die "interrupted"' INT TERM
    local tool
    for tool in debootstrap unshare chroot dpkg-deb md5sum tar realpath awk; do
        command -v "$tool" >/dev/null || die "$tool is missing: apt-get install debootstrap"
    done

    # 1. The package: the argument, or the newest dist/aulos_*_amd64.deb.
    local deb=${1:-}
    if [[ -z $deb ]]; then
        # shellcheck disable=SC2012  # names are aulos_VERSION_amd64.deb: no odd characters
        deb=$(ls -t "$ROOT"/dist/aulos_*_amd64.deb 2>/dev/null | head -n 1 || true)
        [[ -n $deb ]] || die "no dist/aulos_*_amd64.deb: run 'make deb' first (or pass the .deb's path)"
    fi
    [[ -f $deb ]] || die "$deb: no such file"
    deb=$(realpath "$deb")
    local pkg version
    pkg=$(dpkg-deb -f "$deb" Package 2>/dev/null) || die "$deb: not a Debian package (dpkg-deb cannot read it)"
    version=$(dpkg-deb -f "$deb" Version)

    mkdir -p "$WORK" "$ARCHIVES"
    wipe "$RUN"
    mkdir -p "$RUN"
    : >"$RUN/results"
    # The whole transcript also goes to .install-test/last-run.log.
    exec > >(tee "$WORK/last-run.log") 2>&1
    local tee_pid=$! t_start=$SECONDS
    echo "=== install test of $deb on a clean Debian 12 ($(date -u '+%Y-%m-%d %H:%M UTC'))"
    info "package" "$pkg $version, $(dpkg-deb -f "$deb" Architecture); .deb $(stat -c %s "$deb") bytes; Installed-Size $(dpkg-deb -f "$deb" Installed-Size) KiB"

    # The packaged binary names no folder of the machine it was built on (make build-release maps the
    # checkout's path to /usr/src/aulos): strings(1) of it, checked for the checkout's path and for /work/.
    local leaks
    leaks=$(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/bin/aulos | strings -n 6 \
        | grep -cF -e "$ROOT" -e /work/ || true)
    if [[ $leaks == 0 ]]; then
        pass "no build path in binary" "strings of usr/bin/aulos: 0 lines with $ROOT or /work/"
    else
        fail "no build path in binary" "strings of usr/bin/aulos: $leaks lines with $ROOT or /work/"
    fi

    # 2. The clean system: a fresh extraction of the pristine base.
    local t0=$SECONDS timing=""
    if [[ ! -f $BASE_TAR ]]; then
        make_base
        timing="base (debootstrap) $((SECONDS - t0)) s, "
        t0=$SECONDS
    fi
    wipe "$CHROOT"
    wipe "$WORK/chroot-deps"
    mkdir -p "$CHROOT"
    tar --numeric-owner --xattrs --xattrs-include='*' -C "$CHROOT" -xpf "$BASE_TAR"
    cp --remove-destination -L /etc/resolv.conf "$CHROOT/etc/resolv.conf"
    install -m 0644 "$deb" "$CHROOT/tmp/"
    echo "--- fresh chroot from $BASE_TAR in $((SECONDS - t0)) s"
    timing+="fresh chroot $((SECONDS - t0)) s, "

    # The sampler reference, made on the host before the test (the chroot never sees the checkout).
    t0=$SECONDS
    reference_render
    timing+="reference render $((SECONDS - t0)) s, "
    export REF_MD5 REF_NOTE REF_SF2_MD5

    host_mounts >"$RUN/host-mounts-before"
    # 3, 4. Everything in the chroot, in a namespace of its own.
    local rc=0
    t0=$SECONDS
    run_namespace test "$CHROOT" "$(basename "$deb")" "$pkg" "$version" || rc=$?
    timing+="in the chroot $((SECONDS - t0)) s"
    if ((rc != 0)); then fail "test machinery" "the namespace side exited $rc before the end (see above)"; fi

    # 5. Nothing mounted in the namespace may be visible on the host: no new mount on the checkout, under it or
    # under /mnt.
    local leaked
    leaked=$(LC_ALL=C comm -13 "$RUN/host-mounts-before" <(host_mounts))
    if [[ -z $leaked ]]; then
        pass "no mount leaked" "no new mount on the host under $ROOT or /mnt"
    else
        fail "no mount leaked" "$(paste -sd' ' <<<"$leaked")"
    fi

    info "time" "$((SECONDS - t_start)) s: $timing"

    # The summary: every row, then the count.
    local passed failed
    passed=$(grep -c '^PASS' "$RUN/results" || true)
    failed=$(grep -c '^FAIL' "$RUN/results" || true)
    echo
    echo "=== summary: $deb ($((SECONDS - t_start)) s; transcript $WORK/last-run.log)"
    awk -F'\t' '{ printf "%-5s %-26s %s\n", $1, $2, $3 }' "$RUN/results"
    echo "install-test: $passed passed, $failed failed"
    exec >&- 2>&-
    wait "$tee_pid" 2>/dev/null || true
    ((failed == 0))
}

if [[ ${1:-} == --in-namespace ]]; then
    # The namespace side: $2 is what to do, $3 the chroot; the rest are the test's arguments.
    mode=$2
    CHROOT=$3
    shift 3
    hide_checkout
    case $mode in
        base) inside_base ;;
        test) inside_test "$@" ;;
        *) die "unknown namespace mode $mode" ;;
    esac
else
    host_main "$@"
fi
