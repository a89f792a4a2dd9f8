//! Durable tasks on the wire: kinds, statuses, plans, the owner's controls, and the views
//! the Activity screen renders.

use serde::{Deserialize, Serialize};

use crate::error::IpcError;
use crate::ids::{ProposalId, RunId, TaskId};

/// What kind of work a task is; each kind has its own handler in the core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TaskKind {
    /// Open-ended work for the agent loop.
    Agent,
    /// A plan of steps.
    Plan,
    /// The deterministic document workflow (PDF → fill → reply).
    Document,
    /// A page or inbox monitor.
    Monitor,
    /// Money matters (statements, bills).
    Finance,
    /// A reminder a schedule made: tells the owner, needs no model.
    Reminder,
}

impl TaskKind {
    /// Every variant, in declaration order (derived: strum's `VariantArray`).
    pub const ALL: &'static [Self] = <Self as strum::VariantArray>::VARIANTS;

    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}

/// The lifecycle of a durable task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TaskStatus {
    /// Waiting for a worker.
    Queued,
    /// A worker holds its lease.
    Running,
    /// Waiting for the owner to approve a proposal.
    WaitingApproval,
    /// Waiting for the owner to answer a question.
    WaitingInput,
    /// Due later.
    Scheduled,
    /// Paused by the owner.
    Paused,
    /// Hearth stopped mid-run; the owner reviews before retrying.
    Interrupted,
    /// Done.
    Succeeded,
    /// Gave up with an error.
    Failed,
    /// Cancelled by the owner.
    Cancelled,
}

impl TaskStatus {
    /// Every variant, in declaration order (derived: strum's `VariantArray`).
    pub const ALL: &'static [Self] = <Self as strum::VariantArray>::VARIANTS;

    /// The stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }

    /// Whether the task is over (counts toward nothing, accepts only Retry where allowed).
    pub const fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Succeeded | TaskStatus::Failed | TaskStatus::Cancelled)
    }
}

/// A control the owner applies to a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum TaskControl {
    /// Stop taking new steps; resumable.
    Pause,
    /// Continue a paused task.
    Resume,
    /// Stop for good: fires the run's cancellation at once.
    Cancel,
    /// Run again with a new run and lease. After an interruption whose effects are in
    /// doubt, `acknowledge_uncertain` says the owner reviewed them.
    Retry {
        /// The owner reviewed the effects whose outcome is unknown.
        #[serde(default)]
        acknowledge_uncertain: bool,
    },
    /// Answer the task's question (waiting_input).
    Answer {
        /// The answer.
        text: String,
    },
}

/// A control without its payload: what `allowed_controls` lists and buttons match on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlKind {
    /// [`TaskControl::Pause`].
    Pause,
    /// [`TaskControl::Resume`].
    Resume,
    /// [`TaskControl::Cancel`].
    Cancel,
    /// [`TaskControl::Retry`].
    Retry,
    /// [`TaskControl::Answer`].
    Answer,
}

impl ControlKind {
    /// Short name for messages.
    pub const fn name(self) -> &'static str {
        match self {
            ControlKind::Pause => "pause",
            ControlKind::Resume => "resume",
            ControlKind::Cancel => "cancel",
            ControlKind::Retry => "retry",
            ControlKind::Answer => "answer",
        }
    }
}

impl TaskControl {
    /// Which control this is.
    pub const fn kind(&self) -> ControlKind {
        match self {
            TaskControl::Pause => ControlKind::Pause,
            TaskControl::Resume => ControlKind::Resume,
            TaskControl::Cancel => ControlKind::Cancel,
            TaskControl::Retry { .. } => ControlKind::Retry,
            TaskControl::Answer { .. } => ControlKind::Answer,
        }
    }

    /// Short name for messages.
    pub const fn name(&self) -> &'static str {
        self.kind().name()
    }
}

/// Longest answer to a task's question.
pub const MAX_ANSWER_CHARS: usize = 10_000;

/// `task_control`: apply a control, if the task is still as the owner saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskControlParams {
    /// The task.
    pub task_id: TaskId,
    /// The status the owner saw; a different one is a conflict.
    pub expected_status: TaskStatus,
    /// The attempt count the owner saw; a newer run (new effects, a new question) is a conflict.
    pub expected_attempts: i64,
    /// The control.
    pub control: TaskControl,
}

impl TaskControlParams {
    /// Checks an answer's bounds (the task id checked itself when it was parsed).
    pub fn validate(&self) -> Result<(), IpcError> {
        if let TaskControl::Answer { text } = &self.control {
            if text.trim().is_empty() {
                return Err(IpcError::invalid("The answer is empty. Type an answer first."));
            }
            let chars = text.chars().count();
            if chars > MAX_ANSWER_CHARS {
                return Err(IpcError::invalid(format!("The answer has {chars} characters; the limit is {MAX_ANSWER_CHARS}.")));
            }
        }
        Ok(())
    }
}

/// A plan step's progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    Active,
    /// Finished.
    Done,
    /// Skipped or impossible.
    Skipped,
}

/// One step of a task's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanStep {
    /// What the step does.
    pub title: String,
    /// Its progress.
    pub status: StepStatus,
}

/// A task as lists show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskView {
    /// Task id.
    pub id: TaskId,
    /// Kind.
    pub kind: TaskKind,
    /// Title.
    pub title: String,
    /// Status.
    pub status: TaskStatus,
    /// The plan.
    pub plan: Vec<PlanStep>,
    /// Runs so far.
    pub attempts: i64,
    /// The question waiting for an answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// The options of that question, when the agent offered a choice (present_choices).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// The result, once succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Why it failed or was interrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Effects whose outcome is unknown wait for the owner's review before Retry.
    pub outcome_uncertain: bool,
    /// The proposal the task last waited on for approval (the approval card shows it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal_id: Option<ProposalId>,
    /// Created, Unix ms.
    pub created_at: i64,
    /// Last change, Unix ms.
    pub updated_at: i64,
}

/// How a run ended (or that it is still going).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TaskRunStatus {
    /// Holding the lease.
    Running,
    /// Ended normally (including waiting states).
    Finished,
    /// Hearth stopped mid-run.
    Interrupted,
    /// Ended with an error.
    Failed,
    /// The owner cancelled it.
    Cancelled,
}

impl TaskRunStatus {
    /// Every variant, in declaration order (derived: strum's `VariantArray`).
    pub const ALL: &'static [Self] = <Self as strum::VariantArray>::VARIANTS;

    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}

/// One run (one lease) of a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRunView {
    /// Run id.
    pub id: RunId,
    /// Which attempt.
    pub attempt: i64,
    /// Status.
    pub status: TaskRunStatus,
    /// Started, Unix ms.
    pub started_at: i64,
    /// Ended, Unix ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<i64>,
    /// Why it ended that way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What kind of thing happened in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TaskEventKind {
    /// The plan was set.
    Plan,
    /// A step changed.
    Step,
    /// Something was observed.
    Observation,
    /// An approval was asked for or decided.
    Approval,
    /// The result.
    Result,
    /// An error.
    Error,
    /// The status changed.
    Status,
}

impl TaskEventKind {
    /// Every variant, in declaration order (derived: strum's `VariantArray`).
    pub const ALL: &'static [Self] = <Self as strum::VariantArray>::VARIANTS;

    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}

/// One event in a task's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskEventView {
    /// The run it belongs to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunId>,
    /// Kind.
    pub kind: TaskEventKind,
    /// What happened, for the owner.
    pub message: String,
    /// When, Unix ms.
    pub at: i64,
}

/// `task_get`: one task with its runs and events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskGetParams {
    /// The task.
    pub task_id: TaskId,
}

impl TaskGetParams {
    /// Nothing left to check: the task id checked itself when it was parsed. Kept so every
    /// command reads alike (parse, validate, call the core).
    pub fn validate(&self) -> Result<(), IpcError> {
        Ok(())
    }
}

/// Answer to `task_get`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskDetail {
    /// The task.
    pub task: TaskView,
    /// Its runs, oldest first: the newest 100, and older ones that were interrupted or whose
    /// effect is still in doubt (migration 0024).
    pub runs: Vec<TaskRunView>,
    /// Its events, oldest first (the newest 200).
    pub events: Vec<TaskEventView>,
    /// A finance task's tracker: what the statement adds up to (the chart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finance: Option<crate::finance::FinanceSummary>,
}

/// Answer to `task_list`: tasks, most recently changed first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskListResponse {
    /// The tasks.
    pub tasks: Vec<TaskView>,
}

/// Pushed on the `task_watch` channel whenever a task changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskChanged {
    /// The task as it is now.
    pub task: TaskView,
}

/// Which controls apply to a task in `status` — the UI shows only these, the core allows
/// only these. `outcome_uncertain` makes Retry need acknowledgement (shown as "Retry after review").
pub fn allowed_controls(status: TaskStatus) -> &'static [ControlKind] {
    use ControlKind::{Answer, Cancel, Pause, Resume, Retry};
    match status {
        TaskStatus::Queued | TaskStatus::Scheduled | TaskStatus::Running => &[Pause, Cancel],
        TaskStatus::WaitingApproval => &[Cancel],
        TaskStatus::WaitingInput => &[Answer, Cancel],
        // Retry from Paused is "Retry after review", for a pause that left an effect uncertain.
        TaskStatus::Paused => &[Resume, Retry, Cancel],
        TaskStatus::Interrupted | TaskStatus::Failed => &[Retry, Cancel],
        TaskStatus::Succeeded | TaskStatus::Cancelled => &[],
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn controls_are_tagged_camel_case() {
        let retry = TaskControl::Retry { acknowledge_uncertain: true };
        assert_eq!(serde_json::to_string(&retry).unwrap(), r#"{"type":"retry","acknowledgeUncertain":true}"#);
        let answer: TaskControl = serde_json::from_str(r#"{"type":"answer","text":"Tuesday"}"#).unwrap();
        assert_eq!(answer, TaskControl::Answer { text: "Tuesday".into() });
        let bare: TaskControl = serde_json::from_str(r#"{"type":"retry"}"#).unwrap();
        assert_eq!(bare, TaskControl::Retry { acknowledge_uncertain: false });
    }

    #[test]
    fn statuses_and_kinds_round_trip_their_spelling() {
        for &s in TaskStatus::ALL {
            assert_eq!(TaskStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{}\"", s.as_str()));
        }
        for &k in TaskKind::ALL {
            assert_eq!(TaskKind::parse(k.as_str()), Some(k));
        }
    }

    #[test]
    fn answers_are_bounded() {
        let params = |text: &str| TaskControlParams {
            task_id: TaskId::parse("t1").unwrap(),
            expected_status: TaskStatus::WaitingInput,
            expected_attempts: 1,
            control: TaskControl::Answer { text: text.into() },
        };
        assert!(params("Tuesday").validate().is_ok());
        assert!(params(" ").validate().is_err());
        assert!(params(&"x".repeat(MAX_ANSWER_CHARS + 1)).validate().is_err());
    }
}
