//! Settings → Accounts: the sample mailbox and connected Google accounts, which one the agent's
//! mail and calendar tools use, and the owner's own Google Cloud OAuth client. Tokens and the
//! client secret never cross IPC: the views say only whether a secret is stored.

use serde::{Deserialize, Serialize};

use crate::error::IpcError;
use crate::ids::validate_id;

/// The id of the sample mailbox in [`AccountsView::chosen`] and [`AccountView::connection_id`].
pub const SAMPLE_ACCOUNT: &str = "local";

/// Where an account's mail and calendar live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccountProvider {
    /// The seeded local mailbox and calendar.
    Sample,
    /// A Google account (Gmail and Google Calendar).
    Google,
}

/// What an account lets Hearth do (writes always through the owner's review).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccountAccess {
    /// Read mail and calendars.
    Read,
    /// Also send mail and change events.
    ReadWrite,
}

/// One account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountView {
    /// `local` for the sample mailbox; a Google connection's id (new for every sign-in).
    pub connection_id: String,
    /// Sample or Google.
    pub provider: AccountProvider,
    /// The address it acts as.
    pub account: String,
    /// What it may do.
    pub access: AccountAccess,
    /// The scopes the sign-in holds (empty for the sample mailbox).
    pub scopes: Vec<String>,
    /// When it was connected (Unix ms; 0 for the sample mailbox).
    pub connected_at: i64,
    /// When Hearth last read from it successfully in this session (Unix ms).
    pub last_sync: Option<i64>,
}

/// The owner's Google Cloud OAuth client, as Settings shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoogleClientView {
    /// The client id, once set.
    pub client_id: Option<String>,
    /// A client secret is stored (never shown).
    pub has_secret: bool,
}

/// Settings → Accounts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountsView {
    /// The sample mailbox first, then the Google accounts.
    pub accounts: Vec<AccountView>,
    /// The account the agent's mail and calendar tools use.
    pub chosen: String,
    /// The OAuth client Google sign-ins use.
    pub client: GoogleClientView,
    /// What the last change needs the owner to know (a scope Google did not grant, a
    /// revocation Google did not confirm).
    #[serde(default)]
    pub notice: Option<String>,
}

/// `accounts_client_set`: the owner's own Google Cloud OAuth client ("Desktop app").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoogleClientParams {
    /// `….apps.googleusercontent.com`.
    pub client_id: String,
    /// `None` keeps the stored secret, empty removes it, anything else replaces it.
    #[serde(default)]
    pub client_secret: Option<String>,
}

impl GoogleClientParams {
    /// A client id of Google's shape, a secret of sane length.
    pub fn validate(&self) -> Result<(), IpcError> {
        let id = self.client_id.trim();
        if id.is_empty() || id.len() > 200 || !id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) {
            return Err(IpcError::invalid(
                "The client id is the one Google Cloud shows for a Desktop app client (….apps.googleusercontent.com).",
            ));
        }
        if self.client_secret.as_ref().is_some_and(|s| s.len() > 200 || s.chars().any(char::is_control)) {
            return Err(IpcError::invalid("The client secret is at most 200 characters on one line."));
        }
        Ok(())
    }
}

/// `account_connect_begin`: start a Google sign-in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountConnectParams {
    /// Read only, or read and write (granting write access to an account signs in again).
    pub access: AccountAccess,
}

/// A sign-in started: the owner's browser goes to `consent_url`, and
/// `account_connect_finish` waits for Google to send it back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectBegun {
    /// This sign-in.
    pub attempt_id: String,
    /// Google's consent page (shown too, for when no browser opened).
    pub consent_url: String,
}

/// `account_connect_finish`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountAttemptParams {
    /// From [`ConnectBegun`].
    pub attempt_id: String,
}

impl AccountAttemptParams {
    /// Checks the id's shape.
    pub fn validate(&self) -> Result<(), IpcError> {
        validate_id("attemptId", &self.attempt_id)
    }
}

/// `account_choose` and `account_disconnect`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountParams {
    /// `local`, or a Google connection's id.
    pub connection_id: String,
}

impl AccountParams {
    /// Checks the id's shape.
    pub fn validate(&self) -> Result<(), IpcError> {
        validate_id("connectionId", &self.connection_id)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn a_client_id_of_another_shape_and_a_secret_with_a_line_break_are_refused() {
        let ok = GoogleClientParams { client_id: "123-abc.apps.googleusercontent.com".into(), client_secret: Some("GOCSPX-x".into()) };
        assert!(ok.validate().is_ok());
        for bad in ["", "has space.apps", "a/b", &"x".repeat(201)] {
            let params = GoogleClientParams { client_id: bad.into(), client_secret: None };
            assert_eq!(params.validate().unwrap_err().code, ErrorCode::InvalidInput, "{bad:?}");
        }
        let broken = GoogleClientParams { client_secret: Some("GOCSPX\nx".into()), ..ok };
        assert_eq!(broken.validate().unwrap_err().code, ErrorCode::InvalidInput);
    }

    #[test]
    fn views_are_camel_case_with_snake_case_enums() {
        let view = AccountView {
            connection_id: "c1".into(),
            provider: AccountProvider::Google,
            account: "owner@example.com".into(),
            access: AccountAccess::ReadWrite,
            scopes: vec![],
            connected_at: 1,
            last_sync: None,
        };
        let json = serde_json::to_value(&view).unwrap();
        assert_eq!(json["connectionId"], "c1");
        assert_eq!(json["provider"], "google");
        assert_eq!(json["access"], "read_write");
    }
}
