#!/usr/bin/env bash
# Runs every test: unit, property and integration tests of every crate, the wasm builds on
# both toolchain paths, and the end-to-end test through the real webview under Xvfb.
# Installs what is missing first (idempotent) and starts the services it needs itself.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

install_all
install_tauri_driver
install_gungraun_runner
install_agui_client
install_python_agui

# The computer's tests run against a real engine and the locally built base image (cached by
# the hash of its recipe: rebuilt only when it changes); the tests build Hearth's layer over it
# through the engine, as the app does.
ensure_docker
computer_base="$("$ROOT/scripts/computer-image.sh")"
log "computer base image: $computer_base"

prune_target

# The app embeds ui/dist when it compiles, so the UI comes first.
build_ui

log "unit, property and integration tests"
cargo test --workspace --locked

# The per-change performance gate: instruction counts (callgrind) of the hot paths against the
# committed baseline; fails on growth above 5% (scripts/perf-gate.sh --update to accept one).
bash "$ROOT/scripts/perf-gate.sh"

log "wasm: the wire types and the UI on both toolchain paths (rustup target, Debian rustc-web + build-std)"
if [ "$(HEARTH_WASM_TOOLCHAIN=auto wasm_toolchain)" = rustup ]; then
  build_wasm_crate rustup hearth-protocol "" debug >/dev/null
else
  log "rustup's wasm32 target is unavailable here; checking the Debian path only"
fi
build_wasm_crate debian hearth-protocol "" debug >/dev/null
debian_ui="$(build_wasm_crate debian hearth-ui "--profile wasm-release" wasm-release)"
debian_out="$(mktemp -d)"
wasm-bindgen --target web --no-typescript --remove-name-section --out-dir "$debian_out" --out-name ui "$debian_ui/hearth-ui.wasm"
[ -s "$debian_out/ui_bg.wasm" ] || die "the Debian-path UI build produced no wasm"
rm -rf "$debian_out"

log "end-to-end through the webview (tauri-driver + WebKitWebDriver under Xvfb)"
# cargo builds the app binary for this test (CARGO_BIN_EXE_hearth-e2e) with the test's
# features (and links `hearth` with them too, one more link); its own name keeps any other
# build of the app from replacing it while the tests run.
# -noreset: by default Xvfb resets when its last client leaves, and an app starting during that
# reset fails to open the display (GTK's init panics). Between two sessions there is no client.
# The phase takes about 3 minutes; `timeout` ends a hung one well inside CI's limit.
# No backtraces: a step's message names it and says what the window showed, and forty frames
# of tokio per failure would push that out of CI's excerpt.
timeout --kill-after=30 1500 env RUST_BACKTRACE=0 xvfb-run -a --server-args="-screen 0 1280x900x24 -noreset" \
  cargo test -p hearth --features e2e --test e2e --locked -- --test-threads=1 \
  || {
    code=$?
    # What a failure here often depends on, printed last, where CI's excerpt keeps it: the
    # browser the app drives, the room left for its profiles, and what the machine was doing.
    log "$(chromium --version 2>/dev/null | head -n 1); free: $(df -h --output=avail /tmp | tail -n 1 | tr -d ' ') in /tmp, $(df -h --output=avail "$CARGO_TARGET_DIR" | tail -n 1 | tr -d ' ') for the build; load: $(cut -d' ' -f1-3 /proc/loadavg)"
    die "the end-to-end phase failed or ran past 25 minutes (exit $code)"
  }
