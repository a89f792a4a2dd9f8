//! The store's own failures. `CoreError` wraps them (`From<StoreError>`, which keeps a conflict a
//! conflict and a missing row a missing row for the callers that match on them), and the vault,
//! whose rows are read and written through [`super::secrets`], wraps them in its own. The store
//! names no error of the modules above it, so the core's error and the store do not import
//! each other.

use std::path::PathBuf;

/// Result with [`StoreError`].
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Everything a statement or the database file can fail with. None carries row contents.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A query failed after start-up (SQLite's own words).
    #[error("Hearth's database failed: {0}")]
    Query(#[from] sqlx::Error),
    /// Stored JSON could not be read back.
    #[error("Hearth's database holds a record it cannot read: {0}")]
    Corrupt(#[from] serde_json::Error),
    /// A stored row holds a value this build does not know (a status, a kind): never read as a
    /// default, since acting on a guessed status could replay or skip an effect.
    #[error("Hearth's database holds a row it cannot trust: {0}")]
    CorruptRow(String),
    /// The row named does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The row changed or is held by someone else.
    #[error("{0}")]
    Conflict(String),
    /// The database file exists but is not a usable SQLite database.
    #[error(
        "Hearth's database {path} is damaged or is not a Hearth database ({detail}). Move the file aside (Hearth then creates a new one) or restore a backup, and start Hearth again."
    )]
    DatabaseCorrupt {
        /// The file.
        path: PathBuf,
        /// SQLite's words.
        detail: String,
    },
    /// Another process holds the database locked.
    #[error("Hearth's database {path} is locked by another program (is another Hearth running?). Close it and start Hearth again.")]
    DatabaseLocked {
        /// The file.
        path: PathBuf,
    },
    /// The database could not be opened or migrated for another reason.
    #[error("Hearth could not open its database {path}: {detail}. Check that the folder exists and is writable.")]
    DatabaseOpen {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },
    /// A consistent copy of the database could not be written.
    #[error("Hearth could not copy its database to {path}: {detail}")]
    Snapshot {
        /// The copy's file.
        path: PathBuf,
        /// What went wrong and what to do.
        detail: String,
    },
    /// A database upgrade failed and the database was put back as it was.
    #[error(
        "Hearth could not upgrade its database {path} ({detail}). The database was put back as it was before the upgrade (a copy is also kept at {copy}); start the Hearth version you used before, and report this."
    )]
    UpgradeFailed {
        /// The database.
        path: PathBuf,
        /// Why the upgrade failed.
        detail: String,
        /// The copy taken before it.
        copy: PathBuf,
    },
    /// A database upgrade failed and the copy taken before it could not be put back.
    #[error(
        "Hearth could not upgrade its database {path} ({detail}). Copy {copy} over {path} by hand (and delete {path}-wal and {path}-shm) before starting Hearth again."
    )]
    UpgradeRollbackFailed {
        /// The database.
        path: PathBuf,
        /// Why the upgrade failed, and why putting the copy back failed.
        detail: String,
        /// The copy taken before it.
        copy: PathBuf,
    },
    /// The data folder could not be created.
    #[error("Hearth could not prepare its data folder {path}: {source}. Check the folder's permissions or set HEARTH_DATA_DIR.")]
    DataDir {
        /// The folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}
