#!/usr/bin/env bash
# Hearth's footprint beside the Tauri floor (tests/floor: Tauri v2 + a Leptos hello world),
# both release builds of this workspace, measured the same way in one run under Xvfb: process
# start → first paint (medians of 10), idle PSS and private dirty at 60 s, and Hearth's growth
# over 10 idle minutes (HEARTH_IDLE_SECS); then the latency the owner feels, measured inside
# the release app's webview (Send → first token, delivery at 1,000 events/s, Stop → "Stopped",
# a 100,000-event thread opened). Prints figures; asserts nothing about time.
# ≈ 16 min once built; the first release build of both apps takes ≈ 15 min more on 2 cores.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

install_all
install_tauri_driver
build_ui
build_floor_ui
log "building Hearth and the floor in release, together (one build of tauri for both)"
cargo build --release --locked -p hearth -p hearth-floor \
  --features hearth/custom-protocol,hearth-floor/custom-protocol >&2
log "footprint: Hearth against the floor"
HEARTH_BENCH_APP="$CARGO_TARGET_DIR/release/hearth" HEARTH_BENCH_FLOOR="$CARGO_TARGET_DIR/release/hearth-floor" \
  xvfb-run -a --server-args="-screen 0 1280x900x24 -noreset" \
  cargo bench -q --locked -p hearth-testkit --features webdriver --bench footprint
log "webview latency (tauri-driver + WebKitWebDriver)"
HEARTH_BENCH_APP="$CARGO_TARGET_DIR/release/hearth" \
  xvfb-run -a --server-args="-screen 0 1280x900x24 -noreset" \
  cargo bench -q --locked -p hearth-testkit --features webdriver,model-server --bench webview
