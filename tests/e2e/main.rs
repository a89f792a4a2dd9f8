//! End-to-end tests through the real webview: the built app under tauri-driver and
//! WebKitWebDriver, driven by fantoccini. Run by `scripts/test.sh` under Xvfb with
//! `HEARTH_E2E_APP` pointing at the built binary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, clippy::print_stderr)]

mod chat;
mod ipc;

mod startup;
