//! What a backup or a restore can fail with. No message carries a passphrase or a key.

use std::path::PathBuf;

/// Everything [`super::create`] and [`super::restore`] can fail with.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    /// Reading or writing a file failed.
    #[error("Hearth could not {doing} {path}: {source}. Check the folder exists, is writable and has free space.")]
    Io {
        /// What Hearth was doing ("write the backup", "read the backup" …).
        doing: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The database could not be copied.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The file is not a Hearth backup, or it was altered or cut short.
    #[error("{path} is not a usable Hearth backup: {why}. Nothing was restored; choose another backup file.")]
    Damaged {
        /// The backup file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The backup was made by a newer Hearth (its database is newer than this one knows).
    #[error(
        "{path} was made by a newer Hearth (database version {found}; this Hearth knows up to {known}). Nothing was restored; install the newer Hearth and restore with it."
    )]
    TooNew {
        /// The backup file.
        path: PathBuf,
        /// The backup's schema version.
        found: i64,
        /// The newest this build knows.
        known: i64,
    },
    /// Restore goes only into an empty or new folder.
    #[error("{path} is not empty. Nothing was restored; choose a new or empty folder to restore into.")]
    TargetNotEmpty {
        /// The folder.
        path: PathBuf,
    },
    /// The passphrase does not open the vault key in the backup.
    #[error("The passphrase does not open the vault key in {path}. Nothing was restored; check the passphrase and try again.")]
    WrongPassphrase {
        /// The backup file.
        path: PathBuf,
    },
    /// The owner asked to include the vault key but the passphrase is too weak.
    #[error("A passphrase protecting the vault key needs at least {min} characters. Choose a longer one.")]
    WeakPassphrase {
        /// The least length.
        min: usize,
    },
    /// Something the owner gave is out of bounds (a kept count, a folder).
    #[error("{0}")]
    InvalidInput(String),
    /// A step stopped unexpectedly (a worker thread ended, the manifest could not be encoded).
    #[error("Hearth's backup stopped unexpectedly: {0}. Try again; if it happens again, report it.")]
    Internal(String),
    /// Sealing or opening the key failed for another reason (the OS random source).
    #[error("Hearth could not protect the vault key: {0}")]
    Crypto(String),
}

impl BackupError {
    /// The IPC form: the owner's mistakes are invalid input, the rest unavailable or internal.
    pub fn to_ipc(&self) -> hearth_protocol::IpcError {
        use hearth_protocol::ErrorCode;
        let code = match self {
            BackupError::Damaged { .. }
            | BackupError::TooNew { .. }
            | BackupError::TargetNotEmpty { .. }
            | BackupError::WrongPassphrase { .. }
            | BackupError::WeakPassphrase { .. }
            | BackupError::InvalidInput(_) => ErrorCode::InvalidInput,
            BackupError::Io { .. } => ErrorCode::Unavailable,
            BackupError::Store(_) | BackupError::Crypto(_) | BackupError::Internal(_) => ErrorCode::Internal,
        };
        hearth_protocol::IpcError::new(code, self.to_string())
    }
}
