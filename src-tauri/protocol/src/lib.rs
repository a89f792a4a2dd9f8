//! Hearth's wire types, shared by the backend and the wasm UI.
//!
//! Everything that crosses a process or language boundary is defined here once, so the
//! compiler checks both sides: AG-UI 1.0 events (the agent stream), Hearth's IPC payloads,
//! tool names with their side-effect class, and the typed IPC error.
//! The crate depends only on serde and friends so it builds for `wasm32-unknown-unknown`.
#![deny(missing_docs)]

pub mod accounts;
pub mod agui;
pub mod approvals;
pub mod backup;
pub mod browser;
pub mod commands;
pub mod computer;
pub mod devices;
pub mod documents;
pub mod error;
pub mod failures;
pub mod files;
pub mod finance;
pub mod goals;
pub mod ideas;
pub mod ids;
pub mod ipc;
pub mod mail;
pub mod mandates;
pub mod mcp;
pub mod memory;
pub mod notifications;
pub mod pdf;
pub mod provenance;
pub mod reveal;
pub mod schedules;
pub mod settings;
pub mod sse;
pub mod tasks;
pub mod tools;
pub mod web_search;

pub use error::{ErrorCode, IpcError};
pub use tools::{EffectClass, ToolName, ToolRef};
