//! End-to-end tests through the real webview: the built app under tauri-driver and
//! WebKitWebDriver, driven by fantoccini. Run by `scripts/test.sh` under Xvfb.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, clippy::print_stderr)]

mod accounts;
mod activity;
mod browser;
mod chat;
mod choices;
mod computer;
mod data;
mod documents;
mod failures;
mod files;
mod finance;
mod frame;
mod goals;
mod harness;
mod home;
mod inbox;
mod ipc;
mod phone;
mod search;
mod settings;
mod startup;
mod tools;
mod trust;

/// The app binary cargo built for this test run, with `e2e`: `hearth-e2e`, which no build
/// without `e2e` overwrites (src-tauri/src/e2e_main.rs).
const APP: &str = env!("CARGO_BIN_EXE_hearth-e2e");
