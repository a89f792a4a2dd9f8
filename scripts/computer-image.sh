#!/usr/bin/env bash
# Builds the base of the computer's image locally — never pulled: no registry is reachable here,
# and an owner may be offline. A Debian bookworm rootfs from `debootstrap --variant=minbase`
# (bash, coreutils, python3, git; no curl), user `hearth` = uid/gid 1000 and an empty
# /workspace owned by it, fed to `docker import`.
#
# Hearth builds its own layer over this base (the workspace file helper and the image's
# settings: src-tauri/core/src/computer/Dockerfile) through the engine's build API, on first use
# and on Settings → Computer → Rebuild; this script only makes what needs root and a mirror.
#
# The base is tagged by the content hash of this file (`hearth-computer-base:<hash>`;
# `hearth_core::computer::base_image` derives the same), so an unchanged recipe is never
# rebuilt: the script prints the tag and exits when the engine has it. Prints the tag on
# stdout; progress goes to stderr. Needs root (debootstrap) and an engine (scripts/common.sh
# `ensure_docker`). Takes about a minute cold, well under a second warm.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SUITE=bookworm
MIRROR="${HEARTH_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PACKAGES=python3,git,ca-certificates

# The recipe's content is this file: changing a package or a step changes the tag.
hash="$(sha256sum <"${BASH_SOURCE[0]}" | cut -c1-16)"
tag="hearth-computer-base:$hash"
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag"
  exit 0
fi

log "building $tag (debootstrap $SUITE minbase + $PACKAGES; a few minutes)"
work="$(mktemp -d /var/tmp/hearth-image.XXXXXX)"
trap 'as_root rm -rf "$work"' EXIT
rootfs="$work/rootfs"
as_root debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 \
  || { tail -20 "$work/debootstrap.log" >&2; die "debootstrap failed (is $MIRROR reachable?)"; }

# The one unprivileged user, and its workspace (the volume mounted there takes this owner).
as_root chroot "$rootfs" groupadd --gid 1000 hearth
as_root chroot "$rootfs" useradd --uid 1000 --gid 1000 --home-dir /workspace --no-create-home --shell /bin/bash hearth
as_root install -d -m 0700 -o 1000 -g 1000 "$rootfs/workspace"
# Smaller and quieter: no apt lists, caches, docs or man pages in the image.
as_root rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* "$rootfs"/usr/share/doc/* \
  "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/*

as_root tar -C "$rootfs" -c . | docker import --change "LABEL dev.hearth.base-recipe=$hash" - "$tag" >/dev/null
log "built $tag ($(docker image inspect --format '{{.Size}}' "$tag") bytes)"
echo "$tag"
