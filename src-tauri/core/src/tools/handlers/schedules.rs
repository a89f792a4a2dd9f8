//! schedule_task: make a task repeat. A Control tool — it changes only Hearth's own
//! bookkeeping, through the task desk — keyed like delegate_task, so a retried step makes one
//! schedule and a changed rule under the same step is a conflict.
//!
//! The argument types mirror `hearth_protocol::schedules` because the model's schema is derived
//! from them (schemars) and the protocol crate stays serde-only.

use hearth_protocol::ToolName;
use hearth_protocol::schedules::{
    MAX_SCHEDULE_INSTRUCTIONS, MAX_SCHEDULE_TITLE, MissedRuns, Repeat, ScheduleTaskResult, ScheduledJob, Weekday,
};
use serde::Deserialize;

use crate::schedules::ScheduleSpec;
use crate::tools::ToolOutput;
use crate::tools::context::{StepId, ToolContext};
use crate::tools::traits::{DirectTool, Tool};

/// `schedule_task`'s arguments.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ScheduleTaskArgs {
    /// A short title (at most 200 characters), e.g. "Check the garden".
    pub title: String,
    /// What each run does: the reminder's text, or the agent's full instructions. The title
    /// when left out.
    #[serde(default)]
    pub instructions: Option<String>,
    /// `reminder`: tell the owner at each due time (no model needed). `agent`: the agent does
    /// the work at each due time. `finance`: a statement summary of the file at
    /// `documentPath`, read as it is at each due time (no model needed). Default `reminder`.
    #[serde(default)]
    pub job: Option<JobArg>,
    /// For `finance` only: the statement's path in the owner's document folders, as
    /// search_documents gives it.
    #[serde(default)]
    pub document_path: Option<String>,
    /// When it repeats.
    pub repeat: RepeatArg,
    /// IANA time zone the times are in, e.g. "Europe/Paris". Default: the computer's own.
    #[serde(default)]
    pub time_zone: Option<String>,
    /// Runs missed while Hearth was closed or asleep: `skip`, `run_once` (default) or
    /// `run_each` (up to 10).
    #[serde(default)]
    pub missed_runs: Option<MissedArg>,
    /// The goal its runs work on (from create_goal); pausing the goal pauses the schedule.
    #[serde(default)]
    pub goal_id: Option<String>,
}

/// What each run does.
#[derive(Deserialize, schemars::JsonSchema, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(crate) enum JobArg {
    /// Tell the owner.
    Reminder,
    /// The agent works on the instructions.
    Agent,
    /// A statement summary of a file in Files.
    Finance,
}

/// Missed-run policy.
#[derive(Deserialize, schemars::JsonSchema, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MissedArg {
    /// Run none of the missed.
    Skip,
    /// Run once for all of them.
    RunOnce,
    /// Run each, up to 10.
    RunEach,
}

/// A day of the week.
#[derive(Deserialize, schemars::JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub(crate) enum DayArg {
    /// Monday.
    Monday,
    /// Tuesday.
    Tuesday,
    /// Wednesday.
    Wednesday,
    /// Thursday.
    Thursday,
    /// Friday.
    Friday,
    /// Saturday.
    Saturday,
    /// Sunday.
    Sunday,
}

/// When a schedule is due.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(tag = "every", rename_all = "snake_case", rename_all_fields = "camelCase", deny_unknown_fields)]
pub(crate) enum RepeatArg {
    /// On these days of the week at a time ("every weekday at 08:00": monday…friday, "08:00").
    Week {
        /// The days.
        days: Vec<DayArg>,
        /// HH:MM, 24-hour.
        at: String,
    },
    /// On a day of each month at a time (a day past a month's end runs on its last day).
    Month {
        /// 1 to 31.
        day: u8,
        /// HH:MM, 24-hour.
        at: String,
    },
    /// Every so many minutes (5 to 525,600): "every 2 hours" is 120.
    Interval {
        /// Minutes between runs.
        minutes: u32,
    },
}

impl From<DayArg> for Weekday {
    fn from(d: DayArg) -> Self {
        match d {
            DayArg::Monday => Weekday::Monday,
            DayArg::Tuesday => Weekday::Tuesday,
            DayArg::Wednesday => Weekday::Wednesday,
            DayArg::Thursday => Weekday::Thursday,
            DayArg::Friday => Weekday::Friday,
            DayArg::Saturday => Weekday::Saturday,
            DayArg::Sunday => Weekday::Sunday,
        }
    }
}

impl From<RepeatArg> for Repeat {
    fn from(r: RepeatArg) -> Self {
        match r {
            RepeatArg::Week { days, at } => {
                let mut days: Vec<Weekday> = days.into_iter().map(Weekday::from).collect();
                days.sort();
                days.dedup();
                Repeat::Week { days, at }
            }
            RepeatArg::Month { day, at } => Repeat::Month { day, at },
            RepeatArg::Interval { minutes } => Repeat::Interval { minutes },
        }
    }
}

/// `schedule_task`.
pub(crate) struct ScheduleTask;

impl Tool for ScheduleTask {
    const NAME: ToolName = ToolName::ScheduleTask;
    const DESCRIPTION: &'static str = "Make a reminder or a job repeat on a schedule (days of the week at a time, a day of \
                                       each month, or every N minutes) in a time zone. The owner sees it in Activity and \
                                       can pause, run now or delete it.";
    type Args = ScheduleTaskArgs;
}

impl DirectTool for ScheduleTask {
    async fn run(ctx: &ToolContext, step: &StepId, args: ScheduleTaskArgs) -> ToolOutput {
        let title = args.title.trim();
        if title.is_empty() || title.chars().count() > MAX_SCHEDULE_TITLE {
            return ToolOutput::error(format!("`title` is 1 to {MAX_SCHEDULE_TITLE} characters."));
        }
        let instructions = args.instructions.as_deref().unwrap_or_default().trim();
        if instructions.chars().count() > MAX_SCHEDULE_INSTRUCTIONS {
            return ToolOutput::error(format!("`instructions` is longer than {MAX_SCHEDULE_INSTRUCTIONS} characters; shorten it."));
        }
        if args.time_zone.as_deref().is_some_and(|z| z.trim().len() > 64) {
            return ToolOutput::error("`timeZone` is an IANA name such as Europe/Paris (at most 64 characters).");
        }
        let job = match args.job.unwrap_or(JobArg::Reminder) {
            JobArg::Reminder => ScheduledJob::Reminder,
            JobArg::Agent => ScheduledJob::Agent,
            JobArg::Finance => ScheduledJob::Finance,
        };
        // A statement summary's runs read a document, not instructions: its path is what they
        // keep. A file in Files never changes, so repeating its summary would repeat one result.
        let key = ctx.scope.key(step).joined();
        let instructions = match (job, args.document_path) {
            (ScheduledJob::Finance, Some(path)) => match checked_statement(ctx, &key, path).await {
                Ok(path) => path,
                Err(refused) => return refused,
            },
            (ScheduledJob::Finance, None) => {
                return ToolOutput::error("A `finance` schedule needs `documentPath`: the statement in the owner's document folders.");
            }
            (ScheduledJob::Reminder | ScheduledJob::Agent, Some(_)) => {
                return ToolOutput::error("`documentPath` is for a `finance` schedule only.");
            }
            (ScheduledJob::Reminder | ScheduledJob::Agent, None) => instructions.to_owned(),
        };
        let spec = ScheduleSpec {
            title: title.to_owned(),
            job,
            instructions,
            repeat: args.repeat.into(),
            time_zone: args.time_zone.unwrap_or_default().trim().to_owned(),
            missed: match args.missed_runs.unwrap_or(MissedArg::RunOnce) {
                MissedArg::Skip => MissedRuns::Skip,
                MissedArg::RunOnce => MissedRuns::RunOnce,
                MissedArg::RunEach => MissedRuns::RunEach,
            },
            goal_id: None,
        };
        let spec = match super::goals::active_goal(ctx, args.goal_id.as_deref(), None).await {
            Ok(goal_id) => ScheduleSpec { goal_id, ..spec },
            Err(refused) => return refused,
        };
        if ctx.cancel.is_cancelled() {
            return ToolOutput::error("The run was stopped, so nothing was scheduled.");
        }
        let fence = ctx.scope.task().map(|t| t.fence());
        // Asked for after the agent read content from outside the owner, and approved on its
        // card: each of its runs starts from that, not from the owner's own words.
        let outside = ctx.scope.approved_sources();
        match ctx.desk.schedule(&key, &spec, outside, ctx.scope.thread_id(), fence, ctx.scope.chat_run()).await {
            Ok(view) => {
                let result = ScheduleTaskResult {
                    when: view.repeat.describe(),
                    schedule_id: view.id,
                    title: view.title,
                    time_zone: view.time_zone,
                    next_run_at: view.next_run_at,
                    missed_runs: view.missed,
                };
                ToolOutput::ok(&serde_json::to_value(result).unwrap_or_default())
            }
            Err(err) => ToolOutput::error(err.to_string()),
        }
    }
}

/// The statement's document path, if it names an indexed document now — checked only for a
/// step that made no schedule yet, so a retried step answers the schedule it made.
async fn checked_statement(ctx: &ToolContext, key: &str, path: String) -> Result<String, ToolOutput> {
    let source = super::finance::source_of(None, None, Some(path))?;
    let made = matches!(ctx.store.get_schedule(&crate::store::schedules::schedule_id_for_key(key)).await, Ok(Some(_)));
    if !made {
        source.check(&ctx.files, &ctx.store).await.map_err(ToolOutput::error)?;
    }
    match source {
        crate::finance::StatementSource::Document(path) => Ok(path),
        crate::finance::StatementSource::Pasted(_) | crate::finance::StatementSource::File(_) => {
            Err(ToolOutput::error("A `finance` schedule reads a document by its path."))
        }
    }
}
