//! The owner's decisions on ideas, and the reads the idea rules make.

use std::collections::HashMap;

use sqlx::Row;

use super::error::Result;
use super::{Store, now_ms};

impl Store {
    /// Ideas settled: dismissed, or accepted and made. (One accepted but not yet made — Hearth
    /// stopped in between — is still offered, and accepting it again makes it, by its key.)
    pub async fn idea_decisions(&self) -> Result<HashMap<String, String>> {
        let rows = sqlx::query("SELECT id, decision FROM idea_decisions WHERE decision = 'dismissed' OR made_id IS NOT NULL")
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(|r| Ok((r.try_get("id")?, r.try_get("decision")?))).collect()
    }

    /// Records a decision (the first one stands). `false` when it was decided already.
    pub async fn decide_idea(&self, id: &str, accepted: bool, made_id: Option<&str>) -> Result<bool> {
        let done = sqlx::query("INSERT OR IGNORE INTO idea_decisions (id, decision, made_id, decided_at) VALUES (?1, ?2, ?3, ?4)")
            .bind(id)
            .bind(if accepted { "accepted" } else { "dismissed" })
            .bind(made_id)
            .bind(now_ms())
            .execute(&mut *self.writer().await)
            .await?
            .rows_affected();
        Ok(done == 1)
    }

    /// Accepts an idea, unless it was dismissed: `true` when it is accepted now or was
    /// already (a retried accept goes on to make the same thing, keyed by the idea).
    pub async fn accept_idea(&self, id: &str) -> Result<bool> {
        let mut writer = self.writer().await;
        sqlx::query("INSERT OR IGNORE INTO idea_decisions (id, decision, decided_at) VALUES (?1, 'accepted', ?2)")
            .bind(id)
            .bind(now_ms())
            .execute(&mut *writer)
            .await?;
        let decision: Option<String> =
            sqlx::query_scalar("SELECT decision FROM idea_decisions WHERE id = ?1").bind(id).fetch_optional(&mut *writer).await?;
        Ok(decision.as_deref() == Some("accepted"))
    }

    /// Notes what an accepted idea made.
    pub async fn idea_made(&self, id: &str, made_id: &str) -> Result<()> {
        sqlx::query("UPDATE idea_decisions SET made_id = ?2 WHERE id = ?1 AND decision = 'accepted'")
            .bind(id)
            .bind(made_id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    /// Conversation titles (the owner's first message) that three or more conversations
    /// started in the window share, lower-cased, most repeated first.
    pub async fn repeated_requests(&self, at_least: i64, limit: i64) -> Result<Vec<(String, i64)>> {
        let rows = sqlx::query(
            "SELECT lower(trim(title)) AS request, count(*) AS times FROM threads
             WHERE length(trim(title)) >= 8 AND origin = 'window' GROUP BY lower(trim(title)) HAVING count(*) >= ?1
             ORDER BY times DESC, request LIMIT ?2",
        )
        .bind(at_least)
        .bind(limit)
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(|r| Ok((r.try_get("request")?, r.try_get("times")?))).collect()
    }
}
