//! Schedules and their due times.
//!
//! A tick's work on one schedule is one `BEGIN IMMEDIATE` transaction: a compare-and-swap of
//! the cursor (the tick read it; another process that moved it first wins), one
//! `schedule_runs` row per due time under its primary key (schedule, due time), and the task
//! each run makes, under an idempotency key of the same pair. Whoever loses the swap writes
//! nothing, so one due time makes one task however many processes tick.

use hearth_protocol::ids::{ScheduleId, TaskId};
use hearth_protocol::notifications::{NotificationKind, NotificationTarget};
use hearth_protocol::provenance::OutsideSource;
use hearth_protocol::schedules::{DueOutcome, MAX_SCHEDULES, MissedRuns, Repeat, ScheduleRunView, ScheduleStatus, ScheduledJob};
use hearth_protocol::tasks::{TaskKind, TaskStatus};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::error::{Result, StoreError};
use super::notifications::{Notice, insert_notice};
use super::tasks::{MAX_OPEN_TASKS, task_id_for_key};
use super::{Store, now_ms};

const COLUMNS: &str = "id, title, job, instructions, rule, time_zone, missed, status, anchor_at, cursor_at, next_due_at, \
     thread_id, goal_id, created_at, sources";

/// A stored schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleRow {
    /// Id (sha256 of its key).
    pub id: String,
    /// Title.
    pub title: String,
    /// What each run does.
    pub job: ScheduledJob,
    /// The runs' instructions.
    pub instructions: String,
    /// The rule.
    pub repeat: Repeat,
    /// IANA zone.
    pub time_zone: String,
    /// Missed-run policy.
    pub missed: MissedRuns,
    /// Active or paused.
    pub status: ScheduleStatus,
    /// Where an interval counts from.
    pub anchor_at: i64,
    /// Every due time ≤ this is handled.
    pub cursor_at: i64,
    /// The next due time (none while paused).
    pub next_due_at: Option<i64>,
    /// The conversation that asked for it.
    pub thread_id: Option<String>,
    /// The goal its runs work on.
    pub goal_id: Option<String>,
    /// Created.
    pub created_at: i64,
    /// The outside content it was made from (an approved card's), which every run starts from.
    pub sources: Vec<OutsideSource>,
}

impl ScheduleRow {
    fn from_row(row: &SqliteRow) -> Result<Self> {
        let corrupt = |what: &str, value: &str| StoreError::CorruptRow(format!("stored schedule has an unknown {what} {value:?}"));
        let job: String = row.try_get("job")?;
        let missed: String = row.try_get("missed")?;
        let status: String = row.try_get("status")?;
        Ok(Self {
            id: row.try_get("id")?,
            title: row.try_get("title")?,
            job: ScheduledJob::parse(&job).ok_or_else(|| corrupt("job", &job))?,
            instructions: row.try_get("instructions")?,
            repeat: serde_json::from_str(&row.try_get::<String, _>("rule")?)?,
            time_zone: row.try_get("time_zone")?,
            missed: MissedRuns::parse(&missed).ok_or_else(|| corrupt("missed-run policy", &missed))?,
            status: ScheduleStatus::parse(&status).ok_or_else(|| corrupt("status", &status))?,
            anchor_at: row.try_get("anchor_at")?,
            cursor_at: row.try_get("cursor_at")?,
            next_due_at: row.try_get("next_due_at")?,
            // Unreadable: counted as outside content all the same (the safe side).
            sources: serde_json::from_str(&row.try_get::<String, _>("sources")?).unwrap_or_else(|_| {
                vec![OutsideSource::new(hearth_protocol::provenance::SourceKind::TaskReport, "the content this schedule was made from")]
            }),
            thread_id: row.try_get("thread_id")?,
            goal_id: row.try_get("goal_id")?,
            created_at: row.try_get("created_at")?,
        })
    }

    /// The kind of task each run makes.
    pub const fn task_kind(&self) -> TaskKind {
        match self.job {
            ScheduledJob::Reminder => TaskKind::Reminder,
            ScheduledJob::Agent => TaskKind::Agent,
            ScheduledJob::Finance => TaskKind::Finance,
        }
    }
}

/// A schedule to create.
#[derive(Debug, Clone)]
pub struct NewSchedule<'a> {
    /// Same key, same schedule (a retried tool call makes one).
    pub idempotency_key: &'a str,
    /// Title.
    pub title: &'a str,
    /// Job.
    pub job: ScheduledJob,
    /// Instructions.
    pub instructions: &'a str,
    /// Rule (already checked against the zone database).
    pub repeat: &'a Repeat,
    /// Zone.
    pub time_zone: &'a str,
    /// Policy.
    pub missed: MissedRuns,
    /// Now: the anchor and the first cursor.
    pub now: i64,
    /// The first due time.
    pub next_due_at: Option<i64>,
    /// The conversation that asked.
    pub thread_id: Option<&'a str>,
    /// The goal its runs work on.
    pub goal_id: Option<&'a str>,
    /// The outside content it is made from (empty: the owner's own words).
    pub sources: &'a [OutsideSource],
}

/// What a tick writes for one schedule.
#[derive(Debug, Clone)]
pub struct Firing {
    /// The schedule as the tick read it (its cursor is the swap's expected value).
    pub schedule: ScheduleRow,
    /// The due times, oldest first, with what each makes.
    pub dues: Vec<(i64, DueOutcome)>,
    /// The new cursor.
    pub cursor: i64,
    /// The new next due time.
    pub next_due_at: Option<i64>,
}

/// What a run the cap on unfinished tasks refused says (its notice, and Run now's error).
pub const REFUSED_RUN: &str = "A scheduled run was not made: Hearth has 100 unfinished tasks. Finish or cancel some in Activity.";

/// The schedule's id for its key.
pub fn schedule_id_for_key(key: &str) -> String {
    task_id_for_key(&format!("schedule:{key}"))
}

impl Store {
    /// Creates a schedule, or returns the one already made under the same key. With a
    /// `fence` (task, lease) or a `chat_run`, creates nothing once that run no longer holds
    /// (checked in the insert). Refuses past [`MAX_SCHEDULES`].
    pub async fn create_schedule(
        &self,
        new: &NewSchedule<'_>,
        fence: Option<(&str, &str)>,
        chat_run: Option<&str>,
    ) -> Result<Option<ScheduleRow>> {
        let id = schedule_id_for_key(new.idempotency_key);
        let (fence_task, fence_lease) = fence.unwrap_or_default();
        let inserted = sqlx::query(&format!(
            "INSERT INTO schedules (id, idempotency_key, title, job, instructions, rule, time_zone, missed, status,
                                    anchor_at, cursor_at, next_due_at, thread_id, created_at, updated_at, goal_id, sources)
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'active', ?9, ?9, ?10, ?11, ?9, ?9, ?16, ?17
             WHERE (SELECT count(*) FROM schedules) < ?12
               AND (?13 = '' OR EXISTS (SELECT 1 FROM tasks WHERE id = ?13 AND lease_id = ?14 AND status = 'running'
                                      AND lease_expires_at > ?9))
               AND NOT EXISTS (SELECT 1 FROM chat_runs WHERE id = ?15 AND status <> 'running')
             ON CONFLICT(idempotency_key) DO NOTHING
             RETURNING {COLUMNS}"
        ))
        .bind(&id)
        .bind(new.idempotency_key)
        .bind(new.title)
        .bind(new.job.as_str())
        .bind(new.instructions)
        .bind(serde_json::to_string(new.repeat)?)
        .bind(new.time_zone)
        .bind(new.missed.as_str())
        .bind(new.now)
        .bind(new.next_due_at)
        .bind(new.thread_id)
        .bind(i64::try_from(MAX_SCHEDULES).unwrap_or(i64::MAX))
        .bind(fence_task)
        .bind(fence_lease)
        .bind(chat_run.unwrap_or_default())
        .bind(new.goal_id)
        .bind(serde_json::to_string(new.sources)?)
        .fetch_optional(&mut *self.writer().await)
        .await?;
        if let Some(row) = inserted {
            return Ok(Some(ScheduleRow::from_row(&row)?));
        }
        if let Some(existing) = self.get_schedule(&id).await? {
            return Ok(Some(existing));
        }
        if self.fenced_out(fence, chat_run).await? {
            return Ok(None);
        }
        Err(StoreError::Conflict(format!("Hearth already has {MAX_SCHEDULES} schedules. Delete some in Activity, then try again.")))
    }

    /// One schedule.
    pub async fn get_schedule(&self, id: &str) -> Result<Option<ScheduleRow>> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM schedules WHERE id = ?1")).bind(id).fetch_optional(self.reader()).await?;
        row.as_ref().map(ScheduleRow::from_row).transpose()
    }

    /// Every schedule, newest first.
    pub async fn list_schedules(&self) -> Result<Vec<ScheduleRow>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM schedules ORDER BY created_at DESC, id")).fetch_all(self.reader()).await?;
        rows.iter().map(ScheduleRow::from_row).collect()
    }

    /// Active schedules whose next due time is at or before `now`.
    pub async fn due_schedules(&self, now: i64) -> Result<Vec<ScheduleRow>> {
        let rows =
            sqlx::query(&format!("SELECT {COLUMNS} FROM schedules WHERE status = 'active' AND next_due_at <= ?1 ORDER BY next_due_at"))
                .bind(now)
                .fetch_all(self.reader())
                .await?;
        rows.iter().map(ScheduleRow::from_row).collect()
    }

    /// The earliest next due time of an active schedule.
    pub async fn next_schedule_due(&self) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar("SELECT min(next_due_at) FROM schedules WHERE status = 'active'").fetch_one(self.reader()).await?)
    }

    /// A schedule's newest due times, newest first, with their tasks' statuses now.
    pub async fn schedule_runs(&self, schedule_id: &str, limit: i64) -> Result<Vec<ScheduleRunView>> {
        let rows = sqlx::query(
            "SELECT r.due_at, r.outcome, r.task_id, t.status AS task_status
             FROM schedule_runs r LEFT JOIN tasks t ON t.id = r.task_id
             WHERE r.schedule_id = ?1 ORDER BY r.due_at DESC LIMIT ?2",
        )
        .bind(schedule_id)
        .bind(limit)
        .fetch_all(self.reader())
        .await?;
        rows.iter()
            .map(|row| {
                let outcome: String = row.try_get("outcome")?;
                let status: Option<String> = row.try_get("task_status")?;
                let corrupt = |what: &str, v: &str| StoreError::CorruptRow(format!("stored schedule run has an unknown {what} {v:?}"));
                Ok(ScheduleRunView {
                    due_at: row.try_get("due_at")?,
                    outcome: DueOutcome::parse(&outcome).ok_or_else(|| corrupt("outcome", &outcome))?,
                    task_id: row.try_get::<Option<String>, _>("task_id")?.map(TaskId::trusted),
                    task_status: status.map(|s| TaskStatus::parse(&s).ok_or_else(|| corrupt("task status", &s))).transpose()?,
                })
            })
            .collect()
    }

    /// Writes a tick's plan for one schedule if its cursor is still the one the tick read.
    /// Returns each due time as recorded (a run the task cap refused is `Refused`); `None`
    /// when another tick (or a control) got there first.
    pub async fn fire_schedule(&self, firing: &Firing) -> Result<Option<Vec<(i64, DueOutcome, Option<String>)>>> {
        let s = &firing.schedule;
        let now = now_ms();
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin_with(&mut *writer, "BEGIN IMMEDIATE").await?;
        let swapped = sqlx::query(
            "UPDATE schedules SET cursor_at = ?1, next_due_at = ?2, updated_at = ?3
             WHERE id = ?4 AND cursor_at = ?5 AND status = 'active'",
        )
        .bind(firing.cursor)
        .bind(firing.next_due_at)
        .bind(now)
        .bind(&s.id)
        .bind(s.cursor_at)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if swapped == 0 {
            tx.rollback().await?;
            return Ok(None);
        }
        let mut made = Vec::new();
        for &(due_at, outcome) in &firing.dues {
            // Primary key (schedule, due time): a due time already on record (Run now pressed
            // at that very millisecond) keeps its row, and that run stands for this due time.
            let on_record = sqlx::query("SELECT 1 FROM schedule_runs WHERE schedule_id = ?1 AND due_at = ?2")
                .bind(&s.id)
                .bind(due_at)
                .fetch_optional(&mut *tx)
                .await?
                .is_some();
            if on_record {
                continue;
            }
            let (outcome, task_id) = match outcome {
                DueOutcome::Skipped | DueOutcome::Refused => (outcome, None),
                // Its goal was paused since the tick read the schedule: nothing starts on it.
                DueOutcome::Started | DueOutcome::MadeUp | DueOutcome::RunNow if goal_paused(&mut tx, s).await? => {
                    (DueOutcome::Skipped, None)
                }
                DueOutcome::Started | DueOutcome::MadeUp | DueOutcome::RunNow => {
                    match insert_run_task(&mut tx, s, &format!("schedule:{}:{due_at}", s.id), due_at, now).await? {
                        Some(id) => (outcome, Some(id)),
                        None => (DueOutcome::Refused, None),
                    }
                }
            };
            if outcome == DueOutcome::Refused {
                // The notice in the same transaction as the refusal: never one without the other.
                let key = format!("schedule:{}:refused:{due_at}", s.id);
                let target = NotificationTarget::Schedule(ScheduleId::trusted(s.id.as_str()));
                let notice =
                    Notice { key: &key, kind: NotificationKind::ScheduleRefused, title: &s.title, body: REFUSED_RUN, target: &target };
                insert_notice(&mut tx, &notice, None, now).await?;
            }
            sqlx::query(
                "INSERT OR IGNORE INTO schedule_runs (schedule_id, due_at, outcome, task_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .bind(&s.id)
            .bind(due_at)
            .bind(outcome.as_str())
            .bind(&task_id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            made.push((due_at, outcome, task_id));
        }
        tx.commit().await?;
        Ok(Some(made))
    }

    /// Run now: one run at `at`, beside the rule (the cursor does not move), keyed by the
    /// press's `operation` id: its task's idempotency key is `schedule:<id>:now:<operation>`, so
    /// the same press sent twice makes one task. `None` when the schedule is gone or that
    /// press already made its run.
    pub async fn run_schedule_now(&self, schedule_id: &str, operation: &str, at: i64) -> Result<Option<(DueOutcome, Option<String>)>> {
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin_with(&mut *writer, "BEGIN IMMEDIATE").await?;
        let Some(row) =
            sqlx::query(&format!("SELECT {COLUMNS} FROM schedules WHERE id = ?1")).bind(schedule_id).fetch_optional(&mut *tx).await?
        else {
            tx.rollback().await?;
            return Ok(None);
        };
        let schedule = ScheduleRow::from_row(&row)?;
        if goal_paused(&mut tx, &schedule).await? {
            tx.rollback().await?;
            return Err(StoreError::Conflict("Its goal is paused; resume the goal to run it.".into()));
        }
        let key = format!("schedule:{schedule_id}:now:{operation}");
        let made = sqlx::query("SELECT 1 FROM tasks WHERE idempotency_key = ?1").bind(&key).fetch_optional(&mut *tx).await?.is_some();
        if made {
            tx.rollback().await?;
            return Ok(None);
        }
        // Two presses in one millisecond are two runs: the second's row takes the next free
        // millisecond (a due time is the runs' primary key).
        let mut at = at;
        while sqlx::query("SELECT 1 FROM schedule_runs WHERE schedule_id = ?1 AND due_at = ?2")
            .bind(schedule_id)
            .bind(at)
            .fetch_optional(&mut *tx)
            .await?
            .is_some()
        {
            at += 1;
        }
        let task = insert_run_task(&mut tx, &schedule, &key, at, at).await?;
        let outcome = if task.is_some() { DueOutcome::RunNow } else { DueOutcome::Refused };
        sqlx::query("INSERT INTO schedule_runs (schedule_id, due_at, outcome, task_id, created_at) VALUES (?1, ?2, ?3, ?4, ?2)")
            .bind(schedule_id)
            .bind(at)
            .bind(outcome.as_str())
            .bind(&task)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some((outcome, task)))
    }

    /// Pauses (no next due time) or resumes (cursor at `now`, so what passed while paused is
    /// not made up). `false` when the schedule is gone or already so.
    pub async fn set_schedule_status(&self, id: &str, status: ScheduleStatus, now: i64, next_due_at: Option<i64>) -> Result<bool> {
        let changed = sqlx::query(
            "UPDATE schedules SET status = ?1, cursor_at = CASE WHEN ?1 = 'active' THEN ?2 ELSE cursor_at END,
                                  next_due_at = ?3, updated_at = ?2
             WHERE id = ?4 AND status <> ?1",
        )
        .bind(status.as_str())
        .bind(now)
        .bind(match status {
            ScheduleStatus::Active => next_due_at,
            ScheduleStatus::Paused => None,
        })
        .bind(id)
        .execute(&mut *self.writer().await)
        .await?
        .rows_affected();
        Ok(changed == 1)
    }

    /// The schedules whose runs work on a goal.
    pub async fn goal_schedules(&self, goal_id: &str) -> Result<Vec<String>> {
        Ok(sqlx::query_scalar("SELECT id FROM schedules WHERE goal_id = ?1").bind(goal_id).fetch_all(self.reader()).await?)
    }

    /// Pauses a schedule whose rule Hearth can no longer read, with its notice, in one
    /// transaction. `false` (and nothing written) when another tick paused it first.
    pub async fn pause_unreadable_schedule(&self, s: &ScheduleRow, why: &str) -> Result<bool> {
        let now = now_ms();
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin_with(&mut *writer, "BEGIN IMMEDIATE").await?;
        let paused =
            sqlx::query("UPDATE schedules SET status = 'paused', next_due_at = NULL, updated_at = ?2 WHERE id = ?1 AND status = 'active'")
                .bind(&s.id)
                .bind(now)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        if paused == 1 {
            let key = format!("schedule:{}:paused:{}", s.id, s.cursor_at);
            let body = format!("Paused: {why}");
            let target = NotificationTarget::Schedule(ScheduleId::trusted(s.id.as_str()));
            let notice = Notice { key: &key, kind: NotificationKind::ScheduleRefused, title: &s.title, body: &body, target: &target };
            insert_notice(&mut tx, &notice, None, now).await?;
        }
        tx.commit().await?;
        Ok(paused == 1)
    }

    /// Deletes a schedule and its due-time rows (its tasks stay, as history). `false` when gone.
    pub async fn delete_schedule(&self, id: &str) -> Result<bool> {
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin_with(&mut *writer, "BEGIN IMMEDIATE").await?;
        sqlx::query("DELETE FROM schedule_runs WHERE schedule_id = ?1").bind(id).execute(&mut *tx).await?;
        let gone = sqlx::query("DELETE FROM schedules WHERE id = ?1").bind(id).execute(&mut *tx).await?.rows_affected();
        tx.commit().await?;
        Ok(gone == 1)
    }
}

/// Whether the schedule's goal is paused, read inside the writer's transaction.
async fn goal_paused(tx: &mut sqlx::SqliteConnection, s: &ScheduleRow) -> Result<bool> {
    let Some(goal) = &s.goal_id else { return Ok(false) };
    Ok(sqlx::query("SELECT 1 FROM goals WHERE id = ?1 AND status = 'paused'").bind(goal).fetch_optional(&mut *tx).await?.is_some())
}

/// The task of one due time, inside the tick's transaction: keyed by (schedule, due time),
/// under the cap on unfinished tasks. `None` when the cap refused it.
async fn insert_run_task(tx: &mut sqlx::SqliteConnection, s: &ScheduleRow, key: &str, due_at: i64, now: i64) -> Result<Option<String>> {
    let id = task_id_for_key(key);
    let mut input = serde_json::json!({ "title": s.title, "instructions": s.instructions, "scheduleId": s.id, "dueAt": due_at });
    if let Some(goal) = &s.goal_id {
        input["goalId"] = serde_json::Value::String(goal.clone());
    }
    // A statement summary's instructions are the document it sums (checked when it was made).
    if s.job == ScheduledJob::Finance {
        input["documentPath"] = serde_json::Value::String(s.instructions.clone());
    }
    if !s.sources.is_empty() {
        input["outsideSources"] = serde_json::to_value(&s.sources)?;
    }
    let inserted = sqlx::query(
        "INSERT INTO tasks (id, idempotency_key, kind, title, status, input, thread_id, schedule_id, created_at, updated_at, status_note)
         SELECT ?1, ?2, ?3, ?4, 'queued', ?5, ?6, ?7, ?8, ?8, 'Made by its schedule; waiting for a worker.'
         WHERE (SELECT count(*) FROM tasks WHERE status NOT IN ('succeeded', 'failed', 'cancelled')) < ?9
         ON CONFLICT(idempotency_key) DO NOTHING",
    )
    .bind(&id)
    .bind(key)
    .bind(s.task_kind().as_str())
    .bind(&s.title)
    .bind(serde_json::to_string(&input)?)
    .bind(&s.thread_id)
    .bind(&s.id)
    .bind(now)
    .bind(MAX_OPEN_TASKS)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if inserted == 1 {
        return Ok(Some(id));
    }
    // Already made (the key is unique) — only another transaction under this very key could
    // have, so it is this due time's task — or the cap refused it.
    let exists = sqlx::query("SELECT 1 FROM tasks WHERE id = ?1").bind(&id).fetch_optional(&mut *tx).await?.is_some();
    Ok(exists.then_some(id))
}
