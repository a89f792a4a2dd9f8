//! Every task the owner can see, kept current by `task_list` and then `task_watch`.
//!
//! Plain data so the ordering and staleness rules are tested without a browser. Updates can
//! arrive out of order (a list reply racing a watch message, two fetches in flight), so an
//! update older than the held one is dropped by `updated_at`.

use std::collections::HashMap;

use hearth_protocol::ids::TaskId;
use hearth_protocol::tasks::{ControlKind, StepStatus, TaskControl, TaskRunStatus, TaskStatus, TaskView, allowed_controls};
use hearth_protocol::{ErrorCode, IpcError};

/// What an upsert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upsert {
    /// Older than the held version; dropped.
    Stale,
    /// Same as the held version.
    Unchanged,
    /// New, or different from the held version.
    Changed,
}

/// One held task and how often it changed, so a detail pane knows when to re-fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Held {
    task: TaskView,
    revision: u64,
}

/// Task id → the newest known view of that task.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskStore {
    tasks: HashMap<TaskId, Held>,
}

impl TaskStore {
    /// Keeps `task` unless the held version is newer.
    pub fn upsert(&mut self, task: TaskView) -> Upsert {
        match self.tasks.get_mut(&task.id) {
            Some(held) if task.updated_at < held.task.updated_at => Upsert::Stale,
            Some(held) if held.task == task => Upsert::Unchanged,
            Some(held) => {
                held.task = task;
                held.revision += 1;
                Upsert::Changed
            }
            None => {
                self.tasks.insert(task.id.clone(), Held { task, revision: 0 });
                Upsert::Changed
            }
        }
    }

    /// Records that a task changed in a way its view does not show (a new event, say).
    pub fn touch(&mut self, task_id: &str) {
        if let Some(held) = self.tasks.get_mut(task_id) {
            held.revision += 1;
        }
    }

    /// The held view of a task.
    pub fn get(&self, task_id: &str) -> Option<&TaskView> {
        self.tasks.get(task_id).map(|held| &held.task)
    }

    /// Bumped on every change to the task; `None` when the task is not held.
    pub fn revision(&self, task_id: &str) -> Option<u64> {
        self.tasks.get(task_id).map(|held| held.revision)
    }

    /// Task ids, most recently updated first (ties by id, so the order is stable).
    pub fn ids_by_recency(&self) -> Vec<TaskId> {
        let mut tasks: Vec<&TaskView> = self.tasks.values().map(|held| &held.task).collect();
        tasks.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| a.id.cmp(&b.id)));
        tasks.into_iter().map(|task| task.id.clone()).collect()
    }

    /// Every held task, in no particular order.
    pub fn tasks(&self) -> impl Iterator<Item = &TaskView> {
        self.tasks.values().map(|held| &held.task)
    }

    /// Whether no task is held.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }
}

/// The newer of two views of the same task (the first on a tie): the store and a fetched
/// detail can each be ahead of the other for a moment.
pub fn newest(a: Option<&TaskView>, b: Option<&TaskView>) -> Option<TaskView> {
    match (a, b) {
        (Some(a), Some(b)) if b.updated_at > a.updated_at => Some(b.clone()),
        (Some(task), _) | (None, Some(task)) => Some(task.clone()),
        (None, None) => None,
    }
}

/// A control button the Activity screen can show. Answer is not here: it is a text box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskAction {
    /// Pause.
    Pause,
    /// Resume.
    Resume,
    /// Cancel.
    Cancel,
    /// Retry.
    Retry,
    /// Retry after the owner reviewed effects whose outcome is unknown.
    RetryAfterReview,
}

impl TaskAction {
    /// The button's element id (stable for end-to-end tests).
    pub const fn element_id(self) -> &'static str {
        match self {
            TaskAction::Pause => "task-pause",
            TaskAction::Resume => "task-resume",
            TaskAction::Cancel => "task-cancel",
            TaskAction::Retry => "task-retry",
            TaskAction::RetryAfterReview => "task-retry-review",
        }
    }

    /// The button's label.
    pub const fn label(self) -> &'static str {
        match self {
            TaskAction::Pause => "Pause",
            TaskAction::Resume => "Resume",
            TaskAction::Cancel => "Cancel",
            TaskAction::Retry => "Retry",
            TaskAction::RetryAfterReview => "Retry after review",
        }
    }

    /// The control sent to the backend.
    pub const fn control(self) -> TaskControl {
        match self {
            TaskAction::Pause => TaskControl::Pause,
            TaskAction::Resume => TaskControl::Resume,
            TaskAction::Cancel => TaskControl::Cancel,
            TaskAction::Retry => TaskControl::Retry { acknowledge_uncertain: false },
            TaskAction::RetryAfterReview => TaskControl::Retry { acknowledge_uncertain: true },
        }
    }
}

/// Whether an action of the task may or may not have happened (Hearth stopped mid-action, or
/// Stop reached a running effect), so going on must come after the owner's review.
pub fn needs_review(task: &TaskView) -> bool {
    task.outcome_uncertain && matches!(task.status, TaskStatus::Interrupted | TaskStatus::Failed | TaskStatus::Paused)
}

/// The buttons for `task`, in the order [`allowed_controls`] lists them.
pub fn available_actions(task: &TaskView) -> Vec<TaskAction> {
    allowed_controls(task.status)
        .iter()
        .filter_map(|&kind| match kind {
            ControlKind::Pause => Some(TaskAction::Pause),
            // The core refuses to resume past an effect whose outcome nobody knows.
            ControlKind::Resume if needs_review(task) => None,
            ControlKind::Resume => Some(TaskAction::Resume),
            ControlKind::Cancel => Some(TaskAction::Cancel),
            ControlKind::Retry if needs_review(task) => Some(TaskAction::RetryAfterReview),
            // From Paused, Retry exists only as "Retry after review"; Resume goes on.
            ControlKind::Retry if task.status == TaskStatus::Paused => None,
            ControlKind::Retry => Some(TaskAction::Retry),
            // Answer is a text box, not a button.
            ControlKind::Answer => None,
        })
        .collect()
}

/// Whether the task takes an answer now.
pub fn accepts_answer(task: &TaskView) -> bool {
    allowed_controls(task.status).contains(&ControlKind::Answer)
}

/// What to tell the owner when a control failed. A conflict means nothing was done because
/// the task moved on; the pane re-fetches it, so the owner decides again on fresh state.
pub fn control_failure_message(err: &IpcError) -> String {
    match err.code {
        // Nothing changed: the core says what the owner must review or wait for.
        ErrorCode::NeedsReview => err.message.clone(),
        ErrorCode::Conflict => format!(
            "This task changed while you were looking at it, so nothing was done. It has been reloaded: check it and try again. ({})",
            err.message
        ),
        _ => err.message.clone(),
    }
}

/// A status as the owner reads it ("waiting input").
pub fn status_label(status: TaskStatus) -> String {
    status.as_str().replace('_', " ")
}

/// "1 attempt", "3 attempts".
pub fn attempts_label(attempts: i64) -> String {
    if attempts == 1 { "1 attempt".to_owned() } else { format!("{attempts} attempts") }
}

/// A plan step's status word (also its CSS/test hook).
pub const fn step_status_label(status: StepStatus) -> &'static str {
    match status {
        StepStatus::Pending => "pending",
        StepStatus::Active => "active",
        StepStatus::Done => "done",
        StepStatus::Skipped => "skipped",
    }
}

/// A run's status word (also its CSS/test hook).
pub const fn run_status_label(status: TaskRunStatus) -> &'static str {
    match status {
        TaskRunStatus::Running => "running",
        TaskRunStatus::Finished => "finished",
        TaskRunStatus::Interrupted => "interrupted",
        TaskRunStatus::Failed => "failed",
        TaskRunStatus::Cancelled => "cancelled",
    }
}

#[cfg(test)]
#[path = "tasks_tests.rs"]
mod tests;
