//! The vault key in a backup, sealed under the owner's passphrase.
//!
//! Argon2id derives a 256-bit key from the passphrase and a random salt; AES-256-GCM seals the
//! vault key with it. Argon2id is memory-hard (64 MiB, 3 passes here, above OWASP's floor), so
//! a stolen backup costs an attacker that memory for every guess. The parameters are stored
//! with the sealed key, so a later Hearth can raise them and still open older backups; on the
//! way in they are bounded, so a crafted backup cannot make a restore allocate without limit.

use aes_gcm::aead::rand_core::RngCore;
use aes_gcm::aead::{Aead, KeyInit, OsRng, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use argon2::{Algorithm, Argon2, Params, Version};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use super::error::BackupError;
use crate::vault::KEY_LEN;

/// The shortest passphrase Hearth accepts for the vault key, in characters.
pub const MIN_PASSPHRASE_CHARS: usize = 10;

/// Argon2id memory in KiB (64 MiB), passes and lanes for a new backup.
const MEMORY_KIB: u32 = 64 * 1024;
const PASSES: u32 = 3;
const LANES: u32 = 1;

/// The most a backup may ask for when it is opened: four times what Hearth seals with (256 MiB,
/// 8 passes, 4 lanes), room for a later Hearth to raise its cost, while a crafted backup cannot
/// make a restore hold a gigabyte or grind for minutes before it says the passphrase is wrong.
const MAX_MEMORY_KIB: u32 = 4 * MEMORY_KIB;
const MAX_PASSES: u32 = 8;
const MAX_LANES: u32 = 4;

const SALT_LEN: usize = 16;
const NONCE_LEN: usize = 12;

/// Binds the ciphertext to its purpose: this is a vault key in a Hearth backup, format 1.
const AAD: &[u8] = b"hearth-backup:vault-key:v1";

/// The vault key sealed under a passphrase, as the manifest stores it (base64 fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SealedKey {
    /// Always `argon2id` (a later format may name another).
    pub kdf: String,
    /// Argon2 memory, KiB.
    pub memory_kib: u32,
    /// Argon2 passes.
    pub passes: u32,
    /// Argon2 lanes.
    pub lanes: u32,
    /// The salt.
    pub salt: String,
    /// The AES-GCM nonce.
    pub nonce: String,
    /// The sealed key and its tag.
    pub ciphertext: String,
}

/// Seals `key` under `passphrase` (refused when shorter than [`MIN_PASSPHRASE_CHARS`]).
pub(crate) fn seal(key: &[u8; KEY_LEN], passphrase: &SecretString) -> Result<SealedKey, BackupError> {
    if passphrase.expose_secret().chars().count() < MIN_PASSPHRASE_CHARS {
        return Err(BackupError::WeakPassphrase { min: MIN_PASSPHRASE_CHARS });
    }
    let mut salt = [0u8; SALT_LEN];
    let mut nonce = [0u8; NONCE_LEN];
    OsRng.try_fill_bytes(&mut salt).map_err(|err| BackupError::Crypto(err.to_string()))?;
    OsRng.try_fill_bytes(&mut nonce).map_err(|err| BackupError::Crypto(err.to_string()))?;
    let wrapping = derive(passphrase, &salt, MEMORY_KIB, PASSES, LANES)?;
    let cipher = Aes256Gcm::new(aes_gcm::Key::<Aes256Gcm>::from_slice(&*wrapping));
    let ciphertext = cipher
        .encrypt(Nonce::from_slice(&nonce), Payload { msg: key, aad: AAD })
        .map_err(|_| BackupError::Crypto("sealing the vault key failed".to_owned()))?;
    Ok(SealedKey {
        kdf: "argon2id".to_owned(),
        memory_kib: MEMORY_KIB,
        passes: PASSES,
        lanes: LANES,
        salt: STANDARD.encode(salt),
        nonce: STANDARD.encode(nonce),
        ciphertext: STANDARD.encode(ciphertext),
    })
}

/// Opens `sealed` with `passphrase`. `Ok(None)` means the passphrase is wrong (or the sealed
/// key altered: AES-GCM cannot tell the two apart); `Err` that the record itself is unusable.
pub(crate) fn open(sealed: &SealedKey, passphrase: &SecretString) -> Result<Option<Zeroizing<[u8; KEY_LEN]>>, String> {
    if sealed.kdf != "argon2id" {
        return Err(format!("its vault key is sealed with {:?}, which this Hearth does not know", sealed.kdf));
    }
    if sealed.memory_kib > MAX_MEMORY_KIB || sealed.passes > MAX_PASSES || sealed.lanes > MAX_LANES {
        return Err("its vault key asks for more memory or time than a Hearth backup ever uses".to_owned());
    }
    let decode = |field: &str, what: &str| STANDARD.decode(field).map_err(|_| format!("its vault key's {what} is not base64"));
    let salt = decode(&sealed.salt, "salt")?;
    let nonce = decode(&sealed.nonce, "nonce")?;
    let ciphertext = decode(&sealed.ciphertext, "ciphertext")?;
    if nonce.len() != NONCE_LEN || salt.len() < 8 {
        return Err("its vault key's salt or nonce has the wrong length".to_owned());
    }
    let wrapping = derive(passphrase, &salt, sealed.memory_kib, sealed.passes, sealed.lanes).map_err(|err| err.to_string())?;
    let cipher = Aes256Gcm::new(aes_gcm::Key::<Aes256Gcm>::from_slice(&*wrapping));
    let Ok(plain) = cipher.decrypt(Nonce::from_slice(&nonce), Payload { msg: &ciphertext, aad: AAD }) else {
        return Ok(None);
    };
    let plain = Zeroizing::new(plain);
    let mut key = Zeroizing::new([0u8; KEY_LEN]);
    if plain.len() != KEY_LEN {
        return Err("its vault key has the wrong length".to_owned());
    }
    key.copy_from_slice(&plain);
    Ok(Some(key))
}

/// Argon2id(passphrase, salt) → 32 bytes.
fn derive(passphrase: &SecretString, salt: &[u8], memory_kib: u32, passes: u32, lanes: u32) -> Result<Zeroizing<[u8; 32]>, BackupError> {
    let params = Params::new(memory_kib, passes, lanes, Some(32)).map_err(|err| BackupError::Crypto(err.to_string()))?;
    let mut out = Zeroizing::new([0u8; 32]);
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
        .hash_password_into(passphrase.expose_secret().as_bytes(), salt, &mut *out)
        .map_err(|err| BackupError::Crypto(err.to_string()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_key_opens_with_its_passphrase_only() {
        let key = [7u8; KEY_LEN];
        let pass = SecretString::from("correct horse battery".to_owned());
        let sealed = seal(&key, &pass).unwrap();
        assert_eq!(*open(&sealed, &pass).unwrap().unwrap(), key);
        assert!(open(&sealed, &SecretString::from("correct horse battery!".to_owned())).unwrap().is_none());
        assert!(!sealed.ciphertext.contains(&STANDARD.encode(key)));
        let greedy = SealedKey { memory_kib: MAX_MEMORY_KIB + 1, ..sealed };
        assert!(open(&greedy, &pass).is_err());
        assert!(matches!(seal(&key, &SecretString::from("short".to_owned())), Err(BackupError::WeakPassphrase { .. })));
    }
}
