//! IPC commands, one file per room. Each validates, delegates to the core, maps the error.

pub mod accounts;
pub mod app;
pub mod approvals;
pub mod backup;
pub mod browser;
pub mod chat;
pub mod computer;
pub mod devices;
pub mod documents;
pub mod failures;
pub mod files;
pub mod goals;
pub mod host_link;
pub mod inbox;
pub mod mail;
pub mod mandates;
pub mod mcp;
pub mod memory;
pub mod settings;
pub mod tasks;
pub mod web_search;
