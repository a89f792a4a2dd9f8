#!/usr/bin/env bash
# The per-change performance gate: instruction counts of the hot paths under callgrind
# (src-tauri/core/benches/instructions.rs, through gungraun) against the counts committed in
# src-tauri/core/benches/instructions.baseline.json. Fails when one grows by more than the
# baseline's limit (5%) — or shrinks by more, until the baseline records the gain — printing
# the before/after table. Run by scripts/test.sh.
#   scripts/perf-gate.sh            check
#   scripts/perf-gate.sh --update   measure and rewrite the baseline (then commit it, saying why)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

mode=check
case "${1:-}" in
  "") ;;
  --update) mode=update ;;
  *) die "usage: scripts/perf-gate.sh [--update]" ;;
esac

install_gungraun_runner
# Built as scripts/test.sh builds it (through clippy-driver), so a check by hand, the test
# command's check and the baseline compare the same code.
lint_while_building
home="$(mktemp -d -t hearth-perf-gate.XXXXXX)"
log "instruction counts of the hot paths (callgrind, one run each)"
# The dev profile (dependencies optimized, Hearth's own code not; Cargo.toml says why): the
# counts compare like with like from one change to the next, and nothing is built twice.
# --workspace, not -p hearth-core: features are unified over the same packages as in
# `cargo test --workspace`, so every dependency the tests built is reused as it is (with -p,
# 140 crates were built again with other features: 6 of the test command's cold minutes).
cargo bench --workspace --profile dev --bench instructions --locked -- --home="$home" --save-summary=json >&2
status=0
# Built with --workspace for the same reason (cargo run takes only -p, whose features rebuilt
# some 80 s of dependencies), then run from where cargo put it.
cargo build -q --workspace --example perf_gate --locked
HEARTH_RUSTC_VERSION="$(rustc --version | cut -d' ' -f1-2) (clippy-driver)" \
  "$CARGO_TARGET_DIR/debug/examples/perf_gate" \
  "$mode" "$home" "$ROOT/src-tauri/core/benches/instructions.baseline.json" || status=$?
if [ "$status" = 0 ]; then
  rm -rf "$home"
else
  log "callgrind's output is kept in $home (callgrind_annotate <its callgrind.*.out>)"
fi
exit "$status"
