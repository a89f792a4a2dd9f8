//! Proposals: the approval gate's rows. Every status change is one guarded UPDATE, so two
//! racing decisions cannot both win.

use hearth_protocol::approvals::{Connection, ProposalDraft, ProposalKind, ProposalOrigin, ProposalStatus, ProposalView};
use hearth_protocol::ids::{FailureId, ProposalId, TaskId};
use hearth_protocol::provenance::OutsideSource;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::error::{Result, StoreError};
use super::{Store, now_ms};

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
    /// Who asked for it.
    pub origin: ProposalOrigin,
    /// The process carrying it out (while `executing`).
    pub executor: Option<String>,
    /// sha256 of what the tool asked for, before the workspace resolved it.
    pub request_hash: Option<String>,
    /// The outside content in the agent's context when it asked.
    pub sources: Vec<OutsideSource>,
    /// The standing order that approved it in the owner's place.
    pub mandate_id: Option<String>,
    /// While `leaving`: when it is carried out unless the owner undoes it (Unix ms).
    pub leaves_at: Option<i64>,
    /// Once it failed or its outcome is unknown: its failure id (migration 0040).
    pub failure_id: Option<FailureId>,
}

/// A standing order's use, counted for the operation a task's proposal is keyed by, that
/// approves the proposal as it is stored (see [`Store::insert_proposal`]).
#[derive(Debug, Clone, Copy)]
pub struct MandatedClaim<'a> {
    /// The mandate a use was counted against.
    pub mandate_id: &'a str,
    /// The operation's scope (the use's key).
    pub op_scope: &'a str,
    /// The operation's id.
    pub op_id: &'a str,
    /// The process that will carry it out.
    pub executor: &'a str,
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
                .ok_or_else(|| StoreError::CorruptRow(format!("stored proposal has an unknown status {status:?}")))?,
            created_at: row.try_get("created_at")?,
            expires_at: row.try_get("expires_at")?,
            receipt: row.try_get("receipt")?,
            error: row.try_get("error")?,
            origin: {
                let origin: String = row.try_get("origin")?;
                ProposalOrigin::parse(&origin)
                    .ok_or_else(|| StoreError::CorruptRow(format!("stored proposal has an unknown origin {origin:?}")))?
            },
            executor: row.try_get("executor")?,
            request_hash: row.try_get("request_hash")?,
            sources: serde_json::from_str(&row.try_get::<String, _>("sources")?)
                .map_err(|err| StoreError::CorruptRow(format!("stored proposal has unreadable sources ({err})")))?,
            mandate_id: row.try_get("mandate_id")?,
            leaves_at: row.try_get("leaves_at")?,
            failure_id: row.try_get::<Option<i64>, _>("failure_bits")?.and_then(|b| u64::try_from(b).ok()).map(FailureId::from_bits),
        })
    }

    /// The wire view.
    pub fn view(&self) -> ProposalView {
        ProposalView {
            id: ProposalId::trusted(self.id.as_str()),
            task_id: self.task_id.as_deref().map(TaskId::trusted),
            status: self.status,
            origin: self.origin,
            draft: self.draft.clone(),
            connection: self.connection.clone(),
            hash: self.hash.clone(),
            created_at: self.created_at,
            expires_at: self.expires_at,
            receipt: self.receipt.clone(),
            error: self.error.clone(),
            sources: self.sources.clone(),
            mandate_id: self.mandate_id.clone(),
            leaves_at: self.leaves_at,
            failure_id: self.failure_id.clone(),
        }
    }
}

const COLUMNS: &str = "id, key, task_id, kind, draft, connection_id, account, target, target_version, hash, status,
     created_at, expires_at, receipt, error, origin, executor, request_hash, sources, mandate_id, leaves_at,
     (SELECT f.bits FROM effect_failures f WHERE f.proposal_id = proposals.id) AS failure_bits";

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

/// What [`Store::reclaim_unknown_proposal`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reclaim {
    /// This retry holds it now (`executing`).
    Claimed,
    /// Not claimed; the status it had then. Still `outcome_unknown`: this retry may not take
    /// it (see the conditions); anything else: another check or retry had it or settled it.
    Refused(ProposalStatus),
}

impl Store {
    /// How many cards wait for a decision, are being carried out, or have an unknown outcome
    /// for the owner to review: all of them, not a page.
    pub async fn count_open_proposals(&self) -> Result<i64> {
        Ok(sqlx::query("SELECT count(*) FROM proposals WHERE status IN ('awaiting_review', 'leaving', 'executing', 'outcome_unknown')")
            .fetch_one(self.reader())
            .await?
            .try_get(0)?)
    }

    /// Inserts `new` unless its key exists; then compares hashes. With a `fence` (task id,
    /// lease id) the insert happens only while that lease holds, and in the same transaction
    /// the task's `action_id` becomes this proposal — so a proposal is approvable only while it
    /// is its task's current one, and a stale run can prepare nothing. `None` when fenced.
    ///
    /// With `chat_run`, nothing is inserted once that chat run has ended (stopped, finished,
    /// failed), checked in the same transaction.
    ///
    /// With `mandated` (a task's proposal only) it is stored already claimed — `executing` by
    /// the claim's executor, approved by that standing order — when, in the same transaction,
    /// the mandate is still live and a use of it is recorded for this very operation; otherwise
    /// it waits for the owner like any other. Stored claimed, it raises no review notice, and a
    /// crash before it is carried out leaves it `executing`, which start-up makes
    /// `outcome_unknown` for the owner.
    pub async fn insert_proposal(
        &self,
        new: &ProposalRow,
        fence: Option<(&str, &str)>,
        chat_run: Option<&str>,
        mandated: Option<MandatedClaim<'_>>,
    ) -> Result<Option<InsertOutcome>> {
        let (kind, draft) = split_draft(&new.draft)?;
        let now = now_ms();
        let (task_id, lease_id) = fence.unwrap_or_default();
        let mut writer = self.writer().await;
        // IMMEDIATE: the lease read and the insert see the same database, across processes too.
        let mut tx = sqlx::Connection::begin_with(&mut *writer, "BEGIN IMMEDIATE").await?;
        let live = |sql: &'static str| sqlx::query(sql).bind(task_id).bind(lease_id).bind(now);
        if fence.is_some()
            && live("SELECT 1 FROM tasks WHERE id = ?1 AND lease_id = ?2 AND status = 'running' AND lease_expires_at > ?3")
                .fetch_optional(&mut *tx)
                .await?
                .is_none()
        {
            tx.rollback().await?;
            return Ok(None);
        }
        // A chat run that has ended (stopped, finished, failed) prepares nothing.
        if let Some(run) = chat_run
            && sqlx::query("SELECT 1 FROM chat_runs WHERE id = ?1 AND status <> 'running'")
                .bind(run)
                .fetch_optional(&mut *tx)
                .await?
                .is_some()
        {
            tx.rollback().await?;
            return Ok(None);
        }
        let mandated = match (mandated, fence) {
            (Some(claim), Some(_)) => sqlx::query(
                "SELECT 1 FROM mandates m JOIN mandate_uses u ON u.mandate_id = m.id
                 WHERE m.id = ?1 AND u.op_scope = ?2 AND u.op_id = ?3 AND m.revoked_at IS NULL AND m.expires_at > ?4",
            )
            .bind(claim.mandate_id)
            .bind(claim.op_scope)
            .bind(claim.op_id)
            .bind(now)
            .fetch_optional(&mut *tx)
            .await?
            .map(|_| claim),
            (Some(_), None) | (None, _) => None,
        };
        let inserted = sqlx::query(
            "INSERT INTO proposals (id, key, task_id, kind, draft, connection_id, account, target, target_version, hash,
                 status, created_at, expires_at, origin, request_hash, sources, mandate_id, executor, decided_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, CASE WHEN ?16 IS NULL THEN 'awaiting_review' ELSE 'executing' END,
                     ?11, ?12, ?13, ?14, ?15, ?16, ?17, CASE WHEN ?16 IS NULL THEN NULL ELSE ?11 END)
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
        .bind(new.origin.as_str())
        .bind(&new.request_hash)
        .bind(serde_json::to_string(&new.sources)?)
        .bind(mandated.map(|m| m.mandate_id))
        .bind(mandated.map(|m| m.executor))
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        let stored = sqlx::query(&format!("SELECT {COLUMNS} FROM proposals WHERE key = ?1"))
            .bind(&new.key)
            .fetch_optional(&mut *tx)
            .await?
            .as_ref()
            .map(ProposalRow::from_row)
            .transpose()?
            .ok_or_else(|| StoreError::NotFound(format!("The proposal {} vanished while it was being stored.", new.id)))?;
        // A retried step is matched on what was asked (`request_hash`), since what it resolves
        // to can change by the approval itself (an updated or deleted event).
        let same = match (&stored.request_hash, &new.request_hash) {
            (Some(stored), Some(asked)) => stored == asked,
            _ => stored.hash == new.hash,
        };
        let outcome = if inserted {
            InsertOutcome::Created(stored)
        } else if same {
            InsertOutcome::Existing(stored)
        } else {
            InsertOutcome::Changed(stored)
        };
        // The task's current action: a proposal waiting for the owner, or one a standing order
        // approved as it was stored (its claim and settle re-check that it is).
        let current = |row: &ProposalRow, created: bool| {
            row.status == ProposalStatus::AwaitingReview || (created && row.status == ProposalStatus::Executing && row.mandate_id.is_some())
        };
        if let (Some(_), InsertOutcome::Created(row) | InsertOutcome::Existing(row)) = (fence, &outcome)
            && current(row, matches!(outcome, InsertOutcome::Created(_)))
        {
            sqlx::query("UPDATE tasks SET action_id = ?4 WHERE id = ?1 AND lease_id = ?2 AND status = 'running' AND lease_expires_at > ?3")
                .bind(task_id)
                .bind(lease_id)
                .bind(now)
                .bind(&row.id)
                .execute(&mut *tx)
                .await?;
            // Only the current action can be approved; the card of an older one says so at once.
            sqlx::query(
                "UPDATE proposals SET status = 'denied', decided_at = ?3,
                     error = 'The task prepared a newer proposal in its place, so this one was not sent.'
                 WHERE task_id = ?1 AND id <> ?2 AND status = 'awaiting_review'",
            )
            .bind(task_id)
            .bind(&row.id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(Some(outcome))
    }

    /// One proposal.
    pub async fn get_proposal(&self, id: &str) -> Result<Option<ProposalRow>> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM proposals WHERE id = ?1")).bind(id).fetch_optional(self.reader()).await?;
        row.as_ref().map(ProposalRow::from_row).transpose()
    }

    /// The proposal stored under `key`.
    pub async fn proposal_by_key(&self, key: &str) -> Result<Option<ProposalRow>> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM proposals WHERE key = ?1")).bind(key).fetch_optional(self.reader()).await?;
        row.as_ref().map(ProposalRow::from_row).transpose()
    }

    /// Leaving (Undo still possible) and awaiting review first (oldest first), then the most
    /// recently decided.
    pub async fn list_proposals(&self, limit: i64) -> Result<Vec<ProposalRow>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM proposals
             ORDER BY status = 'leaving' DESC, status = 'awaiting_review' DESC,
                      CASE WHEN status = 'awaiting_review' THEN created_at ELSE -coalesce(decided_at, created_at) END
             LIMIT ?1"
        ))
        .bind(limit)
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(ProposalRow::from_row).collect()
    }

    /// The approval's claim, in one statement: awaiting review, unexpired, still for the
    /// account the workspace acts as now (for the local workspace, read from the database in
    /// this very statement; for a Google one, its connection still in `google_accounts`, so a
    /// disconnect or a reconnect committed before the claim wins), and — for a task's proposal — the task still running or waiting
    /// for approval **with this proposal as its current action**. Records `executor`.
    ///
    /// With `leaves_at`, the claim is `leaving` until then (the owner's undo window; see
    /// [`Store::claim_leaving`]) rather than `executing`.
    pub async fn claim_proposal(
        &self,
        id: &str,
        now: i64,
        connection: &Connection,
        executor: &str,
        leaves_at: Option<i64>,
    ) -> Result<bool> {
        let mut writer = self.writer().await;
        let done = sqlx::query(&format!(
            "UPDATE proposals SET status = CASE WHEN ?7 IS NULL THEN 'executing' ELSE 'leaving' END, leaves_at = ?7,
                 decided_at = ?2, executor = ?5
             WHERE id = ?1 AND status = 'awaiting_review' AND expires_at > ?2
               AND connection_id = ?3 AND account = ?4 AND {}",
            still_authorized("?6")
        ))
        .bind(id)
        .bind(now)
        .bind(&connection.id)
        .bind(&connection.account)
        .bind(executor)
        .bind(super::DEFAULT_LOCAL_ACCOUNT)
        .bind(leaves_at)
        .execute(&mut *writer)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The end of an undo window, in one statement: a `leaving` proposal whose window is over
    /// (or any, with `now_anyway`: the owner's Send now) becomes `executing` under `executor` —
    /// only while the account it was approved for is still the one in use (as the claim
    /// checks) and, for a task's proposal, the task still waits on it. Undo, a Pause or Cancel
    /// of its task, or a disconnect committed before this wins.
    pub async fn claim_leaving(&self, id: &str, now: i64, executor: &str, now_anyway: bool) -> Result<bool> {
        let mut writer = self.writer().await;
        let done = sqlx::query(&format!(
            "UPDATE proposals SET status = 'executing', leaves_at = NULL, executor = ?3
             WHERE id = ?1 AND status = 'leaving' AND (?4 OR leaves_at <= ?2) AND {}",
            still_authorized("?5")
        ))
        .bind(id)
        .bind(now)
        .bind(executor)
        .bind(now_anyway)
        .bind(super::DEFAULT_LOCAL_ACCOUNT)
        .execute(&mut *writer)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Undo: a `leaving` proposal becomes `undone` with `why`; nothing was carried out. `false`
    /// when it is no longer leaving (it left, or was undone, meanwhile).
    pub async fn undo_leaving(&self, id: &str, why: &str) -> Result<bool> {
        let mut writer = self.writer().await;
        let done = sqlx::query(
            "UPDATE proposals SET status = 'undone', leaves_at = NULL, error = ?2
             WHERE id = ?1 AND status = 'leaving'",
        )
        .bind(id)
        .bind(why)
        .execute(&mut *writer)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Proposals waiting out an undo window: (id, executor, leaves at).
    pub async fn leaving_proposals(&self) -> Result<Vec<(String, Option<String>, i64)>> {
        let rows = sqlx::query("SELECT id, executor, leaves_at FROM proposals WHERE status = 'leaving' ORDER BY leaves_at")
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?))).collect()
    }

    /// A `leaving` proposal whose process died inside its window goes back to the owner's
    /// review, unsent: approvable again until at least `expires_at` (so the owner has time to
    /// look), with `why` on the card and a new notice saying so. Only while `executor` still
    /// holds it (a live second process's window is not touched).
    pub async fn return_leaving_to_review(&self, id: &str, executor: Option<&str>, expires_at: i64, why: &str) -> Result<bool> {
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin_with(&mut *writer, "BEGIN IMMEDIATE").await?;
        let back = sqlx::query(
            "UPDATE proposals SET status = 'awaiting_review', leaves_at = NULL, executor = NULL, decided_at = NULL,
                 expires_at = max(expires_at, ?3), error = ?4
             WHERE id = ?1 AND status = 'leaving' AND executor IS ?2
             RETURNING kind, created_at",
        )
        .bind(id)
        .bind(executor)
        .bind(expires_at)
        .bind(why)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(back) = back else {
            tx.rollback().await?;
            return Ok(false);
        };
        let kind: String = back.try_get(0)?;
        let title = if kind == ProposalKind::EmailSend.as_str() {
            "An approved email was not sent: review it again"
        } else {
            "An approved event change was not made: review it again"
        };
        sqlx::query(
            "INSERT OR IGNORE INTO notifications (key, kind, title, body, target_kind, target_id, created_at)
             VALUES ('review-again:' || ?1 || ':' || ?4, 'review_needed', ?2, ?3, 'proposal', ?1, ?4)",
        )
        .bind(id)
        .bind(title)
        .bind(why)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The owner's retry of an approval whose outcome was unknown, claimed in one statement:
    /// still `outcome_unknown`; for the same account, through `connection` — the one in use
    /// now, which the proposal is rebound to (a reconnect of that account mints a new id) and
    /// which must still be connected; and, for a task's proposal, the task not cancelled and
    /// with no newer proposal of the same kind that is pending or may have happened (the task
    /// may already have done the same thing another way). Records `executor`, so a crash
    /// during the retry strands it as `outcome_unknown` again.
    ///
    /// Not claimed, it answers the status the proposal had when the claim failed, read in the
    /// same transaction: a retry that lost to another (which may since have settled it back to
    /// `outcome_unknown`) is told apart from one this proposal can no longer take.
    pub async fn reclaim_unknown_proposal(&self, id: &str, connection: &Connection, executor: &str) -> Result<Reclaim> {
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin_with(&mut *writer, "BEGIN IMMEDIATE").await?;
        let done = sqlx::query(
            "UPDATE proposals SET status = 'executing', executor = ?4, connection_id = ?2
             WHERE id = ?1 AND status = 'outcome_unknown' AND account = ?3 AND connection_id NOT IN ('browser', 'hearth')
               AND ((connection_id = 'local') = (?2 = 'local'))
               AND (CASE WHEN ?2 = 'local'
                         THEN ?3 = coalesce((SELECT value FROM meta WHERE key = 'local_account'), ?5)
                         ELSE EXISTS (SELECT 1 FROM google_accounts g WHERE g.connection_id = ?2 AND g.account = ?3) END)
               AND (task_id IS NULL OR (
                   EXISTS (SELECT 1 FROM tasks t WHERE t.id = proposals.task_id AND t.status <> 'cancelled')
                   AND NOT EXISTS (
                       SELECT 1 FROM proposals later
                       WHERE later.task_id = proposals.task_id AND later.kind = proposals.kind AND later.id <> proposals.id
                         AND later.created_at >= proposals.created_at
                         AND later.status IN ('awaiting_review', 'leaving', 'executing', 'succeeded', 'outcome_unknown'))))",
        )
        .bind(id)
        .bind(&connection.id)
        .bind(&connection.account)
        .bind(executor)
        .bind(super::DEFAULT_LOCAL_ACCOUNT)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 1 {
            tx.commit().await?;
            return Ok(Reclaim::Claimed);
        }
        let status: Option<String> =
            sqlx::query_scalar("SELECT status FROM proposals WHERE id = ?1").bind(id).fetch_optional(&mut *tx).await?;
        tx.rollback().await?;
        let status = status.ok_or_else(|| StoreError::NotFound(format!("There is no proposal {id}.")))?;
        let status = ProposalStatus::parse(&status)
            .ok_or_else(|| StoreError::CorruptRow(format!("stored proposal has an unknown status {status:?}")))?;
        Ok(Reclaim::Refused(status))
    }

    /// Replaces the note of an `outcome_unknown` proposal, only while its note is still `seen`
    /// (nothing settled it in between); whether it did.
    pub async fn note_unknown_proposal(&self, id: &str, seen: Option<&str>, note: &str) -> Result<bool> {
        let mut writer = self.writer().await;
        let done = sqlx::query("UPDATE proposals SET error = ?3 WHERE id = ?1 AND status = 'outcome_unknown' AND error IS ?2")
            .bind(id)
            .bind(seen)
            .bind(note)
            .execute(&mut *writer)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Moves a proposal from `from` to `to` with an optional receipt or error. `false` when
    /// it was no longer in `from`.
    ///
    /// From `executing`, only the claimant (`executor`) may settle it: a stale holder in
    /// another process cannot settle a newer claim.
    pub async fn settle_proposal(
        &self,
        id: &str,
        from: ProposalStatus,
        to: ProposalStatus,
        receipt: Option<&str>,
        error: Option<&str>,
        executor: Option<&str>,
    ) -> Result<bool> {
        let mut writer = self.writer().await;
        let done = sqlx::query(
            "UPDATE proposals SET status = ?3, receipt = coalesce(?4, receipt), error = coalesce(?5, error), leaves_at = NULL,
                 decided_at = coalesce(decided_at, ?6)
             WHERE id = ?1 AND status = ?2 AND (?7 IS NULL OR executor IS ?7)",
        )
        .bind(id)
        .bind(from.as_str())
        .bind(to.as_str())
        .bind(receipt)
        .bind(error)
        .bind(now_ms())
        .bind(executor)
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

    /// Awaiting-review proposals of `task_id` become denied (cancelled, paused, lost lease).
    pub async fn deny_task_proposals(&self, task_id: &str, why: &str) -> Result<u64> {
        let mut writer = self.writer().await;
        Ok(deny_open_proposals(&mut writer, task_id, why).await?)
    }

    /// Proposals being carried out: (id, kind, executor, connection id).
    pub async fn executing_proposals(&self) -> Result<Vec<(String, ProposalKind, Option<String>, String)>> {
        let rows = sqlx::query("SELECT id, kind, executor, connection_id FROM proposals WHERE status = 'executing'")
            .fetch_all(self.reader())
            .await?;
        rows.iter()
            .map(|r| {
                let kind: String = r.try_get(1)?;
                let kind = ProposalKind::parse(&kind)
                    .ok_or_else(|| StoreError::CorruptRow(format!("stored proposal has an unknown kind {kind:?}")))?;
                Ok((r.try_get(0)?, kind, r.try_get(2)?, r.try_get(3)?))
            })
            .collect()
    }

    /// A proposal whose executor died while carrying it out. With `known_undone` (the
    /// workspace commits effect and receipt together, and no receipt was committed) it
    /// definitely did not happen: `failed`. Otherwise it may or may not have: `outcome_unknown`.
    pub async fn strand_executing_proposal(&self, id: &str, executor: Option<&str>, known_undone: bool) -> Result<bool> {
        let mut writer = self.writer().await;
        let done = sqlx::query(
            "UPDATE proposals SET
                 status = CASE WHEN ?3 THEN 'failed' ELSE 'outcome_unknown' END,
                 error = CASE WHEN ?3
                     THEN 'Hearth stopped before carrying this out, so nothing was sent or changed. Ask for it again if you still want it.'
                     ELSE 'Hearth stopped while carrying this out, so it may or may not have happened. Check before doing it again.' END
             WHERE id = ?1 AND status = 'executing' AND executor IS ?2",
        )
        .bind(id)
        .bind(executor)
        .bind(known_undone)
        .execute(&mut *writer)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Tasks waiting for approval on a proposal that is already decided (a crash between the
    /// decision and the release): (task id, proposal id).
    pub async fn waiting_on_decided(&self) -> Result<Vec<(String, String)>> {
        let rows = sqlx::query(
            "SELECT tasks.id, tasks.action_id FROM tasks JOIN proposals ON proposals.id = tasks.action_id
             WHERE tasks.status = 'waiting_approval' AND proposals.status NOT IN ('awaiting_review', 'leaving', 'executing')",
        )
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
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
                     WHEN 'undone' THEN 'Undone by you before it left; nothing was sent or changed.'
                     WHEN 'expired' THEN 'The approval expired.'
                     WHEN 'outcome_unknown' THEN 'Hearth lost track of the approved action; it may or may not have happened.'
                     WHEN 'failed' THEN 'The approved action failed, so nothing was sent or changed.'
                     ELSE 'The approved action ended: ' || status END
                   FROM proposals WHERE id = ?2)
             WHERE id = ?1 AND status = 'waiting_approval' AND action_id = ?2
               AND EXISTS (SELECT 1 FROM proposals WHERE id = ?2 AND status NOT IN ('awaiting_review', 'leaving', 'executing'))",
        )
        .bind(task_id)
        .bind(proposal_id)
        .bind(now_ms())
        .execute(&mut *writer)
        .await?;
        Ok(done.rows_affected() == 1)
    }
}

/// What an approval's claim and the end of its undo window both re-check in their own
/// statement: the account it was approved for is still the one in use (the local one read from
/// `meta`, its default bound at `local_default`; a Google one still connected) and, for a task's
/// proposal, the task still running or waiting with this proposal as its current action.
fn still_authorized(local_default: &str) -> String {
    format!(
        "(connection_id <> 'local'
              OR account = coalesce((SELECT value FROM meta WHERE key = 'local_account'), {local_default}))
         AND (connection_id IN ('local', 'browser', 'hearth')
              OR EXISTS (SELECT 1 FROM google_accounts g WHERE g.connection_id = proposals.connection_id
                           AND g.account = proposals.account))
         AND (task_id IS NULL OR EXISTS (
             SELECT 1 FROM tasks WHERE tasks.id = proposals.task_id AND tasks.action_id = proposals.id
               AND tasks.status IN ('running', 'waiting_approval')))"
    )
}

fn split_draft(draft: &ProposalDraft) -> Result<(&'static str, String)> {
    let mut value = serde_json::to_value(draft)?;
    let inner = value.get_mut("draft").map(serde_json::Value::take).unwrap_or_default();
    Ok((draft.kind().as_str(), inner.to_string()))
}

/// Denies a task's awaiting-review proposals on `conn` (inside the caller's transaction), and
/// takes back one waiting out its undo window (`undone`): Stop reaches an approved send that
/// has not left yet, and nothing is carried out after it.
pub(crate) async fn deny_open_proposals(conn: &mut sqlx::SqliteConnection, task_id: &str, why: &str) -> sqlx::Result<u64> {
    let done = sqlx::query(
        "UPDATE proposals SET status = CASE status WHEN 'leaving' THEN 'undone' ELSE 'denied' END,
             decided_at = coalesce(decided_at, ?2), error = ?3, leaves_at = NULL
         WHERE task_id = ?1 AND status IN ('awaiting_review', 'leaving')",
    )
    .bind(task_id)
    .bind(now_ms())
    .bind(why)
    .execute(conn)
    .await?;
    Ok(done.rows_affected())
}

/// The claim an approved proposal executes under: settled in the same transaction as a local
/// effect, so the effect and its receipt commit together.
#[derive(Debug, Clone, Copy)]
pub struct ExecutionClaim<'a> {
    /// The proposal.
    pub proposal_id: &'a str,
    /// The process that claimed it.
    pub executor: &'a str,
}

/// Settles `claim` as succeeded with `receipt` on `conn`, inside the caller's transaction.
/// `false` when the claim is no longer held (the caller must roll back its effect).
pub(crate) async fn settle_claim_in(conn: &mut sqlx::SqliteConnection, claim: ExecutionClaim<'_>, receipt: &str) -> sqlx::Result<bool> {
    // The task is re-checked here too: a Cancel or Pause committed after the claim wins, and
    // the effect (in the caller's transaction) rolls back with this settle.
    let done = sqlx::query(
        "UPDATE proposals SET status = 'succeeded', receipt = ?3, decided_at = coalesce(decided_at, ?4)
         WHERE id = ?1 AND status = 'executing' AND executor IS ?2
           AND (task_id IS NULL OR EXISTS (
               SELECT 1 FROM tasks WHERE tasks.id = proposals.task_id AND tasks.action_id = proposals.id
                 AND tasks.status IN ('running', 'waiting_approval')))",
    )
    .bind(claim.proposal_id)
    .bind(claim.executor)
    .bind(receipt)
    .bind(now_ms())
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}
