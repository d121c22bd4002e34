#!/usr/bin/env bash
# `make install` / `make uninstall`: Aulos laid out as installed software, under PREFIX (default /usr/local)
# and DESTDIR (a staging folder for packaging: debian/rules installs into debian/aulos with PREFIX=/usr).
#
#   scripts/install.sh install BINARY     the binary, its data, man pages, completions, the systemd unit,
#                                         the sysusers.d and tmpfiles.d entries; records what it wrote
#   scripts/install.sh uninstall          removes exactly what the record lists, then the record
#
# The layout (docs/install.md):
#   $PREFIX/bin/aulos
#   $PREFIX/share/aulos/{presets,soundfonts/AulosGM.sf2,web,sfz/aulos-test}   found by the binary as
#                                         <its folder>/../share/aulos (SearchPaths.dataRoots)
#   $PREFIX/share/man/man1/aulos*.1, man5/aulos-rig.5                        made from the binary's own
#                                         command definitions (scripts/make-man-pages.py) and docs/rigs.md
#   $PREFIX/share/{bash-completion/completions,zsh/vendor-completions,fish/vendor_completions.d}
#   $SYSTEMDUNITDIR/aulos.service, $SYSUSERSDIR/aulos.conf, $TMPFILESDIR/aulos.conf
#
# Every file is written beside its destination and renamed into place (install(1) does that), so a running
# aulos is never overwritten in place. Nothing here enables or starts the service: `systemctl enable --now
# aulos` (the factory rig set) or `aulos service install --rig …` does, when the user asks.
set -euo pipefail

PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
BINDIR=${BINDIR:-$PREFIX/bin}
DATADIR=${DATADIR:-$PREFIX/share/aulos}
MANDIR=${MANDIR:-$PREFIX/share/man}
BASHCOMPDIR=${BASHCOMPDIR:-$PREFIX/share/bash-completion/completions}
ZSHCOMPDIR=${ZSHCOMPDIR:-$PREFIX/share/zsh/vendor-completions}
FISHCOMPDIR=${FISHCOMPDIR:-$PREFIX/share/fish/vendor_completions.d}
SYSTEMDUNITDIR=${SYSTEMDUNITDIR:-$PREFIX/lib/systemd/system}
SYSUSERSDIR=${SYSUSERSDIR:-$PREFIX/lib/sysusers.d}
TMPFILESDIR=${TMPFILESDIR:-$PREFIX/lib/tmpfiles.d}
# The record of what was installed, read by uninstall: a file of the data folder, so each prefix has its own.
RECORD="$DATADIR/installed-files"

here=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "install: $*" >&2; exit 1; }

# Installs one file (mode $1, source $2, destination $3) and records the destination.
put() {
  install -D -m "$1" "$2" "$DESTDIR$3"
  echo "$3" >> "$staging/record"
}

# Installs a folder's files, keeping its layout (sources relative to $2, destination folder $3).
put_tree() {
  local mode=$1 source=$2 destination=$3 file
  while IFS= read -r -d '' file; do
    put "$mode" "$source/$file" "$destination/$file"
  done < <(cd "$source" && find . -type f -not -name '.*' -printf '%P\0' | sort -z)
}

install_all() {
  local binary=${1:-}
  [[ -n $binary && -x $binary ]] || fail "no aulos binary to install ('${binary}'); run make build-release"
  staging=$(mktemp -d)
  trap 'rm -rf "$staging"' EXIT
  : > "$staging/record"

  # SOURCE_DATE_EPOCH (dpkg-buildpackage sets it from debian/changelog) dates the man pages, so two builds
  # of the same source give the same files.
  local version
  version=$("$binary" --version | head -n 1)

  put 755 "$binary" "$BINDIR/aulos"

  put_tree 644 "$here/presets" "$DATADIR/presets"
  put 644 "$here/soundfonts/AulosGM.sf2" "$DATADIR/soundfonts/AulosGM.sf2"
  put_tree 644 "$here/Sources/AulosWeb/Panel" "$DATADIR/web"
  # The SFZ test library plays `make demo`'s demo-sfz.wav and is a small example of the format.
  put_tree 644 "$here/sfz/aulos-test" "$DATADIR/sfz/aulos-test"

  mkdir -p "$staging/man"
  "$here/scripts/make-man-pages.py" "$binary" "$staging/man" --version "$version" --prefix "$PREFIX" >/dev/null
  "$here/scripts/md-to-man.py" "$here/docs/rigs.md" --name aulos-rig --section 5 \
    --title "Aulos rig files: instruments, parts, effects and controls for aulos" --version "$version" \
    > "$staging/man/aulos-rig.5"
  for page in "$staging"/man/*.1; do put 644 "$page" "$MANDIR/man1/$(basename "$page")"; done
  put 644 "$staging/man/aulos-rig.5" "$MANDIR/man5/aulos-rig.5"

  # swift-argument-parser writes the completions from the same definitions as --help. Bash sources its
  # completion files rather than running them, so the script's #! line is dropped.
  "$binary" --generate-completion-script bash | sed '1{/^#!/d}' > "$staging/aulos.bash"
  "$binary" --generate-completion-script zsh > "$staging/_aulos"
  "$binary" --generate-completion-script fish > "$staging/aulos.fish"
  put 644 "$staging/aulos.bash" "$BASHCOMPDIR/aulos"
  put 644 "$staging/_aulos" "$ZSHCOMPDIR/_aulos"
  put 644 "$staging/aulos.fish" "$FISHCOMPDIR/aulos.fish"

  # The unit plays the factory set from the state folder, as the service installer's would (it is its text).
  "$binary" service unit --prefix "$PREFIX" > "$staging/aulos.service"
  put 644 "$staging/aulos.service" "$SYSTEMDUNITDIR/aulos.service"
  put 644 "$here/packaging/sysusers/aulos.conf" "$SYSUSERSDIR/aulos.conf"
  sed "s|@DATADIR@|$DATADIR|g" "$here/packaging/tmpfiles/aulos.conf.in" > "$staging/tmpfiles.conf"
  put 644 "$staging/tmpfiles.conf" "$TMPFILESDIR/aulos.conf"

  echo "$RECORD" >> "$staging/record"
  install -D -m 644 "$staging/record" "$DESTDIR$RECORD"
  echo "installed $(wc -l < "$staging/record") files under ${DESTDIR}${PREFIX} (listed in ${DESTDIR}${RECORD})"
  if [ -z "$DESTDIR" ]; then
    echo "the service is not enabled: sudo systemd-sysusers && sudo systemd-tmpfiles --create aulos.conf" \
      "&& sudo systemctl enable --now aulos (or sudo aulos service install --rig YOUR-RIG)"
  fi
}

uninstall_all() {
  [ -r "$DESTDIR$RECORD" ] ||
    fail "nothing to uninstall: no $DESTDIR$RECORD (was aulos installed with PREFIX=$PREFIX?)"
  local count=0 path folder paths=()
  mapfile -t paths < "$DESTDIR$RECORD"
  for path in "${paths[@]}"; do
    case "$path" in
      /*) ;;
      *) fail "the record $DESTDIR$RECORD holds '$path', not an absolute path: not removing" ;;
    esac
  done
  for path in "${paths[@]}"; do
    if [ -e "$DESTDIR$path" ] || [ -L "$DESTDIR$path" ]; then rm -f -- "$DESTDIR$path" && count=$((count + 1)); fi
  done
  # Folders the install made and left empty go too, deepest first; a folder holding anything else (another
  # program's completions, the user's files) stays.
  for path in "${paths[@]}"; do
    folder=$(dirname "$path")
    while [ "$folder" != "$PREFIX" ] && [ "$folder" != / ] && rmdir -- "$DESTDIR$folder" 2>/dev/null; do
      folder=$(dirname "$folder")
    done
  done
  echo "removed $count files from ${DESTDIR}${PREFIX}; the service's state (/var/lib/aulos) and user are kept"
}

case "${1:-}" in
  install) install_all "${2:-}" ;;
  uninstall) uninstall_all ;;
  *) fail "usage: scripts/install.sh install BINARY | uninstall (PREFIX, DESTDIR and the *DIR variables)" ;;
esac
