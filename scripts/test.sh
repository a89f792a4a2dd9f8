#!/usr/bin/env bash
# Runs every test: formatting and lints, unit, property and integration tests of every crate,
# the per-change performance gate, the wire types on wasm, and the end-to-end test through the
# real webview under Xvfb. Installs what is missing first (idempotent) and starts the services
# it needs itself. Each phase logs how long it took (the README's times come from these lines).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

phase_started=$SECONDS
phase() {
  log "phase done in $((SECONDS - phase_started)) s; next: $*"
  phase_started=$SECONDS
}

# Formatting first: it takes a second and says exactly what to run.
cargo fmt --all --check >/dev/null || die "the tree is not formatted: run \`cargo fmt --all\` and commit the result"

install_all
install_tauri_driver
install_gungraun_runner
install_agui_client
install_python_agui
install_test_model

# The computer's tests run against a real engine and the locally built base image (cached by
# the hash of its recipe: rebuilt only when it changes); the tests build Hearth's layer over it
# through the engine, as the app does.
ensure_docker
computer_base="$("$ROOT/scripts/computer-image.sh")"
log "computer base image: $computer_base"

prune_target
phase "the UI (wasm)"

# The app embeds ui/dist when it compiles, so the UI comes first. It is built with rustup's
# wasm32 target when that can be had, else with Debian's rustc-web (scripts/wasm-debian.sh
# checks that path on demand; it is not built twice here).
# The test command builds it for build time (profile wasm-test: the same code without LTO, in
# parallel codegen units, incremental: a change to the UI rebuilt in 103 s, now in 5); the setup
# command and the bundle build the size-optimized wasm-release that ships, and a release build
# of the app refuses this one (src-tauri/build.rs).
build_ui wasm-test
phase "every target, linted as it is built (clippy, warnings are errors)"

# Clippy lints Hearth's crates while they are compiled for the tests rather than in a
# metadata-only build of every dependency of its own (that phase took 190 of the cold run's
# seconds; the build grew by 53). Every cargo command below runs the same way (the end-to-end
# build's lints included), so the crates are built once; a plain `cargo test` by hand rebuilds
# only Hearth's own crates. --all-targets: the benches and examples are linted (and built) too.
lint_while_building
cargo build --workspace --all-targets --locked
phase "unit, property and integration tests"

cargo test --workspace --locked
phase "the performance gate"

# The per-change performance gate: instruction counts (callgrind) of the hot paths against the
# committed baseline; fails on growth above 5% (scripts/perf-gate.sh --update to accept one).
bash "$ROOT/scripts/perf-gate.sh"
phase "the wire types on wasm"

build_wasm_crate "$(wasm_toolchain)" hearth-protocol "" debug >/dev/null
phase "end-to-end through the webview"

log "end-to-end through the webview (tauri-driver + WebKitWebDriver under Xvfb)"
# cargo builds the app binary for this test (CARGO_BIN_EXE_hearth-e2e) with the test's
# features (and links `hearth` with them too, one more link); its own name keeps any other
# build of the app from replacing it while the tests run. --workspace, not -p hearth: the
# features are unified as in the test phase, so only `hearth` is built again (with -p, the
# window's whole stack was rebuilt with other features: 10 of the cold run's minutes).
# -noreset: by default Xvfb resets when its last client leaves, and an app starting during that
# reset fails to open the display (GTK's init panics). Between two sessions there is no client.
# The phase takes about 3 minutes; `timeout` ends a hung one well inside CI's limit.
# No backtraces: a step's message names it and says what the window showed, and forty frames
# of tokio per failure would push that out of CI's excerpt.
timeout --kill-after=30 1500 env RUST_BACKTRACE=0 xvfb-run -a --server-args="-screen 0 1280x900x24 -noreset" \
  cargo test --workspace --features hearth/e2e --test e2e --locked -- --test-threads=1 \
  || {
    code=$?
    # What a failure here often depends on, printed last, where CI's excerpt keeps it: the
    # browser the app drives, the room left for its profiles, and what the machine was doing.
    log "$(chromium --version 2>/dev/null | head -n 1); free: $(df -h --output=avail /tmp | tail -n 1 | tr -d ' ') in /tmp, $(df -h --output=avail "$CARGO_TARGET_DIR" | tail -n 1 | tr -d ' ') for the build; load: $(cut -d' ' -f1-3 /proc/loadavg)"
    die "the end-to-end phase failed (a test, or a lint of the end-to-end build), or ran past 25 minutes (exit $code)"
  }
phase "nothing: every test passed"
