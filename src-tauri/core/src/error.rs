//! The core's error type, and its one mapping to the IPC error.
//!
//! Messages name the file or id involved and say what to do next. None carries secrets.

use std::path::PathBuf;

use hearth_protocol::{ErrorCode, IpcError};

use crate::store::error::StoreError;

/// Result with [`CoreError`].
pub type Result<T, E = CoreError> = std::result::Result<T, E>;

/// Everything the core can fail with.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// The data directory could not be created or written.
    #[error("Hearth could not prepare its data folder {path}: {source}. Check the folder's permissions or set HEARTH_DATA_DIR.")]
    DataDir {
        /// The folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The store failed (a query, the database file).
    #[error(transparent)]
    Store(crate::store::error::StoreError),
    /// Stored JSON could not be read back.
    #[error("Hearth's database holds a record it cannot read: {0}")]
    Corrupt(#[from] serde_json::Error),
    /// A stored row holds a value this build does not know (a status, a kind): never read
    /// as a default, since acting on a guessed status could replay or skip an effect.
    #[error("Hearth's database holds a row it cannot trust: {0}")]
    CorruptRow(String),
    /// Stop reached the work before it did anything irreversible.
    #[error("{0}")]
    Stopped(String),
    /// The caller sent something out of bounds.
    #[error("{0}")]
    InvalidInput(String),
    /// The thing named does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The thing changed or is busy.
    #[error("{0}")]
    Conflict(String),
    /// This caller may not do that (an AG-UI endpoint client naming the owner's thread).
    #[error("{0}")]
    Forbidden(String),
    /// The owner must review an uncertain action (or wait for a stopped one to report) first.
    #[error("{0}")]
    NeedsReview(String),
    /// An approval came after its proposal expired.
    #[error("{0}")]
    Expired(String),
    /// A part Hearth needs is not there or not answering (the computer's engine or image).
    #[error("{0}")]
    Unavailable(String),
    /// An account's sign-in is over (expired, used, revoked): the owner signs in again.
    #[error("{0}")]
    NeedsSignIn(String),
    /// The secrets vault failed.
    #[error(transparent)]
    Vault(Box<crate::vault::error::VaultError>),
    /// A PDF could not be read, filled or rendered.
    #[error(transparent)]
    Pdf(#[from] crate::pdf::PdfError),
    /// A backup or a restore failed.
    #[error(transparent)]
    Backup(Box<crate::backup::BackupError>),
    /// A model provider failed or was stopped.
    #[error(transparent)]
    Provider(#[from] crate::providers::ProviderError),
}

impl CoreError {
    /// The IPC form the UI shows.
    pub fn to_ipc(&self) -> IpcError {
        let code = match self {
            CoreError::InvalidInput(_) => ErrorCode::InvalidInput,
            CoreError::NotFound(_) => ErrorCode::NotFound,
            CoreError::Conflict(_) => ErrorCode::Conflict,
            CoreError::Forbidden(_) => ErrorCode::Forbidden,
            CoreError::NeedsReview(_) => ErrorCode::NeedsReview,
            CoreError::Expired(_) => ErrorCode::ApprovalExpired,
            CoreError::NeedsSignIn(_) => ErrorCode::Forbidden,
            CoreError::Stopped(_) => ErrorCode::Cancelled,
            CoreError::Pdf(crate::pdf::PdfError::LibraryMissing { .. } | crate::pdf::PdfError::LibraryRefused { .. }) => {
                ErrorCode::Unavailable
            }
            CoreError::Pdf(_) => ErrorCode::InvalidInput,
            CoreError::Vault(err) => return err.to_ipc(),
            CoreError::Backup(err) => return err.to_ipc(),
            CoreError::Provider(crate::providers::ProviderError::Cancelled) => ErrorCode::Cancelled,
            CoreError::Provider(_) | CoreError::Unavailable(_) => ErrorCode::Unavailable,
            CoreError::Store(StoreError::DatabaseLocked { .. } | StoreError::DataDir { .. }) | CoreError::DataDir { .. } => {
                ErrorCode::Unavailable
            }
            // `From<StoreError>` unwraps these two, but a `CoreError::Store` built directly keeps
            // its meaning for the window too.
            CoreError::Store(StoreError::NotFound(_)) => ErrorCode::NotFound,
            CoreError::Store(StoreError::Conflict(_)) => ErrorCode::Conflict,
            CoreError::Store(
                StoreError::Query(_)
                | StoreError::Corrupt(_)
                | StoreError::CorruptRow(_)
                | StoreError::DatabaseCorrupt { .. }
                | StoreError::DatabaseOpen { .. }
                | StoreError::Snapshot { .. }
                | StoreError::UpgradeFailed { .. }
                | StoreError::UpgradeRollbackFailed { .. },
            )
            | CoreError::Corrupt(_)
            | CoreError::CorruptRow(_) => ErrorCode::Internal,
        };
        IpcError::new(code, self.to_string())
    }
}

impl From<crate::backup::BackupError> for CoreError {
    /// Boxed: the backup's errors carry paths and would make every result larger.
    fn from(err: crate::backup::BackupError) -> Self {
        CoreError::Backup(Box::new(err))
    }
}

impl From<StoreError> for CoreError {
    /// A conflict stays a conflict, a missing row stays missing, and an untrusted row stays
    /// one, so a caller matching on those sees the same error whichever layer found it.
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Conflict(why) => CoreError::Conflict(why),
            StoreError::NotFound(why) => CoreError::NotFound(why),
            StoreError::CorruptRow(why) => CoreError::CorruptRow(why),
            StoreError::Corrupt(err) => CoreError::Corrupt(err),
            err @ (StoreError::Query(_)
            | StoreError::DatabaseCorrupt { .. }
            | StoreError::DatabaseLocked { .. }
            | StoreError::DatabaseOpen { .. }
            | StoreError::Snapshot { .. }
            | StoreError::UpgradeFailed { .. }
            | StoreError::UpgradeRollbackFailed { .. }
            | StoreError::DataDir { .. }) => CoreError::Store(err),
        }
    }
}

impl From<crate::vault::error::VaultError> for CoreError {
    fn from(err: crate::vault::error::VaultError) -> Self {
        // Boxed: a vault error can itself carry a store error.
        CoreError::Vault(Box::new(err))
    }
}

/// An id from outside that is not a valid id of its kind is the caller's mistake.
impl From<hearth_protocol::ids::IdError> for CoreError {
    fn from(err: hearth_protocol::ids::IdError) -> Self {
        CoreError::InvalidInput(err.to_string())
    }
}

impl From<IpcError> for CoreError {
    fn from(err: IpcError) -> Self {
        match err.code {
            ErrorCode::NotFound => CoreError::NotFound(err.message),
            ErrorCode::Conflict => CoreError::Conflict(err.message),
            ErrorCode::Forbidden => CoreError::Forbidden(err.message),
            ErrorCode::NeedsReview => CoreError::NeedsReview(err.message),
            _ => CoreError::InvalidInput(err.message),
        }
    }
}
