//! Secrets in memory, from the vault to the HTTP header.
//!
//! A secret stays a [`SecretString`] (zeroized on drop, `[REDACTED]` in `Debug`) from the
//! vault until the moment a request is built. There is one bearer-token type,
//! [`BearerToken`] — the endpoint's own token, the external agent's token and an
//! OpenAI-style API key are all one — and one place where any secret becomes header bytes,
//! [`secret_header`]: the value is assembled in a buffer that is zeroized afterwards and
//! marked sensitive (`http` then prints it as `Sensitive` and HTTP/2 never indexes it).
//!
//! Why here and not in `agui_server` or `vault`: the endpoint (which checks a token), the
//! harness client and the providers (which send one) all use it, and none of them should
//! depend on another to do so.

use std::sync::Arc;

use hyper::header::HeaderValue;
pub use secrecy::{ExposeSecret, SecretString};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

/// A bearer token: zeroized when the last clone drops; its `Debug` never shows it;
/// compared in constant time.
#[derive(Clone)]
pub struct BearerToken(Arc<SecretString>);

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken([REDACTED])")
    }
}

impl From<SecretString> for BearerToken {
    fn from(token: SecretString) -> Self {
        Self(Arc::new(token))
    }
}

/// A secret holds bytes HTTP does not allow in a header (a control character, a line break).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the secret holds characters an HTTP header cannot carry (a space at either end, a line break or another control character); enter it again"
)]
pub struct InvalidSecretHeader;

impl BearerToken {
    /// Wraps a token (moved into the secret, so its buffer is the one zeroized).
    pub fn new(token: impl Into<String>) -> Self {
        Self::from(SecretString::from(token.into()))
    }

    /// A fresh random token (244 bits from the OS generator, hex).
    pub fn generate() -> Self {
        let (a, b) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
        Self::new(format!("hearth_{}{}", a.simple(), b.simple()))
    }

    /// The token itself: to store it in the vault, or to show it to the owner.
    pub fn reveal(&self) -> &str {
        self.0.expose_secret()
    }

    /// The secret, for the vault.
    pub fn secret(&self) -> &SecretString {
        &self.0
    }

    /// Whether an `Authorization` header carries this token, compared in constant time
    /// (`subtle`; only the length may differ in time, and every token Hearth makes has one).
    pub fn admits(&self, authorization: Option<&[u8]>) -> bool {
        let Some(presented) = authorization.and_then(|h| h.strip_prefix(b"Bearer ")) else { return false };
        bool::from(presented.ct_eq(self.0.expose_secret().as_bytes()))
    }

    /// `Bearer <token>`, as a sensitive header value.
    pub fn header(&self) -> Result<HeaderValue, InvalidSecretHeader> {
        secret_header("Bearer ", &self.0)
    }

    /// `text` with every occurrence of the token replaced by `[redacted]` (for words that
    /// came from the other side, which may echo it).
    pub fn redact(&self, text: &str) -> String {
        redact(text, &self.0)
    }
}

/// The one place a secret becomes header bytes: `prefix` and the secret, assembled in a
/// buffer zeroized when this returns, as a value marked sensitive.
pub fn secret_header(prefix: &str, secret: &SecretString) -> Result<HeaderValue, InvalidSecretHeader> {
    let secret = secret.expose_secret();
    if secret.is_empty() || secret.trim() != secret {
        return Err(InvalidSecretHeader);
    }
    let mut bytes = Zeroizing::new(Vec::with_capacity(prefix.len() + secret.len()));
    bytes.extend_from_slice(prefix.as_bytes());
    bytes.extend_from_slice(secret.as_bytes());
    let mut value = HeaderValue::from_bytes(&bytes).map_err(|_| InvalidSecretHeader)?;
    value.set_sensitive(true);
    Ok(value)
}

/// `text` with every occurrence of `secret` replaced by `[redacted]`.
pub fn redact(text: &str, secret: &SecretString) -> String {
    let secret = secret.expose_secret();
    if secret.is_empty() { text.to_owned() } else { text.replace(secret, "[redacted]") }
}

#[cfg(test)]
#[path = "secret_tests.rs"]
mod tests;
