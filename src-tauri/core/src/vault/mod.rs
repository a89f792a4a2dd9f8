//! The secrets vault: named secrets (model API keys, OAuth tokens) encrypted at rest.
//!
//! Each secret is sealed with AES-256-GCM under one 256-bit data key, with a fresh random
//! 96-bit nonce per write and associated data `hearth-vault:v<format>:<name>`, so a ciphertext
//! copied to another name (or altered, or read with another key) fails to decrypt. Rows live
//! in the `secrets` table (`crate::store::secrets`); the data key lives in the OS keychain
//! where one exists, else in `<data>/vault.key` (0600). See [`KeySource`]. The key never
//! forks: a keychain that does not answer while secrets are stored is an error
//! ([`VaultError::KeychainNeeded`]), never a reason to make a second key.
//!
//! Secrets go in and come out as [`SecretString`]: zeroized on drop, `[REDACTED]` in Debug.

pub mod error;
mod key;

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use aes_gcm::aead::rand_core::RngCore;
use aes_gcm::aead::{AeadInPlace, KeyInit, OsRng};
use aes_gcm::{Aes256Gcm, Nonce};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

pub use error::{Result, VaultError};
pub use key::{
    KEY_FILE_NAME, KEY_LEN, KEYCHAIN_ACCOUNT, KEYCHAIN_SERVICE, KEYCHAIN_TIMEOUT, KeySource, Keychain, LOCK_FILE_NAME, OsKeychain,
};
pub use secrecy::{ExposeSecret, SecretString};

use crate::store::secrets::SecretRow;
use crate::store::{Store, now_ms};

/// The row format this Hearth writes (bound into the associated data).
pub const FORMAT: i64 = 1;

/// The longest secret name.
pub const MAX_NAME_LEN: usize = 200;

/// The longest secret, in bytes (OAuth tokens and API keys are far shorter).
pub const MAX_SECRET_LEN: usize = 64 * 1024;

/// Bytes in an AES-GCM nonce.
const NONCE_LEN: usize = 12;

/// Named secrets, encrypted at rest. Cheap to clone.
#[derive(Clone)]
pub struct Vault {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    cipher: Aes256Gcm,
    key_id: String,
    source: KeySource,
    /// Kept only for a backup the owner asks to hold the key ([`Vault::data_key`]).
    key: key::DataKey,
}

impl fmt::Debug for Vault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Vault").field("key_id", &self.inner.key_id).field("source", &self.inner.source).finish()
    }
}

impl Vault {
    /// Opens the vault with its data key from `key` (created there if it has none yet; a new
    /// keychain key is created under a lock file beside the database).
    pub async fn open(store: Store, key: KeySource) -> Result<Self> {
        let keychain: Arc<dyn Keychain> = Arc::new(OsKeychain);
        let lock_dir = store.path().parent().unwrap_or_else(|| Path::new(".")).to_owned();
        let loaded = key.load_or_create(&keychain, &lock_dir).await?;
        Ok(Self::with_key(store, key, &loaded.key))
    }

    /// Opens the vault for the data folder `data_dir` with the OS keychain; see
    /// [`Vault::open_in_with`].
    pub async fn open_in(store: Store, data_dir: &Path) -> Result<Self> {
        Self::open_in_with(store, data_dir, Arc::new(OsKeychain)).await
    }

    /// Opens the vault for the data folder `data_dir`: the key file if one is already there (it
    /// holds the key existing secrets were sealed with), else `keychain`, else — with a warning
    /// — a new key file `<data_dir>/vault.key`.
    ///
    /// The key never forks: when the keychain does not answer but secrets are stored (so they
    /// were sealed with the keychain's key), this fails with
    /// [`VaultError::KeychainNeeded`] rather than making a new key they would not open with.
    /// First starts racing on one data folder create one keychain key (see
    /// [`LOCK_FILE_NAME`]).
    pub async fn open_in_with(store: Store, data_dir: &Path, keychain: Arc<dyn Keychain>) -> Result<Self> {
        let file = KeySource::file_in(data_dir);
        if let KeySource::File(path) = &file
            && path.exists()
        {
            let loaded = file.load_or_create(&keychain, data_dir).await?;
            return Ok(Self::with_key(store, file, &loaded.key));
        }
        let source = KeySource::keychain();
        match source.load_or_create(&keychain, data_dir).await {
            Ok(loaded) => {
                if loaded.created {
                    let orphaned = store.secret_names().await?.len();
                    if orphaned > 0 {
                        tracing::warn!(
                            orphaned,
                            "the OS keychain had no vault key although secrets are stored; Hearth made a new key, and those secrets must be entered again in Settings"
                        );
                    }
                }
                return Ok(Self::with_key(store, source, &loaded.key));
            }
            Err(VaultError::KeychainUnavailable { service, account, detail }) => {
                let secrets = store.secret_names().await?.len();
                if secrets > 0 {
                    return Err(VaultError::KeychainNeeded { service, account, secrets, detail });
                }
                tracing::warn!(
                    reason = %detail,
                    "the OS keychain is unavailable and no secrets are stored yet; Hearth keeps the vault key in a file readable only by you (vault.key in the data folder)"
                );
            }
            Err(other) => return Err(other),
        }
        let loaded = file.load_or_create(&keychain, data_dir).await?;
        Ok(Self::with_key(store, file, &loaded.key))
    }

    fn with_key(store: Store, source: KeySource, data_key: &key::DataKey) -> Self {
        let cipher = Aes256Gcm::new(aes_gcm::Key::<Aes256Gcm>::from_slice(&**data_key));
        let key_id = key_id(data_key);
        Self { inner: Arc::new(Inner { store, cipher, key_id, source, key: data_key.clone() }) }
    }

    /// Where this vault's key came from.
    pub fn key_source(&self) -> &KeySource {
        &self.inner.source
    }

    /// The data key itself, for a backup the owner asked to include it in (sealed there under
    /// their passphrase: `backup::passphrase`). Nothing else reads it.
    pub(crate) fn data_key(&self) -> &[u8; KEY_LEN] {
        &self.inner.key
    }

    /// A fingerprint of the data key (a hash prefix, safe to show and log).
    pub fn key_id(&self) -> &str {
        &self.inner.key_id
    }

    /// Stores (or replaces) the secret `name`.
    pub async fn put(&self, name: &str, secret: &SecretString) -> Result<()> {
        let row = self.seal(name, secret)?;
        self.inner.store.put_secret_row(&row).await?;
        Ok(())
    }

    /// Stores the secret `name` unless one is stored already (another process may have made it
    /// first: a key both must share); whether this one was stored.
    pub async fn put_if_absent(&self, name: &str, secret: &SecretString) -> Result<bool> {
        let row = self.seal(name, secret)?;
        Ok(self.inner.store.insert_secret_row_if_absent(&row).await?)
    }

    /// `secret` sealed as the row for `name`.
    fn seal(&self, name: &str, secret: &SecretString) -> Result<SecretRow> {
        check_name(name)?;
        let plain = secret.expose_secret().as_bytes();
        if plain.len() > MAX_SECRET_LEN {
            return Err(VaultError::TooLong { name: name.to_owned(), len: plain.len(), max: MAX_SECRET_LEN });
        }
        let mut nonce = [0u8; NONCE_LEN];
        OsRng.try_fill_bytes(&mut nonce).map_err(|err| VaultError::Random { detail: err.to_string() })?;
        // Sized for the tag up front, so the plaintext is never left behind by a reallocation;
        // after sealing it holds only ciphertext, and is wiped anyway if sealing fails.
        let mut buffer = Zeroizing::new(Vec::with_capacity(plain.len() + 16));
        buffer.extend_from_slice(plain);
        self.inner
            .cipher
            .encrypt_in_place(Nonce::from_slice(&nonce), aad(name, FORMAT).as_bytes(), &mut *buffer)
            .map_err(|_| VaultError::Encrypt { name: name.to_owned() })?;
        Ok(SecretRow {
            name: name.to_owned(),
            format: FORMAT,
            nonce: nonce.to_vec(),
            ciphertext: buffer.to_vec(),
            key_id: self.inner.key_id.clone(),
            updated_at: now_ms(),
        })
    }

    /// The secret `name`, or `None` if there is none. A wrong key or altered row is
    /// [`VaultError::Decrypt`].
    pub async fn get(&self, name: &str) -> Result<Option<SecretString>> {
        check_name(name)?;
        let Some(row) = self.inner.store.secret_row(name).await? else {
            return Ok(None);
        };
        self.open_row(&row).map(Some)
    }

    /// Removes the secret `name`; true if there was one.
    pub async fn delete(&self, name: &str) -> Result<bool> {
        check_name(name)?;
        Ok(self.inner.store.delete_secret_row(name).await?)
    }

    /// The names of every stored secret, sorted. Nothing is decrypted.
    pub async fn names(&self) -> Result<Vec<String>> {
        Ok(self.inner.store.secret_names().await?)
    }

    fn open_row(&self, row: &SecretRow) -> Result<SecretString> {
        let name = row.name.as_str();
        let fail = || VaultError::Decrypt { name: name.to_owned() };
        if row.format != FORMAT {
            return Err(VaultError::UnsupportedFormat { name: name.to_owned(), format: row.format });
        }
        if row.nonce.len() != NONCE_LEN {
            return Err(fail());
        }
        if row.key_id != self.inner.key_id {
            tracing::debug!(secret = name, "the secret was sealed with another vault key");
        }
        let mut buffer = Zeroizing::new(row.ciphertext.clone());
        self.inner
            .cipher
            .decrypt_in_place(Nonce::from_slice(&row.nonce), aad(name, row.format).as_bytes(), &mut *buffer)
            .map_err(|_| fail())?;
        let text = std::str::from_utf8(&buffer).map_err(|_| fail())?;
        // An exactly sized copy, so turning it into the secret's box does not reallocate and
        // leave a copy behind; `buffer` is wiped when it drops.
        let mut owned = String::with_capacity(text.len());
        owned.push_str(text);
        Ok(SecretString::from(owned))
    }
}

/// The associated data: the format and the name, so a row is only valid where it was written.
fn aad(name: &str, format: i64) -> String {
    format!("hearth-vault:v{format}:{name}")
}

/// A fingerprint of the data key: a domain-separated sha256, first 8 bytes, hex.
fn key_id(key: &[u8; KEY_LEN]) -> String {
    let digest = Sha256::new().chain_update(b"hearth-vault-key-id:v1:").chain_update(key).finalize();
    hex::encode(&digest[..8])
}

fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty() && name.len() <= MAX_NAME_LEN && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-:@+".contains(&b));
    if ok { Ok(()) } else { Err(VaultError::InvalidName { len: name.chars().count(), max: MAX_NAME_LEN }) }
}
