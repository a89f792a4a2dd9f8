//! Where the vault's 256-bit data key lives: the OS keychain, or a 0600 key file.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use aes_gcm::aead::OsRng;
use aes_gcm::aead::rand_core::RngCore;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use zeroize::Zeroizing;

use super::error::{Result, VaultError};

/// Bytes in the data key (AES-256).
pub const KEY_LEN: usize = 32;

/// The key file's name inside the data folder, used when there is no OS keychain.
pub const KEY_FILE_NAME: &str = "vault.key";

/// The lock file in the data folder held while a new keychain key is created.
pub const LOCK_FILE_NAME: &str = "vault.lock";

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

/// What the vault needs from an OS keychain: one entry's text, read and written whole.
///
/// [`OsKeychain`] is the system's (through the `keyring` crate); tests pass a double. Both
/// methods block. Failures are [`VaultError`]s naming the entry:
/// [`VaultError::KeychainUnavailable`] when no keychain answers (none on this session, locked,
/// access denied), the other `Keychain*` variants otherwise. Errors never carry the entry's text.
pub trait Keychain: Send + Sync {
    /// The entry's text, or `None` when there is no such entry.
    fn read(&self, service: &str, account: &str) -> Result<Option<Zeroizing<String>>>;

    /// Stores `text` in the entry, replacing what is there.
    fn write(&self, service: &str, account: &str, text: &str) -> Result<()>;
}

/// The operating system's keychain (needs the `keychain` feature; without it, every call is
/// [`VaultError::KeychainUnavailable`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct OsKeychain;

impl Keychain for OsKeychain {
    fn read(&self, service: &str, account: &str) -> Result<Option<Zeroizing<String>>> {
        keychain::read(service, account)
    }

    fn write(&self, service: &str, account: &str, text: &str) -> Result<()> {
        keychain::write(service, account, text)
    }
}

/// A key as it was loaded: whether this call created it.
pub(crate) struct Loaded {
    /// The key.
    pub(crate) key: DataKey,
    /// It did not exist before this call.
    pub(crate) created: bool,
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
    ///
    /// A new keychain key is created while holding `<lock_dir>/vault.lock`, after reading the
    /// entry again, so first starts racing on one data folder store one key and all use it
    /// (the keychain itself has no create-if-absent).
    pub(crate) async fn load_or_create(&self, keychain: &Arc<dyn Keychain>, lock_dir: &Path) -> Result<Loaded> {
        match self {
            KeySource::File(path) => {
                let path = path.clone();
                tokio::task::spawn_blocking(move || file_key(&path)).await.map_err(|err| VaultError::Internal(err.to_string()))?
            }
            KeySource::Keychain { service, account } => {
                let (chain, s, a) = (keychain.clone(), service.clone(), account.clone());
                let read = move || read_keychain_key(&*chain, &s, &a);
                if let Some(key) = bounded(service, account, KEYCHAIN_TIMEOUT, read).await? {
                    return Ok(Loaded { key, created: false });
                }
                let (chain, s, a) = (keychain.clone(), service.clone(), account.clone());
                let lock = lock_dir.join(LOCK_FILE_NAME);
                let create = move || create_keychain_key(&*chain, &s, &a, &lock);
                bounded(service, account, KEYCHAIN_TIMEOUT, create).await
            }
        }
    }
}

/// Runs a keychain call on the blocking pool, giving up after `limit` ([`KEYCHAIN_TIMEOUT`];
/// the call itself cannot be cancelled, its answer is then dropped).
async fn bounded<T: Send + 'static>(
    service: &str,
    account: &str,
    limit: Duration,
    call: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    match tokio::time::timeout(limit, tokio::task::spawn_blocking(call)).await {
        Ok(joined) => joined.map_err(|err| VaultError::Internal(err.to_string()))?,
        Err(_) => Err(VaultError::KeychainUnavailable {
            service: service.to_owned(),
            account: account.to_owned(),
            detail: format!("it did not answer within {limit:?}"),
        }),
    }
}

/// The key in the keychain entry, if it has one.
fn read_keychain_key(keychain: &dyn Keychain, service: &str, account: &str) -> Result<Option<DataKey>> {
    keychain.read(service, account)?.map(|text| decode(service, account, &text)).transpose()
}

/// Stores a new key in the keychain entry unless another start did first (checked under the
/// lock), and returns what the entry holds afterwards.
fn create_keychain_key(keychain: &dyn Keychain, service: &str, account: &str, lock: &Path) -> Result<Loaded> {
    let _held = lock_file(lock)?;
    if let Some(key) = read_keychain_key(keychain, service, account)? {
        return Ok(Loaded { key, created: false });
    }
    let key = random_key()?;
    let text = Zeroizing::new(STANDARD.encode(key.as_slice()));
    keychain.write(service, account, &text)?;
    // Read back what the keychain holds, so a writer outside the lock (another data folder on
    // this account) and this one still agree on one key.
    let stored = read_keychain_key(keychain, service, account)?.ok_or_else(|| VaultError::Keychain {
        service: service.to_owned(),
        account: account.to_owned(),
        detail: "the entry was gone right after Hearth stored it".to_owned(),
    })?;
    tracing::info!(service, account, "stored a new vault key in the OS keychain");
    Ok(Loaded { key: stored, created: true })
}

/// Opens and locks (exclusively, blocking) the lock file, created 0600; unlocked when the
/// returned file closes, also when the process dies.
fn lock_file(path: &Path) -> Result<std::fs::File> {
    let lock_err = |source| VaultError::KeyLock { path: path.to_owned(), source };
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path).map_err(lock_err)?;
    fs4::FileExt::lock(&file).map_err(lock_err)?;
    Ok(file)
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

/// A fresh random key from the OS.
pub(crate) fn random_key() -> Result<DataKey> {
    let mut key = Zeroizing::new([0u8; KEY_LEN]);
    OsRng.try_fill_bytes(&mut *key).map_err(|err| VaultError::Random { detail: err.to_string() })?;
    Ok(key)
}

/// Reads the key file, or creates it (0600, written to a temporary file and linked into place,
/// so a crash or a second process never leaves a partial or replaced key).
fn file_key(path: &Path) -> Result<Loaded> {
    let io_err = |source| VaultError::KeyFile { path: path.to_owned(), source };
    match read_key_file(path) {
        Err(VaultError::KeyFile { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
        other => return other.map(|key| Loaded { key, created: false }),
    }
    let key = random_key()?;
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(io_err)?;
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
            Ok(Loaded { key, created: true })
        }
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => read_key_file(path).map(|key| Loaded { key, created: false }),
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
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            match file.set_permissions(std::fs::Permissions::from_mode(mode & 0o700)) {
                Ok(()) => tracing::warn!(
                    path = %path.display(),
                    from = format_args!("{mode:o}"),
                    "the vault key file could be read by other users of this machine; it is now private to you"
                ),
                Err(err) => tracing::warn!(
                    path = %path.display(),
                    error = %err,
                    "the vault key file can be read by other users of this machine and Hearth could not change that; run chmod 600 on it"
                ),
            }
        }
    }
    let mut key = Zeroizing::new([0u8; KEY_LEN]);
    file.read_exact(&mut *key).map_err(io_err)?;
    Ok(key)
}

// Android has no keychain keyring can reach (its Keystore holds keys that never leave it, which
// needs a wrapping key through JNI: SECURITY.md's "Phones"); there the key file in the app's
// private folder is used, as without the feature.
#[cfg(all(feature = "keychain", not(target_os = "android")))]
mod keychain {
    use zeroize::Zeroizing;

    use crate::vault::error::{Result, VaultError};

    pub(super) fn read(service: &str, account: &str) -> Result<Option<Zeroizing<String>>> {
        let entry = keyring::Entry::new(service, account).map_err(|err| classify(service, account, &err))?;
        match entry.get_password() {
            Ok(text) => Ok(Some(Zeroizing::new(text))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(err) => Err(classify(service, account, &err)),
        }
    }

    pub(super) fn write(service: &str, account: &str, text: &str) -> Result<()> {
        let entry = keyring::Entry::new(service, account).map_err(|err| classify(service, account, &err))?;
        entry.set_password(text).map_err(|err| classify(service, account, &err))
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
            keyring::Error::NoEntry => VaultError::Keychain { service, account, detail: "the entry disappeared".to_owned() },
            keyring::Error::Ambiguous(_) => VaultError::Keychain {
                service,
                account,
                detail: "more than one entry matches; remove the extra ones in the system's keychain manager".to_owned(),
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

#[cfg(any(not(feature = "keychain"), target_os = "android"))]
mod keychain {
    use zeroize::Zeroizing;

    use crate::vault::error::{Result, VaultError};

    fn unavailable(service: &str, account: &str) -> VaultError {
        VaultError::KeychainUnavailable {
            service: service.to_owned(),
            account: account.to_owned(),
            detail: if cfg!(target_os = "android") {
                "Hearth keeps its key in the app's private folder on Android".to_owned()
            } else {
                "this build of Hearth has no keychain support (feature `keychain`)".to_owned()
            },
        }
    }

    pub(super) fn read(service: &str, account: &str) -> Result<Option<Zeroizing<String>>> {
        Err(unavailable(service, account))
    }

    pub(super) fn write(service: &str, account: &str, _text: &str) -> Result<()> {
        Err(unavailable(service, account))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A keychain whose entry appears from "another start" between the first read and the
    /// creation: the answers to successive reads are scripted.
    struct Scripted {
        reads: Mutex<Vec<Option<String>>>,
        writes: AtomicUsize,
    }

    impl Keychain for Scripted {
        fn read(&self, _service: &str, _account: &str) -> Result<Option<Zeroizing<String>>> {
            let mut reads = self.reads.lock().unwrap();
            Ok(if reads.is_empty() { None } else { reads.remove(0) }.map(Zeroizing::new))
        }

        fn write(&self, _service: &str, _account: &str, _text: &str) -> Result<()> {
            self.writes.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_key_another_start_stored_first_is_used_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = [7u8; KEY_LEN];
        let scripted = Arc::new(Scripted { reads: Mutex::new(vec![None, Some(STANDARD.encode(theirs))]), writes: AtomicUsize::new(0) });
        let keychain: Arc<dyn Keychain> = scripted.clone();
        let loaded = KeySource::keychain().load_or_create(&keychain, dir.path()).await.unwrap();
        assert_eq!(*loaded.key, theirs);
        assert!(!loaded.created);
        // It read again under the lock and wrote nothing.
        assert_eq!(scripted.writes.load(Ordering::SeqCst), 0);
        assert!(scripted.reads.lock().unwrap().is_empty(), "both scripted reads were made");
        assert!(dir.path().join(LOCK_FILE_NAME).exists());
    }

    #[tokio::test]
    async fn a_keychain_that_does_not_answer_is_unavailable_after_the_limit() {
        let (release, stuck) = std::sync::mpsc::channel::<()>();
        let limit = Duration::from_millis(20);
        let err = bounded("svc", "acct", limit, move || {
            let _ = stuck.recv();
            Ok(())
        })
        .await
        .unwrap_err();
        assert!(matches!(&err, VaultError::KeychainUnavailable { detail, .. } if detail == "it did not answer within 20ms"), "{err:?}");
        // The stuck call ends when released; its answer is dropped.
        release.send(()).unwrap();
        assert_eq!(format!("{KEYCHAIN_TIMEOUT:?}"), "30s");
    }
}
