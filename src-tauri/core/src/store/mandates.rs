//! Standing orders (migration 0026): rows, and the one compare-and-swap that counts a use.
//!
//! A use is counted by the same `UPDATE` that checks the mandate is live (not revoked, not
//! expired), holds for this task (its own, or its schedule's), the task's run still holds its
//! lease, and the window has room: racing calls cannot exceed the allowance. Each use is
//! recorded under the operation key it ran as, so the same operation asked again (a retried
//! step) is not counted twice, and its receipt can name the mandate.

use hearth_protocol::ids::{ScheduleId, TaskId};
use hearth_protocol::mandates::{Mandate, MandateGrant, MandateGrantParams, MandateHolder, MandateWindow};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::Store;
use super::error::{Result, StoreError};

const COLUMNS: &str = "id, holder_kind, holder_id, grant_kind, origin, recipients, max_uses, window_ms, uses, window_start, \
                       expires_at, created_at, revoked_at";

/// The most mandates listed.
const MAX_LISTED: i64 = 500;

fn mandate(row: &SqliteRow) -> Result<Mandate> {
    let id: String = row.try_get("id")?;
    let corrupt = |what: &str| StoreError::CorruptRow(format!("stored standing order {id} has an unknown {what}"));
    let holder_kind: String = row.try_get("holder_kind")?;
    let holder_id: String = row.try_get("holder_id")?;
    let holder = match holder_kind.as_str() {
        "task" => MandateHolder::Task { task_id: TaskId::trusted(holder_id) },
        "schedule" => MandateHolder::Schedule { schedule_id: ScheduleId::trusted(holder_id) },
        _ => return Err(corrupt("holder")),
    };
    let grant_kind: String = row.try_get("grant_kind")?;
    let recipients = match row.try_get::<Option<String>, _>("recipients")? {
        Some(json) => Some(serde_json::from_str::<Vec<String>>(&json).map_err(|_| corrupt("recipient list"))?),
        None => None,
    };
    let grant = MandateGrant::from_stored(&grant_kind, row.try_get("origin")?, recipients).ok_or_else(|| corrupt("grant"))?;
    let window = MandateWindow::from_millis(row.try_get("window_ms")?).ok_or_else(|| corrupt("window"))?;
    let count = |name: &str| -> Result<u32> {
        let n: i64 = row.try_get(name)?;
        u32::try_from(n).map_err(|_| corrupt(name))
    };
    Ok(Mandate {
        holder,
        grant,
        window,
        limit: count("max_uses")?,
        uses: count("uses")?,
        window_start: row.try_get("window_start")?,
        expires_at: row.try_get("expires_at")?,
        created_at: row.try_get("created_at")?,
        revoked_at: row.try_get("revoked_at")?,
        id,
    })
}

impl Store {
    /// Stores a new mandate granted at `now`.
    pub async fn grant_mandate(&self, params: &MandateGrantParams, now: i64) -> Result<Mandate> {
        let id = uuid::Uuid::new_v4().to_string();
        let mut writer = self.writer().await;
        let row = sqlx::query(&format!(
            "INSERT INTO mandates (id, holder_kind, holder_id, grant_kind, origin, max_uses, window_ms, uses, window_start,
                                   expires_at, created_at, recipients)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8, ?9, ?8, ?10) RETURNING {COLUMNS}"
        ))
        .bind(&id)
        .bind(params.holder.kind_str())
        .bind(params.holder.id())
        .bind(params.grant.kind_str())
        .bind(params.grant.stored_origin())
        .bind(i64::from(params.limit))
        .bind(params.window.millis())
        .bind(now)
        .bind(now.saturating_add(params.lasts_ms))
        .bind(params.grant.recipients().map(serde_json::to_string).transpose()?)
        .fetch_one(&mut *writer)
        .await?;
        mandate(&row)
    }

    /// Every mandate (or one holder's), newest first.
    pub async fn mandates(&self, holder: Option<&MandateHolder>) -> Result<Vec<Mandate>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM mandates WHERE (?1 IS NULL OR (holder_kind = ?1 AND holder_id = ?2))
             ORDER BY created_at DESC, id LIMIT ?3"
        ))
        .bind(holder.map(MandateHolder::kind_str))
        .bind(holder.map(MandateHolder::id))
        .bind(MAX_LISTED)
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(mandate).collect()
    }

    /// One mandate.
    pub async fn mandate(&self, id: &str) -> Result<Option<Mandate>> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM mandates WHERE id = ?1")).bind(id).fetch_optional(self.reader()).await?;
        row.as_ref().map(mandate).transpose()
    }

    /// The mandates live at `now` for `task_id`: its own and its schedule's.
    pub async fn live_mandates_for_task(&self, task_id: &str, now: i64) -> Result<Vec<Mandate>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM mandates
             WHERE revoked_at IS NULL AND expires_at > ?2
               AND ((holder_kind = 'task' AND holder_id = ?1)
                    OR (holder_kind = 'schedule' AND holder_id = (SELECT schedule_id FROM tasks WHERE id = ?1)))
             ORDER BY created_at, id"
        ))
        .bind(task_id)
        .bind(now)
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(mandate).collect()
    }

    /// Counts one use of the first of `candidates` that still has room, for the operation
    /// `(op_scope, op_id)` of `task_id`'s run under `lease_id`; returns the mandate's id, or
    /// `None` when none may be used (revoked, expired, used up, not this task's, the run lost
    /// its lease, or a send an order approved for this task is still in flight or in doubt —
    /// nothing more runs unseen beside it). The same operation asked again returns the mandate it was counted against,
    /// without counting again, while that mandate is live.
    #[expect(clippy::too_many_arguments, reason = "the candidates, the run's fence and the operation key")]
    pub async fn use_mandate(
        &self,
        candidates: &[String],
        task_id: &str,
        lease_id: &str,
        op_scope: &str,
        op_id: &str,
        tool: &str,
        now: i64,
    ) -> Result<Option<String>> {
        // The holder, life and fence terms, shared by both statements below (?1 the mandate,
        // ?2 now, ?3 the task, ?4 its lease).
        const LIVE: &str = "id = ?1 AND revoked_at IS NULL AND expires_at > ?2
             AND ((holder_kind = 'task' AND holder_id = ?3)
                  OR (holder_kind = 'schedule' AND holder_id = (SELECT schedule_id FROM tasks WHERE id = ?3)))
             AND EXISTS (SELECT 1 FROM tasks WHERE id = ?3 AND lease_id = ?4 AND status = 'running')
             AND NOT EXISTS (SELECT 1 FROM proposals WHERE task_id = ?3 AND mandate_id IS NOT NULL
                               AND status IN ('executing', 'outcome_unknown'))";
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin_with(&mut *writer, "BEGIN IMMEDIATE").await?;
        let counted: Option<String> = sqlx::query_scalar("SELECT mandate_id FROM mandate_uses WHERE op_scope = ?1 AND op_id = ?2")
            .bind(op_scope)
            .bind(op_id)
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(id) = counted {
            let live = candidates.contains(&id)
                && sqlx::query(&format!("SELECT 1 FROM mandates WHERE {LIVE}"))
                    .bind(&id)
                    .bind(now)
                    .bind(task_id)
                    .bind(lease_id)
                    .fetch_optional(&mut *tx)
                    .await?
                    .is_some();
            tx.commit().await?;
            return Ok(live.then_some(id));
        }
        for id in candidates {
            // The check and the count in one statement: a new window starts counting at 1.
            let counted = sqlx::query(&format!(
                "UPDATE mandates
                 SET uses = CASE WHEN window_ms > 0 AND ?2 >= window_start + window_ms THEN 1 ELSE uses + 1 END,
                     window_start = CASE WHEN window_ms > 0 AND ?2 >= window_start + window_ms THEN ?2 ELSE window_start END
                 WHERE {LIVE} AND (uses < max_uses OR (window_ms > 0 AND ?2 >= window_start + window_ms))"
            ))
            .bind(id)
            .bind(now)
            .bind(task_id)
            .bind(lease_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if counted == 1 {
                sqlx::query("INSERT INTO mandate_uses (mandate_id, op_scope, op_id, tool, used_at) VALUES (?1, ?2, ?3, ?4, ?5)")
                    .bind(id)
                    .bind(op_scope)
                    .bind(op_id)
                    .bind(tool)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                return Ok(Some(id.clone()));
            }
        }
        tx.commit().await?;
        Ok(None)
    }

    /// Uses recorded against a mandate: (operation scope, operation id, tool), oldest first.
    pub async fn mandate_uses(&self, id: &str) -> Result<Vec<(String, String, String)>> {
        let rows = sqlx::query("SELECT op_scope, op_id, tool FROM mandate_uses WHERE mandate_id = ?1 ORDER BY used_at, op_id")
            .bind(id)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?))).collect()
    }

    /// Revokes a mandate at `now`; `None` when there is no such mandate. Revoking twice keeps
    /// the first time.
    pub async fn revoke_mandate(&self, id: &str, now: i64) -> Result<Option<Mandate>> {
        let mut writer = self.writer().await;
        let row = sqlx::query(&format!("UPDATE mandates SET revoked_at = coalesce(revoked_at, ?2) WHERE id = ?1 RETURNING {COLUMNS}"))
            .bind(id)
            .bind(now)
            .fetch_optional(&mut *writer)
            .await?;
        row.as_ref().map(mandate).transpose()
    }

    /// The running tasks a holder covers: (task id, attempts), for Stop on revoke.
    pub async fn running_tasks_of(&self, holder: &MandateHolder) -> Result<Vec<(String, i64)>> {
        let rows = sqlx::query(
            "SELECT id, attempts FROM tasks WHERE status = 'running'
               AND ((?1 = 'task' AND id = ?2) OR (?1 = 'schedule' AND schedule_id = ?2))",
        )
        .bind(holder.kind_str())
        .bind(holder.id())
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
    }
}
