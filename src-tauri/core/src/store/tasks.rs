//! Durable task records (the task engine grows around this table).

use hearth_protocol::ipc::TaskStatus;
use sha2::{Digest, Sha256};
use sqlx::Row;

use super::{Store, now_ms};
use crate::error::Result;

/// A stored task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRecord {
    /// sha256("task:" + idempotency key), hex.
    pub id: String,
    /// `agent`, `plan`, `document`, …
    pub kind: String,
    /// Short title for lists and cards.
    pub title: String,
    /// Stored status spelling.
    pub status: String,
}

/// What creating a task needs.
#[derive(Debug, Clone)]
pub struct NewTask<'a> {
    /// Same key, same task: a retried create never makes a second one.
    pub idempotency_key: &'a str,
    /// Task kind.
    pub kind: &'a str,
    /// Title.
    pub title: &'a str,
    /// The job, as JSON.
    pub input: &'a serde_json::Value,
    /// The chat thread that asked for it.
    pub thread_id: Option<&'a str>,
}

/// The deterministic id of the task created with `key`.
pub fn task_id_for_key(key: &str) -> String {
    hex::encode(Sha256::digest(format!("task:{key}").as_bytes()))
}

impl Store {
    /// Creates a queued task, or returns the one already created with the same key.
    pub async fn create_task(&self, new: NewTask<'_>) -> Result<TaskRecord> {
        let id = task_id_for_key(new.idempotency_key);
        let now = now_ms();
        sqlx::query(
            "INSERT INTO tasks (id, idempotency_key, kind, title, status, input, thread_id, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8) ON CONFLICT(idempotency_key) DO NOTHING",
        )
        .bind(&id)
        .bind(new.idempotency_key)
        .bind(new.kind)
        .bind(new.title)
        .bind(TaskStatus::Queued.as_str())
        .bind(serde_json::to_string(new.input)?)
        .bind(new.thread_id)
        .bind(now)
        .execute(self.pool())
        .await?;
        let row = sqlx::query("SELECT id, kind, title, status FROM tasks WHERE id = ?1")
            .bind(&id)
            .fetch_one(self.pool())
            .await?;
        Ok(TaskRecord { id: row.try_get(0)?, kind: row.try_get(1)?, title: row.try_get(2)?, status: row.try_get(3)? })
    }

    /// How many tasks exist (an effect counter for tests).
    pub async fn count_tasks(&self) -> Result<i64> {
        Ok(sqlx::query("SELECT count(*) FROM tasks").fetch_one(self.pool()).await?.try_get(0)?)
    }
}
