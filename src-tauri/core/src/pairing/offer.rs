//! The pairing offer: what the host's QR code carries, and the short code to type instead.
//!
//! Text form (one line, what the QR code encodes):
//! `hearth-pair:v1:<host addr:port>:<fingerprint, 32 hex>:<secret, 16 base32>`,
//! e.g. `hearth-pair:v1:192.168.1.20:7468:9f86d081884c7d659a2feaa0c55ad015:MFRGGZDFMZTWQ2LK`.
//!
//! The secret is 80 bits, not the 50 a 10-character code would give: the typed path has no
//! fingerprint to pin the host with, and a device that impersonates the host on the LAN
//! receives the companion's third handshake message, which it can test secret guesses against
//! offline. 80 bits keeps that search out of reach for the life of an offer (and for long
//! after); 16 characters in four groups is still easy to type. The QR path additionally pins
//! the host's key, so an impostor never receives that message at all.

use std::fmt;
use std::net::SocketAddr;

use data_encoding::BASE32_NOPAD;
use hkdf::Hkdf;
use sha2::Sha256;
use zeroize::Zeroizing;

use crate::pairing::error::{PairingError, Result};
use crate::pairing::keys::Fingerprint;

/// The bytes of entropy in a pairing secret (80 bits = 16 base32 characters).
pub const SECRET_LEN: usize = 10;

/// The length of the Noise pre-shared key.
pub(crate) const PSK_LEN: usize = 32;

/// The scheme and version every offer's text starts with.
const PREFIX: &str = "hearth-pair:";
const VERSION: &str = "v1";

/// The HKDF salt and info that make the PSK specific to this use of the secret.
const PSK_SALT: &[u8] = b"hearth-pairing-psk";
const PSK_INFO: &[u8] = b"Noise_XXpsk3_25519_ChaChaPoly_BLAKE2s psk3 v1";

/// A Noise pre-shared key, zeroized on drop.
pub(crate) type Psk = Zeroizing<[u8; PSK_LEN]>;

/// The one-time pairing secret: random, shown once, consumed by the first successful pairing.
/// Zeroized on drop; `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct PairingSecret(Zeroizing<[u8; SECRET_LEN]>);

impl PairingSecret {
    /// A fresh secret from the OS random source.
    pub fn generate() -> Result<Self> {
        let mut bytes = Zeroizing::new([0u8; SECRET_LEN]);
        getrandom::fill(bytes.as_mut_slice()).map_err(PairingError::Random)?;
        Ok(Self(bytes))
    }

    /// The secret as the owner types it: 16 base32 characters in four groups of four
    /// (`MFRG-GZDF-MZTW-Q2LK`).
    pub fn short_code(&self) -> Zeroizing<String> {
        let plain = Zeroizing::new(BASE32_NOPAD.encode(self.0.as_slice()));
        let mut grouped = Zeroizing::new(String::with_capacity(19));
        for (i, c) in plain.chars().enumerate() {
            if i > 0 && i % 4 == 0 {
                grouped.push('-');
            }
            grouped.push(c);
        }
        grouped
    }

    /// Reads a typed code: case, spaces and dashes do not matter.
    pub fn from_short_code(text: &str) -> Result<Self> {
        let cleaned: Zeroizing<String> =
            Zeroizing::new(text.chars().filter(|c| !matches!(c, ' ' | '-')).map(|c| c.to_ascii_uppercase()).collect());
        if cleaned.len() != 16 {
            return Err(PairingError::InvalidShortCode);
        }
        let decoded = Zeroizing::new(BASE32_NOPAD.decode(cleaned.as_bytes()).map_err(|_| PairingError::InvalidShortCode)?);
        let bytes: [u8; SECRET_LEN] = decoded.as_slice().try_into().map_err(|_| PairingError::InvalidShortCode)?;
        Ok(Self(Zeroizing::new(bytes)))
    }

    /// The Noise PSK: HKDF-SHA256 of the secret. A KDF rather than the raw bytes because Noise
    /// wants 32 uniform bytes and the salt/info keep this key from meaning anything elsewhere.
    pub(crate) fn psk(&self) -> Psk {
        let mut out = Zeroizing::new([0u8; PSK_LEN]);
        // HKDF-SHA256 can expand up to 255 × 32 bytes, so 32 never fails; the fallback (an
        // all-zero key nobody else would derive) is unreachable and would only fail the pairing.
        let hk = Hkdf::<Sha256>::new(Some(PSK_SALT), self.0.as_slice());
        if hk.expand(PSK_INFO, out.as_mut_slice()).is_err() {
            tracing::error!("HKDF refused a 32-byte output; pairing will fail");
        }
        out
    }
}

impl fmt::Debug for PairingSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PairingSecret([REDACTED])")
    }
}

/// What the host's QR code carries: where to connect, whose key to expect, and the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct PairingOffer {
    /// The host's address on the LAN (a hint: the key, not the address, is the identity).
    pub host: SocketAddr,
    /// The fingerprint of the host's static key.
    pub fingerprint: Fingerprint,
    /// The one-time secret.
    pub secret: PairingSecret,
}

impl PairingOffer {
    /// The one-line text the QR code encodes. It contains the secret: show it, never log it.
    pub fn to_text(&self) -> Zeroizing<String> {
        let secret = Zeroizing::new(BASE32_NOPAD.encode(self.secret.0.as_slice()));
        Zeroizing::new(format!("{PREFIX}{VERSION}:{}:{}:{}", self.host, self.fingerprint.to_compact(), secret.as_str()))
    }

    /// Reads the text of a scanned QR code.
    pub fn parse(text: &str) -> Result<Self> {
        let text = text.trim();
        let rest = strip_prefix_ignore_case(text, PREFIX)
            .ok_or_else(|| PairingError::InvalidOffer { reason: "it does not start with hearth-pair:".into() })?;
        let (version, rest) = rest.split_once(':').ok_or_else(|| PairingError::InvalidOffer { reason: "it has no version".into() })?;
        if !version.eq_ignore_ascii_case(VERSION) {
            return Err(PairingError::UnsupportedOfferVersion { version: version.chars().take(16).collect() });
        }
        // The address may hold colons (IPv6), so the two fixed fields are taken from the right.
        let mut fields = rest.rsplitn(3, ':');
        let (Some(secret), Some(fingerprint), Some(host)) = (fields.next(), fields.next(), fields.next()) else {
            return Err(PairingError::InvalidOffer { reason: "it lacks the address, the fingerprint or the secret".into() });
        };
        let host: SocketAddr =
            host.parse().map_err(|_| PairingError::InvalidOffer { reason: format!("{host:?} is not an address with a port") })?;
        let fingerprint = Fingerprint::parse(fingerprint)
            .ok_or_else(|| PairingError::InvalidOffer { reason: "the key fingerprint is not 32 hex digits".into() })?;
        let secret = PairingSecret::from_short_code(secret)
            .map_err(|_| PairingError::InvalidOffer { reason: "the secret is not 16 base32 characters".into() })?;
        Ok(Self { host, fingerprint, secret })
    }
}

impl fmt::Debug for PairingOffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PairingOffer")
            .field("host", &self.host)
            .field("fingerprint", &self.fingerprint)
            .field("secret", &self.secret)
            .finish()
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &text[prefix.len()..])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::pairing::keys::PublicKey;

    fn offer(host: &str) -> PairingOffer {
        PairingOffer {
            host: host.parse().unwrap(),
            fingerprint: PublicKey::from_bytes(&[9; 32]).unwrap().fingerprint(),
            secret: PairingSecret::generate().unwrap(),
        }
    }

    #[test]
    fn offer_text_round_trips_for_ipv4_and_ipv6() {
        for host in ["192.168.1.20:7468", "[fe80::1]:7468"] {
            let offer = offer(host);
            let text = offer.to_text();
            assert!(text.starts_with("hearth-pair:v1:"));
            assert_eq!(PairingOffer::parse(&text).unwrap(), offer);
        }
    }

    #[test]
    fn short_code_round_trips_and_forgives_case_and_separators() {
        let secret = PairingSecret::generate().unwrap();
        let code = secret.short_code();
        assert_eq!(code.len(), 19);
        assert_eq!(code.matches('-').count(), 3);
        assert_eq!(PairingSecret::from_short_code(&code).unwrap(), secret);
        let sloppy = code.to_lowercase().replace('-', " ");
        assert_eq!(PairingSecret::from_short_code(&sloppy).unwrap(), secret);
    }

    #[test]
    fn bad_offers_say_what_is_wrong() {
        let good = offer("10.0.0.2:7468").to_text();
        let fp = good.split(':').nth(4).unwrap().to_owned();
        let cases: Vec<(String, &str)> = vec![
            ("https://example.com".into(), "does not start"),
            ("hearth-pair:".into(), "no version"),
            (good.replace(":v1:", ":v2:"), "version v2"),
            ("hearth-pair:v1:onlyone".into(), "lacks"),
            (good.replace("10.0.0.2:7468", "nowhere:7468"), "not an address"),
            (good.replace(&fp, "abcd"), "fingerprint"),
            (format!("{}:AAAA", good.rsplit_once(':').unwrap().0), "secret"),
        ];
        for (text, expected) in cases {
            let message = PairingOffer::parse(&text).unwrap_err().to_string();
            assert!(message.contains(expected), "{text:?} gave {message:?}");
        }
    }

    #[test]
    fn short_codes_of_the_wrong_shape_are_refused() {
        for text in ["", "ABCD-EFGH", "ABCD-EFGH-JKLM-NPQ1", "ABCD-EFGH-JKLM-NPQRS"] {
            assert!(matches!(PairingSecret::from_short_code(text), Err(PairingError::InvalidShortCode)), "{text}");
        }
    }

    #[test]
    fn the_psk_depends_on_every_bit_of_the_secret() {
        let a = PairingSecret::from_short_code("AAAA-AAAA-AAAA-AAAA").unwrap();
        let b = PairingSecret::from_short_code("AAAA-AAAA-AAAA-AAAB").unwrap();
        assert_ne!(*a.psk(), *b.psk());
        let typed_again = PairingSecret::from_short_code(&a.short_code()).unwrap();
        assert_eq!(*a.psk(), *typed_again.psk());
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let offer = offer("10.0.0.2:7468");
        let code = offer.secret.short_code().replace('-', "");
        assert!(!format!("{offer:?}").contains(&code));
    }
}
