//! The owner's inbox. Most notices are written by triggers (migration 0019) in the same
//! statement as the change they report; the rest through `insert_notice`, in the transaction of
//! the change they report (a schedule's) or fenced to a task run's lease (a monitor's). A key
//! makes each one once.

use hearth_protocol::ids::{ProposalId, ScheduleId, TaskId};
use hearth_protocol::notifications::{NotificationKind, NotificationTarget, NotificationView};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::error::{Result, StoreError};
use super::{Store, now_ms};

const COLUMNS: &str = "id, kind, title, body, target_kind, target_id, created_at, read_at";

fn view(row: &SqliteRow) -> Result<NotificationView> {
    let kind: String = row.try_get("kind")?;
    let target_kind: String = row.try_get("target_kind")?;
    let target_id: String = row.try_get("target_id")?;
    let corrupt = |what: &str, v: &str| StoreError::CorruptRow(format!("stored notice has an unknown {what} {v:?}"));
    let target = match target_kind.as_str() {
        "task" => NotificationTarget::Task(TaskId::trusted(target_id)),
        "proposal" => NotificationTarget::Proposal(ProposalId::trusted(target_id)),
        "schedule" => NotificationTarget::Schedule(ScheduleId::trusted(target_id)),
        other => return Err(corrupt("target", other)),
    };
    Ok(NotificationView {
        id: row.try_get("id")?,
        kind: NotificationKind::parse(&kind).ok_or_else(|| corrupt("kind", &kind))?,
        title: row.try_get("title")?,
        body: row.try_get("body")?,
        target,
        created_at: row.try_get("created_at")?,
        read: row.try_get::<Option<i64>, _>("read_at")?.is_some(),
    })
}

fn target_parts(target: &NotificationTarget) -> (&'static str, &str) {
    match target {
        NotificationTarget::Task(id) => ("task", id),
        NotificationTarget::Proposal(id) => ("proposal", id),
        NotificationTarget::Schedule(id) => ("schedule", id),
    }
}

/// A notice to write.
#[derive(Debug, Clone, Copy)]
pub struct Notice<'a> {
    /// What makes it once: the same key is never written twice.
    pub key: &'a str,
    /// About what.
    pub kind: NotificationKind,
    /// Headline (cut to 200 characters).
    pub title: &'a str,
    /// One or two lines (cut to 500 characters).
    pub body: &'a str,
    /// What opening it shows.
    pub target: &'a NotificationTarget,
}

/// The one insert of a notice, on a connection the caller holds (a transaction that writes the
/// change the notice reports, or the writer). With a `fence` (task, lease) it is written only
/// while that lease holds the task, checked in the insert itself. `true` when written.
pub(super) async fn insert_notice(
    conn: &mut sqlx::SqliteConnection,
    notice: &Notice<'_>,
    fence: Option<(&str, &str)>,
    now: i64,
) -> Result<bool> {
    let (target_kind, target_id) = target_parts(notice.target);
    let (fence_task, fence_lease) = fence.unwrap_or_default();
    let written = sqlx::query(
        "INSERT OR IGNORE INTO notifications (key, kind, title, body, target_kind, target_id, created_at)
         SELECT ?1, ?2, substr(?3, 1, 200), substr(?4, 1, 500), ?5, ?6, ?7
         WHERE ?8 = '' OR EXISTS (SELECT 1 FROM tasks WHERE id = ?8 AND lease_id = ?9 AND status = 'running'
                                  AND lease_expires_at > ?7)",
    )
    .bind(notice.key)
    .bind(notice.kind.as_str())
    .bind(notice.title)
    .bind(notice.body)
    .bind(target_kind)
    .bind(target_id)
    .bind(now)
    .bind(fence_task)
    .bind(fence_lease)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    Ok(written == 1)
}

impl Store {
    /// A notice from a task run (a monitor's): written only while `(task, lease)` still holds the
    /// task, checked in the insert. `None` when fenced; else whether it was written.
    pub async fn notify_fenced(&self, fence: (&str, &str), notice: &Notice<'_>) -> Result<Option<bool>> {
        let written = insert_notice(&mut *self.writer().await, notice, Some(fence), now_ms()).await?;
        if !written && !self.holds_lease(fence.0, fence.1).await? {
            return Ok(None);
        }
        Ok(Some(written))
    }

    /// The newest notices, newest first.
    pub async fn notifications(&self, limit: i64) -> Result<Vec<NotificationView>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM notifications ORDER BY id DESC LIMIT ?1"))
            .bind(limit)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(view).collect()
    }

    /// Notices written after `after_id`, oldest first.
    pub async fn notifications_after(&self, after_id: i64, limit: i64) -> Result<Vec<NotificationView>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM notifications WHERE id > ?1 ORDER BY id LIMIT ?2"))
            .bind(after_id)
            .bind(limit)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(view).collect()
    }

    /// The newest notice's id (0 when none).
    pub async fn newest_notification_id(&self) -> Result<i64> {
        Ok(sqlx::query_scalar("SELECT coalesce(max(id), 0) FROM notifications").fetch_one(self.reader()).await?)
    }

    /// How many are unread.
    pub async fn unread_notifications(&self) -> Result<i64> {
        Ok(sqlx::query_scalar("SELECT count(*) FROM notifications WHERE read_at IS NULL").fetch_one(self.reader()).await?)
    }

    /// Marks these notices (or, with `all`, every one) read. Returns how many changed.
    pub async fn mark_notifications_read(&self, ids: &[i64], all: bool) -> Result<u64> {
        let now = now_ms();
        let mut writer = self.writer().await;
        if all {
            return Ok(sqlx::query("UPDATE notifications SET read_at = ?1 WHERE read_at IS NULL")
                .bind(now)
                .execute(&mut *writer)
                .await?
                .rows_affected());
        }
        let mut changed = 0;
        let mut tx = sqlx::Connection::begin(&mut *writer).await?;
        for id in ids {
            changed += sqlx::query("UPDATE notifications SET read_at = ?1 WHERE id = ?2 AND read_at IS NULL")
                .bind(now)
                .bind(id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        }
        tx.commit().await?;
        Ok(changed)
    }
}
