//! The one error type that crosses IPC.
//!
//! The UI matches on `code`; `message` is for the owner and says what to do next.
//! It never carries secrets (tokens, keys, mail bodies).

use serde::{Deserialize, Serialize};

/// Why an IPC call failed, as the UI branches on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The payload was malformed or out of bounds.
    InvalidInput,
    /// The thing named does not exist.
    NotFound,
    /// The thing changed meanwhile; reload and try again.
    Conflict,
    /// This caller may not do that (it is not the one who started the thing it names).
    Forbidden,
    /// Nothing changed, but the owner must first review an action whose outcome is unknown (or
    /// wait until a stopped one reports) before this can go on.
    NeedsReview,
    /// The approval's time ran out.
    ApprovalExpired,
    /// The owner stopped it.
    Cancelled,
    /// A part Hearth needs is not available right now.
    Unavailable,
    /// A bug or an unexpected failure inside Hearth.
    Internal,
}

/// An error answered over IPC.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct IpcError {
    /// What kind of failure.
    pub code: ErrorCode,
    /// What failed and what to do, for the owner.
    pub message: String,
}

impl IpcError {
    /// Builds an error.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }

    /// Shorthand for [`ErrorCode::InvalidInput`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidInput, message)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn json_shape_is_pinned() {
        let err = IpcError::new(ErrorCode::NotFound, "No thread t1. Reload the app.");
        assert_eq!(serde_json::to_string(&err).unwrap(), r#"{"code":"not_found","message":"No thread t1. Reload the app."}"#);
        let code: ErrorCode = serde_json::from_str(r#""approval_expired""#).unwrap();
        assert_eq!(code, ErrorCode::ApprovalExpired);
    }
}
