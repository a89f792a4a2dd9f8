#!/usr/bin/env bash
# The installable packages through the Tauri bundler (tauri-cli, pinned in scripts/tauri-cli):
# the .deb, and the AppImage when asked for (HEARTH_BUNDLES=deb,appimage: the bundler then
# downloads linuxdeploy from GitHub, which needs a network this machine may not have).
# Prints each package's size. A release build: ≈ 15 min cold on 2 cores.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

install_all
install_npm_project "$ROOT/scripts/tauri-cli" "the Tauri CLI"
build_ui
bundles="${HEARTH_BUNDLES:-deb}"
log "bundling: $bundles"
# Packages of earlier builds would be listed beside this one's.
rm -rf "$CARGO_TARGET_DIR/release/bundle"
# A binary linked with packed relative relocations (src-tauri/build_support/relocations.rs,
# where the build machine's glibc is 2.36 or later) needs GLIBC_ABI_DT_RELR at run time: the
# package says so, or it would install on an older system and fail to start there. It asks for
# the build machine's own libc6, not just 2.36: a C library built here may also use symbols of
# a newer glibc. The bundler keeps its own dependencies (WebKitGTK, GTK) and adds this one;
# tauri.conf.json has no deb "depends" of its own, which this --config would replace.
extra=()
glibc="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print $2 }' || true)"
if [ -n "$glibc" ] && dpkg --compare-versions "$glibc" ge 2.36; then
  extra=(--config "{\"bundle\":{\"linux\":{\"deb\":{\"depends\":[\"libc6 (>= $glibc)\"]}}}}")
fi
"$ROOT/scripts/tauri-cli/node_modules/.bin/tauri" build --bundles "$bundles" "${extra[@]}" >&2
# The guess above stands in for what the build did (a target directory's build-script answer
# can be older than this machine): a .deb is refused if they disagree. Outputs are read whole
# before matching (a `| grep -q` can end its writer early, which pipefail takes for a failure).
relr=no
[[ "$(readelf -d "$CARGO_TARGET_DIR/release/hearth")" == *"(RELR)"* ]] && relr=yes
size() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.2f MB (%d bytes)", b / 1e6, b }'; }
for package in "$CARGO_TARGET_DIR"/release/bundle/deb/*.deb "$CARGO_TARGET_DIR"/release/bundle/appimage/*.AppImage; do
  [ -f "$package" ] || continue
  echo "$package  $(size "$package")"
  case "$package" in
    *.deb)
      depends="$(dpkg-deb -f "$package" Depends)"
      echo "  Depends: $depends"
      needs_libc=no
      [[ "$depends" == *"libc6 (>="* ]] && needs_libc=yes
      [ "$relr" = "$needs_libc" ] || die "$package: the binary's packed relocations ($relr) and the package's libc6 dependency ($needs_libc) disagree; rebuild after 'cargo clean -p hearth --release'"
      ;;
  esac
done
echo "app binary: $(size "$CARGO_TARGET_DIR/release/hearth")"
