//! The owner's inbox: notices about tasks, reviews and schedules, each once.

use serde::{Deserialize, Serialize};

use crate::error::IpcError;

/// What a notice is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum NotificationKind {
    /// A reminder came due.
    Reminder,
    /// A task finished.
    TaskDone,
    /// A task failed (one notice per attempt).
    TaskFailed,
    /// A run a schedule made failed.
    ScheduleFailed,
    /// A schedule could not make a run.
    ScheduleRefused,
    /// A task asks the owner something.
    InputNeeded,
    /// Something waits for the owner's approval.
    ReviewNeeded,
    /// An approved email or event change waits out its undo window (Undo is on the notice).
    Leaving,
    /// A task stopped mid-run; what it did needs a look.
    TaskInterrupted,
    /// A watched page matched its condition (the body holds the line diff).
    MonitorNotice,
    /// A watched page failed too often; the monitor paused itself.
    MonitorPaused,
}

impl NotificationKind {
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

    /// A short label for the inbox.
    pub const fn label(self) -> &'static str {
        match self {
            NotificationKind::Reminder => "Reminder",
            NotificationKind::TaskDone => "Done",
            NotificationKind::TaskFailed => "Failed",
            NotificationKind::ScheduleFailed => "Scheduled run failed",
            NotificationKind::ScheduleRefused => "Schedule could not run",
            NotificationKind::InputNeeded => "Question",
            NotificationKind::ReviewNeeded => "Review needed",
            NotificationKind::Leaving => "Sending soon",
            NotificationKind::TaskInterrupted => "Interrupted",
            NotificationKind::MonitorNotice => "Page changed",
            NotificationKind::MonitorPaused => "Monitor paused",
        }
    }
}

/// Where a notice leads.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
pub enum NotificationTarget {
    /// A task (Activity).
    Task(crate::ids::TaskId),
    /// A proposal (its approval card).
    Proposal(crate::ids::ProposalId),
    /// A schedule (Activity).
    Schedule(crate::ids::ScheduleId),
}

/// One notice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationView {
    /// Id, increasing.
    pub id: i64,
    /// About what.
    pub kind: NotificationKind,
    /// Headline.
    pub title: String,
    /// One or two lines.
    pub body: String,
    /// What opening it shows.
    pub target: NotificationTarget,
    /// When, Unix ms.
    pub created_at: i64,
    /// Whether the owner has seen it.
    pub read: bool,
}

/// `notification_open_watch`'s message: the owner clicked the OS notification of `notice`, so
/// the window opens what it is about (as a click in the Inbox does).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationOpened {
    /// The notice the OS notification stood for.
    pub notice: NotificationView,
}

/// `notification_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationListResponse {
    /// Newest first (at most 200).
    pub notifications: Vec<NotificationView>,
    /// How many are unread in all.
    pub unread: i64,
}

/// `notification_read`: mark notices read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationReadParams {
    /// These notices; empty with `all` marks every one.
    #[serde(default)]
    pub ids: Vec<i64>,
    /// Every notice.
    #[serde(default)]
    pub all: bool,
}

impl NotificationReadParams {
    /// At most 500 ids.
    pub fn validate(&self) -> Result<(), IpcError> {
        if self.ids.len() > 500 {
            return Err(IpcError::invalid("Mark at most 500 notices at once, or all of them."));
        }
        Ok(())
    }
}
