//! Goals and their milestones. A milestone is marked done by the `tasks_milestone_done`
//! trigger (migration 0021) when a task naming it succeeds.

use hearth_protocol::goals::{GoalStatus, GoalView, MilestoneView};
use hearth_protocol::ids::TaskId;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::error::{Result, StoreError};
use super::{Store, now_ms};

/// A goal to create.
#[derive(Debug, Clone)]
pub struct NewGoal<'a> {
    /// Same key, same goal.
    pub key: &'a str,
    /// Title.
    pub title: &'a str,
    /// Description.
    pub description: &'a str,
    /// Category.
    pub category: &'a str,
    /// Milestone titles.
    pub milestones: &'a [String],
}

fn goal_of(row: &SqliteRow, milestones: Vec<MilestoneView>, open_tasks: i64) -> Result<GoalView> {
    let status: String = row.try_get("status")?;
    Ok(GoalView {
        id: row.try_get("id")?,
        title: row.try_get("title")?,
        description: row.try_get("description")?,
        category: row.try_get("category")?,
        status: GoalStatus::parse(&status)
            .ok_or_else(|| StoreError::CorruptRow(format!("stored goal has an unknown status {status:?}")))?,
        milestones,
        open_tasks,
        created_at: row.try_get("created_at")?,
    })
}

impl Store {
    /// Creates a goal with its milestones in one transaction, or returns the one made under
    /// the same key; with a `fence` or `chat_run`, nothing once that run no longer holds.
    pub async fn create_goal(&self, new: &NewGoal<'_>, fence: Option<(&str, &str)>, chat_run: Option<&str>) -> Result<Option<GoalView>> {
        let id = super::tasks::task_id_for_key(&format!("goal:{}", new.key));
        let now = now_ms();
        let (fence_task, fence_lease) = fence.unwrap_or_default();
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin_with(&mut *writer, "BEGIN IMMEDIATE").await?;
        let inserted = sqlx::query(
            "INSERT INTO goals (id, key, title, description, category, status, created_at, updated_at)
             SELECT ?1, ?2, ?3, ?4, ?5, 'active', ?6, ?6
             WHERE (?7 = '' OR EXISTS (SELECT 1 FROM tasks WHERE id = ?7 AND lease_id = ?8 AND status = 'running'
                                      AND lease_expires_at > ?6))
               AND NOT EXISTS (SELECT 1 FROM chat_runs WHERE id = ?9 AND status <> 'running')
             ON CONFLICT(key) DO NOTHING",
        )
        .bind(&id)
        .bind(new.key)
        .bind(new.title)
        .bind(new.description)
        .bind(new.category)
        .bind(now)
        .bind(fence_task)
        .bind(fence_lease)
        .bind(chat_run.unwrap_or_default())
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if inserted == 1 {
            for (i, title) in new.milestones.iter().enumerate() {
                sqlx::query("INSERT INTO goal_milestones (goal_id, position, title) VALUES (?1, ?2, ?3)")
                    .bind(&id)
                    .bind(i64::try_from(i + 1).unwrap_or(i64::MAX))
                    .bind(title.trim())
                    .execute(&mut *tx)
                    .await?;
            }
        }
        tx.commit().await?;
        drop(writer);
        match self.goal(&id).await? {
            Some(goal) => Ok(Some(goal)),
            // Not inserted and not there: the fence refused it.
            None => Ok(None),
        }
    }

    /// One goal with its milestones.
    pub async fn goal(&self, id: &str) -> Result<Option<GoalView>> {
        let Some(row) = sqlx::query("SELECT * FROM goals WHERE id = ?1").bind(id).fetch_optional(self.reader()).await? else {
            return Ok(None);
        };
        Ok(Some(self.goal_view(&row).await?))
    }

    /// Every goal, newest first.
    pub async fn goals(&self) -> Result<Vec<GoalView>> {
        let rows = sqlx::query("SELECT * FROM goals ORDER BY created_at DESC, id").fetch_all(self.reader()).await?;
        let mut goals = Vec::with_capacity(rows.len());
        for row in &rows {
            goals.push(self.goal_view(row).await?);
        }
        Ok(goals)
    }

    async fn goal_view(&self, row: &SqliteRow) -> Result<GoalView> {
        let id: String = row.try_get("id")?;
        let milestones = sqlx::query(
            "SELECT position, title, done_at, task_id FROM goal_milestones WHERE goal_id = ?1 AND removed_at IS NULL ORDER BY position",
        )
        .bind(&id)
        .fetch_all(self.reader())
        .await?
        .iter()
        .map(|m| {
            Ok(MilestoneView {
                position: u32::try_from(m.try_get::<i64, _>("position")?)
                    .map_err(|_| StoreError::CorruptRow("a stored milestone has a position out of range".into()))?,
                title: m.try_get("title")?,
                done_at: m.try_get("done_at")?,
                task_id: m.try_get::<Option<String>, _>("task_id")?.map(TaskId::trusted),
            })
        })
        .collect::<Result<Vec<_>>>()?;
        let open: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM tasks WHERE json_valid(input) AND json_extract(input, '$.goalId') = ?1
               AND status NOT IN ('succeeded', 'failed', 'cancelled')",
        )
        .bind(&id)
        .fetch_one(self.reader())
        .await?;
        goal_of(row, milestones, open)
    }

    /// Adds a milestone after the last one ever numbered (a removed one's number is never
    /// given again), unless the goal has `max` already. `false` then.
    pub async fn add_milestone(&self, goal_id: &str, title: &str, max: usize) -> Result<bool> {
        let done = sqlx::query(
            "INSERT INTO goal_milestones (goal_id, position, title)
             SELECT ?1, coalesce(max(position), 0) + 1, ?2 FROM goal_milestones WHERE goal_id = ?1
             HAVING count(*) FILTER (WHERE removed_at IS NULL) < ?3",
        )
        .bind(goal_id)
        .bind(title)
        .bind(i64::try_from(max).unwrap_or(i64::MAX))
        .execute(&mut *self.writer().await)
        .await?
        .rows_affected();
        Ok(done == 1)
    }

    /// Renames milestone `position`. `false` when there is none.
    pub async fn rename_milestone(&self, goal_id: &str, position: u32, title: &str) -> Result<bool> {
        let done = sqlx::query("UPDATE goal_milestones SET title = ?3 WHERE goal_id = ?1 AND position = ?2 AND removed_at IS NULL")
            .bind(goal_id)
            .bind(i64::from(position))
            .bind(title)
            .execute(&mut *self.writer().await)
            .await?
            .rows_affected();
        Ok(done == 1)
    }

    /// Removes milestone `position` when it is not done and no task that may still run works on
    /// it (a failed one can be retried), in one statement (a task starting on it meanwhile keeps
    /// it). It is marked, not deleted: its number is never given to another. `false` otherwise.
    pub async fn remove_milestone(&self, goal_id: &str, position: u32) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE goal_milestones SET removed_at = ?3
             WHERE goal_id = ?1 AND position = ?2 AND done_at IS NULL AND removed_at IS NULL
               AND NOT EXISTS (SELECT 1 FROM tasks WHERE status NOT IN ('succeeded', 'cancelled')
                                 AND json_valid(input) AND json_extract(input, '$.goalId') = ?1
                                 AND json_extract(input, '$.milestone') = ?2)",
        )
        .bind(goal_id)
        .bind(i64::from(position))
        .bind(now_ms())
        .execute(&mut *self.writer().await)
        .await?
        .rows_affected();
        Ok(done == 1)
    }

    /// Sets a goal's status. `false` when it is gone or was so already.
    pub async fn set_goal_status(&self, id: &str, status: GoalStatus) -> Result<bool> {
        let done = sqlx::query("UPDATE goals SET status = ?2, updated_at = ?3 WHERE id = ?1 AND status <> ?2")
            .bind(id)
            .bind(status.as_str())
            .bind(now_ms())
            .execute(&mut *self.writer().await)
            .await?
            .rows_affected();
        Ok(done == 1)
    }

    /// The unfinished tasks working on a goal.
    pub async fn goal_tasks(&self, goal_id: &str) -> Result<Vec<super::tasks::TaskRow>> {
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT id FROM tasks WHERE json_valid(input) AND json_extract(input, '$.goalId') = ?1
               AND status NOT IN ('succeeded', 'failed', 'cancelled')",
        )
        .bind(goal_id)
        .fetch_all(self.reader())
        .await?;
        let mut tasks = Vec::new();
        for id in ids {
            if let Some(task) = self.get_task(&id).await? {
                tasks.push(task);
            }
        }
        Ok(tasks)
    }

    /// Records that a goal's Pause paused this task or schedule (`kind`: `task` | `schedule`).
    pub async fn record_goal_paused(&self, goal_id: &str, kind: &str, item_id: &str) -> Result<()> {
        sqlx::query("INSERT OR IGNORE INTO goal_paused (goal_id, kind, item_id) VALUES (?1, ?2, ?3)")
            .bind(goal_id)
            .bind(kind)
            .bind(item_id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    /// What a goal's Pause paused, and forgets it (its Resume takes it back).
    pub async fn take_goal_paused(&self, goal_id: &str) -> Result<Vec<(String, String)>> {
        let rows = sqlx::query("DELETE FROM goal_paused WHERE goal_id = ?1 RETURNING kind, item_id")
            .bind(goal_id)
            .fetch_all(&mut *self.writer().await)
            .await?;
        rows.iter().map(|r| Ok((r.try_get("kind")?, r.try_get("item_id")?))).collect()
    }
}
