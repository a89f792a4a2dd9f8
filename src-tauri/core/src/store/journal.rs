//! The operation journal's table: one row per (scope, operation id), written before the
//! effect is dispatched and settled after it with a compare-and-swap on its status **and its
//! claimant** (the run that holds it), so a stale holder in another process cannot settle a
//! newer claim's row.

use sqlx::Row;

use super::error::{Result, StoreError};
use super::tasks::flag_scope_uncertain;
use super::{Store, now_ms};

/// Where an operation is. Stored as its snake_case spelling; an unknown spelling read back
/// is a corrupt row, never a silent default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum OpStatus {
    /// Intent committed; the effect may be running right now.
    Dispatching,
    /// It happened; the receipt says what it returned.
    Succeeded,
    /// It definitely did not happen. A later run may perform it again.
    Failed,
    /// It may or may not have happened (lost response, crash, Stop mid-flight). Never
    /// performed again until the owner acknowledges it.
    OutcomeUnknown,
    /// The owner reviewed an unknown outcome and asked for it to be done again.
    Acknowledged,
}

impl OpStatus {
    /// Every status, in declaration order (derived: strum's `VariantArray`).
    pub const ALL: &'static [Self] = <Self as strum::VariantArray>::VARIANTS;

    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses the stored spelling: a value this build does not know is a corrupt row.
    pub fn parse(text: &str) -> Result<Self> {
        text.parse().map_err(|_| {
            StoreError::CorruptRow(format!(
                "the operation journal holds an unknown status {text:?}; this database was written by a newer Hearth \
                 or damaged — update Hearth or restore a backup"
            ))
        })
    }
}

/// A journal row as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationRow {
    /// The tool that performs it.
    pub tool: String,
    /// sha256 of the normalized action.
    pub action_hash: String,
    /// Where it is.
    pub status: OpStatus,
    /// The receipt (JSON), once settled.
    pub receipt: Option<String>,
    /// The run holding (or that last held) it.
    pub claimant: Option<String>,
    /// What the effect reported after Stop had made it uncertain (JSON), if anything.
    pub late_receipt: Option<String>,
}

/// What an operation's key is: its scope and its id within the scope.
#[derive(Debug, Clone, Copy)]
pub struct OpKey<'a> {
    /// `task:<id>` or `thread:<id>`.
    pub scope: &'a str,
    /// Stable across retries of the same step.
    pub op_id: &'a str,
}

impl Store {
    /// Records an operation as `dispatching` for `claimant`. With a `fence` (task id, lease
    /// id) the row is written only while that lease still holds, in the same statement.
    /// `false` if the key exists or the lease is gone; [`Store::get_operation`] tells them apart.
    pub async fn insert_operation(
        &self,
        key: OpKey<'_>,
        tool: &str,
        action: &str,
        hash: &str,
        claimant: &str,
        fence: Option<(&str, &str)>,
    ) -> Result<bool> {
        let now = now_ms();
        let (task_id, lease_id) = fence.unwrap_or_default();
        let done = sqlx::query(
            "INSERT INTO operations (scope, op_id, tool, action, action_hash, status, created_at, claimant)
             SELECT ?1, ?2, ?3, ?4, ?5, 'dispatching', ?6, ?9
             WHERE ?7 = '' OR EXISTS (SELECT 1 FROM tasks WHERE id = ?7 AND lease_id = ?8 AND status = 'running'
                                      AND lease_expires_at > ?6)
             ON CONFLICT(scope, op_id) DO NOTHING",
        )
        .bind(key.scope)
        .bind(key.op_id)
        .bind(tool)
        .bind(action)
        .bind(hash)
        .bind(now)
        .bind(task_id)
        .bind(lease_id)
        .bind(claimant)
        .execute(&mut *self.writer().await)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Takes an existing row back for a new dispatch by `claimant`, from `from` (an
    /// `acknowledged` row the owner asked for again, or a `failed` one of an earlier run),
    /// only while the fence holds. `false` when someone else took it or the lease is gone.
    pub async fn reclaim_operation(&self, key: OpKey<'_>, from: OpStatus, claimant: &str, fence: Option<(&str, &str)>) -> Result<bool> {
        let (task_id, lease_id) = fence.unwrap_or_default();
        let done = sqlx::query(
            "UPDATE operations SET status = 'dispatching', receipt = NULL, settled_at = NULL, claimant = ?4,
                 late_receipt = NULL, late_at = NULL
             WHERE scope = ?1 AND op_id = ?2 AND status = ?3 AND coalesce(claimant, '') <> ?4 AND stopping_owner IS NULL
               AND (?5 = '' OR EXISTS (SELECT 1 FROM tasks WHERE id = ?5 AND lease_id = ?6 AND status = 'running'
                                      AND lease_expires_at > ?7))",
        )
        .bind(key.scope)
        .bind(key.op_id)
        .bind(from.as_str())
        .bind(claimant)
        .bind(task_id)
        .bind(lease_id)
        .bind(now_ms())
        .execute(&mut *self.writer().await)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// One operation.
    pub async fn get_operation(&self, key: OpKey<'_>) -> Result<Option<OperationRow>> {
        let row = sqlx::query(
            "SELECT tool, action_hash, status, receipt, claimant, late_receipt FROM operations
             WHERE scope = ?1 AND op_id = ?2",
        )
        .bind(key.scope)
        .bind(key.op_id)
        .fetch_optional(self.reader())
        .await?;
        row.map(|r| {
            Ok(OperationRow {
                tool: r.try_get(0)?,
                action_hash: r.try_get(1)?,
                status: OpStatus::parse(&r.try_get::<String, _>(2)?)?,
                receipt: r.try_get(3)?,
                claimant: r.try_get(4)?,
                late_receipt: r.try_get(5)?,
            })
        })
        .transpose()
    }

    /// Settles `claimant`'s `dispatching` row to `to` with a receipt. `false` if the row is no
    /// longer `dispatching` under that claimant. Settling to `outcome_unknown` flags the task
    /// (for a task scope) in the same transaction, so the owner's review cannot be skipped.
    pub async fn settle_operation(&self, key: OpKey<'_>, claimant: &str, to: OpStatus, receipt: Option<&str>) -> Result<bool> {
        let now = now_ms();
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin(&mut *writer).await?;
        let done = sqlx::query(
            "UPDATE operations SET status = ?4, receipt = ?5, settled_at = ?6
             WHERE scope = ?1 AND op_id = ?2 AND status = 'dispatching' AND claimant IS ?3",
        )
        .bind(key.scope)
        .bind(key.op_id)
        .bind(claimant)
        .bind(to.as_str())
        .bind(receipt)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        let settled = done.rows_affected() == 1;
        if settled && to == OpStatus::OutcomeUnknown {
            flag_scope_uncertain(&mut tx, key.scope).await?;
        }
        tx.commit().await?;
        Ok(settled)
    }

    /// Stop reached `claimant`'s running effect: the row becomes `outcome_unknown` (flagging
    /// the task) with `stopping_owner` — this process — until the effect reports.
    pub async fn mark_stopped(&self, key: OpKey<'_>, claimant: &str, owner: &str, receipt: &str) -> Result<bool> {
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin(&mut *writer).await?;
        let done = sqlx::query(
            "UPDATE operations SET status = 'outcome_unknown', receipt = ?5, settled_at = ?6, stopping_owner = ?4
             WHERE scope = ?1 AND op_id = ?2 AND claimant IS ?3 AND status IN ('dispatching', 'outcome_unknown')",
        )
        .bind(key.scope)
        .bind(key.op_id)
        .bind(claimant)
        .bind(owner)
        .bind(receipt)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        let marked = done.rows_affected() == 1;
        if marked {
            flag_scope_uncertain(&mut tx, key.scope).await?;
        }
        tx.commit().await?;
        Ok(marked)
    }

    /// Every process named by a stopping mark, in any scope.
    pub async fn stopping_marks(&self) -> Result<Vec<String>> {
        Ok(sqlx::query_scalar("SELECT DISTINCT stopping_owner FROM operations WHERE stopping_owner IS NOT NULL")
            .fetch_all(self.reader())
            .await?)
    }

    /// Clears the stopping marks of `owner` (a process that is gone).
    pub async fn clear_stopping_marks(&self, owner: &str) -> Result<u64> {
        let done = sqlx::query("UPDATE operations SET stopping_owner = NULL WHERE stopping_owner = ?1")
            .bind(owner)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(done.rows_affected())
    }

    /// The processes whose stopped effects in `scope` have not reported yet.
    pub async fn stopping_owners(&self, scope: &str) -> Result<Vec<String>> {
        let rows = sqlx::query("SELECT DISTINCT stopping_owner FROM operations WHERE scope = ?1 AND stopping_owner IS NOT NULL")
            .bind(scope)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(|r| Ok(r.try_get(0)?)).collect()
    }

    /// Records what an effect reported after Stop made it `outcome_unknown`: its result and
    /// when. When the effect says nothing happened (`nothing_happened`), the row becomes
    /// `failed` (a later run may perform it) and the task's flag is recomputed; otherwise it
    /// stays uncertain with the late result beside it for the owner's review.
    pub async fn record_late_result(&self, key: OpKey<'_>, claimant: &str, late: &str, nothing_happened: bool) -> Result<bool> {
        let now = now_ms();
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin(&mut *writer).await?;
        // Also once the owner has acknowledged it: the claimant still holds the row (a Retry
        // waits for `stopping_owner` to clear before another run may take it).
        let done = sqlx::query(
            "UPDATE operations SET late_receipt = ?4, late_at = ?5, stopping_owner = NULL,
                 status = CASE WHEN ?6 THEN 'failed' ELSE status END,
                 receipt = CASE WHEN ?6 THEN ?4 ELSE receipt END
             WHERE scope = ?1 AND op_id = ?2 AND status IN ('outcome_unknown', 'acknowledged') AND claimant IS ?3",
        )
        .bind(key.scope)
        .bind(key.op_id)
        .bind(claimant)
        .bind(late)
        .bind(now)
        .bind(nothing_happened)
        .execute(&mut *tx)
        .await?;
        let recorded = done.rows_affected() == 1;
        if recorded && nothing_happened {
            recompute_scope_flag(&mut tx, key.scope).await?;
        }
        tx.commit().await?;
        Ok(recorded)
    }

    /// An `acknowledged` row whose effect is known (from its late result) to have succeeded
    /// becomes `succeeded` with that result: the owner's Retry never performs it twice.
    pub async fn accept_late_success(&self, key: OpKey<'_>) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE operations SET status = 'succeeded', receipt = late_receipt -> '$.value', settled_at = ?3
             WHERE scope = ?1 AND op_id = ?2 AND status = 'acknowledged'
               AND json_extract(late_receipt, '$.status') = 'succeeded'",
        )
        .bind(key.scope)
        .bind(key.op_id)
        .bind(now_ms())
        .execute(&mut *self.writer().await)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Removes `claimant`'s row whose effect never started (Stop came first), so a later
    /// retry may perform it. A sweep (lost lease, the run's end) may already have made it
    /// `outcome_unknown`; only this claimant knows the effect never started, so it takes that
    /// back too (never a row with a late result) and recomputes the task's flag.
    pub async fn withdraw_operation(&self, key: OpKey<'_>, claimant: &str) -> Result<bool> {
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin(&mut *writer).await?;
        let done = sqlx::query(
            "DELETE FROM operations WHERE scope = ?1 AND op_id = ?2 AND claimant IS ?3 AND late_receipt IS NULL
               AND status IN ('dispatching', 'outcome_unknown')",
        )
        .bind(key.scope)
        .bind(key.op_id)
        .bind(claimant)
        .execute(&mut *tx)
        .await?;
        let withdrawn = done.rows_affected() == 1;
        if withdrawn {
            recompute_scope_flag(&mut tx, key.scope).await?;
        }
        tx.commit().await?;
        Ok(withdrawn)
    }

    /// Puts a row taken back from `acknowledged` (whose effect then never started) back there,
    /// clearing any stopping mark a sweep put on it meanwhile (this claimant knows nothing ran)
    /// and recomputing the task's flag.
    pub async fn return_acknowledged(&self, key: OpKey<'_>, claimant: &str) -> Result<bool> {
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin(&mut *writer).await?;
        let done = sqlx::query(
            "UPDATE operations SET status = 'acknowledged', stopping_owner = NULL
             WHERE scope = ?1 AND op_id = ?2 AND claimant IS ?3 AND late_receipt IS NULL
               AND status IN ('dispatching', 'outcome_unknown')",
        )
        .bind(key.scope)
        .bind(key.op_id)
        .bind(claimant)
        .execute(&mut *tx)
        .await?;
        let returned = done.rows_affected() == 1;
        if returned {
            recompute_scope_flag(&mut tx, key.scope).await?;
        }
        tx.commit().await?;
        Ok(returned)
    }

    /// Every row `claimant` still holds `dispatching` in `scope` becomes `outcome_unknown`
    /// (the run has ended and its effects have settled, so such a row lost its journal task),
    /// flagging the task. Returns how many.
    pub async fn strand_claimed_operations(&self, scope: &str, claimant: &str) -> Result<u64> {
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin(&mut *writer).await?;
        let stranded = sqlx::query(
            "UPDATE operations SET status = 'outcome_unknown', settled_at = ?3,
                 receipt = json_object('unknown', 'The run ended while this was being performed, so it may or may not have happened.')
             WHERE scope = ?1 AND claimant IS ?2 AND status = 'dispatching'",
        )
        .bind(scope)
        .bind(claimant)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?
        .rows_affected();
        // The run's effects have all ended (the engine waited for them): a stopped one that
        // has not reported by now never will.
        sqlx::query("UPDATE operations SET stopping_owner = NULL WHERE scope = ?1 AND claimant IS ?2 AND stopping_owner IS NOT NULL")
            .bind(scope)
            .bind(claimant)
            .execute(&mut *tx)
            .await?;
        if stranded > 0 {
            flag_scope_uncertain(&mut tx, scope).await?;
        }
        tx.commit().await?;
        Ok(stranded)
    }

    /// At start-up: chat-scope rows left `dispatching` by chat runs that no longer run
    /// (their process died, or they ended) become `outcome_unknown`. A call an approval ran is
    /// left to [`Store::strand_orphan_owner_operations`], which asks whether its process lives.
    pub async fn strand_orphan_chat_operations(&self) -> Result<u64> {
        let done = sqlx::query(
            "UPDATE operations SET status = 'outcome_unknown', settled_at = ?1,
                 receipt = json_object('unknown', 'Hearth stopped while this was being performed, so it may or may not have happened.')
             WHERE status = 'dispatching' AND scope LIKE 'thread:%' AND claimant NOT LIKE '%:approval:%'
               AND NOT EXISTS (SELECT 1 FROM chat_runs WHERE chat_runs.id = operations.claimant AND chat_runs.status = 'running')",
        )
        .bind(now_ms())
        .execute(&mut *self.writer().await)
        .await?;
        Ok(done.rows_affected())
    }

    /// At start-up: operations claimed by a process rather than by a run — the owner's own
    /// (`owner:` scopes) and the calls an approval ran (claimant `<process>:approval:<id>`, in a
    /// task's or a chat's scope) — left `dispatching` by a process that is no longer running
    /// become `outcome_unknown`; a task's is flagged for the owner's review like a run's.
    pub async fn strand_orphan_owner_operations(&self, dead: impl Fn(&str) -> bool) -> Result<u64> {
        let rows = sqlx::query(
            "SELECT scope, op_id, claimant FROM operations
             WHERE status = 'dispatching' AND (scope LIKE 'owner:%' OR claimant LIKE '%:approval:%')",
        )
        .fetch_all(self.reader())
        .await?;
        let mut stranded = 0;
        for row in rows {
            let (scope, op_id, claimant): (String, String, Option<String>) = (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
            if !claimant.as_deref().is_none_or(&dead) {
                continue;
            }
            let mut writer = self.writer().await;
            let mut tx = sqlx::Connection::begin(&mut *writer).await?;
            let done = sqlx::query(
                "UPDATE operations SET status = 'outcome_unknown', settled_at = ?1,
                     receipt = json_object('unknown', 'Hearth stopped while this was being performed, so it may or may not have happened.')
                 WHERE scope = ?2 AND op_id = ?3 AND status = 'dispatching' AND claimant IS ?4",
            )
            .bind(now_ms())
            .bind(&scope)
            .bind(&op_id)
            .bind(&claimant)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if done > 0 {
                flag_scope_uncertain(&mut tx, &scope).await?;
            }
            tx.commit().await?;
            stranded += done;
        }
        Ok(stranded)
    }

    /// Operations of `scope` in `status` (an effect counter and a review list).
    pub async fn count_operations(&self, scope: &str, status: OpStatus) -> Result<i64> {
        Ok(sqlx::query("SELECT count(*) FROM operations WHERE scope = ?1 AND status = ?2")
            .bind(scope)
            .bind(status.as_str())
            .fetch_one(self.reader())
            .await?
            .try_get(0)?)
    }
}

/// Recomputes a task's flag from its journal (only ever clears what no row still justifies).
async fn recompute_scope_flag(conn: &mut sqlx::SqliteConnection, scope: &str) -> Result<()> {
    sqlx::query(
        "UPDATE tasks SET outcome_uncertain = EXISTS (SELECT 1 FROM operations WHERE scope = ?1 AND status = 'outcome_unknown')
         WHERE 'task:' || id = ?1",
    )
    .bind(scope)
    .execute(conn)
    .await?;
    Ok(())
}
