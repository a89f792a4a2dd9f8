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
"$ROOT/scripts/tauri-cli/node_modules/.bin/tauri" build --bundles "$bundles" >&2
size() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.2f MB (%d bytes)", b / 1e6, b }'; }
for package in "$CARGO_TARGET_DIR"/release/bundle/deb/*.deb "$CARGO_TARGET_DIR"/release/bundle/appimage/*.AppImage; do
  [ -f "$package" ] || continue
  echo "$package  $(size "$package")"
done
echo "app binary: $(size "$CARGO_TARGET_DIR/release/hearth")"
