//! Durable tasks: creation, leases, checkpoints, runs, events and the owner's controls.
//!
//! Every transition is one compare-and-swap on the row, so two processes, a stale lease
//! holder and the owner can race without overwriting each other: whoever loses sees
//! `false` (or a conflict) and the database is unchanged.

use hearth_protocol::ids::{ProposalId, RunId, TaskId};
use hearth_protocol::tasks::{
    PlanStep, TaskControl, TaskEventKind, TaskEventView, TaskKind, TaskRunStatus, TaskRunView, TaskStatus, TaskView, allowed_controls,
};
use sha2::{Digest, Sha256};
use sqlx::sqlite::SqliteRow;
use sqlx::{Connection, Row};

use super::error::{Result, StoreError};
use super::{Store, now_ms};

/// What a schedule's run or a monitor's look that Hearth's stop or a lost lease cut short, with
/// nothing in doubt, says as it is due again.
pub const RESUMED_NOTE: &str = "Hearth stopped during this run before anything was in doubt, so it runs again.";

/// What a run that left an effect in doubt says.
pub const UNCERTAIN_REASON: &str =
    "An action of this run may or may not have happened. Check what it did, then choose \"Retry after review\".";

/// At most this many tasks may be unfinished at once.
pub const MAX_OPEN_TASKS: i64 = 100;

const TASK_COLUMNS: &str = "id, kind, title, status, input, state, plan, attempts, lease_id, lease_owner, \
     lease_expires_at, next_run_at, question, result, error, outcome_uncertain, action_id, thread_id, created_at, updated_at";

/// A stored task.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRow {
    /// sha256("task:" + idempotency key), hex.
    pub id: String,
    /// Kind.
    pub kind: TaskKind,
    /// Title.
    pub title: String,
    /// Status.
    pub status: TaskStatus,
    /// The job.
    pub input: serde_json::Value,
    /// What the handler checkpointed.
    pub state: serde_json::Value,
    /// The plan.
    pub plan: Vec<PlanStep>,
    /// Claims so far.
    pub attempts: i64,
    /// The current (or last) lease.
    pub lease_id: Option<String>,
    /// The process holding the lease.
    pub lease_owner: Option<String>,
    /// When the lease lapses, Unix ms.
    pub lease_expires_at: Option<i64>,
    /// When a scheduled task is due.
    pub next_run_at: Option<i64>,
    /// The question waiting for an answer.
    pub question: Option<String>,
    /// The result.
    pub result: Option<String>,
    /// Why it failed or was interrupted.
    pub error: Option<String>,
    /// Effects of an interrupted run may or may not have happened.
    pub outcome_uncertain: bool,
    /// The proposal it waits on (or last waited on) for approval.
    pub action_id: Option<String>,
    /// The chat thread that asked for it.
    pub thread_id: Option<String>,
    /// Created, Unix ms.
    pub created_at: i64,
    /// Last change, Unix ms.
    pub updated_at: i64,
}

impl TaskRow {
    fn from_row(row: &SqliteRow) -> Result<Self> {
        let kind: String = row.try_get("kind")?;
        let status: String = row.try_get("status")?;
        let corrupt = |what: &str, value: &str| StoreError::CorruptRow(format!("stored task has an unknown {what} {value:?}"));
        Ok(Self {
            id: row.try_get("id")?,
            kind: TaskKind::parse(&kind).ok_or_else(|| corrupt("kind", &kind))?,
            title: row.try_get("title")?,
            status: TaskStatus::parse(&status).ok_or_else(|| corrupt("status", &status))?,
            input: serde_json::from_str(&row.try_get::<String, _>("input")?)?,
            state: serde_json::from_str(&row.try_get::<String, _>("state")?)?,
            plan: serde_json::from_str(&row.try_get::<String, _>("plan")?)?,
            attempts: row.try_get("attempts")?,
            lease_id: row.try_get("lease_id")?,
            lease_owner: row.try_get("lease_owner")?,
            lease_expires_at: row.try_get("lease_expires_at")?,
            next_run_at: row.try_get("next_run_at")?,
            question: row.try_get("question")?,
            result: row.try_get("result")?,
            error: row.try_get("error")?,
            outcome_uncertain: row.try_get::<i64, _>("outcome_uncertain")? != 0,
            action_id: row.try_get("action_id")?,
            thread_id: row.try_get("thread_id")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        })
    }

    /// The options of the question waiting now, when present_choices asked it: kept in the
    /// state beside the question they belong to, so an older choice never shows under a newer
    /// question.
    pub fn choices(&self) -> Vec<String> {
        let Some(question) = self.question.as_deref().filter(|_| self.status == TaskStatus::WaitingInput) else {
            return Vec::new();
        };
        let choice = &self.state["choices"];
        if choice["question"].as_str() != Some(question) {
            return Vec::new();
        }
        choice["options"].as_array().map_or_else(Vec::new, |options| options.iter().filter_map(|o| o.as_str().map(str::to_owned)).collect())
    }

    /// The wire view.
    pub fn view(&self) -> TaskView {
        TaskView {
            id: TaskId::trusted(self.id.as_str()),
            kind: self.kind,
            title: self.title.clone(),
            status: self.status,
            plan: self.plan.clone(),
            attempts: self.attempts,
            question: self.question.clone(),
            choices: self.choices(),
            result: self.result.clone(),
            error: self.error.clone(),
            outcome_uncertain: self.outcome_uncertain,
            proposal_id: self.action_id.as_deref().map(ProposalId::trusted),
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

/// What creating a task needs.
#[derive(Debug, Clone)]
pub struct NewTask<'a> {
    /// Same key, same task: a retried create never makes a second one.
    pub idempotency_key: &'a str,
    /// Task kind.
    pub kind: TaskKind,
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

/// A task this process now runs.
#[derive(Debug, Clone)]
pub struct Claim {
    /// The task as claimed (status running, attempts counted).
    pub task: TaskRow,
    /// The new run.
    pub run_id: String,
    /// The new lease.
    pub lease_id: String,
}

/// How a run ends, as the handler decided.
#[derive(Debug, Clone, PartialEq)]
pub struct RunEnding {
    /// The task's next status (succeeded, failed, waiting_input, waiting_approval, scheduled).
    pub status: TaskStatus,
    /// Result text (succeeded).
    pub result: Option<String>,
    /// Error text (failed).
    pub error: Option<String>,
    /// Question (waiting_input).
    pub question: Option<String>,
    /// Due time (scheduled).
    pub next_run_at: Option<i64>,
    /// The proposal waiting for approval (waiting_approval).
    pub action_id: Option<String>,
}

/// The result of a control.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlOutcome {
    /// Applied; the task as it is now, and the lease it had (to cancel a running run).
    Applied {
        /// The task after the control.
        task: TaskRow,
        /// The lease the task held before, if it was running.
        stopped_lease: Option<String>,
    },
    /// The task is not in the status the owner saw.
    Changed(TaskRow),
    /// The control does not apply to the task's status.
    NotAllowed(TaskRow),
    /// Retry of a task whose effects are in doubt, without the owner's acknowledgement.
    NeedsReview(TaskRow),
    /// An effect of the task was stopped and its (live) process has not reported what it did.
    StillStopping(TaskRow),
}

impl Store {
    /// Creates a queued task, or returns the one already created with the same key.
    /// Refuses when [`MAX_OPEN_TASKS`] are unfinished. (The `tasks_created` trigger writes
    /// the first history event in the same statement.)
    pub async fn create_task(&self, new: NewTask<'_>) -> Result<TaskRow> {
        self.create_task_fenced(new, None, None)
            .await?
            .ok_or_else(|| StoreError::Conflict("This run no longer holds its task, so it created nothing.".into()))
    }

    /// [`Store::create_task`] that, with a `fence` (task id, lease id), creates only while that
    /// lease still holds its task — in the same statement. `None` when fenced.
    ///
    /// With `chat_run`, it creates nothing once that chat run has ended.
    pub async fn create_task_fenced(
        &self,
        new: NewTask<'_>,
        fence: Option<(&str, &str)>,
        chat_run: Option<&str>,
    ) -> Result<Option<TaskRow>> {
        let id = task_id_for_key(new.idempotency_key);
        let (fence_task, fence_lease) = fence.unwrap_or_default();
        let now = now_ms();
        // One statement: the cap check, the fence and the insert cannot be split by another writer.
        let inserted = sqlx::query(&format!(
            "INSERT INTO tasks (id, idempotency_key, kind, title, status, input, thread_id, created_at, updated_at, status_note)
             SELECT ?1, ?2, ?3, ?4, 'queued', ?5, ?6, ?7, ?7, 'Created; waiting for a worker.'
             WHERE (SELECT count(*) FROM tasks WHERE status NOT IN ('succeeded', 'failed', 'cancelled')) < ?8
               AND (?9 = '' OR EXISTS (SELECT 1 FROM tasks WHERE id = ?9 AND lease_id = ?10 AND status = 'running'
                                      AND lease_expires_at > ?7))
               AND NOT EXISTS (SELECT 1 FROM chat_runs WHERE id = ?11 AND status <> 'running')
               AND NOT EXISTS (SELECT 1 FROM goals WHERE status = 'paused' AND id = json_extract(?5, '$.goalId'))
             ON CONFLICT(idempotency_key) DO NOTHING
             RETURNING {TASK_COLUMNS}"
        ))
        .bind(&id)
        .bind(new.idempotency_key)
        .bind(new.kind.as_str())
        .bind(new.title)
        .bind(serde_json::to_string(new.input)?)
        .bind(new.thread_id)
        .bind(now)
        .bind(MAX_OPEN_TASKS)
        .bind(fence_task)
        .bind(fence_lease)
        .bind(chat_run.unwrap_or_default())
        .fetch_optional(&mut *self.writer().await)
        .await?;
        if let Some(row) = inserted {
            return Ok(Some(TaskRow::from_row(&row)?));
        }
        if let Some(task) = self.get_task(&id).await? {
            return Ok(Some(task));
        }
        if self.fenced_out(fence, chat_run).await? {
            return Ok(None);
        }
        if let Some(goal) = new.input.get("goalId").and_then(serde_json::Value::as_str)
            && self.goal(goal).await?.is_some_and(|g| g.status == hearth_protocol::goals::GoalStatus::Paused)
        {
            return Err(StoreError::Conflict("Its goal is paused by the owner; nothing new starts on it until they resume it.".into()));
        }
        Err(StoreError::Conflict(format!(
            "Hearth already has {MAX_OPEN_TASKS} unfinished tasks. Finish or cancel some in Activity, then try again."
        )))
    }

    /// Check now: a scheduled monitor is due at once (a compare-and-swap on its status; a
    /// monitor running, paused or ended is left alone). `false` when it was not scheduled.
    pub async fn monitor_due_now(&self, task_id: &str) -> Result<bool> {
        let now = now_ms();
        let done =
            sqlx::query("UPDATE tasks SET next_run_at = ?2, updated_at = ?2 WHERE id = ?1 AND kind = 'monitor' AND status = 'scheduled'")
                .bind(task_id)
                .bind(now)
                .execute(&mut *self.writer().await)
                .await?;
        Ok(done.rows_affected() == 1)
    }

    /// After an insert fenced to a task's lease or a chat run wrote nothing: whether the fence
    /// is why (the run no longer holds), rather than a cap.
    pub(crate) async fn fenced_out(&self, fence: Option<(&str, &str)>, chat_run: Option<&str>) -> Result<bool> {
        if let Some((task, lease)) = fence
            && !self.holds_lease(task, lease).await?
        {
            return Ok(true);
        }
        match chat_run {
            Some(run) => self.run_has_ended(run).await,
            None => Ok(false),
        }
    }

    /// One task.
    pub async fn get_task(&self, id: &str) -> Result<Option<TaskRow>> {
        let row = sqlx::query(&format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1")).bind(id).fetch_optional(self.reader()).await?;
        row.as_ref().map(TaskRow::from_row).transpose()
    }

    /// Tasks, most recently changed first.
    pub async fn list_tasks(&self, limit: i64) -> Result<Vec<TaskRow>> {
        let rows = sqlx::query(&format!("SELECT {TASK_COLUMNS} FROM tasks ORDER BY updated_at DESC, id LIMIT ?1"))
            .bind(limit)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(TaskRow::from_row).collect()
    }

    /// How many tasks are not finished (neither succeeded, failed nor cancelled): all of them,
    /// not a page.
    pub async fn count_unfinished_tasks(&self) -> Result<i64> {
        Ok(sqlx::query("SELECT count(*) FROM tasks WHERE status NOT IN ('succeeded', 'failed', 'cancelled')")
            .fetch_one(self.reader())
            .await?
            .try_get(0)?)
    }

    /// How many tasks exist (an effect counter for tests).
    pub async fn count_tasks(&self) -> Result<i64> {
        Ok(sqlx::query("SELECT count(*) FROM tasks").fetch_one(self.reader()).await?.try_get(0)?)
    }

    /// Claims the next due task with one compare-and-swap, opening a run and a lease (the
    /// `tasks_run_opened` and `tasks_status_history` triggers write the run row and the event
    /// in the same statement).
    pub async fn claim_next(&self, owner: &str, lease_ms: i64) -> Result<Option<Claim>> {
        let now = now_ms();
        let lease_id = uuid::Uuid::new_v4().to_string();
        let run_id = uuid::Uuid::new_v4().to_string();
        let row = sqlx::query(&format!(
            "UPDATE tasks SET status = 'running', lease_id = ?1, lease_owner = ?2, lease_expires_at = ?3,
                 attempts = attempts + 1, next_run_at = NULL, updated_at = ?4, current_run_id = ?5,
                 status_note = 'Run ' || (attempts + 1) || ' started.'
             WHERE id = (SELECT id FROM tasks WHERE status IN ('queued', 'scheduled')
                             AND (next_run_at IS NULL OR next_run_at <= ?4)
                         ORDER BY coalesce(next_run_at, created_at), id LIMIT 1)
               AND status IN ('queued', 'scheduled')
             RETURNING {TASK_COLUMNS}"
        ))
        .bind(&lease_id)
        .bind(owner)
        .bind(now + lease_ms)
        .bind(now)
        .bind(&run_id)
        .fetch_optional(&mut *self.writer().await)
        .await?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some(Claim { task: TaskRow::from_row(&row)?, run_id, lease_id }))
    }

    /// Extends a lease the caller still holds. `false`: the lease is gone (fenced).
    pub async fn renew_lease(&self, task_id: &str, lease_id: &str, lease_ms: i64) -> Result<bool> {
        let now = now_ms();
        let done = sqlx::query(
            "UPDATE tasks SET lease_expires_at = ?3 WHERE id = ?1 AND lease_id = ?2 AND status = 'running'
               AND lease_expires_at > ?4",
        )
        .bind(task_id)
        .bind(lease_id)
        .bind(now + lease_ms)
        .bind(now)
        .execute(&mut *self.writer().await)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Whether `lease_id` still holds the task (running, not expired).
    pub async fn holds_lease(&self, task_id: &str, lease_id: &str) -> Result<bool> {
        let row = sqlx::query("SELECT 1 FROM tasks WHERE id = ?1 AND lease_id = ?2 AND status = 'running' AND lease_expires_at > ?3")
            .bind(task_id)
            .bind(lease_id)
            .bind(now_ms())
            .fetch_optional(self.reader())
            .await?;
        Ok(row.is_some())
    }

    /// Merges `patch` (RFC 7386) into the task's state, if the lease still holds.
    pub async fn checkpoint(&self, task_id: &str, lease_id: &str, patch: &serde_json::Value) -> Result<bool> {
        let now = now_ms();
        let done = sqlx::query(
            "UPDATE tasks SET state = json_patch(state, ?3), updated_at = ?4
             WHERE id = ?1 AND lease_id = ?2 AND status = 'running' AND lease_expires_at > ?4",
        )
        .bind(task_id)
        .bind(lease_id)
        .bind(serde_json::to_string(patch)?)
        .bind(now)
        .execute(&mut *self.writer().await)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Replaces the plan, if the lease still holds.
    pub async fn set_plan(&self, task_id: &str, lease_id: &str, plan: &[PlanStep]) -> Result<bool> {
        let now = now_ms();
        let done = sqlx::query(
            "UPDATE tasks SET plan = ?3, updated_at = ?4
             WHERE id = ?1 AND lease_id = ?2 AND status = 'running' AND lease_expires_at > ?4",
        )
        .bind(task_id)
        .bind(lease_id)
        .bind(serde_json::to_string(plan)?)
        .bind(now)
        .execute(&mut *self.writer().await)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Ends a run as its handler decided, if the lease still holds (the triggers close the
    /// run row and write the event in the same statement).
    pub async fn finish_run(&self, task_id: &str, lease_id: &str, ending: &RunEnding) -> Result<bool> {
        let now = now_ms();
        let note = match ending.status {
            TaskStatus::Succeeded => format!("Succeeded: {}", ending.result.as_deref().unwrap_or("done")),
            TaskStatus::Failed => format!("Failed: {}", ending.error.as_deref().unwrap_or("unknown error")),
            TaskStatus::WaitingInput => format!("Waiting for your answer: {}", ending.question.as_deref().unwrap_or("")),
            TaskStatus::WaitingApproval => "Waiting for your approval.".to_owned(),
            other => format!("Now {}.", other.as_str()),
        };
        // A run that leaves an effect in doubt ends `interrupted` (unless it failed), whatever
        // it asked for: only there (and in `failed`) do the controls offer "Retry after review",
        // so nothing — an answer, a release, a schedule — runs past the doubt unreviewed.
        let done = sqlx::query(
            "UPDATE tasks SET
                 outcome_uncertain = outcome_uncertain OR EXISTS (
                     SELECT 1 FROM operations WHERE scope = ?11 AND status = 'outcome_unknown'),
                 status = CASE WHEN ?3 <> 'failed' AND (outcome_uncertain OR EXISTS (
                     SELECT 1 FROM operations WHERE scope = ?11 AND status = 'outcome_unknown')) THEN 'interrupted' ELSE ?3 END,
                 result = ?4,
                 error = CASE WHEN ?3 <> 'failed' AND (outcome_uncertain OR EXISTS (
                     SELECT 1 FROM operations WHERE scope = ?11 AND status = 'outcome_unknown')) THEN ?12 ELSE ?5 END,
                 question = CASE WHEN ?3 <> 'failed' AND (outcome_uncertain OR EXISTS (
                     SELECT 1 FROM operations WHERE scope = ?11 AND status = 'outcome_unknown')) THEN NULL ELSE ?6 END,
                 next_run_at = ?7, action_id = coalesce(?8, action_id),
                 lease_expires_at = NULL, updated_at = ?9,
                 status_note = CASE WHEN ?3 <> 'failed' AND (outcome_uncertain OR EXISTS (
                     SELECT 1 FROM operations WHERE scope = ?11 AND status = 'outcome_unknown')) THEN 'Interrupted: ' || ?12 ELSE ?10 END
             WHERE id = ?1 AND lease_id = ?2 AND status = 'running' AND lease_expires_at > ?9",
        )
        .bind(task_id)
        .bind(lease_id)
        .bind(ending.status.as_str())
        .bind(&ending.result)
        .bind(&ending.error)
        .bind(&ending.question)
        .bind(ending.next_run_at)
        .bind(&ending.action_id)
        .bind(now)
        .bind(note)
        .bind(task_scope(task_id))
        .bind(UNCERTAIN_REASON)
        .execute(&mut *self.writer().await)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Marks a running task and its run interrupted — the lease is gone or the holder died —
    /// and turns its in-flight operations into `outcome_unknown`. `false` if the task no
    /// longer runs under `lease_id`.
    ///
    /// A task that recurs without the owner — a run a schedule made, or a monitor's look —
    /// with nothing in doubt (no operation of its scope `dispatching` or `outcome_unknown`, no
    /// send a standing order approved still `executing` or `outcome_unknown`, the task not
    /// flagged) is due again at once instead (`queued`, a monitor `scheduled`):
    /// its run row still ends `interrupted`, but no Retry is needed for work that changed
    /// nothing. With anything in doubt it stays `interrupted` for the owner's review.
    pub async fn interrupt_run(&self, task_id: &str, lease_id: &str, reason: &str) -> Result<bool> {
        let now = now_ms();
        let mut writer = self.writer().await;
        let mut tx = writer.begin().await?;
        // The holder's effects may still be running (a stalled process whose lease lapsed): name
        // that process, so the owner's Retry waits for their late results while it lives.
        let unknown = sqlx::query(
            "UPDATE operations SET status = 'outcome_unknown', settled_at = ?2,
                 stopping_owner = coalesce((SELECT owner FROM task_runs WHERE task_id = ?3 AND id = operations.claimant),
                                           (SELECT lease_owner FROM tasks WHERE id = ?3 AND lease_id = ?4))
             WHERE scope = ?1 AND status = 'dispatching'",
        )
        .bind(task_scope(task_id))
        .bind(now)
        .bind(task_id)
        .bind(lease_id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        // Every SET term reads the row as it was (SQLite), so `resumable` is judged once.
        let resumable = "(schedule_id IS NOT NULL OR (kind = 'monitor' AND json_extract(input, '$.intervalMinutes') IS NOT NULL))
                 AND NOT outcome_uncertain AND NOT ?5
                 AND NOT EXISTS (SELECT 1 FROM operations WHERE scope = ?6 AND status IN ('dispatching', 'outcome_unknown'))
                 AND NOT EXISTS (SELECT 1 FROM proposals WHERE task_id = ?1 AND mandate_id IS NOT NULL
                                   AND status IN ('executing', 'outcome_unknown'))";
        let done = sqlx::query(&format!(
            "UPDATE tasks SET
                 status = CASE WHEN {resumable} THEN (CASE kind WHEN 'monitor' THEN 'scheduled' ELSE 'queued' END)
                               ELSE 'interrupted' END,
                 error = CASE WHEN {resumable} THEN NULL ELSE ?3 END,
                 next_run_at = CASE WHEN {resumable} THEN ?4 ELSE next_run_at END,
                 status_note = CASE WHEN {resumable} THEN ?7 ELSE 'Interrupted: ' || ?3 END,
                 lease_expires_at = NULL, updated_at = ?4,
                 outcome_uncertain = outcome_uncertain OR ?5 OR EXISTS (
                     SELECT 1 FROM operations WHERE scope = ?6 AND status = 'outcome_unknown')
             WHERE id = ?1 AND lease_id = ?2 AND status = 'running'
             RETURNING status"
        ))
        .bind(task_id)
        .bind(lease_id)
        .bind(reason)
        .bind(now)
        .bind(unknown > 0)
        .bind(task_scope(task_id))
        .bind(RESUMED_NOTE)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(done) = done else {
            tx.rollback().await?;
            return Ok(false);
        };
        let status: String = done.try_get(0)?;
        let status =
            TaskStatus::parse(&status).ok_or_else(|| StoreError::CorruptRow(format!("task {task_id} has an unknown status {status:?}")))?;
        if status != TaskStatus::Interrupted {
            // The history keeps the run as what it was: interrupted (the trigger closed it as
            // finished, seeing the task due again).
            sqlx::query("UPDATE task_runs SET status = 'interrupted' WHERE task_id = ?1 AND lease_id = ?2")
                .bind(task_id)
                .bind(lease_id)
                .execute(&mut *tx)
                .await?;
        }
        // A run that lost its lease cannot see its proposals through: nothing it prepared
        // stays approvable.
        super::proposals::deny_open_proposals(&mut tx, task_id, "The task was interrupted, so this was not sent.").await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Operations left `dispatching` by runs of tasks that no longer run (paused, cancelled
    /// while the run unwound), or by the approved calls of tasks waiting on them: (scope, op
    /// id, claimant, its process). The caller
    /// strands those whose process is gone — a live second process's unwinding run is left
    /// to settle its own rows.
    pub async fn stopped_dispatching_operations(&self) -> Result<Vec<(String, String, String, Option<String>)>> {
        let rows = sqlx::query(
            // A call an approval ran is claimed `<process>:approval:<proposal>`: its process
            // is the claimant's head (ProcessIdentity::liveness reads the first three parts).
            "SELECT o.scope, o.op_id, coalesce(o.claimant, ''),
                    coalesce(r.owner, CASE WHEN o.claimant LIKE '%:approval:%' THEN o.claimant END) FROM operations o
             LEFT JOIN task_runs r ON r.task_id = substr(o.scope, 6) AND r.id = o.claimant
             WHERE o.status = 'dispatching' AND o.scope LIKE 'task:%'
               AND substr(o.scope, 6) IN (SELECT id FROM tasks WHERE status <> 'running')",
        )
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?, r.try_get(3)?))).collect()
    }

    /// Running tasks: (task id, lease id, lease owner, lease expiry).
    pub async fn running_leases(&self) -> Result<Vec<(String, String, String, i64)>> {
        let rows = sqlx::query(
            // The NOT IN term matches the partial index tasks_open, so this reads only open tasks.
            "SELECT id, lease_id, coalesce(lease_owner, ''), coalesce(lease_expires_at, 0) FROM tasks
             WHERE status = 'running' AND status NOT IN ('succeeded', 'failed', 'cancelled') AND lease_id IS NOT NULL",
        )
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?, r.try_get(3)?))).collect()
    }

    /// Applies an owner's control as one compare-and-swap on what the owner saw: the status
    /// and the attempt (a new run means new effects and questions the owner has not seen).
    pub async fn apply_control(
        &self,
        task_id: &str,
        expected: TaskStatus,
        expected_attempts: i64,
        control: &TaskControl,
    ) -> Result<ControlOutcome> {
        self.apply_control_then(task_id, expected, expected_attempts, control, |_| {}, |_| true).await
    }

    /// [`Store::apply_control`] that calls `stop(lease)` for a running task's lease after the
    /// compare-and-swap and **before the commit**, so the run's Stop has fired by the time any
    /// other connection can see the task paused or cancelled: no effect of the run can be
    /// first polled after the owner's Stop is visible. `alive(process)` says whether a process
    /// that stopped an effect may still report it; "Retry after review" waits for those, in
    /// this same transaction.
    pub async fn apply_control_then(
        &self,
        task_id: &str,
        expected: TaskStatus,
        expected_attempts: i64,
        control: &TaskControl,
        stop: impl FnOnce(&str),
        alive: impl Fn(&str) -> bool,
    ) -> Result<ControlOutcome> {
        let now = now_ms();
        // IMMEDIATE: the read below and the write after it see the same row.
        let mut writer = self.writer().await;
        let mut tx = writer.begin_with("BEGIN IMMEDIATE").await?;
        let row = sqlx::query(&format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1")).bind(task_id).fetch_optional(&mut *tx).await?;
        let Some(row) = row else {
            return Err(StoreError::NotFound(format!("There is no task {task_id}.")));
        };
        let current = TaskRow::from_row(&row)?;
        if current.status != expected || current.attempts != expected_attempts {
            return Ok(ControlOutcome::Changed(current));
        }
        if !allowed_controls(current.status).contains(&control.kind()) {
            return Ok(ControlOutcome::NotAllowed(current));
        }
        let (next, note, answer): (TaskStatus, &str, Option<&str>) = match control {
            TaskControl::Pause => (TaskStatus::Paused, "Paused by you.", None),
            // Resuming would run the next step past an effect whose outcome nobody knows.
            TaskControl::Resume if current.outcome_uncertain => return Ok(ControlOutcome::NeedsReview(current)),
            TaskControl::Resume => (TaskStatus::Queued, "Resumed by you.", None),
            TaskControl::Cancel => (TaskStatus::Cancelled, "Cancelled by you.", None),
            // From Paused, Retry is Resume that may carry the owner's acknowledgement of an
            // uncertain effect ("Retry after review"); the window offers it only then.
            TaskControl::Retry { acknowledge_uncertain } => {
                if current.outcome_uncertain && !acknowledge_uncertain {
                    return Ok(ControlOutcome::NeedsReview(current));
                }
                if current.outcome_uncertain {
                    let stopping: Vec<String> = sqlx::query_scalar(
                        "SELECT DISTINCT stopping_owner FROM operations WHERE scope = ?1 AND stopping_owner IS NOT NULL",
                    )
                    .bind(task_scope(task_id))
                    .fetch_all(&mut *tx)
                    .await?;
                    if stopping.iter().any(|owner| alive(owner)) {
                        return Ok(ControlOutcome::StillStopping(current));
                    }
                    // Every stopping mark left belongs to a process that is gone.
                    sqlx::query(
                        "UPDATE operations SET status = 'acknowledged', stopping_owner = NULL
                         WHERE scope = ?1 AND status = 'outcome_unknown'",
                    )
                    .bind(task_scope(task_id))
                    .execute(&mut *tx)
                    .await?;
                }
                let note = if current.outcome_uncertain { "Retried by you after review." } else { "Retried by you." };
                (TaskStatus::Queued, note, None)
            }
            // An answer would run the next step past an effect whose outcome nobody knows.
            TaskControl::Answer { .. } if current.outcome_uncertain => return Ok(ControlOutcome::NeedsReview(current)),
            TaskControl::Answer { text } => (TaskStatus::Queued, "Answered by you.", Some(text.as_str())),
        };
        let retry = matches!(control, TaskControl::Retry { .. });
        let done = sqlx::query(
            "UPDATE tasks SET status = ?3, lease_expires_at = NULL, updated_at = ?4, status_note = ?7,
                 error = CASE WHEN ?5 THEN NULL ELSE error END,
                 outcome_uncertain = CASE WHEN ?5 THEN 0 ELSE outcome_uncertain END,
                 state = CASE WHEN ?8 IS NULL THEN state ELSE json_patch(state, json_object('answer', ?8)) END,
                 question = CASE WHEN ?8 IS NULL THEN question ELSE NULL END
             WHERE id = ?1 AND status = ?2 AND lease_id IS ?6 AND attempts = ?9",
        )
        .bind(task_id)
        .bind(expected.as_str())
        .bind(next.as_str())
        .bind(now)
        .bind(retry)
        .bind(&current.lease_id)
        .bind(note)
        .bind(answer)
        .bind(expected_attempts)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() != 1 {
            tx.rollback().await?;
            let now_row = self.get_task(task_id).await?;
            return Ok(ControlOutcome::Changed(now_row.unwrap_or(current)));
        }
        // Pause and Cancel withdraw whatever the task has awaiting review, in the same
        // transaction: after Stop, nothing it prepared can be approved.
        let withdrawn = match control {
            TaskControl::Pause => Some("The task was paused, so this was not sent. Resume it for a fresh review."),
            TaskControl::Cancel => Some("The task was cancelled, so this was not sent."),
            TaskControl::Resume | TaskControl::Retry { .. } | TaskControl::Answer { .. } => None,
        };
        if let Some(why) = withdrawn {
            super::proposals::deny_open_proposals(&mut tx, task_id, why).await?;
        }
        let was_running = current.status == TaskStatus::Running;
        if was_running && withdrawn.is_some() {
            // Whatever the run has in flight may be happening right now — here or in another
            // process that learns of the Stop only at its next renewal: uncertain at once,
            // naming that run's process, and the task flagged. The journal then refines it
            // (withdrawn if it never started, the late result once it reports).
            let marked = sqlx::query(
                "UPDATE operations SET status = 'outcome_unknown', settled_at = ?2,
                     stopping_owner = (SELECT owner FROM task_runs WHERE task_id = ?3 AND id = operations.claimant)
                 WHERE scope = ?1 AND status = 'dispatching'",
            )
            .bind(task_scope(task_id))
            .bind(now)
            .bind(task_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if marked > 0 {
                flag_scope_uncertain(&mut tx, &task_scope(task_id)).await?;
            }
        }
        if was_running && let Some(lease) = current.lease_id.as_deref() {
            stop(lease);
        }
        tx.commit().await?;
        // Committed: a failed re-read must not make the control look refused.
        let task = match self.get_task(task_id).await {
            Ok(Some(task)) => task,
            Ok(None) | Err(_) => TaskRow { status: next, ..current.clone() },
        };
        Ok(ControlOutcome::Applied { task, stopped_lease: if was_running { current.lease_id } else { None } })
    }

    /// Appends to a task's history.
    pub async fn append_task_event(&self, task_id: &str, run_id: Option<&str>, kind: TaskEventKind, message: &str) -> Result<()> {
        let mut conn = self.writer().await;
        insert_event(&mut conn, task_id, run_id, kind, message, now_ms()).await
    }

    /// Appends to a task's history only while `lease_id` still holds it (a stale run's
    /// event changes nothing). `false` when fenced.
    pub async fn append_task_event_fenced(
        &self,
        task_id: &str,
        lease_id: &str,
        run_id: &str,
        kind: TaskEventKind,
        message: &str,
    ) -> Result<bool> {
        let now = now_ms();
        let done = sqlx::query(
            "INSERT INTO task_events (task_id, seq, run_id, kind, message, at)
             SELECT ?1, (SELECT coalesce(max(seq), 0) + 1 FROM task_events WHERE task_id = ?1), ?2, ?3, ?4, ?5
             WHERE EXISTS (SELECT 1 FROM tasks WHERE id = ?1 AND lease_id = ?6 AND status = 'running' AND lease_expires_at > ?5)",
        )
        .bind(task_id)
        .bind(run_id)
        .bind(kind.as_str())
        .bind(message)
        .bind(now)
        .bind(lease_id)
        .execute(&mut *self.writer().await)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// A task's runs, oldest first.
    pub async fn task_runs(&self, task_id: &str) -> Result<Vec<TaskRunView>> {
        let rows = sqlx::query(
            "SELECT id, attempt, status, started_at, finished_at, reason FROM task_runs WHERE task_id = ?1
             ORDER BY attempt",
        )
        .bind(task_id)
        .fetch_all(self.reader())
        .await?;
        rows.iter()
            .map(|r| {
                let status: String = r.try_get(2)?;
                Ok(TaskRunView {
                    id: RunId::trusted(r.try_get::<String, _>(0)?),
                    attempt: r.try_get(1)?,
                    status: run_status(&status)?,
                    started_at: r.try_get(3)?,
                    finished_at: r.try_get(4)?,
                    reason: r.try_get(5)?,
                })
            })
            .collect()
    }

    /// A task's newest `limit` events, oldest first.
    pub async fn task_events(&self, task_id: &str, limit: i64) -> Result<Vec<TaskEventView>> {
        let rows = sqlx::query(
            "SELECT run_id, kind, message, at FROM (
                 SELECT seq, run_id, kind, message, at FROM task_events WHERE task_id = ?1 ORDER BY seq DESC LIMIT ?2
             ) ORDER BY seq",
        )
        .bind(task_id)
        .bind(limit)
        .fetch_all(self.reader())
        .await?;
        rows.iter()
            .map(|r| {
                let kind: String = r.try_get(1)?;
                Ok(TaskEventView {
                    run_id: r.try_get::<Option<String>, _>(0)?.map(RunId::trusted),
                    kind: event_kind(&kind)?,
                    message: r.try_get(2)?,
                    at: r.try_get(3)?,
                })
            })
            .collect()
    }
}

/// The journal scope of a task's operations.
pub fn task_scope(task_id: &str) -> String {
    format!("task:{task_id}")
}

/// Sets `outcome_uncertain` on the task a `task:` scope belongs to. A task that is waiting
/// or due (not running, not finished) moves to `interrupted`: flagged, only "Retry after
/// review" may go on, and only there do the controls offer it.
pub(crate) async fn flag_scope_uncertain(conn: &mut sqlx::SqliteConnection, scope: &str) -> Result<()> {
    sqlx::query("UPDATE tasks SET outcome_uncertain = 1 WHERE 'task:' || id = ?1 AND outcome_uncertain = 0")
        .bind(scope)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "UPDATE tasks SET status = 'interrupted', error = ?2, question = NULL, lease_expires_at = NULL, updated_at = ?3,
             status_note = 'Interrupted: ' || ?2
         WHERE 'task:' || id = ?1 AND status IN ('waiting_input', 'queued', 'scheduled', 'waiting_approval')",
    )
    .bind(scope)
    .bind(UNCERTAIN_REASON)
    .bind(now_ms())
    .execute(conn)
    .await?;
    Ok(())
}

async fn insert_event(
    conn: &mut sqlx::SqliteConnection,
    task_id: &str,
    run_id: Option<&str>,
    kind: TaskEventKind,
    message: &str,
    at: i64,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO task_events (task_id, seq, run_id, kind, message, at)
         VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM task_events WHERE task_id = ?1), ?2, ?3, ?4, ?5)",
    )
    .bind(task_id)
    .bind(run_id)
    .bind(kind.as_str())
    .bind(message)
    .bind(at)
    .execute(conn)
    .await?;
    Ok(())
}

fn run_status(s: &str) -> Result<TaskRunStatus> {
    TaskRunStatus::parse(s).ok_or_else(|| StoreError::CorruptRow(format!("a task run has an unknown status {s:?}")))
}

fn event_kind(s: &str) -> Result<TaskEventKind> {
    TaskEventKind::parse(s).ok_or_else(|| StoreError::CorruptRow(format!("a task event has an unknown kind {s:?}")))
}
