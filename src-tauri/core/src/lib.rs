//! Hearth's headless engine.
//!
//! Everything Hearth does lives here, testable without a webview: the SQLite store, the
//! agent seam and the sample agent, and the run driver that keeps every AG-UI stream
//! well-formed, persisted and cancellable. The Tauri shell only adapts IPC to [`Hearth`].
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod agent;
pub mod agui_server;
pub mod approvals;
pub mod backup;
pub mod browser;
pub mod computer;
pub mod config;
pub mod doc_index;
pub mod documents;
pub mod error;
pub mod failures;
pub mod files;
pub mod finance;
pub mod finance_task;
pub mod fts;
mod hearth;
pub mod ideas;
pub mod journal;
pub mod local_model;
pub mod mcp;
pub mod memory;
pub mod monitors;
pub mod pairing;
pub mod parts;
pub mod pdf;
pub mod process;
pub mod providers;
pub mod runs;
pub mod schedules;
pub mod secret;
pub mod settings;
pub mod store;
pub mod tasks;
pub mod tools;
pub mod trust;
pub mod vault;
pub mod watch;
pub mod workspace;

pub use config::Config;
pub use error::{CoreError, Result};
pub use hearth::Hearth;
pub use runs::RunEvents;
