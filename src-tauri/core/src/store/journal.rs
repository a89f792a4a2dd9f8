//! The operation journal's table: one row per (scope, operation id), written before the
//! effect is dispatched and settled after it with a compare-and-swap on its status.

use sqlx::Row;

use super::{Store, now_ms};
use crate::error::Result;

/// A journal row as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationRow {
    /// The tool that performs it.
    pub tool: String,
    /// sha256 of the normalized action.
    pub action_hash: String,
    /// dispatching | succeeded | failed | interrupted | outcome_unknown | acknowledged.
    pub status: String,
    /// The receipt (JSON), once settled.
    pub receipt: Option<String>,
}

impl Store {
    /// Records an operation as `dispatching`. `false` if the key already exists.
    pub async fn insert_operation(&self, scope: &str, op_id: &str, tool: &str, action: &str, hash: &str) -> Result<bool> {
        let done = sqlx::query(
            "INSERT INTO operations (scope, op_id, tool, action, action_hash, status, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, 'dispatching', ?6) ON CONFLICT(scope, op_id) DO NOTHING",
        )
        .bind(scope)
        .bind(op_id)
        .bind(tool)
        .bind(action)
        .bind(hash)
        .bind(now_ms())
        .execute(&mut *self.writer().await)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Records an operation as `dispatching` only while `lease_id` still holds `task_id`
    /// (running, not expired). `false` if the key exists or the lease is gone; the caller tells
    /// them apart with [`Store::get_operation`].
    pub async fn insert_operation_fenced(
        &self,
        scope: &str,
        op_id: &str,
        tool: &str,
        action: &str,
        hash: &str,
        (task_id, lease_id): (&str, &str),
    ) -> Result<bool> {
        let now = now_ms();
        let done = sqlx::query(
            "INSERT INTO operations (scope, op_id, tool, action, action_hash, status, created_at)
             SELECT ?1, ?2, ?3, ?4, ?5, 'dispatching', ?6
             WHERE EXISTS (SELECT 1 FROM tasks WHERE id = ?7 AND lease_id = ?8 AND status = 'running' AND lease_expires_at > ?6)
             ON CONFLICT(scope, op_id) DO NOTHING",
        )
        .bind(scope)
        .bind(op_id)
        .bind(tool)
        .bind(action)
        .bind(hash)
        .bind(now)
        .bind(task_id)
        .bind(lease_id)
        .execute(&mut *self.writer().await)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Takes back an `acknowledged` operation for a new dispatch, only while the lease holds.
    pub async fn reclaim_acknowledged(&self, scope: &str, op_id: &str, fence: Option<(&str, &str)>) -> Result<bool> {
        let (task_id, lease_id) = fence.unwrap_or_default();
        let done = sqlx::query(
            "UPDATE operations SET status = 'dispatching', receipt = NULL, settled_at = NULL
             WHERE scope = ?1 AND op_id = ?2 AND status = 'acknowledged'
               AND (?3 = '' OR EXISTS (SELECT 1 FROM tasks WHERE id = ?3 AND lease_id = ?4 AND status = 'running'
                                      AND lease_expires_at > ?5))",
        )
        .bind(scope)
        .bind(op_id)
        .bind(task_id)
        .bind(lease_id)
        .bind(now_ms())
        .execute(&mut *self.writer().await)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// One operation.
    pub async fn get_operation(&self, scope: &str, op_id: &str) -> Result<Option<OperationRow>> {
        let row = sqlx::query("SELECT tool, action_hash, status, receipt FROM operations WHERE scope = ?1 AND op_id = ?2")
            .bind(scope)
            .bind(op_id)
            .fetch_optional(self.reader())
            .await?;
        row.map(|r| {
            Ok(OperationRow {
                tool: r.try_get(0)?,
                action_hash: r.try_get(1)?,
                status: r.try_get(2)?,
                receipt: r.try_get(3)?,
            })
        })
        .transpose()
    }

    /// Moves an operation from `from` to `to` with a receipt. `false` if it was not in `from`
    /// (a late result after Stop cannot overwrite the interrupted receipt).
    pub async fn settle_operation(
        &self,
        scope: &str,
        op_id: &str,
        from: &str,
        to: &str,
        receipt: Option<&str>,
    ) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE operations SET status = ?4, receipt = ?5, settled_at = ?6
             WHERE scope = ?1 AND op_id = ?2 AND status = ?3",
        )
        .bind(scope)
        .bind(op_id)
        .bind(from)
        .bind(to)
        .bind(receipt)
        .bind(now_ms())
        .execute(&mut *self.writer().await)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Removes a `dispatching` row whose effect never started (cancelled in between).
    pub async fn withdraw_operation(&self, scope: &str, op_id: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM operations WHERE scope = ?1 AND op_id = ?2 AND status = 'dispatching'")
            .bind(scope)
            .bind(op_id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(done.rows_affected() == 1)
    }
}
