#!/usr/bin/env bash
# The Android shell library's size (issue 34's benchmark, not part of the test command: a
# release build for aarch64-linux-android takes about 17 minutes cold on 2 cores).
#
# No NDK can be installed here, so the C parts (SQLite, aws-lc) are compiled and the library is
# linked by zig's clang for aarch64 against musl's headers and libc, standing in for the NDK's
# clang and bionic; the Rust code is the phone build's own (the shell library without its
# default features). The size is that of the stripped library (the release profile strips), and
# gzip -9 of it, beside libpdfium and the resources the APK would also carry.
#
#   scripts/android-size.sh        # prints one line per part, then the sum
set -euo pipefail
source "$(dirname "$0")/common.sh"

ZIG_WHEEL=ziglang==0.17.1
ZIG_WHEEL_SHA256=ea6cc5d87b033cf0aedfbc8f9549a908cae6c50ac31f1698188fa48a74524b54
ZIG_DIR=/var/tmp/hearth-zig
private_dir "$ZIG_DIR"
SIZE_TARGET="${HEARTH_ANDROID_SIZE_TARGET:-/var/tmp/hearth-android-size}"

if [ ! -x "$ZIG_DIR/ziglang/zig" ]; then
  wheel="$(download_pinned_wheel "$ZIG_WHEEL" "$ZIG_WHEEL_SHA256" 'ziglang-*.whl')"
  python3 -m zipfile -e "$wheel" "$ZIG_DIR" >/dev/null
  chmod +x "$ZIG_DIR/ziglang/zig"
fi
# The compiler and linker stand-in: zig's clang for aarch64 with musl, dropping the Android
# target flags the build scripts pass (it cannot link a real phone's library; it measures one).
cat > "$ZIG_DIR/cc-aarch64" <<WRAP
#!/bin/sh
args=""
for a in "\$@"; do
  case "\$a" in
    --target=*|-target|aarch64-linux-android*|aarch64-unknown-linux-android*) ;;
    *) args="\$args '\$(printf %s "\$a" | sed "s/'/'\\\\\\\\''/g")'" ;;
  esac
done
eval exec "$ZIG_DIR/ziglang/zig" cc -target aarch64-linux-musl -Wno-unused-command-line-argument -D_GNU_SOURCE -L"$ZIG_DIR/stubs" \$args
WRAP
printf '#!/bin/sh\nexec "%s/ziglang/zig" ar "$@"\n' "$ZIG_DIR" > "$ZIG_DIR/ar"
chmod +x "$ZIG_DIR/cc-aarch64" "$ZIG_DIR/ar"
# Android's own system libraries the Rust code names (liblog, libandroid, libdl): empty stubs, so
# the link resolves; they add nothing to the library's size.
mkdir -p "$ZIG_DIR/stubs"
echo 'void hearth_size_stub(void) {}' > "$ZIG_DIR/stubs/stub.c"
for name in log android dl; do
  [ -f "$ZIG_DIR/stubs/lib$name.so" ] || "$ZIG_DIR/cc-aarch64" -shared -o "$ZIG_DIR/stubs/lib$name.so" "$ZIG_DIR/stubs/stub.c"
done

install_mobile_targets
# A release build embeds the shipped UI.
[ "$(cat "$ROOT/ui/dist/.profile" 2>/dev/null)" = wasm-release ] || build_ui
# tauri-build writes the phone's schema files into gen/schemas: put them back afterwards.
schemas="$(mktemp -d)"
cp -a "$ROOT/gen/schemas/." "$schemas/"
trap 'rm -rf "$ROOT/gen/schemas"; mkdir -p "$ROOT/gen/schemas"; cp -a "$schemas/." "$ROOT/gen/schemas/"; rm -rf "$schemas"' EXIT
log "building the shell library for aarch64-linux-android (release)"
CARGO_TARGET_DIR="$SIZE_TARGET" \
  CC_aarch64_linux_android="$ZIG_DIR/cc-aarch64" CXX_aarch64_linux_android="$ZIG_DIR/cc-aarch64" \
  AR_aarch64_linux_android="$ZIG_DIR/ar" CARGO_TARGET_AARCH64_LINUX_ANDROID_LINKER="$ZIG_DIR/cc-aarch64" \
  cargo build --release --locked --target aarch64-linux-android -p hearth --lib --no-default-features >&2

size_line() { printf '%-34s %10d bytes  %10d gzip -9\n' "$1" "$(stat -c %s "$2")" "$(gzip -9 -c "$2" | wc -c)"; }
lib="$SIZE_TARGET/aarch64-linux-android/release/libhearth_app.so"
size_line "libhearth_app.so (stripped)" "$lib"
pdfium="$ROOT/gen/android/app/src/main/jniLibs/arm64-v8a/libpdfium.so"
[ -f "$pdfium" ] && size_line "libpdfium.so (arm64-v8a)" "$pdfium"
res="$(mktemp)"; tar -C "$ROOT/gen/android/app/src/main" -cf "$res" res
size_line "res/ (icons, strings; as tar)" "$res"; rm -f "$res"
