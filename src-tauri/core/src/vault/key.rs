//! Where the vault's 256-bit data key lives: the OS keychain, or a 0600 key file.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use aes_gcm::aead::OsRng;
use aes_gcm::aead::rand_core::RngCore;
use zeroize::Zeroizing;

use super::error::{Result, VaultError};

/// Bytes in the data key (AES-256).
pub const KEY_LEN: usize = 32;

/// The key file's name inside the data folder, used when there is no OS keychain.
pub const KEY_FILE_NAME: &str = "vault.key";

/// The keychain service Hearth's entry is filed under (the app's identifier).
pub const KEYCHAIN_SERVICE: &str = "dev.hearth.desktop";

/// The keychain account of the vault's data key.
pub const KEYCHAIN_ACCOUNT: &str = "vault-data-key";

/// How long a keychain call may take before Hearth treats the keychain as unavailable.
pub const KEYCHAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// The data key. Zeroized on drop; never printed.
pub(crate) type DataKey = Zeroizing<[u8; KEY_LEN]>;

/// Where the vault's data key is kept. Chosen when the vault opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// An OS keychain entry (macOS Keychain, Windows Credential Manager, Secret Service), holding
    /// the key base64-encoded. Needs the `keychain` feature.
    Keychain {
        /// Service name.
        service: String,
        /// Account name.
        account: String,
    },
    /// A file holding the 32 raw key bytes, created with mode 0600.
    File(PathBuf),
}

impl KeySource {
    /// Hearth's keychain entry.
    pub fn keychain() -> Self {
        KeySource::Keychain { service: KEYCHAIN_SERVICE.to_owned(), account: KEYCHAIN_ACCOUNT.to_owned() }
    }

    /// The key file in `data_dir`.
    pub fn file_in(data_dir: &Path) -> Self {
        KeySource::File(data_dir.join(KEY_FILE_NAME))
    }

    /// Reads the key, creating and storing a new random one if there is none yet.
    pub(crate) async fn load_or_create(&self) -> Result<DataKey> {
        match self {
            KeySource::File(path) => {
                let path = path.clone();
                tokio::task::spawn_blocking(move || file_key(&path))
                    .await
                    .map_err(|err| VaultError::Internal(err.to_string()))?
            }
            KeySource::Keychain { service, account } => {
                let (service, account) = (service.clone(), account.clone());
                let task = {
                    let (service, account) = (service.clone(), account.clone());
                    tokio::task::spawn_blocking(move || keychain::key(&service, &account))
                };
                match tokio::time::timeout(KEYCHAIN_TIMEOUT, task).await {
                    Ok(joined) => joined.map_err(|err| VaultError::Internal(err.to_string()))?,
                    Err(_) => Err(VaultError::KeychainUnavailable {
                        service,
                        account,
                        detail: format!("it did not answer within {} s", KEYCHAIN_TIMEOUT.as_secs()),
                    }),
                }
            }
        }
    }
}

/// A fresh random key from the OS.
pub(crate) fn random_key() -> Result<DataKey> {
    let mut key = Zeroizing::new([0u8; KEY_LEN]);
    OsRng.try_fill_bytes(&mut *key).map_err(|err| VaultError::Random { detail: err.to_string() })?;
    Ok(key)
}

/// Reads the key file, or creates it (0600, written to a temporary file and linked into place,
/// so a crash or a second process never leaves a partial or replaced key).
fn file_key(path: &Path) -> Result<DataKey> {
    let io_err = |source| VaultError::KeyFile { path: path.to_owned(), source };
    match read_key_file(path) {
        Err(VaultError::KeyFile { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
        other => return other,
    }
    let key = random_key()?;
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_err)?;
    let tmp = dir.join(format!(".{KEY_FILE_NAME}.tmp-{}", uuid::Uuid::new_v4()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = (|| {
        let mut file = options.open(&tmp)?;
        file.write_all(&*key)?;
        file.sync_all()?;
        // A hard link never replaces an existing file: if another process created the key
        // first, keep theirs.
        std::fs::hard_link(&tmp, path)
    })();
    let _ = std::fs::remove_file(&tmp);
    match written {
        Ok(()) => {
            if let Ok(dir) = std::fs::File::open(dir) {
                let _ = dir.sync_all();
            }
            tracing::info!(path = %path.display(), "created the vault key file");
            Ok(key)
        }
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => read_key_file(path),
        Err(err) => Err(io_err(err)),
    }
}

fn read_key_file(path: &Path) -> Result<DataKey> {
    let io_err = |source| VaultError::KeyFile { path: path.to_owned(), source };
    let mut file = std::fs::File::open(path).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if meta.len() != KEY_LEN as u64 {
        return Err(VaultError::KeyFileInvalid { path: path.to_owned(), len: meta.len() });
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            tracing::warn!(
                path = %path.display(),
                "the vault key file can be read by other users of this machine; run chmod 600 on it"
            );
        }
    }
    let mut key = Zeroizing::new([0u8; KEY_LEN]);
    file.read_exact(&mut *key).map_err(io_err)?;
    Ok(key)
}

#[cfg(feature = "keychain")]
mod keychain {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use zeroize::Zeroizing;

    use super::{DataKey, KEY_LEN, random_key};
    use crate::vault::error::{Result, VaultError};

    /// Reads the key from the entry, or stores a new one there.
    pub(super) fn key(service: &str, account: &str) -> Result<DataKey> {
        let entry = keyring::Entry::new(service, account).map_err(|err| classify(service, account, &err))?;
        match entry.get_password() {
            Ok(text) => decode(service, account, &Zeroizing::new(text)),
            Err(keyring::Error::NoEntry) => {
                let key = random_key()?;
                let text = Zeroizing::new(STANDARD.encode(key.as_slice()));
                entry.set_password(&text).map_err(|err| classify(service, account, &err))?;
                // Read back what the keychain holds, so two first starts agree on one key.
                let stored = entry.get_password().map_err(|err| classify(service, account, &err))?;
                tracing::info!(service, account, "stored a new vault key in the OS keychain");
                decode(service, account, &Zeroizing::new(stored))
            }
            Err(err) => Err(classify(service, account, &err)),
        }
    }

    fn decode(service: &str, account: &str, text: &str) -> Result<DataKey> {
        let invalid = || VaultError::KeychainKeyInvalid { service: service.to_owned(), account: account.to_owned() };
        let bytes = Zeroizing::new(STANDARD.decode(text.trim()).map_err(|_| invalid())?);
        if bytes.len() != KEY_LEN {
            return Err(invalid());
        }
        let mut key = Zeroizing::new([0u8; KEY_LEN]);
        key.copy_from_slice(&bytes);
        Ok(key)
    }

    /// Sorts keyring's errors into "no keychain here" (fall back to the file) and the rest.
    /// `BadEncoding` carries the entry's bytes, so no error's contents are copied blindly.
    fn classify(service: &str, account: &str, err: &keyring::Error) -> VaultError {
        let (service, account) = (service.to_owned(), account.to_owned());
        match err {
            keyring::Error::PlatformFailure(inner) | keyring::Error::NoStorageAccess(inner) => {
                VaultError::KeychainUnavailable { service, account, detail: inner.to_string() }
            }
            keyring::Error::BadEncoding(_) => VaultError::KeychainKeyInvalid { service, account },
            keyring::Error::NoEntry => {
                VaultError::Keychain { service, account, detail: "the entry disappeared".to_owned() }
            }
            keyring::Error::Ambiguous(_) => VaultError::Keychain {
                service,
                account,
                detail: "more than one entry matches; remove the extra ones in the system's keychain manager"
                    .to_owned(),
            },
            keyring::Error::TooLong(attr, limit) => {
                VaultError::Keychain { service, account, detail: format!("{attr} is longer than {limit}") }
            }
            keyring::Error::Invalid(attr, reason) => {
                VaultError::Keychain { service, account, detail: format!("{attr} is invalid: {reason}") }
            }
            _ => VaultError::Keychain { service, account, detail: "an unknown keychain error".to_owned() },
        }
    }
}

#[cfg(not(feature = "keychain"))]
mod keychain {
    use super::DataKey;
    use crate::vault::error::{Result, VaultError};

    pub(super) fn key(service: &str, account: &str) -> Result<DataKey> {
        Err(VaultError::KeychainUnavailable {
            service: service.to_owned(),
            account: account.to_owned(),
            detail: "this build of Hearth has no keychain support (feature `keychain`)".to_owned(),
        })
    }
}
