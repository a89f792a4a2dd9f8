//! The endpoint's bearer token.

use std::sync::Arc;

/// A bearer token; its `Debug` never shows it.
#[derive(Clone)]
pub struct BearerToken(Arc<str>);

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken([REDACTED])")
    }
}

impl BearerToken {
    /// Wraps a token the owner saw.
    pub fn new(token: impl Into<Arc<str>>) -> Self {
        Self(token.into())
    }

    /// The token, to show the owner once.
    pub fn reveal(&self) -> &str {
        &self.0
    }

    /// Whether an `Authorization` header carries this token, compared in constant time.
    pub fn admits(&self, header: Option<&str>) -> bool {
        let Some(presented) = header.and_then(|h| h.strip_prefix("Bearer ")) else { return false };
        let (a, b) = (presented.as_bytes(), self.0.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
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
        assert!(!token.admits(None));
        assert!(!format!("{token:?}").contains(token.reveal()));
        assert_ne!(new_token().reveal(), token.reveal());
    }
}
