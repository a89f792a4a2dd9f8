//! Backup and restore: one file holding everything Hearth keeps, and a way back from it.
//!
//! A backup is a tar file ([`archive`]) holding a consistent snapshot of the database (taken
//! through SQLite's online backup API while the app keeps writing: `store::snapshot`), every
//! file of the data folder, and a manifest ([`manifest`]) listing each entry's size and SHA-256
//! with the schema version. The settings live in the database and travel with it. Secrets stay
//! sealed in their rows; the vault's key is in a backup only when the owner asks, sealed under
//! their passphrase ([`passphrase`]).
//!
//! Restore ([`restore`]) reads a backup twice: first it checks everything (format, schema,
//! every hash, the passphrase) writing nothing, then it writes into a temporary folder beside
//! the target and renames it into place, so a refused or failed restore leaves nothing behind.
//! Scheduled backups ([`schedule`]) keep the newest few.

pub mod archive;
pub mod error;
pub mod manifest;
pub mod passphrase;
pub mod restore;
pub mod schedule;

pub use archive::{BackupMade, BackupOrigin, KeyChoice, create};
pub use error::BackupError;
pub use restore::{Restored, restore};
