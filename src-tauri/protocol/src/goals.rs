//! Goals: what the owner is working towards, with milestones that tasks complete.

use serde::{Deserialize, Serialize};

use crate::error::IpcError;

/// At most this many milestones per goal.
pub const MAX_MILESTONES: usize = 20;

/// Whether a goal's work goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum GoalStatus {
    /// Its tasks and schedules run.
    Active,
    /// Its tasks and schedules are paused.
    Paused,
}

impl GoalStatus {
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

/// One milestone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MilestoneView {
    /// 1-based.
    pub position: u32,
    /// Title.
    pub title: String,
    /// When a task finished it, Unix ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_at: Option<i64>,
    /// The task that finished it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<crate::ids::TaskId>,
}

/// A goal as the Goals screen shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoalView {
    /// Id.
    pub id: String,
    /// Title.
    pub title: String,
    /// What it is about.
    pub description: String,
    /// A word to group by (health, money, home, …).
    pub category: String,
    /// Active or paused.
    pub status: GoalStatus,
    /// Milestones, in order.
    pub milestones: Vec<MilestoneView>,
    /// Tasks working on it that are not over.
    pub open_tasks: i64,
    /// Created, Unix ms.
    pub created_at: i64,
}

/// `goal_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoalListResponse {
    /// Every goal, newest first.
    pub goals: Vec<GoalView>,
}

/// `goal_create`: a goal the owner makes on the Goals screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoalCreateParams {
    /// Title.
    pub title: String,
    /// Description.
    #[serde(default)]
    pub description: String,
    /// Category.
    #[serde(default)]
    pub category: String,
    /// Milestone titles, in order.
    #[serde(default)]
    pub milestones: Vec<String>,
}

impl GoalCreateParams {
    /// Bounds: title 1..200, description ≤ 2,000, category ≤ 40, ≤ 20 milestones of 1..200.
    pub fn validate(&self) -> Result<(), IpcError> {
        let title = self.title.trim();
        if title.is_empty() || title.chars().count() > 200 {
            return Err(IpcError::invalid("A goal's title is 1 to 200 characters."));
        }
        if self.description.chars().count() > 2_000 {
            return Err(IpcError::invalid("A goal's description is at most 2,000 characters."));
        }
        if self.category.chars().count() > 40 {
            return Err(IpcError::invalid("A category is at most 40 characters."));
        }
        if self.milestones.len() > MAX_MILESTONES {
            return Err(IpcError::invalid(format!("A goal has at most {MAX_MILESTONES} milestones.")));
        }
        if self.milestones.iter().any(|m| m.trim().is_empty() || m.chars().count() > 200) {
            return Err(IpcError::invalid("Each milestone is 1 to 200 characters."));
        }
        Ok(())
    }
}

/// Pause or resume a goal (its tasks and schedules with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalAction {
    /// Pause the goal, its open tasks and its schedules.
    Pause,
    /// Resume them.
    Resume,
}

/// `goal_control`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoalControlParams {
    /// The goal.
    pub goal_id: String,
    /// Pause or resume.
    pub action: GoalAction,
}

impl GoalControlParams {
    /// Checks the id's shape.
    pub fn validate(&self) -> Result<(), IpcError> {
        if !crate::ids::is_valid_id(&self.goal_id) {
            return Err(IpcError::invalid("The goal id is not valid."));
        }
        Ok(())
    }
}

/// A change to a goal's milestones, from the Goals screen. Positions stay what they are (a task
/// working on a milestone names its position), so a removal leaves a gap and an addition goes
/// last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum MilestoneChange {
    /// A new milestone, last.
    Add {
        /// Its title.
        title: String,
    },
    /// A milestone's new title.
    Rename {
        /// Which (1-based).
        position: u32,
        /// Its new title.
        title: String,
    },
    /// Removes a milestone that is not done and that no unfinished task works on.
    Remove {
        /// Which (1-based).
        position: u32,
    },
}

/// `goal_milestones`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoalMilestonesParams {
    /// The goal.
    pub goal_id: String,
    /// What changes.
    pub change: MilestoneChange,
}

impl GoalMilestonesParams {
    /// An id, a position of at least 1, and a title of 1 to 200 characters.
    pub fn validate(&self) -> Result<(), IpcError> {
        if !crate::ids::is_valid_id(&self.goal_id) {
            return Err(IpcError::invalid("The goal id is not valid."));
        }
        let title = match &self.change {
            MilestoneChange::Add { title } | MilestoneChange::Rename { title, .. } => Some(title),
            MilestoneChange::Remove { .. } => None,
        };
        if title.is_some_and(|t| t.trim().is_empty() || t.chars().count() > 200) {
            return Err(IpcError::invalid("Each milestone is 1 to 200 characters."));
        }
        match self.change {
            MilestoneChange::Rename { position: 0, .. } | MilestoneChange::Remove { position: 0 } => {
                Err(IpcError::invalid("Milestones are numbered from 1."))
            }
            MilestoneChange::Add { .. } | MilestoneChange::Rename { .. } | MilestoneChange::Remove { .. } => Ok(()),
        }
    }
}
