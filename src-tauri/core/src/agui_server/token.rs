//! The endpoint's bearer token.

use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};
use subtle::ConstantTimeEq;

/// A bearer token: zeroized when the last clone drops; its `Debug` never shows it.
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

impl BearerToken {
    /// Wraps a token the owner saw.
    pub fn new(token: impl Into<String>) -> Self {
        Self::from(SecretString::from(token.into()))
    }

    /// The token, to show the owner once.
    pub fn reveal(&self) -> &str {
        self.0.expose_secret()
    }

    /// Whether an `Authorization` header carries this token, compared in constant time
    /// (`subtle`; only the length may differ in time, and every token Hearth makes has one).
    pub fn admits(&self, header: Option<&str>) -> bool {
        let Some(presented) = header.and_then(|h| h.strip_prefix("Bearer ")) else { return false };
        bool::from(presented.as_bytes().ct_eq(self.0.expose_secret().as_bytes()))
    }
}

/// A fresh random token (244 bits from the OS generator, hex).
pub fn new_token() -> BearerToken {
    let (a, b) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
    BearerToken::new(format!("hearth_{}{}", a.simple(), b.simple()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_bearer_token_is_admitted() {
        let token = new_token();
        let header = format!("Bearer {}", token.reveal());
        assert!(token.admits(Some(&header)));
        assert!(!token.admits(Some(token.reveal())));
        assert!(!token.admits(Some(&header[..header.len() - 1])));
        assert!(!token.admits(Some(&format!("{header}0"))));
        assert!(!token.admits(Some("Bearer ")));
        assert!(!token.admits(None));
        // One flipped character anywhere is refused.
        let mut flipped = header.clone().into_bytes();
        let last = flipped.len() - 1;
        flipped[last] = if flipped[last] == b'0' { b'1' } else { b'0' };
        assert!(!token.admits(Some(std::str::from_utf8(&flipped).unwrap_or_default())));
        assert!(!format!("{token:?}").contains(token.reveal()));
        assert_ne!(new_token().reveal(), token.reveal());
        // A token that arrives as a secret from the vault is the same token.
        let from_vault = BearerToken::from(SecretString::from(token.reveal().to_owned()));
        assert!(from_vault.admits(Some(&header)));
    }
}
