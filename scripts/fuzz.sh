#!/usr/bin/env bash
# Runs every fuzz target (src-tauri/fuzz) for SECONDS each (default 600), one after another on
# one core, and prints each run's executions and whether it crashed. Builds with debug
# assertions (-a), so integer overflow panics too. Inputs found go to a working corpus under
# /var/tmp; `HEARTH_FUZZ_KEEP=1` then merges the ones that add coverage into
# src-tauri/fuzz/corpus/<target> (what is committed and replayed by the test suite). Needs the nightly
# toolchain and cargo-fuzz (`cargo install cargo-fuzz`); not part of the test command, whose
# reproducers (core's tests/suite/fuzz_reproducers.rs) replay what fuzzing found.
#
#   scripts/fuzz.sh [SECONDS] [TARGET ...]
set -euo pipefail
# The fuzz build's own cache; common.sh makes it private (private_dir) and refuses another user's.
export CARGO_TARGET_DIR="${HEARTH_FUZZ_TARGET_DIR:-/var/tmp/hearth-fuzz-target}"
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"
fuzz=src-tauri/fuzz
seconds="${1:-600}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(pdf_reader agui_sse provider_stream tool_arguments)
fi
corpora=/var/tmp/hearth-fuzz-corpus
private_dir "$corpora"
cargo +nightly fuzz build -O -a --fuzz-dir "$fuzz" 2>&1 | tail -1
for target in "${targets[@]}"; do
  work="$corpora/$target"
  mkdir -p "$fuzz/corpus/$target" "$fuzz/artifacts/$target" "$work"
  log="$(mktemp)"
  set +e
  cargo +nightly fuzz run -O -a --fuzz-dir "$fuzz" "$target" "$work" "$fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=1048576 -timeout=20 \
    -artifact_prefix="$fuzz/artifacts/$target/" -print_final_stats=1 >"$log" 2>&1
  status=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  crashes=$(ls "$fuzz/artifacts/$target" | wc -l)
  echo "$target: ${seconds}s, ${execs} executions, exit ${status}, ${crashes} crash files in $fuzz/artifacts/$target"
  if [ "$status" -ne 0 ]; then tail -40 "$log"; fi
  rm -f "$log"
  if [ "${HEARTH_FUZZ_KEEP:-0}" = 1 ]; then
    cargo +nightly fuzz run -O -a --fuzz-dir "$fuzz" "$target" "$fuzz/corpus/$target" "$work" -- -merge=1 >/dev/null 2>&1
    echo "$target: corpus now $(ls "$fuzz/corpus/$target" | wc -l) files"
  fi
done
