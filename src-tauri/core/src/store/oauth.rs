//! Sign-ins in progress: the `state` of each authorization Hearth started (its hash), until it
//! is completed once or expires.

use super::{Store, now_ms};
use crate::error::Result;

/// A sign-in taken from the table by the one call that completes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumedState {
    /// Where the provider was told to send the owner back.
    pub redirect_uri: String,
    /// The scopes asked for, space-separated.
    pub scopes: String,
}

impl Store {
    /// Records a sign-in started now that may be completed until `expires_at` (Unix ms).
    pub async fn begin_oauth_state(&self, state_hash: &str, redirect_uri: &str, scopes: &str, expires_at: i64) -> Result<()> {
        let mut writer = self.writer().await;
        // Abandoned sign-ins go with the next one started.
        sqlx::query("DELETE FROM oauth_states WHERE expires_at <= ?1").bind(now_ms()).execute(&mut *writer).await?;
        sqlx::query("INSERT INTO oauth_states (state_hash, redirect_uri, scopes, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)")
            .bind(state_hash)
            .bind(redirect_uri)
            .bind(scopes)
            .bind(now_ms())
            .bind(expires_at)
            .execute(&mut *writer)
            .await?;
        Ok(())
    }

    /// Takes the sign-in `state_hash` if it is still valid: one statement deletes and returns
    /// it, so of two callers with the same state only one gets it. An expired row is deleted
    /// and answers `None` like an unknown one.
    pub async fn consume_oauth_state(&self, state_hash: &str) -> Result<Option<ConsumedState>> {
        let mut writer = self.writer().await;
        let row: Option<(String, String, i64)> =
            sqlx::query_as("DELETE FROM oauth_states WHERE state_hash = ?1 RETURNING redirect_uri, scopes, expires_at")
                .bind(state_hash)
                .fetch_optional(&mut *writer)
                .await?;
        Ok(row.filter(|(_, _, expires_at)| *expires_at > now_ms()).map(|(redirect_uri, scopes, _)| ConsumedState { redirect_uri, scopes }))
    }
}
