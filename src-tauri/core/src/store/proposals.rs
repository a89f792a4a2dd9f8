//! Proposals: the approval gate's rows. Every status change is one guarded UPDATE, so two
//! racing decisions cannot both win.

use hearth_protocol::approvals::{Connection, ProposalDraft, ProposalStatus, ProposalView};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::{Store, now_ms};
use crate::error::{CoreError, Result};

/// A stored proposal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposalRow {
    /// Id.
    pub id: String,
    /// Idempotency key (same key, same proposal).
    pub key: String,
    /// The task waiting on it.
    pub task_id: Option<String>,
    /// The normalized reviewed draft.
    pub draft: ProposalDraft,
    /// The account it acts as.
    pub connection: Connection,
    /// What it acts on (`mail:send`, `calendar:<id>`, `event:<id>`).
    pub target: String,
    /// The target's version when it was prepared.
    pub target_version: String,
    /// sha256 of the canonical {input, connection, target, targetVersion}.
    pub hash: String,
    /// Where it is.
    pub status: ProposalStatus,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms.
    pub expires_at: i64,
    /// What happened.
    pub receipt: Option<String>,
    /// Why it failed or is uncertain.
    pub error: Option<String>,
}

impl ProposalRow {
    fn from_row(row: &SqliteRow) -> Result<Self> {
        let status: String = row.try_get("status")?;
        let kind: String = row.try_get("kind")?;
        let mut draft_json: serde_json::Value = serde_json::from_str(&row.try_get::<String, _>("draft")?)?;
        // Stored as the draft alone; the kind column tags it.
        draft_json = serde_json::json!({ "kind": kind, "draft": draft_json.take() });
        Ok(Self {
            id: row.try_get("id")?,
            key: row.try_get("key")?,
            task_id: row.try_get("task_id")?,
            draft: serde_json::from_value(draft_json)?,
            connection: Connection { id: row.try_get("connection_id")?, account: row.try_get("account")? },
            target: row.try_get("target")?,
            target_version: row.try_get("target_version")?,
            hash: row.try_get("hash")?,
            status: ProposalStatus::parse(&status)
                .ok_or_else(|| CoreError::InvalidInput(format!("stored proposal has an unknown status {status:?}")))?,
            created_at: row.try_get("created_at")?,
            expires_at: row.try_get("expires_at")?,
            receipt: row.try_get("receipt")?,
            error: row.try_get("error")?,
        })
    }

    /// The wire view.
    pub fn view(&self) -> ProposalView {
        ProposalView {
            id: self.id.clone(),
            task_id: self.task_id.clone(),
            status: self.status,
            draft: self.draft.clone(),
            connection: self.connection.clone(),
            hash: self.hash.clone(),
            created_at: self.created_at,
            expires_at: self.expires_at,
            receipt: self.receipt.clone(),
            error: self.error.clone(),
        }
    }
}

const COLUMNS: &str = "id, key, task_id, kind, draft, connection_id, account, target, target_version, hash, status,
     created_at, expires_at, receipt, error";

/// How inserting a proposal went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InsertOutcome {
    /// A new proposal.
    Created(ProposalRow),
    /// The same key and the same hash: the existing proposal (and any receipt).
    Existing(ProposalRow),
    /// The same key with a different draft: it needs a new review.
    Changed(ProposalRow),
}

impl Store {
    /// Inserts `new` unless its key exists; then compares hashes.
    pub async fn insert_proposal(&self, new: &ProposalRow) -> Result<InsertOutcome> {
        let (kind, draft) = split_draft(&new.draft)?;
        let mut writer = self.writer().await;
        let inserted = sqlx::query(
            "INSERT INTO proposals (id, key, task_id, kind, draft, connection_id, account, target, target_version, hash,
                 status, created_at, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'awaiting_review', ?11, ?12)
             ON CONFLICT (key) DO NOTHING",
        )
        .bind(&new.id)
        .bind(&new.key)
        .bind(&new.task_id)
        .bind(kind)
        .bind(draft)
        .bind(&new.connection.id)
        .bind(&new.connection.account)
        .bind(&new.target)
        .bind(&new.target_version)
        .bind(&new.hash)
        .bind(new.created_at)
        .bind(new.expires_at)
        .execute(&mut *writer)
        .await?;
        drop(writer);
        let inserted = inserted.rows_affected() == 1;
        let stored = self
            .proposal_by_key(&new.key)
            .await?
            .ok_or_else(|| CoreError::NotFound(format!("The proposal {} vanished while it was being stored.", new.id)))?;
        Ok(if inserted {
            InsertOutcome::Created(stored)
        } else if stored.hash == new.hash {
            InsertOutcome::Existing(stored)
        } else {
            InsertOutcome::Changed(stored)
        })
    }

    /// One proposal.
    pub async fn get_proposal(&self, id: &str) -> Result<Option<ProposalRow>> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM proposals WHERE id = ?1"))
            .bind(id)
            .fetch_optional(self.reader())
            .await?;
        row.as_ref().map(ProposalRow::from_row).transpose()
    }

    /// The proposal stored under `key`.
    pub async fn proposal_by_key(&self, key: &str) -> Result<Option<ProposalRow>> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM proposals WHERE key = ?1"))
            .bind(key)
            .fetch_optional(self.reader())
            .await?;
        row.as_ref().map(ProposalRow::from_row).transpose()
    }

    /// Awaiting review first (oldest first), then the most recently decided.
    pub async fn list_proposals(&self, limit: i64) -> Result<Vec<ProposalRow>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM proposals
             ORDER BY status = 'awaiting_review' DESC,
                      CASE WHEN status = 'awaiting_review' THEN created_at ELSE -coalesce(decided_at, created_at) END
             LIMIT ?1"
        ))
        .bind(limit)
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(ProposalRow::from_row).collect()
    }

    /// The approval's claim: awaiting review, unexpired, and its task still running or
    /// waiting for approval — all checked in the one statement that moves it to executing.
    pub async fn claim_proposal(&self, id: &str, now: i64) -> Result<bool> {
        let mut writer = self.writer().await;
        let done = sqlx::query(
            "UPDATE proposals SET status = 'executing', decided_at = ?2
             WHERE id = ?1 AND status = 'awaiting_review' AND expires_at > ?2
               AND (task_id IS NULL OR EXISTS (
                   SELECT 1 FROM tasks WHERE tasks.id = proposals.task_id AND tasks.status IN ('running', 'waiting_approval')))",
        )
        .bind(id)
        .bind(now)
        .execute(&mut *writer)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Moves a proposal from `from` to `to` with an optional receipt or error. `false` when
    /// it was no longer in `from`.
    pub async fn settle_proposal(
        &self,
        id: &str,
        from: ProposalStatus,
        to: ProposalStatus,
        receipt: Option<&str>,
        error: Option<&str>,
    ) -> Result<bool> {
        let mut writer = self.writer().await;
        let done = sqlx::query(
            "UPDATE proposals SET status = ?3, receipt = coalesce(?4, receipt), error = coalesce(?5, error),
                 decided_at = coalesce(decided_at, ?6)
             WHERE id = ?1 AND status = ?2",
        )
        .bind(id)
        .bind(from.as_str())
        .bind(to.as_str())
        .bind(receipt)
        .bind(error)
        .bind(now_ms())
        .execute(&mut *writer)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Awaiting-review proposals past their expiry become expired; returns (proposal, task) ids.
    pub async fn expire_due_proposals(&self, now: i64) -> Result<Vec<(String, Option<String>)>> {
        let mut writer = self.writer().await;
        let rows = sqlx::query(
            "UPDATE proposals SET status = 'expired', decided_at = ?1,
                 error = 'Nobody approved this within 30 minutes, so it expired. Nothing was sent or changed.'
             WHERE status = 'awaiting_review' AND expires_at <= ?1
             RETURNING id, task_id",
        )
        .bind(now)
        .fetch_all(&mut *writer)
        .await?;
        rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
    }

    /// Awaiting-review proposals of `task_id` become denied (the owner cancelled the task).
    pub async fn deny_task_proposals(&self, task_id: &str) -> Result<u64> {
        let mut writer = self.writer().await;
        let done = sqlx::query(
            "UPDATE proposals SET status = 'denied', decided_at = ?2, error = 'The task was cancelled, so this was not sent.'
             WHERE task_id = ?1 AND status = 'awaiting_review'",
        )
        .bind(task_id)
        .bind(now_ms())
        .execute(&mut *writer)
        .await?;
        Ok(done.rows_affected())
    }

    /// At start-up: proposals a stopped Hearth left executing may or may not have happened.
    pub async fn strand_executing_proposals(&self) -> Result<u64> {
        let mut writer = self.writer().await;
        let done = sqlx::query(
            "UPDATE proposals SET status = 'outcome_unknown',
                 error = 'Hearth stopped while carrying this out, so it may or may not have happened. Check before doing it again.'
             WHERE status = 'executing'",
        )
        .execute(&mut *writer)
        .await?;
        Ok(done.rows_affected())
    }

    /// A task waiting on `proposal_id` whose proposal has been decided goes back to the queue,
    /// so its handler sees the decision. `false` when the task was not waiting on it.
    pub async fn release_decided_approval(&self, task_id: &str, proposal_id: &str) -> Result<bool> {
        let mut writer = self.writer().await;
        let done = sqlx::query(
            "UPDATE tasks SET status = 'queued', updated_at = ?3, lease_expires_at = NULL,
                 status_note = (SELECT CASE status
                     WHEN 'succeeded' THEN 'Approved by you.'
                     WHEN 'denied' THEN 'Denied.'
                     WHEN 'expired' THEN 'The approval expired.'
                     ELSE 'The approved action ended: ' || status END
                   FROM proposals WHERE id = ?2)
             WHERE id = ?1 AND status = 'waiting_approval' AND action_id = ?2
               AND EXISTS (SELECT 1 FROM proposals WHERE id = ?2 AND status NOT IN ('awaiting_review', 'executing'))",
        )
        .bind(task_id)
        .bind(proposal_id)
        .bind(now_ms())
        .execute(&mut *writer)
        .await?;
        Ok(done.rows_affected() == 1)
    }
}

fn split_draft(draft: &ProposalDraft) -> Result<(&'static str, String)> {
    let mut value = serde_json::to_value(draft)?;
    let inner = value.get_mut("draft").map(serde_json::Value::take).unwrap_or_default();
    Ok((draft.kind().as_str(), inner.to_string()))
}
