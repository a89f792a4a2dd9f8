//! The Goals screen's operations. Pausing a goal stops new work on it first (the goal's status,
//! which the task and schedule inserts check), then pauses its active schedules and its open
//! tasks — each through its own control, so a running task's Stop fires — and records what it
//! paused; resuming brings back exactly that, not what the owner paused by hand or a monitor
//! that paused itself.

use hearth_protocol::goals::{
    GoalAction, GoalControlParams, GoalCreateParams, GoalListResponse, GoalMilestonesParams, GoalStatus, GoalView, MAX_MILESTONES,
    MilestoneChange,
};
use hearth_protocol::ids::{ScheduleId, TaskId};
use hearth_protocol::schedules::{ScheduleAction, ScheduleControlParams, ScheduleStatus};
use hearth_protocol::tasks::{ControlKind, TaskControl, TaskControlParams, TaskStatus, allowed_controls};

use super::Hearth;
use crate::error::{CoreError, Result};
use crate::store::goals::NewGoal;

/// How often a goal's Pause reads a task again when the task moved under it (a worker claimed
/// it, a run ended).
const PAUSE_TRIES: usize = 3;

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

    /// Pauses or resumes a goal with its work.
    pub async fn goal_control(&self, params: &GoalControlParams) -> Result<GoalView> {
        params.validate()?;
        let id = &params.goal_id;
        let gone = || CoreError::NotFound(format!("There is no goal {id}."));
        self.store.goal(id).await?.ok_or_else(gone)?;
        match params.action {
            GoalAction::Pause => self.pause_goal(id).await?,
            GoalAction::Resume => self.resume_goal(id).await?,
        }
        self.store.goal(id).await?.ok_or_else(gone)
    }

    /// Adds, renames or removes one of a goal's milestones. Positions never move (a task
    /// names the milestone it works on by position): an addition goes last, a removal leaves a
    /// gap, and a milestone that is done or that an unfinished task works on is not removed.
    pub async fn goal_milestones(&self, params: &GoalMilestonesParams) -> Result<GoalView> {
        params.validate()?;
        let id = &params.goal_id;
        let gone = || CoreError::NotFound(format!("There is no goal {id}."));
        self.store.goal(id).await?.ok_or_else(gone)?;
        match &params.change {
            MilestoneChange::Add { title } => {
                if !self.store.add_milestone(id, title.trim(), MAX_MILESTONES).await? {
                    return Err(CoreError::Conflict(format!("A goal has at most {MAX_MILESTONES} milestones.")));
                }
            }
            MilestoneChange::Rename { position, title } => {
                if !self.store.rename_milestone(id, *position, title.trim()).await? {
                    return Err(CoreError::NotFound(format!("This goal has no milestone {position}.")));
                }
            }
            MilestoneChange::Remove { position } => {
                if !self.store.remove_milestone(id, *position).await? {
                    return Err(CoreError::Conflict(format!(
                        "Milestone {position} is done, gone, or a task is working on it; it stays. Cancel that task first if it should go."
                    )));
                }
            }
        }
        self.store.goal(id).await?.ok_or_else(gone)
    }

    async fn pause_goal(&self, id: &str) -> Result<()> {
        self.store.set_goal_status(id, GoalStatus::Paused).await?;
        for schedule_id in self.store.goal_schedules(id).await? {
            let active = self.store.get_schedule(&schedule_id).await?.is_some_and(|s| s.status == ScheduleStatus::Active);
            if active {
                self.schedules
                    .control(
                        &ScheduleControlParams {
                            schedule_id: ScheduleId::trusted(schedule_id.as_str()),
                            action: ScheduleAction::Pause,
                            operation_id: None,
                        },
                        crate::store::now_ms(),
                    )
                    .await?;
                self.store.record_goal_paused(id, "schedule", &schedule_id).await?;
            }
        }
        for task in self.store.goal_tasks(id).await? {
            let mut current = task;
            for _ in 0..PAUSE_TRIES {
                if !allowed_controls(current.status).contains(&ControlKind::Pause) {
                    break;
                }
                match self.tasks.control(&as_seen(&current, TaskControl::Pause)).await {
                    Ok(_) => {
                        self.store.record_goal_paused(id, "task", &current.id).await?;
                        break;
                    }
                    // It moved (claimed, ended): look again.
                    Err(CoreError::Conflict(_)) => match self.store.get_task(&current.id).await? {
                        Some(now) => current = now,
                        None => break,
                    },
                    Err(err) => return Err(err),
                }
            }
        }
        Ok(())
    }

    async fn resume_goal(&self, id: &str) -> Result<()> {
        self.store.set_goal_status(id, GoalStatus::Active).await?;
        for (kind, item) in self.store.take_goal_paused(id).await? {
            if kind == "schedule" {
                let params = ScheduleControlParams {
                    schedule_id: ScheduleId::trusted(item.as_str()),
                    action: ScheduleAction::Resume,
                    operation_id: None,
                };
                if let Err(err) = self.schedules.control(&params, crate::store::now_ms()).await {
                    tracing::warn!(schedule = %item, error = %err, "a goal's schedule could not be resumed");
                }
                continue;
            }
            let Some(task) = self.store.get_task(&item).await? else { continue };
            if task.status != TaskStatus::Paused || task.outcome_uncertain {
                // Moved on since, or stopped with an effect in doubt: the owner reviews it.
                continue;
            }
            if let Err(err) = self.tasks.control(&as_seen(&task, TaskControl::Resume)).await {
                tracing::info!(task = %task.id, error = %err, "a goal's task moved on before its resume");
            }
        }
        Ok(())
    }
}

/// A control on the task as it was just read (its status and attempt): a task that moved since
/// is a conflict, not a surprise.
fn as_seen(task: &crate::store::tasks::TaskRow, control: TaskControl) -> TaskControlParams {
    TaskControlParams {
        task_id: TaskId::trusted(task.id.as_str()),
        expected_status: task.status,
        expected_attempts: task.attempts,
        control,
    }
}
