//! Every SQL statement Hearth runs lives under this module, one file per table family.
//!
//! One SQLite file in WAL mode, migrated at open from the embedded `migrations/`.

pub mod accounts;
pub mod browser;
pub mod calendar;
pub mod devices;
pub mod documents;
pub mod error;
pub mod failures;
pub mod files;
pub mod goals;
pub mod ideas;
pub mod journal;
pub mod mail;
pub mod mandates;
pub mod mcp;
pub mod memory;
pub mod notifications;
pub mod oauth;
mod open;
mod page_copy;
pub mod proposals;
pub mod schedules;
pub mod secrets;
pub mod settings;
mod snapshot;
pub mod tasks;
pub mod threads;
pub mod upgrade;
pub mod workspace;

pub use error::StoreError;
pub use open::{Store, WAL_AUTOCHECKPOINT_PAGES};

/// The sample workspace's account until the owner changes it (the `local_account` setting):
/// the local calendar's account, and what a claim on a local proposal checks the account against.
pub const DEFAULT_LOCAL_ACCOUNT: &str = "owner@hearth.local";

/// Milliseconds since the Unix epoch, the unit of every `*_at` column.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
