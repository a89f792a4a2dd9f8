//! Identifiers and time on the wire.
//!
//! Ids are strings on the wire (AG-UI uses strings); Hearth's own are UUIDv4 text, task ids
//! are sha256 hex. Timestamps (`*_at`) are integer Unix milliseconds everywhere.

use crate::error::IpcError;

/// Longest id Hearth accepts from outside (a sha256 hex is 64; UUIDs are 36).
pub const MAX_ID_LEN: usize = 128;

/// Checks an id that arrived from outside the process: non-empty, bounded, and made of
/// `[A-Za-z0-9_.:-]` so it can never smuggle markup or paths.
pub fn is_valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_ID_LEN && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

/// [`is_valid_id`] as the error a request's `validate()` returns, naming the field.
pub(crate) fn validate_id(field: &str, id: &str) -> Result<(), IpcError> {
    if is_valid_id(id) {
        Ok(())
    } else {
        Err(IpcError::invalid(format!("{field} is not a valid id (1–128 characters of letters, digits, '-', '_', '.', ':').")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_bounded_and_plain() {
        assert!(is_valid_id("3f2a-9c_1.x:y"));
        assert!(!is_valid_id(""));
        assert!(!is_valid_id("../etc/passwd"));
        assert!(!is_valid_id("<script>"));
        assert!(!is_valid_id(&"a".repeat(MAX_ID_LEN + 1)));
    }
}
