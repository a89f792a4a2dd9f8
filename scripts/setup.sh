#!/usr/bin/env bash
# Installs whatever is missing (idempotent), builds the UI and the app, and launches Hearth
# on its embedded defaults: SQLite in the app-data folder, the offline sample agent, and a
# seeded local mailbox, calendar and PDF. Set HEARTH_NO_LAUNCH=1 to stop after building.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

install_all
build_ui
log "building the app"
cargo build -p hearth --bin hearth --manifest-path "$ROOT/Cargo.toml"
APP="$CARGO_TARGET_DIR/debug/hearth"
log "built $APP"
[ "${HEARTH_NO_LAUNCH:-0}" = 1 ] && exit 0
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  log "no display: launching under xvfb-run (Ctrl-C to quit)"
  exec xvfb-run -a "$APP"
fi
exec "$APP"
