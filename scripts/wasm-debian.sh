#!/usr/bin/env bash
# Builds the wire types and the UI on Debian's own wasm path (rustc-web with -Zbuild-std), the
# one scripts/test.sh falls back to when rustup's wasm32 target cannot be had. Run it on demand
# (it builds std for wasm, several minutes cold) after a change to the UI's dependencies or to
# the toolchain notes; the test command builds one path only.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"
install_all
log "wasm on Debian's path: the wire types, then the UI"
build_wasm_crate debian hearth-protocol "" debug >/dev/null
debian_ui="$(build_wasm_crate debian hearth-ui "--profile wasm-release" wasm-release)"
debian_out="$(mktemp -d)"
wasm-bindgen --target web --no-typescript --remove-name-section --out-dir "$debian_out" --out-name ui "$debian_ui/hearth-ui.wasm"
[ -s "$debian_out/ui_bg.wasm" ] || die "the Debian-path UI build produced no wasm"
rm -rf "$debian_out"
log "Debian's wasm path builds the wire types and the UI"
