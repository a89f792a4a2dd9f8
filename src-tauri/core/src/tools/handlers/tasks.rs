//! The task tools: delegate_task, agent_status, set_plan, save_artifact, ask_user,
//! finish_task. Control tools change only Hearth's own bookkeeping — through the task desk
//! (create, list) or the run's fenced task context; save_artifact writes a file, so it is an
//! effect and runs inside the journal.

use hearth_protocol::ToolName;
use hearth_protocol::ids::TaskId;
use hearth_protocol::ipc::DelegateTaskResult;
use hearth_protocol::tasks::{PlanStep, StepStatus, TaskKind};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::mail::NoArgs;
use crate::journal::{EffectError, Receipt, ReceiptStatus};
use crate::tools::context::{StepId, ToolContext};
use crate::tools::traits::{DirectTool, EffectTool, Tool};
use crate::tools::{RunOutcome, ToolOutput};

const MAX_TITLE: usize = 200;
const MAX_TEXT: usize = 20_000;
const MAX_ARTIFACT_BYTES: usize = 1_000_000;
const MAX_PLAN_STEPS: usize = 20;

/// `delegate_task`'s arguments.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct DelegateTaskArgs {
    /// A short title for the task (at most 200 characters).
    pub title: String,
    /// What the task should do, in full.
    #[serde(default)]
    pub instructions: Option<String>,
    /// The goal it works on (from create_goal).
    #[serde(default)]
    pub goal_id: Option<String>,
    /// The milestone of that goal it completes (1-based); its success marks it done.
    #[serde(default)]
    pub milestone: Option<u32>,
}

/// `set_plan`'s arguments.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SetPlanArgs {
    /// 1 to 20 short step titles, in order.
    pub steps: Vec<String>,
}

/// `save_artifact`'s arguments.
#[derive(Deserialize, schemars::JsonSchema, serde::Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SaveArtifactArgs {
    /// A file name for the artifact.
    pub name: String,
    /// Its text (at most 1 MB).
    pub content: String,
}

/// `ask_user`'s arguments.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct AskUserArgs {
    /// The question for the owner.
    pub question: String,
}

/// `finish_task`'s arguments.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct FinishTaskArgs {
    /// What was done, for the owner.
    pub result: String,
}

fn checked_text(name: &str, text: &str, max: usize) -> Result<String, ToolOutput> {
    let text = text.trim();
    if text.is_empty() {
        return Err(ToolOutput::error(format!("`{name}` must not be empty.")));
    }
    if text.chars().count() > max {
        return Err(ToolOutput::error(format!("`{name}` is longer than {max} characters; shorten it.")));
    }
    Ok(text.to_owned())
}

/// `delegate_task`.
pub(crate) struct DelegateTask;

impl Tool for DelegateTask {
    const NAME: ToolName = ToolName::DelegateTask;
    const DESCRIPTION: &'static str = "Hand a job that takes longer than one reply to a durable background task the owner \
                                       can follow, pause and stop.";
    type Args = DelegateTaskArgs;
}

impl DirectTool for DelegateTask {
    async fn run(ctx: &ToolContext, step: &StepId, args: DelegateTaskArgs) -> ToolOutput {
        let title = match checked_text("title", &args.title, MAX_TITLE) {
            Ok(t) => t,
            Err(e) => return e,
        };
        let instructions = args.instructions.unwrap_or_else(|| title.clone());
        if ctx.cancel.is_cancelled() {
            return ToolOutput::error("The run was stopped, so no task was delegated.");
        }
        // One task per step, however often the step is retried; a changed job is a conflict. A
        // task's run delegates only while it holds its lease (checked in the insert itself).
        let goal_id = match super::goals::active_goal(ctx, args.goal_id.as_deref(), args.milestone).await {
            Ok(goal) => goal,
            Err(refused) => return refused,
        };
        let key = ctx.scope.key(step).joined();
        let mut input = json!({ "title": title, "instructions": instructions });
        // Asked for after the agent read content from outside the owner, and approved on its
        // card: the task's runs start from that, not from the owner's own words.
        let outside = ctx.scope.approved_sources();
        if !outside.is_empty() {
            input["outsideSources"] = json!(outside);
        }
        if let Some(goal) = goal_id {
            input["goalId"] = json!(goal);
            if let Some(milestone) = args.milestone {
                input["milestone"] = json!(milestone);
            }
        }
        let fence = ctx.scope.task().map(|t| t.fence());
        match ctx.desk.create(&key, TaskKind::Agent, &title, &input, ctx.scope.thread_id(), fence, ctx.scope.chat_run()).await {
            Ok(task) => {
                let result = DelegateTaskResult { task_id: TaskId::trusted(task.id), title: task.title, status: task.status };
                ToolOutput::ok(&serde_json::to_value(result).unwrap_or_default())
            }
            Err(err) => ToolOutput::error(err.to_string()),
        }
    }
}

/// `agent_status`.
pub(crate) struct AgentStatus;

impl Tool for AgentStatus {
    const NAME: ToolName = ToolName::AgentStatus;
    const DESCRIPTION: &'static str = "Report the state of Hearth's tasks.";
    type Args = NoArgs;
}

impl DirectTool for AgentStatus {
    async fn run(ctx: &ToolContext, _step: &StepId, _args: NoArgs) -> ToolOutput {
        match ctx.desk.list(&ctx.store, 20).await {
            Ok(tasks) => {
                let tasks: Vec<Value> = tasks
                    .iter()
                    .map(|t| json!({ "taskId": t.id, "title": t.title, "status": t.status.as_str(), "question": t.question }))
                    .collect();
                ToolOutput::ok(&json!({ "tasks": tasks }))
            }
            Err(err) => ToolOutput::error(err.to_string()),
        }
    }
}

/// `set_plan`.
pub(crate) struct SetPlan;

impl Tool for SetPlan {
    const NAME: ToolName = ToolName::SetPlan;
    const DESCRIPTION: &'static str = "Set the current task's plan (inside a task only).";
    type Args = SetPlanArgs;
}

impl DirectTool for SetPlan {
    async fn run(ctx: &ToolContext, _step: &StepId, args: SetPlanArgs) -> ToolOutput {
        let Some(task) = ctx.scope.task() else { return ToolOutput::error("set_plan works only inside a task.") };
        let steps = args.steps;
        if steps.is_empty() || steps.len() > MAX_PLAN_STEPS {
            return ToolOutput::error(format!("A plan has 1 to {MAX_PLAN_STEPS} steps."));
        }
        let mut plan = Vec::with_capacity(steps.len());
        for step in &steps {
            let title = step.trim();
            if title.is_empty() || title.chars().count() > MAX_TITLE {
                return ToolOutput::error(format!("Each step is a non-empty string of at most {MAX_TITLE} characters."));
            }
            plan.push(PlanStep { title: title.to_owned(), status: StepStatus::Pending });
        }
        match task.set_plan(&plan).await {
            Ok(()) => ToolOutput::ok(&json!({ "steps": plan.len() })),
            Err(err) => ToolOutput::error(err.to_string()),
        }
    }
}

/// `save_artifact`.
pub(crate) struct SaveArtifact;

impl Tool for SaveArtifact {
    const NAME: ToolName = ToolName::SaveArtifact;
    const DESCRIPTION: &'static str = "Save a text artifact of the current task (inside a task only).";
    type Args = SaveArtifactArgs;
}

impl EffectTool for SaveArtifact {
    fn action(args: &SaveArtifactArgs) -> Result<Value, ToolOutput> {
        let name = sanitize_file_name(&checked_text("name", &args.name, 180)?);
        if args.content.len() > MAX_ARTIFACT_BYTES {
            return Err(ToolOutput::error(format!("The artifact is larger than {MAX_ARTIFACT_BYTES} bytes; save a summary instead.")));
        }
        Ok(json!({ "name": name, "content": args.content }))
    }

    async fn perform(ctx: ToolContext, args: SaveArtifactArgs, cancel: CancellationToken) -> Result<Value, EffectError> {
        let Some(task) = ctx.scope.task() else {
            return Err(EffectError::Failed("save_artifact works only inside a task.".into()));
        };
        let name = sanitize_file_name(args.name.trim());
        let dir = ctx.store.path().parent().map(|p| p.join("artifacts")).unwrap_or_default();
        // A fresh file per dispatch; the journal makes each step dispatch once.
        let short = task.task().id.chars().take(12).collect::<String>();
        let path = dir.join(format!("{short}-{}-{name}", uuid::Uuid::new_v4().simple()));
        if cancel.is_cancelled() {
            return Err(EffectError::Failed("Stopped before the artifact was written.".into()));
        }
        let content = args.content;
        let written = {
            let path = path.clone();
            // Written to a temporary file and renamed into place: a failed write leaves nothing.
            tokio::task::spawn_blocking(move || crate::files::write_private(&path, content.as_bytes()).map(|()| content.len()))
                .await
                .map_err(|e| EffectError::Uncertain(format!("the write was cut off ({e})")))?
        };
        match written {
            Ok(bytes) => Ok(json!({ "name": name, "path": path.to_string_lossy(), "bytes": bytes })),
            Err(err) => Err(EffectError::Failed(format!("Hearth could not write the artifact {name}: {err}"))),
        }
    }

    async fn present(ctx: &ToolContext, receipt: Result<Receipt, String>) -> ToolOutput {
        match receipt {
            Ok(r) if r.status == ReceiptStatus::Succeeded => {
                let name = r.value.get("name").and_then(Value::as_str).unwrap_or("artifact").to_owned();
                if let Some(task) = ctx.scope.task()
                    && let Err(err) = task.checkpoint(&json!({ "artifacts": { name: r.value.clone() } })).await
                {
                    return ToolOutput::error(err.to_string());
                }
                ToolOutput::ok(&r.value)
            }
            other => crate::tools::traits::present_receipt(other),
        }
    }
}

/// `ask_user`.
pub(crate) struct AskUser;

impl Tool for AskUser {
    const NAME: ToolName = ToolName::AskUser;
    const DESCRIPTION: &'static str = "Ask the owner a question; the task waits for the answer.";
    type Args = AskUserArgs;
}

impl DirectTool for AskUser {
    async fn run(ctx: &ToolContext, _step: &StepId, args: AskUserArgs) -> ToolOutput {
        match checked_text("question", &args.question, MAX_TEXT) {
            Ok(question) => {
                // A plain question: no options of an earlier choice may show under it.
                if let Some(task) = ctx.scope.task()
                    && let Err(err) = task.checkpoint(&json!({ "choices": null })).await
                {
                    return ToolOutput::error(err.to_string());
                }
                ToolOutput { outcome: Some(RunOutcome::WaitingInput(question.clone())), ..ToolOutput::ok(&json!({ "asked": question })) }
            }
            Err(e) => e,
        }
    }
}

/// `finish_task`.
pub(crate) struct FinishTask;

impl Tool for FinishTask {
    const NAME: ToolName = ToolName::FinishTask;
    const DESCRIPTION: &'static str = "Finish the current task with a result for the owner.";
    type Args = FinishTaskArgs;
}

impl DirectTool for FinishTask {
    async fn run(_ctx: &ToolContext, _step: &StepId, args: FinishTaskArgs) -> ToolOutput {
        match checked_text("result", &args.result, MAX_TEXT) {
            Ok(result) => ToolOutput { outcome: Some(RunOutcome::Finished(result)), ..ToolOutput::ok(&json!({ "finished": true })) },
            Err(e) => e,
        }
    }
}

/// Letters, digits, `.`, `-`, `_` and spaces; nothing that walks out of the folder. Being an
/// allow-list it also drops every bidi or other format (`Cf`) character that would disguise a
/// name: none is alphanumeric (checked in `files::name`'s tests). Not `files::sanitize_file_name`,
/// which makes every name a `.pdf`.
fn sanitize_file_name(name: &str) -> String {
    let clean: String = name.chars().map(|c| if c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | ' ') { c } else { '_' }).collect();
    let clean = clean.trim_start_matches('.').trim();
    if clean.is_empty() { "artifact".to_owned() } else { clean.chars().take(180).collect() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_stay_in_their_folder() {
        assert_eq!(sanitize_file_name("../../etc/passwd"), "_.._etc_passwd");
        assert_eq!(sanitize_file_name("notes.md"), "notes.md");
        assert_eq!(sanitize_file_name("..."), "artifact");
        assert_eq!(sanitize_file_name("a/b\\c"), "a_b_c");
        let disguised = sanitize_file_name("invoice\u{202E}fdp.exe");
        assert!(!disguised.contains('\u{202E}'), "{disguised:?}");
        assert_eq!(disguised, "invoice_fdp.exe");
        assert_eq!(sanitize_file_name("\u{FEFF}notes\u{200B}\u{2066}.md"), "_notes__.md");
    }
}
