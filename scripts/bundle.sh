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
"$ROOT/scripts/tauri-cli/node_modules/.bin/tauri" build --bundles "$bundles" >&2
for package in "$CARGO_TARGET_DIR"/release/bundle/deb/*.deb "$CARGO_TARGET_DIR"/release/bundle/appimage/*.AppImage; do
  [ -f "$package" ] || continue
  printf '%s  %.2f MB (%s bytes)\n' "$package" "$(echo "$(stat -c %s "$package") / 1000000" | bc -l)" "$(stat -c %s "$package")"
done
printf 'app binary: %.2f MB\n' "$(echo "$(stat -c %s "$CARGO_TARGET_DIR/release/hearth") / 1000000" | bc -l)"
