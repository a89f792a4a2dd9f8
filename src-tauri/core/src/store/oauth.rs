//! Sign-ins in progress: the `state` of each authorization Hearth started (its hash), until it
//! is completed once or expires.

use super::error::Result;
use super::{Store, now_ms};

/// A sign-in taken from the table by the one call that completes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumedState {
    /// Where the provider was told to send the owner back.
    pub redirect_uri: String,
    /// The scopes asked for, space-separated.
    pub scopes: String,
}

/// What completing a sign-in found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateLookup {
    /// This call took it, in time: it alone may use (and must delete) the sign-in's verifier.
    Valid(ConsumedState),
    /// This call took it, too late: it alone deletes the verifier.
    Expired,
    /// No such sign-in (already completed by another call, swept, or never started): the
    /// verifier is not this call's to touch.
    Unknown,
}

impl Store {
    /// Records a sign-in started now that may be completed until `expires_at` (Unix ms), and
    /// sweeps the expired ones: their state hashes are returned so their verifiers go too.
    pub async fn begin_oauth_state(&self, state_hash: &str, redirect_uri: &str, scopes: &str, expires_at: i64) -> Result<Vec<String>> {
        let mut writer = self.writer().await;
        let swept: Vec<(String,)> = sqlx::query_as("DELETE FROM oauth_states WHERE expires_at <= ?1 RETURNING state_hash")
            .bind(now_ms())
            .fetch_all(&mut *writer)
            .await?;
        sqlx::query("INSERT INTO oauth_states (state_hash, redirect_uri, scopes, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)")
            .bind(state_hash)
            .bind(redirect_uri)
            .bind(scopes)
            .bind(now_ms())
            .bind(expires_at)
            .execute(&mut *writer)
            .await?;
        Ok(swept.into_iter().map(|(hash,)| hash).collect())
    }

    /// Takes the sign-in `state_hash`: one statement deletes and returns it, so of two callers
    /// with the same state only one gets it.
    pub async fn consume_oauth_state(&self, state_hash: &str) -> Result<StateLookup> {
        let mut writer = self.writer().await;
        let row: Option<(String, String, i64)> =
            sqlx::query_as("DELETE FROM oauth_states WHERE state_hash = ?1 RETURNING redirect_uri, scopes, expires_at")
                .bind(state_hash)
                .fetch_optional(&mut *writer)
                .await?;
        Ok(match row {
            Some((redirect_uri, scopes, expires_at)) if expires_at > now_ms() => StateLookup::Valid(ConsumedState { redirect_uri, scopes }),
            Some(_) => StateLookup::Expired,
            None => StateLookup::Unknown,
        })
    }
}
