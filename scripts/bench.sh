#!/usr/bin/env bash
# Every benchmark, each beside its reference measured in the same run, then one summary line
# per figure with its target. Prints figures; asserts nothing about time (the per-change gate
# is the instruction count in scripts/perf-gate.sh, which the test command runs).
# Installs what is missing first (the references are small pinned npm projects) and starts the
# engine the computer bench needs. Ends with the footprint against the Tauri floor and the
# latency in the release app's webview (scripts/footprint.sh). Takes ≈ 35 min on 2 cores once
# built (10 of them the idle-growth wait; HEARTH_IDLE_SECS shortens it), plus ≈ 15 min for the
# first release build of both apps.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

install_all
install_agui_client
install_npm_project "$ROOT/src-tauri/core/benches/pdf_lib" "pdf-lib 1.17.1 (the PDF reference)"
install_npm_project "$ROOT/src-tauri/core/benches/playwright" "playwright-core 1.65.1 (the browser reference)"
ensure_docker
computer_base="$("$ROOT/scripts/computer-image.sh")"
log "computer base image: $computer_base"

out="$(mktemp -d -t hearth-bench.XXXXXX)"
failed=()
run_bench() {
  local name="$1"; shift
  log "bench: $name"
  # One bench failing does not hide the others' figures; it is named at the end.
  if ! "$@" 2>&1 | tee "$out/$name.txt"; then
    failed+=("$name")
  fi
}
run_bench agui_decode cargo bench -q -p hearth-protocol --bench agui_decode --locked
run_bench pdf_inspect cargo bench -q -p hearth-core --bench pdf_inspect --locked
run_bench browser cargo bench -q -p hearth-core --bench browser --locked
run_bench computer cargo bench -q -p hearth-core --bench computer --locked
run_bench task_throughput cargo bench -q -p hearth-core --bench task_throughput --locked
run_bench agent_loop cargo bench -q -p hearth-core --bench agent_loop --locked
run_bench stop_latency cargo bench -q -p hearth-core --bench stop_latency --locked
run_bench send_latency cargo bench -q -p hearth-core --bench send_latency --locked
run_bench pairing cargo bench -q -p hearth-core --bench pairing --locked
run_bench load cargo bench -q -p hearth-core --bench load --locked
# The model on this computer beside llama.cpp's own speed on the same file and threads
# (scripts/common.sh build_llama_reference: llama.cpp's C API, linked from the very libraries the
# bench's worker uses). The bench is built first: its llama.cpp is what the reference links.
install_test_model
if [ "${HEARTH_BENCH_QWEN:-0}" = 1 ]; then
  install_bench_model
  export HEARTH_BENCH_GGUF="$QWEN_GGUF"
fi
(cd "$ROOT" && cargo bench -q --workspace --profile dev --bench local_model --locked --no-run)
echo '[]' > "$out/llama-bench.json"
if llama_reference="$(build_llama_reference)"; then
  threads="$(nproc)"
  n=0
  for gguf in "$HEARTH_TEST_GGUF" ${HEARTH_BENCH_GGUF:+"$HEARTH_BENCH_GGUF"}; do
    n=$((n + 1))
    "$llama_reference" "$gguf" "$threads" 1536 128 3 > "$out/llama-bench-$n.json"
  done
  python3 -c 'import json, sys; json.dump([row for path in sys.argv[2:] for row in json.load(open(path))], open(sys.argv[1], "w"))' \
    "$out/llama-bench.json" "$out"/llama-bench-*.json || die "llama.cpp's reference output ($out/llama-bench-*.json) did not read as JSON"
fi
# The dev build the tests use (llama.cpp itself is always built optimized, -O3).
run_bench local_model env HEARTH_LLAMA_BENCH_JSON="$out/llama-bench.json" cargo bench -q --workspace --profile dev --bench local_model --locked
run_bench footprint bash "$ROOT/scripts/footprint.sh"

echo
echo "== Hearth benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
echo "figure | Hearth | reference (same run) | target"
cat "$out"/*.txt | sed -n 's/^FIGURE | //p'
echo "(full output: $out)"
if [ ${#failed[@]} -gt 0 ]; then
  die "these benches failed: ${failed[*]} (their output is in $out)"
fi
