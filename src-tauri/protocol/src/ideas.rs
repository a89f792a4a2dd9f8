//! Ideas: rule-based suggestions the owner accepts (Hearth makes the task, goal step or
//! schedule) or dismisses (remembered).

use serde::{Deserialize, Serialize};

use crate::error::IpcError;

/// Which rule suggested it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum IdeaKind {
    /// A mail carries a form to fill: a document task.
    FillForm,
    /// A mail asks to meet: a task to answer it.
    AnswerMeeting,
    /// A goal has no milestones: a task to propose them.
    AddMilestones,
    /// The same request came up in three conversations: a weekly schedule.
    MakeSchedule,
}

impl IdeaKind {
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

/// One idea.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdeaView {
    /// Stable id (the rule and what it is about).
    pub id: String,
    /// Which rule.
    pub kind: IdeaKind,
    /// What Hearth would do.
    pub title: String,
    /// Why.
    pub reason: String,
}

/// `idea_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdeaListResponse {
    /// Ideas not decided yet.
    pub ideas: Vec<IdeaView>,
}

/// `idea_accept` / `idea_dismiss`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdeaParams {
    /// The idea.
    pub idea_id: String,
}

impl IdeaParams {
    /// Checks the id's shape.
    pub fn validate(&self) -> Result<(), IpcError> {
        if !crate::ids::is_valid_id(&self.idea_id) {
            return Err(IpcError::invalid("The idea id is not valid."));
        }
        Ok(())
    }
}

/// What accepting made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "made", content = "id", rename_all = "snake_case")]
pub enum IdeaAccepted {
    /// A task (open it in Activity).
    Task(crate::ids::TaskId),
    /// A schedule.
    Schedule(crate::ids::ScheduleId),
}
