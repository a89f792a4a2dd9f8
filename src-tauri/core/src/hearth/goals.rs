//! The Goals screen's operations. Pausing a goal pauses its open tasks (each through the task
//! engine's own Pause, so a running one's Stop fires) and its schedules; resuming resumes them.

use hearth_protocol::goals::{GoalAction, GoalControlParams, GoalCreateParams, GoalListResponse, GoalStatus, GoalView};
use hearth_protocol::schedules::{ScheduleAction, ScheduleControlParams};
use hearth_protocol::tasks::{ControlKind, TaskControl, TaskControlParams, TaskStatus, allowed_controls};

use super::Hearth;
use crate::error::{CoreError, Result};
use crate::store::goals::NewGoal;

impl Hearth {
    /// Every goal.
    pub async fn goal_list(&self) -> Result<GoalListResponse> {
        Ok(GoalListResponse { goals: self.store.goals().await? })
    }

    /// A goal the owner makes.
    pub async fn goal_create(&self, params: &GoalCreateParams) -> Result<GoalView> {
        params.validate()?;
        let key = format!("owner:goals:{}", uuid::Uuid::new_v4());
        let milestones: Vec<String> = params.milestones.iter().map(|m| m.trim().to_owned()).collect();
        let new = NewGoal {
            key: &key,
            title: params.title.trim(),
            description: params.description.trim(),
            category: &params.category.trim().to_lowercase(),
            milestones: &milestones,
        };
        self.store.create_goal(&new, None, None).await?.ok_or_else(|| CoreError::Conflict("The goal was not made; try again.".into()))
    }

    /// Pauses or resumes a goal with its open tasks and its schedules. A task that moved on
    /// while this ran is left as it is (its own controls still apply).
    pub async fn goal_control(&self, params: &GoalControlParams) -> Result<GoalView> {
        let id = &params.goal_id;
        let gone = || CoreError::NotFound(format!("There is no goal {id}."));
        self.store.goal(id).await?.ok_or_else(gone)?;
        let (status, control, schedule_action) = match params.action {
            GoalAction::Pause => (GoalStatus::Paused, TaskControl::Pause, ScheduleAction::Pause),
            GoalAction::Resume => (GoalStatus::Active, TaskControl::Resume, ScheduleAction::Resume),
        };
        // The goal first: from here on nothing new starts on it (delegate_task and
        // schedule_task refuse a paused goal).
        self.store.set_goal_status(id, status).await?;
        for task in self.store.goal_tasks(id).await? {
            let applies = allowed_controls(task.status).contains(&control.kind())
                // Resume only what a pause stopped, not a task paused for its own reasons
                // (a monitor that kept failing asks for the owner's look first).
                && !(control.kind() == ControlKind::Resume && task.outcome_uncertain)
                && !(control.kind() == ControlKind::Pause && task.status == TaskStatus::Paused);
            if !applies {
                continue;
            }
            let params = TaskControlParams {
                task_id: task.id.clone(),
                expected_status: task.status,
                expected_attempts: task.attempts,
                control: control.clone(),
            };
            if let Err(err) = self.tasks.control(&params).await {
                tracing::info!(task = %task.id, error = %err, "a goal's task moved on before its control");
            }
        }
        for schedule_id in self.store.goal_schedules(id).await? {
            let params = ScheduleControlParams { schedule_id, action: schedule_action };
            self.schedules.control(&params, crate::store::now_ms()).await?;
        }
        self.store.goal(id).await?.ok_or_else(gone)
    }
}
