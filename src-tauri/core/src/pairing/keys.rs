//! The static X25519 keys each side holds, and the names derived from them.
//!
//! A key *is* the identity: the host's key is what the QR code pins and what a companion
//! dials with IK; a companion's key is what the host registers. So the derived names
//! ([`Fingerprint`] to show, [`DeviceId`] to store) are hashes of the public key, and a device
//! that loses its key must pair again.

use std::fmt;
use std::str::FromStr;

use data_encoding::HEXLOWER_PERMISSIVE;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use snow::params::DHChoice;
use snow::resolvers::{CryptoResolver, DefaultResolver};
use zeroize::Zeroizing;

use crate::pairing::error::{PairingError, Result};

/// The length of an X25519 key, public or private.
pub const KEY_LEN: usize = 32;

/// How many bytes of SHA-256 a fingerprint keeps: 128 bits, beyond any search for a second key
/// with the same fingerprint.
pub const FINGERPRINT_LEN: usize = 16;

/// A static X25519 public key.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PublicKey([u8; KEY_LEN]);

impl PublicKey {
    /// Reads a key from its 32 bytes (from the device table, or from a handshake).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let key: [u8; KEY_LEN] = bytes.try_into().map_err(|_| PairingError::InvalidKey { len: bytes.len() })?;
        Ok(Self(key))
    }

    /// The key's 32 bytes (to store it).
    pub fn as_bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }

    /// What the owner compares: the first 16 bytes of SHA-256 of the key.
    pub fn fingerprint(&self) -> Fingerprint {
        let digest = Sha256::digest(self.0);
        let mut out = [0u8; FINGERPRINT_LEN];
        out.copy_from_slice(&digest[..FINGERPRINT_LEN]);
        Fingerprint(out)
    }

    /// The id a host stores this key under, when it is a companion's key.
    pub fn device_id(&self) -> DeviceId {
        DeviceId(self.fingerprint().to_compact())
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.fingerprint())
    }
}

/// A static keypair. The private half is zeroized on drop and never printed.
///
/// The host keeps one for its whole life (regenerating it unpairs every device); each companion
/// keeps one per host it pairs with. Both seal the private half in the vault.
pub struct StaticKeypair {
    private: Zeroizing<[u8; KEY_LEN]>,
    public: PublicKey,
}

impl StaticKeypair {
    /// A fresh keypair from the OS random source.
    pub fn generate() -> Result<Self> {
        let mut private = Zeroizing::new([0u8; KEY_LEN]);
        getrandom::fill(private.as_mut_slice()).map_err(PairingError::Random)?;
        Self::from_private_bytes(private.as_slice())
    }

    /// Restores a keypair from its private half (as sealed in the vault); the public half is
    /// derived, so the two can never disagree.
    pub fn from_private_bytes(private: &[u8]) -> Result<Self> {
        let key: [u8; KEY_LEN] = private.try_into().map_err(|_| PairingError::InvalidKey { len: private.len() })?;
        let private = Zeroizing::new(key);
        let mut dh = DefaultResolver
            .resolve_dh(&DHChoice::Curve25519)
            .ok_or(PairingError::Noise(snow::Error::Init(snow::error::InitStage::GetDhImpl)))?;
        dh.set(private.as_slice());
        let public = PublicKey::from_bytes(dh.pubkey())?;
        Ok(Self { private, public })
    }

    /// The public half.
    pub fn public(&self) -> PublicKey {
        self.public
    }

    /// The private half, to seal it in the vault. Never log it or put it in an error.
    pub fn private_bytes(&self) -> &[u8; KEY_LEN] {
        &self.private
    }
}

impl fmt::Debug for StaticKeypair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticKeypair").field("public", &self.public).field("private", &"[REDACTED]").finish()
    }
}

/// The first 16 bytes of SHA-256 of a public key: what the QR code carries and what Settings
/// shows, as eight groups of four hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint([u8; FINGERPRINT_LEN]);

impl Fingerprint {
    /// 32 lowercase hex digits without separators (the offer's text form).
    pub fn to_compact(&self) -> String {
        HEXLOWER_PERMISSIVE.encode(&self.0)
    }

    /// Reads 32 hex digits; spaces and dashes between them are ignored, case is not significant.
    pub fn parse(text: &str) -> Option<Self> {
        let digits: String = text.chars().filter(|c| !matches!(c, ' ' | '-')).collect();
        let bytes = HEXLOWER_PERMISSIVE.decode(digits.as_bytes()).ok()?;
        let out: [u8; FINGERPRINT_LEN] = bytes.try_into().ok()?;
        Some(Self(out))
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let compact = self.to_compact();
        for (i, group) in compact.as_bytes().chunks(4).enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            // Hex digits are ASCII, so each chunk is valid UTF-8.
            f.write_str(std::str::from_utf8(group).map_err(|_| fmt::Error)?)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({self})")
    }
}

/// A paired companion's id: its key's fingerprint, 32 lowercase hex digits. Stable for as long
/// as the device keeps its key, and the primary key of the host's device table.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct DeviceId(String);

impl DeviceId {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for DeviceId {
    type Err = PairingError;

    fn from_str(value: &str) -> Result<Self> {
        let valid = value.len() == 2 * FINGERPRINT_LEN && value.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if valid { Ok(Self(value.to_owned())) } else { Err(PairingError::InvalidDeviceId { value: value.to_owned() }) }
    }
}

impl TryFrom<String> for DeviceId {
    type Error = PairingError;

    fn try_from(value: String) -> Result<Self> {
        value.parse()
    }
}

impl From<DeviceId> for String {
    fn from(id: DeviceId) -> Self {
        id.0
    }
}

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_restored_keypair_has_the_same_public_key() {
        let original = StaticKeypair::generate().unwrap();
        let restored = StaticKeypair::from_private_bytes(original.private_bytes()).unwrap();
        assert_eq!(original.public(), restored.public());
    }

    #[test]
    fn fingerprint_is_sha256_prefix_shown_in_groups() {
        let key = PublicKey::from_bytes(&[7u8; 32]).unwrap();
        let digest = Sha256::digest([7u8; 32]);
        assert_eq!(key.fingerprint().to_compact(), HEXLOWER_PERMISSIVE.encode(&digest[..16]));
        let shown = key.fingerprint().to_string();
        assert_eq!(shown.split(' ').count(), 8);
        assert_eq!(Fingerprint::parse(&shown), Some(key.fingerprint()));
        assert_eq!(Fingerprint::parse(&shown.to_uppercase().replace(' ', "-")), Some(key.fingerprint()));
        assert_eq!(Fingerprint::parse("abcd"), None);
    }

    #[test]
    fn device_id_is_strict_and_serializes_as_text() {
        let id = PublicKey::from_bytes(&[1u8; 32]).unwrap().device_id();
        assert_eq!(serde_json::to_string(&id).unwrap(), format!("\"{id}\""));
        assert!("ABCDEF0123456789abcdef0123456789".parse::<DeviceId>().is_err());
        assert!(serde_json::from_str::<DeviceId>("\"short\"").is_err());
    }

    #[test]
    fn debug_never_shows_the_private_key() {
        let pair = StaticKeypair::from_private_bytes(&[0x42; 32]).unwrap();
        let shown = format!("{pair:?}");
        assert!(shown.contains("[REDACTED]"));
        assert!(!shown.contains("42, 42"));
    }

    #[test]
    fn a_key_of_the_wrong_length_is_refused() {
        assert!(matches!(PublicKey::from_bytes(&[0; 31]), Err(PairingError::InvalidKey { len: 31 })));
        assert!(matches!(StaticKeypair::from_private_bytes(&[0; 33]), Err(PairingError::InvalidKey { len: 33 })));
    }
}
