//! What the vault can fail with. Messages name the secret, file or keychain entry and say what
//! to do; none carries key or secret bytes.

use std::path::PathBuf;

use hearth_protocol::{ErrorCode, IpcError};

use crate::store::error::StoreError;

/// Result with [`VaultError`].
pub type Result<T, E = VaultError> = std::result::Result<T, E>;

/// Everything the vault can fail with.
#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    /// The name is empty, too long or has characters outside the allowed set. The name itself is
    /// not repeated (a secret pasted into the name field must not reach a log).
    #[error("A secret name must be 1 to {max} characters of letters, digits and . _ - : @ + (this one has {len} characters or others).")]
    InvalidName {
        /// Characters in the rejected name.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The secret is longer than the vault stores.
    #[error("The secret {name} is too long ({len} bytes; at most {max}). It was not stored.")]
    TooLong {
        /// The secret's name.
        name: String,
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Authentication failed: wrong key, altered ciphertext, or a row moved to another name.
    #[error("Hearth could not decrypt the secret {name}: the vault key changed or the data was altered. Enter it again in Settings.")]
    Decrypt {
        /// The secret's name.
        name: String,
    },
    /// The row was written in a format this Hearth does not know.
    #[error(
        "The secret {name} was stored by a newer Hearth (vault format {format}). Update Hearth, or enter the secret again in Settings."
    )]
    UnsupportedFormat {
        /// The secret's name.
        name: String,
        /// The row's format.
        format: i64,
    },
    /// Encryption itself failed (not expected for secrets within the size limit).
    #[error("Hearth could not encrypt the secret {name}. It was not stored.")]
    Encrypt {
        /// The secret's name.
        name: String,
    },
    /// The OS random number generator failed.
    #[error("Hearth could not get random bytes from the operating system ({detail}). Nothing was stored.")]
    Random {
        /// The OS error.
        detail: String,
    },
    /// The key file could not be read or created.
    #[error("Hearth could not read or create its vault key file {path}: {source}. Check the data folder's permissions.")]
    KeyFile {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The key file exists but does not hold a 32-byte key.
    #[error(
        "Hearth's vault key file {path} is not a vault key ({len} bytes; expected 32). Restore it from a backup, or move it aside and enter your secrets again in Settings."
    )]
    KeyFileInvalid {
        /// The file.
        path: PathBuf,
        /// Its length.
        len: u64,
    },
    /// No usable OS keychain (no Secret Service on this session, locked, or denied).
    #[error("The OS keychain is not available for {service}/{account}: {detail}.")]
    KeychainUnavailable {
        /// Keychain service.
        service: String,
        /// Keychain account.
        account: String,
        /// The platform's words.
        detail: String,
    },
    /// The keychain did not answer, and stored secrets were sealed with the key it holds: a new
    /// key would leave every one of them unreadable, so the vault does not open.
    #[error(
        "Hearth's {secrets} stored secret(s) are sealed with its key in the OS keychain ({service}/{account}), and the keychain is unavailable; unlock it and try again ({detail})."
    )]
    KeychainNeeded {
        /// Keychain service.
        service: String,
        /// Keychain account.
        account: String,
        /// How many secrets are stored.
        secrets: usize,
        /// The platform's words.
        detail: String,
    },
    /// The lock file held while a new key is created could not be opened or locked.
    #[error("Hearth could not lock {path} to create its vault key: {source}. Check the data folder's permissions.")]
    KeyLock {
        /// The lock file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The keychain entry exists but does not hold a vault key.
    #[error(
        "The OS keychain entry {service}/{account} does not hold a Hearth vault key. Remove it in the system's keychain manager, then enter your secrets again in Settings."
    )]
    KeychainKeyInvalid {
        /// Keychain service.
        service: String,
        /// Keychain account.
        account: String,
    },
    /// Another keychain failure.
    #[error("Hearth could not use the OS keychain entry {service}/{account}: {detail}.")]
    Keychain {
        /// Keychain service.
        service: String,
        /// Keychain account.
        account: String,
        /// What went wrong (never the entry's contents).
        detail: String,
    },
    /// The database failed, in the store's own words (which already say it was the database).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A blocking task ended abnormally.
    #[error("Hearth's vault stopped unexpectedly ({0}). Try again.")]
    Internal(String),
}

impl VaultError {
    /// The IPC form the UI shows.
    pub fn to_ipc(&self) -> IpcError {
        let code = match self {
            VaultError::InvalidName { .. } | VaultError::TooLong { .. } => ErrorCode::InvalidInput,
            VaultError::Decrypt { .. } | VaultError::UnsupportedFormat { .. } => ErrorCode::Conflict,
            VaultError::KeyFile { .. }
            | VaultError::KeyFileInvalid { .. }
            | VaultError::KeychainUnavailable { .. }
            | VaultError::KeychainNeeded { .. }
            | VaultError::KeyLock { .. }
            | VaultError::KeychainKeyInvalid { .. }
            | VaultError::Keychain { .. }
            | VaultError::Random { .. } => ErrorCode::Unavailable,
            VaultError::Encrypt { .. } | VaultError::Internal(_) | VaultError::Store(_) => ErrorCode::Internal,
        };
        IpcError::new(code, self.to_string())
    }
}
