#!/usr/bin/env bash
# gen/android: the Android project, as the pinned Tauri CLI (scripts/tauri-cli) generates it, plus
# Hearth's own changes, which this script makes and only this script makes (a hand edit of
# gen/android fails `check`):
#   1. Hearth's launcher icons: `tauri icon icons/icon-1024.png`, the Android part of its output
#      (mipmap-*/ic_launcher*.png, mipmap-anydpi-v26/ic_launcher.xml,
#      values/ic_launcher_background.xml), placed where `tauri icon` itself puts them when
#      gen/android exists: over gen/android/app/src/main/res.
#   2. No backup of the app's data (the manifest and res/xml/data_extraction_rules.xml): Android's
#      default would copy hearth.db and vault.key, the key that opens it, off the phone.
#      - android:allowBackup="false" stops the cloud backup on every version, and also
#        device-to-device transfer and `adb backup` up to Android 11 (minSdk is 24).
#      - From Android 12 on, allowBackup no longer stops device-to-device transfers, and rules
#        in the old android:fullBackupContent format do not reach them either: only
#        android:dataExtractionRules does. Ours excludes every domain from both the cloud backup
#        and the device transfer, so nothing of the app's data leaves the phone by either path.
#      - No android:fullBackupContent: with allowBackup="false" nothing is backed up on Android
#        11 and older, and Android 12 and later read dataExtractionRules instead, so it would
#        change nothing.
#   3. The Gradle task that builds the Rust library (buildSrc/.../BuildTask.kt) calls the pinned
#      CLI. As generated it runs `node tauri android android-studio-script` in the repository's
#      root, where there is no `tauri` file: the CLI writes `node tauri` whenever node started
#      it without a package manager. It runs scripts/tauri-cli's tauri.js instead (install it
#      first: `npm ci --prefix scripts/tauri-cli`).
# libpdfium for arm64-v8a (pypdfium2's Android wheel, pinned below) goes to
# gen/android/app/src/main/jniLibs/arm64-v8a/libpdfium.so: fetched, never committed (ignored).
#
# Usage:
#   scripts/android-project.sh write   regenerate gen/android in place (and fetch libpdfium)
#   scripts/android-project.sh check   regenerate into a temporary folder and compare with
#                                      gen/android; fails on any difference. Changes nothing in
#                                      the working tree. Offline once the CLI is installed.
#
# The CLI runs in a temporary folder that links to the repository's top-level entries (all but
# gen/ and .git), with placeholder ANDROID_HOME and NDK_HOME folders (`android init` only reads
# the NDK's version from them; no SDK is needed to generate) and a scrubbed environment (the
# package manager that started the CLI would otherwise change what it writes). It reads
# tauri.conf.json merged with tauri.android.conf.json (the mobile identifier) and Cargo.toml
# (through `cargo metadata --no-deps`, which builds nothing). The same inputs give the same
# bytes: a second run is identical, so a difference means gen/android or an input changed.
# Icons take 5 s to make, so `check` keeps them in a cache keyed by the source image, the CLI's
# lock file and this machine's kind (HEARTH_ANDROID_CACHE_DIR, default /var/tmp/hearth-android,
# private to its owner); `write` always makes them afresh.

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

MODE="${1:-}"
case "$MODE" in
  write | check) ;;
  *) die "usage: scripts/android-project.sh write|check (write regenerates gen/android; check compares it with a fresh generation)" ;;
esac

GEN_REL=gen/android
CLI_DIR="$ROOT/scripts/tauri-cli"
CLI_JS="$CLI_DIR/node_modules/@tauri-apps/cli/tauri.js"
ICON_SOURCE="$ROOT/icons/icon-1024.png"
CACHE_DIR="${HEARTH_ANDROID_CACHE_DIR:-/var/tmp/hearth-android}"
# What the placeholder NDK claims to be (android init only reads the version).
PLACEHOLDER_NDK_REVISION=27.0.12077973
# pypdfium2-5.15.2-py3-none-android_23_arm64_v8a.whl (the SHA-256 PyPI lists for it), and its
# pypdfium2_raw/libpdfium.so (ELF aarch64, 6,768,960 bytes). The same pypdfium2 release as the
# desktop's (PYPDFIUM2_VERSION in common.sh): bump both together.
PYPDFIUM2_ANDROID_VERSION=5.15.2
PYPDFIUM2_ANDROID_PLATFORM=android_23_arm64_v8a
PYPDFIUM2_ANDROID_WHEEL_SHA256=fe64472c32d0717669c99758ce234066500b0234730dad0327248f09399e9736
PDFIUM_ANDROID_ARM64_SHA256=0090fca4cc584f1ce538e6899e43928e7c027478b64e661c05da94a6374e97bf
PDFIUM_ANDROID_REL="$GEN_REL/app/src/main/jniLibs/arm64-v8a/libpdfium.so"
# The CLI's BuildTask line (change 3 above), and what replaces it.
BUILD_TASK_GENERATED='val args = listOf("tauri", "android", "android-studio-script");'
BUILD_TASK_HEARTH='val args = listOf("scripts/tauri-cli/node_modules/@tauri-apps/cli/tauri.js", "android", "android-studio-script");'

[ "$PYPDFIUM2_ANDROID_VERSION" = "$PYPDFIUM2_VERSION" ] \
  || die "common.sh pins pypdfium2 $PYPDFIUM2_VERSION but scripts/android-project.sh pins the Android wheel of $PYPDFIUM2_ANDROID_VERSION: pin the $PYPDFIUM2_ANDROID_PLATFORM wheel of $PYPDFIUM2_VERSION (its SHA-256 and its libpdfium.so's) here too."

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# The mobile identifier: tauri.android.conf.json's, which tauri.ios.conf.json must repeat (one
# identifier for both phones; scripts/apple-project.sh generates gen/apple from it).
mobile_identifier() {
  python3 - "$ROOT/tauri.android.conf.json" "$ROOT/tauri.ios.conf.json" <<'EOF'
import json, sys
ids = []
for path in sys.argv[1:]:
    try:
        with open(path) as f:
            ids.append(json.load(f).get("identifier"))
    except (OSError, ValueError) as e:
        sys.exit(f"cannot read the identifier in {path}: {e}")
if not ids[0] or ids[0] != ids[1]:
    sys.exit(f"tauri.android.conf.json names identifier {ids[0]!r} and tauri.ios.conf.json {ids[1]!r}: "
             "they must name the same mobile identifier; fix the one that is wrong")
print(ids[0])
EOF
}

# The pinned CLI, with nothing from the caller's environment but PATH, HOME and Rust's homes.
tauri_cli() {
  local keep=(PATH="$PATH" HOME="$HOME" LANG=C.UTF-8)
  local var
  for var in CARGO_HOME RUSTUP_HOME RUSTUP_TOOLCHAIN; do
    [ -n "${!var:-}" ] && keep+=("$var=${!var}")
  done
  env -i "${keep[@]}" ANDROID_HOME="$WORK/android-sdk" NDK_HOME="$WORK/android-ndk" node "$CLI_JS" "$@"
}

# Hearth's Android icons: the res/ part of `tauri icon`'s output, into "$1" (a new folder).
make_icons() {
  local out="$1" scratch="$WORK/icons-scratch"
  rm -rf "$scratch"
  # `tauri icon -o DIR` writes the Android icons into DIR/../gen/android/app/src/main/res when
  # that folder exists (as it does beside a real project's icons/).
  mkdir -p "$scratch/gen/android/app/src/main/res"
  (cd "$scratch" && tauri_cli icon "$ICON_SOURCE" -o "$scratch/icons" >"$WORK/icon.log" 2>&1) \
    || { cat "$WORK/icon.log" >&2; die "\`tauri icon $ICON_SOURCE\` failed (its output is above)"; }
  local n
  n="$(find "$scratch/gen/android/app/src/main/res" -path '*/mipmap-*/ic_launcher.png' | wc -l)"
  [ "$n" = 5 ] || die "\`tauri icon\` wrote $n mipmap-*/ic_launcher.png files into gen/android/app/src/main/res, not 5: the pinned CLI places Android icons differently now; adapt make_icons in scripts/android-project.sh"
  mkdir -p "$out"
  cp -R "$scratch/gen/android/app/src/main/res" "$out/res"
  rm -rf "$scratch"
}

# The icons for this source image and CLI: made afresh ($1 = fresh) or taken from the cache.
# Sets ICONS to the folder holding res/ (not printed: a command substitution would not stop at
# a failing step).
ICONS=""
icons_dir() {
  local fresh="$1" key entry
  key="$( { sha256_of "$ICON_SOURCE"; sha256_of "$CLI_DIR/package-lock.json"; uname -sm; echo "icon defaults v1"; } | sha256sum | cut -c1-32)"
  entry="$CACHE_DIR/icons-$key"
  private_dir "$CACHE_DIR"
  if [ "$fresh" != fresh ] && [ -f "$entry/complete" ]; then
    ICONS="$entry"
    return 0
  fi
  rm -rf "$entry.new"
  make_icons "$entry.new"
  touch "$entry.new/complete"
  rm -rf "$entry"
  mv "$entry.new" "$entry"
  ICONS="$entry"
}

# Hearth's changes 2 and 3 to a generated project in "$1", each checked: if the CLI's output no
# longer has the text they expect, this fails rather than guess.
apply_changes() {
  local project="$1" build_task
  [ ! -e "$project/app/src/main/res/xml/data_extraction_rules.xml" ] \
    || die "the generated project already has res/xml/data_extraction_rules.xml: the CLI's template changed; reconcile it with Hearth's rules in scripts/android-project.sh"
  python3 - "$project/app/src/main/AndroidManifest.xml" <<'EOF' || die "could not apply Hearth's backup settings to the generated AndroidManifest.xml (see above)"
import sys
path = sys.argv[1]
with open(path, encoding="utf-8") as f:
    text = f.read()
anchor = "    <application\n"
if text.count(anchor) != 1:
    sys.exit(f"{path}: expected exactly one line '    <application', found {text.count(anchor)}: "
             "the CLI's template changed; update apply_changes in scripts/android-project.sh")
for attr in ("allowBackup", "fullBackupContent", "dataExtractionRules"):
    if attr in text:
        sys.exit(f"{path}: the generated manifest already mentions android:{attr}: the CLI's template "
                 "changed; reconcile it with Hearth's backup settings in scripts/android-project.sh")
text = text.replace(anchor, anchor
                    + '        android:allowBackup="false"\n'
                    + '        android:dataExtractionRules="@xml/data_extraction_rules"\n', 1)
with open(path, "w", encoding="utf-8") as f:
    f.write(text)
EOF
  # Every domain, from both the cloud backup and the device transfer (Android 12+). An exclude
  # without a path excludes the whole domain.
  mkdir -p "$project/app/src/main/res/xml"
  local domains=(root file database sharedpref external device_root device_file device_database device_sharedpref)
  {
    echo '<?xml version="1.0" encoding="utf-8"?>'
    echo '<!-- Written by scripts/android-project.sh: none of the app'"'"'s data (hearth.db, vault.key) leaves the phone. -->'
    echo '<data-extraction-rules>'
    local section domain
    for section in cloud-backup device-transfer; do
      echo "    <$section>"
      for domain in "${domains[@]}"; do echo "        <exclude domain=\"$domain\" />"; done
      echo "    </$section>"
    done
    echo '</data-extraction-rules>'
  } > "$project/app/src/main/res/xml/data_extraction_rules.xml"

  build_task="$(find "$project/buildSrc" -name BuildTask.kt)"
  [ -n "$build_task" ] && [ "$(printf '%s\n' "$build_task" | wc -l)" = 1 ] \
    || die "the generated project has no single buildSrc/.../BuildTask.kt (found: ${build_task:-none}): the CLI's template changed; update apply_changes in scripts/android-project.sh"
  python3 - "$build_task" "$BUILD_TASK_GENERATED" "$BUILD_TASK_HEARTH" <<'EOF' || die "could not point the generated BuildTask.kt at the pinned CLI (see above)"
import sys
path, old, new = sys.argv[1:]
with open(path, encoding="utf-8") as f:
    text = f.read()
if text.count(old) != 1:
    sys.exit(f"{path}: expected exactly one line '{old}', found {text.count(old)}: the CLI's template "
             "changed; update BUILD_TASK_GENERATED in scripts/android-project.sh")
with open(path, "w", encoding="utf-8") as f:
    f.write(text.replace(old, new, 1))
EOF
}

# Generates the whole project into $WORK/out/gen/android; $1 = fresh (icons made anew) or cached.
generate() {
  local fresh="$1" identifier farm="$WORK/out" entry name
  identifier="$(mobile_identifier)" || die "the mobile identifier is not set consistently (see above)"
  install_npm_project "$CLI_DIR" "the Tauri CLI"
  [ -f "$CLI_JS" ] || die "the pinned Tauri CLI is missing ($CLI_JS): run npm ci --prefix scripts/tauri-cli"
  [ -f "$ICON_SOURCE" ] || die "the icon source $ICON_SOURCE is missing"

  mkdir -p "$WORK/android-sdk" "$WORK/android-ndk" "$farm/gen"
  printf 'Pkg.Desc = Placeholder for scripts/android-project.sh\nPkg.Revision = %s\n' "$PLACEHOLDER_NDK_REVISION" \
    > "$WORK/android-ndk/source.properties"
  shopt -s dotglob nullglob
  for entry in "$ROOT"/*; do
    name="$(basename "$entry")"
    case "$name" in .git | gen) continue ;; esac
    ln -s "$entry" "$farm/$name"
  done
  shopt -u dotglob nullglob

  (cd "$farm" && tauri_cli android init --ci --skip-targets-install >"$WORK/init.log" 2>&1) \
    || { cat "$WORK/init.log" >&2; die "\`tauri android init\` failed (its output is above)"; }
  local project="$farm/$GEN_REL"
  [ -f "$project/app/build.gradle.kts" ] \
    || { cat "$WORK/init.log" >&2; die "\`tauri android init\` wrote no $GEN_REL/app/build.gradle.kts"; }
  grep -qF "applicationId = \"$identifier\"" "$project/app/build.gradle.kts" \
    || die "the generated project's applicationId is not $identifier (tauri.android.conf.json): the CLI no longer merges tauri.android.conf.json; pass it with --config in scripts/android-project.sh"

  icons_dir "$fresh"
  cp -R "$ICONS/res/." "$project/app/src/main/res/"
  apply_changes "$project"
}

# Compares the generated project with the working tree's gen/android: every file git would commit
# there (tracked, or untracked and not ignored) against every generated file, content and
# executable bit. Prints the differences; returns 1 if there are any.
compare() {
  local generated="$WORK/out/$GEN_REL" ours="$ROOT/$GEN_REL" f problems=()
  git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1 \
    || die "$ROOT is not a git checkout: the comparison needs git to tell committed files from ignored ones"
  (cd "$generated" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort) > "$WORK/generated.list"
  git -C "$ROOT" -c core.quotePath=false ls-files --cached --others --exclude-standard -- "$GEN_REL" \
    | sed "s|^$GEN_REL/||" | LC_ALL=C sort -u > "$WORK/ours.list"
  while IFS= read -r f; do problems+=("missing: $GEN_REL/$f"); done \
    < <(LC_ALL=C comm -23 "$WORK/generated.list" "$WORK/ours.list")
  while IFS= read -r f; do problems+=("not generated (remove it, or make the script write it): $GEN_REL/$f"); done \
    < <(LC_ALL=C comm -13 "$WORK/generated.list" "$WORK/ours.list")
  while IFS= read -r f; do
    if [ ! -e "$ours/$f" ]; then
      problems+=("missing: $GEN_REL/$f")
    elif ! cmp -s "$generated/$f" "$ours/$f"; then
      problems+=("differs: $GEN_REL/$f")
      if grep -qI . "$generated/$f" 2>/dev/null; then
        diff -u --label "generated/$f" --label "$GEN_REL/$f" "$generated/$f" "$ours/$f" | head -40 >&2 || true
      fi
    else
      local want=- have=-
      [ -x "$generated/$f" ] && want=x
      [ -x "$ours/$f" ] && have=x
      [ "$want" = "$have" ] || problems+=("executable bit differs: $GEN_REL/$f")
    fi
  done < <(LC_ALL=C comm -12 "$WORK/generated.list" "$WORK/ours.list")
  [ ${#problems[@]} -eq 0 ] && return 0
  printf '  %s\n' "${problems[@]}" >&2
  return 1
}

# libpdfium for arm64-v8a in jniLibs: kept if it is the pinned one, else copied from the cache,
# else unpacked from the pinned wheel (its SHA-256 checked first, the library's after).
install_android_pdfium() {
  local target="$ROOT/$PDFIUM_ANDROID_REL" cached="$CACHE_DIR/libpdfium-android-arm64-$PDFIUM_ANDROID_ARM64_SHA256.so"
  git -C "$ROOT" check-ignore -q "$PDFIUM_ANDROID_REL" \
    || die "$PDFIUM_ANDROID_REL is not ignored by git: it is a 6.8 MB binary that is fetched, never committed; restore its line in .gitignore"
  [ -f "$target" ] && [ "$(sha256_of "$target")" = "$PDFIUM_ANDROID_ARM64_SHA256" ] && return 0
  private_dir "$CACHE_DIR"
  if ! { [ -f "$cached" ] && [ "$(sha256_of "$cached")" = "$PDFIUM_ANDROID_ARM64_SHA256" ]; }; then
    log "fetching libpdfium for arm64-v8a from the pypdfium2 $PYPDFIUM2_ANDROID_VERSION $PYPDFIUM2_ANDROID_PLATFORM wheel"
    python3 -m pip --version >/dev/null 2>&1 || die "pip is missing (python3 -m pip): install python3-pip and run again"
    local wheels="$WORK/wheel" wheel
    mkdir -p "$wheels"
    printf 'pypdfium2==%s --hash=sha256:%s\n' "$PYPDFIUM2_ANDROID_VERSION" "$PYPDFIUM2_ANDROID_WHEEL_SHA256" > "$wheels/requirements.txt"
    python3 -m pip download --no-deps --only-binary=:all: --platform "$PYPDFIUM2_ANDROID_PLATFORM" \
      --require-hashes -r "$wheels/requirements.txt" -d "$wheels/download" >&2
    wheel="$(find "$wheels/download" -name "pypdfium2-*-$PYPDFIUM2_ANDROID_PLATFORM.whl" -print -quit)"
    [ -n "$wheel" ] && [ "$(sha256_of "$wheel")" = "$PYPDFIUM2_ANDROID_WHEEL_SHA256" ] \
      || die "the downloaded pypdfium2 $PYPDFIUM2_ANDROID_PLATFORM wheel ($wheel) is not the pinned one (SHA-256 $PYPDFIUM2_ANDROID_WHEEL_SHA256); nothing was installed"
    install_wheel_member "$wheel" pypdfium2_raw/libpdfium.so "$cached" "$PDFIUM_ANDROID_ARM64_SHA256"
  fi
  mkdir -p "$(dirname "$target")"
  cp "$cached" "$target.new"
  [ "$(sha256_of "$target.new")" = "$PDFIUM_ANDROID_ARM64_SHA256" ] \
    || { rm -f "$target.new"; die "copying $cached to $target gave another file; nothing was installed"; }
  chmod 0644 "$target.new"
  mv -f "$target.new" "$target"
}

case "$MODE" in
  check)
    generate cached
    if ! compare; then
      die "$GEN_REL is not what the pinned Tauri CLI and scripts/android-project.sh make of tauri.conf.json, tauri.android.conf.json, Cargo.toml and icons/icon-1024.png (the files above). Do not edit it by hand: change the inputs or the script, then run: scripts/android-project.sh write"
    fi
    pdfium="$ROOT/$PDFIUM_ANDROID_REL"
    if [ -e "$pdfium" ] && [ "$(sha256_of "$pdfium")" != "$PDFIUM_ANDROID_ARM64_SHA256" ]; then
      die "$PDFIUM_ANDROID_REL is not pypdfium2 $PYPDFIUM2_ANDROID_VERSION's arm64 libpdfium.so (SHA-256 $PDFIUM_ANDROID_ARM64_SHA256), and an APK would ship it. Run: scripts/android-project.sh write"
    fi
    log "$GEN_REL matches a fresh generation"
    ;;
  write)
    generate fresh
    # Replace what git would commit under gen/android; ignored files (Gradle's and Android
    # Studio's state, local.properties, signing files, jniLibs) stay as they are.
    git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1 \
      || die "$ROOT is not a git checkout: writing needs git to tell generated files from ignored ones"
    mkdir -p "$ROOT/$GEN_REL"
    while IFS= read -r f; do
      rm -f "$ROOT/$f"
      rmdir -p --ignore-fail-on-non-empty "$(dirname "$ROOT/$f")" 2>/dev/null || true
    done < <(git -C "$ROOT" -c core.quotePath=false ls-files --cached --others --exclude-standard -- "$GEN_REL")
    mkdir -p "$ROOT/$GEN_REL"
    cp -R "$WORK/out/$GEN_REL/." "$ROOT/$GEN_REL/"
    # What was written must be what git commits (no generated file may be ignored).
    compare || die "after writing, $GEN_REL still differs from the generation (above): a generated file is probably ignored by git; fix the ignore rules"
    install_android_pdfium
    log "wrote $GEN_REL (identifier $(mobile_identifier)) and $PDFIUM_ANDROID_REL"
    ;;
esac
