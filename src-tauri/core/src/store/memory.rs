//! Facts and where they were used. Ranking is FTS5's bm25 over `memories_fts` (migration 0020).

use hearth_protocol::ids::{TaskId, ThreadId};
use hearth_protocol::memory::{MemorySource, MemoryUseView, MemoryView};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::error::{Result, StoreError};
use super::{Store, now_ms};

fn view(row: &SqliteRow) -> Result<MemoryView> {
    let source: String = row.try_get("source")?;
    Ok(MemoryView {
        id: row.try_get("id")?,
        text: row.try_get("text")?,
        source: MemorySource::parse(&source)
            .ok_or_else(|| StoreError::CorruptRow(format!("stored fact has an unknown source {source:?}")))?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// At most this many facts are kept.
pub const MAX_FACTS: i64 = 10_000;

/// What [`Store::remember`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Remembered {
    /// The fact kept under this key was forgotten by the owner; it is not kept again.
    Forgotten,
    /// Kept now.
    New(MemoryView),
    /// Kept already under this key, with this text.
    Same(MemoryView),
    /// Kept already under this key with other text.
    Different(MemoryView),
}

impl Store {
    /// Keeps a fact under `key` (one fact per key: a retried call keeps one). With a `fence`
    /// (task, lease) or a `chat_run`, keeps nothing once that run no longer holds (checked in
    /// the insert): `None`.
    pub async fn remember(
        &self,
        key: &str,
        text: &str,
        source: MemorySource,
        fence: Option<(&str, &str)>,
        chat_run: Option<&str>,
    ) -> Result<Option<Remembered>> {
        let now = now_ms();
        let (fence_task, fence_lease) = fence.unwrap_or_default();
        let inserted = sqlx::query(
            "INSERT INTO memories (key, text, source, created_at, updated_at)
             SELECT ?1, ?2, ?3, ?4, ?4
             WHERE (?5 = '' OR EXISTS (SELECT 1 FROM tasks WHERE id = ?5 AND lease_id = ?6 AND status = 'running'
                                      AND lease_expires_at > ?4))
               AND NOT EXISTS (SELECT 1 FROM chat_runs WHERE id = ?7 AND status <> 'running')
               AND NOT EXISTS (SELECT 1 FROM memory_forgotten WHERE key = ?1)
               AND (SELECT count(*) FROM memories) < ?8
             ON CONFLICT(key) DO NOTHING RETURNING id, text, source, created_at, updated_at",
        )
        .bind(key)
        .bind(text)
        .bind(source.as_str())
        .bind(now)
        .bind(fence_task)
        .bind(fence_lease)
        .bind(chat_run.unwrap_or_default())
        .bind(MAX_FACTS)
        .fetch_optional(&mut *self.writer().await)
        .await?;
        if let Some(row) = inserted {
            return Ok(Some(Remembered::New(view(&row)?)));
        }
        let forgotten = sqlx::query("SELECT 1 FROM memory_forgotten WHERE key = ?1").bind(key).fetch_optional(self.reader()).await?;
        if forgotten.is_some() {
            return Ok(Some(Remembered::Forgotten));
        }
        let row = sqlx::query("SELECT id, text, source, created_at, updated_at FROM memories WHERE key = ?1")
            .bind(key)
            .fetch_optional(self.reader())
            .await?;
        let Some(row) = row else {
            // Not kept and not forgotten: fenced, or the cap.
            if self.fenced_out(fence, chat_run).await? {
                return Ok(None);
            }
            return Err(StoreError::Conflict(format!("Hearth keeps at most {MAX_FACTS} facts; forget some in Memory, then try again.")));
        };
        let existing = view(&row)?;
        Ok(Some(if existing.text == text { Remembered::Same(existing) } else { Remembered::Different(existing) }))
    }

    /// Corrects a fact's text. `false` when it is gone.
    pub async fn edit_memory(&self, id: i64, text: &str) -> Result<bool> {
        let changed = sqlx::query("UPDATE memories SET text = ?1, updated_at = ?2 WHERE id = ?3")
            .bind(text)
            .bind(now_ms())
            .bind(id)
            .execute(&mut *self.writer().await)
            .await?
            .rows_affected();
        Ok(changed == 1)
    }

    /// Forgets a fact: the row, its index entry and its uses go in one statement (triggers).
    /// `false` when it was gone already.
    pub async fn forget_memory(&self, id: i64) -> Result<bool> {
        let gone = sqlx::query("DELETE FROM memories WHERE id = ?1").bind(id).execute(&mut *self.writer().await).await?.rows_affected();
        Ok(gone == 1)
    }

    /// One fact.
    pub async fn memory(&self, id: i64) -> Result<Option<MemoryView>> {
        let row = sqlx::query("SELECT id, text, source, created_at, updated_at FROM memories WHERE id = ?1")
            .bind(id)
            .fetch_optional(self.reader())
            .await?;
        row.as_ref().map(view).transpose()
    }

    /// Every fact, newest first.
    pub async fn memories(&self) -> Result<Vec<MemoryView>> {
        let rows =
            sqlx::query("SELECT id, text, source, created_at, updated_at FROM memories ORDER BY id DESC").fetch_all(self.reader()).await?;
        rows.iter().map(view).collect()
    }

    /// Facts matching an FTS5 query, best first (bm25), at most `limit`.
    pub async fn search_memories(&self, fts_query: &str, limit: i64) -> Result<Vec<MemoryView>> {
        let rows = sqlx::query(
            "SELECT m.id, m.text, m.source, m.created_at, m.updated_at
             FROM memories_fts f JOIN memories m ON m.id = f.rowid
             WHERE memories_fts MATCH ?1 ORDER BY f.rank, m.id DESC LIMIT ?2",
        )
        .bind(fts_query)
        .bind(limit)
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(view).collect()
    }

    /// Records which facts a model request carried. Facts forgotten since they were recalled
    /// are not recorded (the insert reads them from `memories`).
    pub async fn record_memory_use(&self, request_id: &str, ids: &[i64], thread_id: Option<&str>, task_id: Option<&str>) -> Result<()> {
        let now = now_ms();
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin(&mut *writer).await?;
        for id in ids {
            sqlx::query(
                "INSERT OR IGNORE INTO memory_uses (request_id, memory_id, thread_id, task_id, used_at)
                 SELECT ?1, id, ?3, ?4, ?5 FROM memories WHERE id = ?2",
            )
            .bind(request_id)
            .bind(id)
            .bind(thread_id)
            .bind(task_id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The newest requests that carried facts, newest first.
    pub async fn memory_uses(&self, requests: i64) -> Result<Vec<MemoryUseView>> {
        let rows = sqlx::query(
            "SELECT request_id, max(used_at) AS at, max(thread_id) AS thread_id, max(task_id) AS task_id,
                    group_concat(memory_id) AS ids
             FROM memory_uses GROUP BY request_id ORDER BY at DESC, request_id LIMIT ?1",
        )
        .bind(requests)
        .fetch_all(self.reader())
        .await?;
        rows.iter()
            .map(|row| {
                let ids: String = row.try_get("ids")?;
                Ok(MemoryUseView {
                    request_id: row.try_get("request_id")?,
                    at: row.try_get("at")?,
                    thread_id: row.try_get::<Option<String>, _>("thread_id")?.map(ThreadId::trusted),
                    task_id: row.try_get::<Option<String>, _>("task_id")?.map(TaskId::trusted),
                    memory_ids: ids.split(',').filter_map(|id| id.parse().ok()).collect(),
                })
            })
            .collect()
    }
}
