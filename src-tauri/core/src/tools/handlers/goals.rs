//! create_goal, and the check delegate_task and schedule_task make of a goal they name. A
//! Control tool: goals are Hearth's own bookkeeping, keyed by step, fenced like a delegated
//! task. Only the owner pauses or resumes a goal (the Goals screen).

use hearth_protocol::ToolName;
use hearth_protocol::goals::{GoalCreateParams, GoalStatus};
use serde::Deserialize;

use crate::store::goals::NewGoal;
use crate::tools::ToolOutput;
use crate::tools::context::{StepId, ToolContext};
use crate::tools::traits::{DirectTool, Tool};

/// `create_goal`'s arguments.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateGoalArgs {
    /// A short title (at most 200 characters).
    pub title: String,
    /// What the goal is about (at most 2,000 characters).
    #[serde(default)]
    pub description: Option<String>,
    /// One word to group goals by: health, money, home, work, learning…
    #[serde(default)]
    pub category: Option<String>,
    /// Up to 20 milestone titles, in order; a task delegated with this goal and a milestone's
    /// number marks it done when it succeeds.
    #[serde(default)]
    pub milestones: Vec<String>,
}

/// `create_goal`.
pub(crate) struct CreateGoal;

impl Tool for CreateGoal {
    const NAME: ToolName = ToolName::CreateGoal;
    const DESCRIPTION: &'static str = "Record a goal the owner is working towards, with up to 20 milestones. Delegate tasks or \
                                       schedule jobs with its goalId (and a milestone number) so the owner follows them on \
                                       the Goals screen; a task that succeeds marks its milestone done.";
    type Args = CreateGoalArgs;
}

impl DirectTool for CreateGoal {
    async fn run(ctx: &ToolContext, step: &StepId, args: CreateGoalArgs) -> ToolOutput {
        let params = GoalCreateParams {
            title: args.title.trim().to_owned(),
            description: args.description.unwrap_or_default().trim().to_owned(),
            category: args.category.unwrap_or_default().trim().to_lowercase(),
            milestones: args.milestones.iter().map(|m| m.trim().to_owned()).collect(),
        };
        if let Err(err) = params.validate() {
            return ToolOutput::error(err.message);
        }
        if ctx.cancel.is_cancelled() {
            return ToolOutput::error("The run was stopped, so no goal was recorded.");
        }
        let key = ctx.scope.key(step).joined();
        let new = NewGoal {
            key: &key,
            title: &params.title,
            description: &params.description,
            category: &params.category,
            milestones: &params.milestones,
        };
        let fence = ctx.scope.task().map(|t| t.fence());
        match ctx.desk.create_goal(&new, fence, ctx.scope.chat_run()).await {
            Ok(Some(goal)) => {
                let same = goal.title == params.title
                    && goal.description == params.description
                    && goal.category == params.category
                    && goal.milestones.iter().map(|m| m.title.as_str()).eq(params.milestones.iter().map(String::as_str));
                if !same {
                    return ToolOutput::error(format!("A different goal was already recorded for this step (\"{}\").", goal.title));
                }
                ToolOutput::ok(&serde_json::to_value(goal).unwrap_or_default())
            }
            Ok(None) => ToolOutput::error("This run no longer holds its task or conversation, so no goal was recorded."),
            Err(err) => ToolOutput::error(err.to_string()),
        }
    }
}

/// The goal a delegate_task or schedule_task call names, if it names one: it must exist, be
/// active, and have the milestone given. `Err` is the tool's answer.
pub(crate) async fn active_goal(ctx: &ToolContext, goal_id: Option<&str>, milestone: Option<u32>) -> Result<Option<String>, ToolOutput> {
    let Some(goal_id) = goal_id.map(str::trim).filter(|g| !g.is_empty()) else {
        return match milestone {
            Some(_) => Err(ToolOutput::error("A milestone belongs to a goal: give its goalId too.")),
            None => Ok(None),
        };
    };
    let goal = match ctx.store.goal(goal_id).await {
        Ok(Some(goal)) => goal,
        Ok(None) => return Err(ToolOutput::error(format!("There is no goal {goal_id}; use create_goal first."))),
        Err(err) => return Err(ToolOutput::error(err.to_string())),
    };
    if goal.status == GoalStatus::Paused {
        return Err(ToolOutput::error(format!(
            "The goal \"{}\" is paused by the owner; nothing new starts on it until they resume it.",
            goal.title
        )));
    }
    if let Some(m) = milestone
        && !goal.milestones.iter().any(|ms| ms.position == m)
    {
        let numbers: Vec<String> = goal.milestones.iter().map(|ms| ms.position.to_string()).collect();
        return Err(ToolOutput::error(format!("The goal \"{}\" has milestones {}.", goal.title, numbers.join(", "))));
    }
    Ok(Some(goal.id))
}
