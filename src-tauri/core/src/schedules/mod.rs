//! Schedules: tasks that repeat. A rule in a time zone (`rule`), a pure plan of what a tick
//! does with the due times that passed (`plan`), and this service, which ticks every second,
//! writes each plan in one transaction (`store::schedules`) and reminds.
//!
//! Why a cursor and not "last run": a due time is handled exactly when the cursor moves past
//! it, in the same transaction as its `schedule_runs` row and its task. A crash before the
//! commit leaves it due; after, handled. Nothing in between.

mod plan;
mod rule;

use std::time::Duration;

use hearth_protocol::ids::ScheduleId;
use hearth_protocol::schedules::{
    DueOutcome, MissedRuns, Repeat, ScheduleAction, ScheduleControlParams, ScheduleCreateParams, ScheduleStatus, ScheduleView, ScheduledJob,
};
use tokio_util::sync::CancellationToken;

pub use plan::{MISSED_AFTER_MS, Plan, plan};
pub use rule::Rule;

use crate::error::{CoreError, Result};
use crate::store::Store;
use crate::store::schedules::{Firing, NewSchedule, ScheduleRow};
use crate::tasks::{TaskContext, TaskEngine, TaskOutcome};

/// How many due times a schedule shows.
const SHOWN_RUNS: i64 = 10;

/// What makes a schedule, from a tool or the Activity screen.
#[derive(Debug, Clone)]
pub struct ScheduleSpec {
    /// Title.
    pub title: String,
    /// What each run does.
    pub job: ScheduledJob,
    /// The runs' instructions.
    pub instructions: String,
    /// When.
    pub repeat: Repeat,
    /// IANA zone; empty: the computer's own.
    pub time_zone: String,
    /// Missed runs.
    pub missed: MissedRuns,
    /// The goal its runs work on.
    pub goal_id: Option<String>,
}

impl From<&ScheduleCreateParams> for ScheduleSpec {
    fn from(p: &ScheduleCreateParams) -> Self {
        Self {
            title: p.title.trim().to_owned(),
            job: p.job,
            instructions: p.instructions.trim().to_owned(),
            repeat: p.repeat.clone(),
            time_zone: p.time_zone.trim().to_owned(),
            missed: p.missed,
            goal_id: None,
        }
    }
}

/// The computer's own IANA zone, or UTC when it has none Hearth can name.
pub fn system_time_zone() -> String {
    jiff::tz::TimeZone::try_system().ok().and_then(|tz| tz.iana_name().map(str::to_owned)).unwrap_or_else(|| "UTC".into())
}

/// The schedules service. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Schedules {
    store: Store,
    tasks: TaskEngine,
}

impl Schedules {
    /// Over the store, waking `tasks` when a tick makes work.
    pub fn new(store: Store, tasks: TaskEngine) -> Self {
        Self { store, tasks }
    }

    /// Creates a schedule under `key` (the same key returns the same schedule). `fence` and
    /// `chat_run` as for a delegated task: a run that no longer holds makes nothing (`None`).
    ///
    /// `sources` is the outside content it is made from (an approved card's; empty for the
    /// owner's own words): every task it starts carries it.
    #[expect(clippy::too_many_arguments, reason = "the schedule, its key and fences, and what it was made from")]
    pub async fn create(
        &self,
        key: &str,
        spec: &ScheduleSpec,
        sources: &[hearth_protocol::provenance::OutsideSource],
        thread_id: Option<&str>,
        fence: Option<(&str, &str)>,
        chat_run: Option<&str>,
        now: i64,
    ) -> Result<Option<ScheduleView>> {
        let zone = if spec.time_zone.is_empty() { system_time_zone() } else { spec.time_zone.clone() };
        let rule = Rule::new(&spec.repeat, &zone, now)?;
        let instructions = if spec.instructions.is_empty() { spec.title.clone() } else { spec.instructions.clone() };
        let new = NewSchedule {
            idempotency_key: key,
            title: &spec.title,
            job: spec.job,
            instructions: &instructions,
            repeat: &spec.repeat,
            time_zone: &zone,
            missed: spec.missed,
            now,
            next_due_at: rule.next_after(now),
            thread_id,
            goal_id: spec.goal_id.as_deref(),
            sources,
        };
        let Some(row) = self.store.create_schedule(&new, fence, chat_run).await? else { return Ok(None) };
        let same = row.title == spec.title
            && row.job == spec.job
            && row.instructions == instructions
            && row.repeat == spec.repeat
            && row.time_zone == zone
            && row.missed == spec.missed
            && row.goal_id == spec.goal_id;
        if !same {
            return Err(CoreError::Conflict(format!(
                "A different schedule was already made for this step ({}); make a new one instead of changing it here.",
                row.title
            )));
        }
        self.view(row).await.map(Some)
    }

    /// Every schedule with its next and last runs.
    pub async fn list(&self) -> Result<Vec<ScheduleView>> {
        let mut views = Vec::new();
        for row in self.store.list_schedules().await? {
            views.push(self.view(row).await?);
        }
        Ok(views)
    }

    /// One schedule.
    pub async fn get(&self, id: &str) -> Result<ScheduleView> {
        let row = self.store.get_schedule(id).await?.ok_or_else(|| gone(id))?;
        self.view(row).await
    }

    /// The owner's control. Delete returns `None`.
    pub async fn control(&self, params: &ScheduleControlParams, now: i64) -> Result<Option<ScheduleView>> {
        params.validate()?;
        let id = &params.schedule_id;
        let row = self.store.get_schedule(id).await?.ok_or_else(|| gone(id))?;
        match params.action {
            ScheduleAction::Pause => {
                self.store.set_schedule_status(id, ScheduleStatus::Paused, now, None).await?;
            }
            ScheduleAction::Resume => {
                let rule = Rule::new(&row.repeat, &row.time_zone, row.anchor_at)?;
                self.store.set_schedule_status(id, ScheduleStatus::Active, now, rule.next_after(now)).await?;
            }
            ScheduleAction::RunNow => {
                // `validate` made sure of it; said again rather than unwrapped.
                let operation = params
                    .operation_id
                    .as_deref()
                    .ok_or_else(|| CoreError::InvalidInput("Run now needs an operation id, made once per press; send one.".into()))?;
                match self.store.run_schedule_now(id, operation, now).await? {
                    Some((DueOutcome::Refused, _)) => return Err(too_many_tasks()),
                    Some((_, task)) => self.tasks.announce_created(task.as_slice()),
                    // The same press again (its operation id): the first made the run.
                    None => {}
                }
            }
            ScheduleAction::Delete => {
                self.store.delete_schedule(id).await?;
                return Ok(None);
            }
        }
        self.get(id).await.map(Some)
    }

    /// Handles every active schedule due at `now`: records each passed due time and makes
    /// the runs its plan says. Returns how many tasks it made.
    pub async fn fire_due(&self, now: i64) -> Result<usize> {
        let mut made = Vec::new();
        for schedule in self.store.due_schedules(now).await? {
            // One schedule's trouble (a row Hearth cannot read, a zone gone) is logged and the
            // others still run.
            match self.fire_one(&schedule, now).await {
                Ok(tasks) => made.extend(tasks),
                Err(err) => tracing::error!(schedule = %schedule.id, error = %err, "a schedule could not be handled; the others go on"),
            }
        }
        self.tasks.announce_created(&made);
        Ok(made.len())
    }

    async fn fire_one(&self, schedule: &ScheduleRow, now: i64) -> Result<Vec<String>> {
        let rule = match Rule::new(&schedule.repeat, &schedule.time_zone, schedule.anchor_at) {
            Ok(rule) => rule,
            Err(err) => {
                // The zone left the system's database (or the row was edited): pause it and
                // say so, together, once, rather than fail every second.
                self.store.pause_unreadable_schedule(schedule, &err.to_string()).await?;
                return Ok(Vec::new());
            }
        };
        let plan = plan(&rule, schedule.missed, schedule.cursor_at, now);
        if plan.passed_over > 0 {
            tracing::info!(schedule = %schedule.id, passed_over = plan.passed_over, "older missed due times were passed over");
        }
        let firing = Firing { schedule: schedule.clone(), dues: plan.dues, cursor: plan.cursor, next_due_at: plan.next };
        let Some(recorded) = self.store.fire_schedule(&firing).await? else { return Ok(Vec::new()) };
        Ok(recorded.into_iter().filter_map(|(_, _, task)| task).collect())
    }

    /// Ticks every `every` until `stop`: a due time is handled within a tick of it, and one
    /// that passed while the machine slept is handled at the first tick after waking, under
    /// its schedule's missed-run policy.
    pub fn start(&self, every: Duration, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
        let schedules = self.clone();
        tokio::spawn(async move {
            loop {
                if let Err(err) = schedules.fire_due(crate::store::now_ms()).await {
                    tracing::error!(error = %err, "the schedules could not be checked");
                }
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(every) => {}
                }
            }
        })
    }

    async fn view(&self, row: ScheduleRow) -> Result<ScheduleView> {
        let last_runs = self.store.schedule_runs(&row.id, SHOWN_RUNS).await?;
        Ok(ScheduleView {
            id: ScheduleId::trusted(row.id),
            title: row.title,
            job: row.job,
            instructions: row.instructions,
            repeat: row.repeat,
            time_zone: row.time_zone,
            missed: row.missed,
            status: row.status,
            next_run_at: match row.status {
                ScheduleStatus::Active => row.next_due_at,
                ScheduleStatus::Paused => None,
            },
            last_runs,
            created_at: row.created_at,
        })
    }
}

/// The reminder task: a schedule's reminder comes due. The notice is written by the task's
/// own success (the `tasks_notify` trigger), so it is one notice per run, never lost between
/// the run and the notice.
pub async fn run_reminder(ctx: TaskContext) -> TaskOutcome {
    let input = &ctx.task().input;
    let text = input
        .get("instructions")
        .and_then(serde_json::Value::as_str)
        .or_else(|| input.get("title").and_then(serde_json::Value::as_str))
        .unwrap_or("Reminder")
        .to_owned();
    TaskOutcome::Succeeded(text)
}

fn gone(id: &str) -> CoreError {
    CoreError::NotFound(format!("There is no schedule {id}; it may have been deleted."))
}

fn too_many_tasks() -> CoreError {
    CoreError::Conflict(crate::store::schedules::REFUSED_RUN.into())
}
