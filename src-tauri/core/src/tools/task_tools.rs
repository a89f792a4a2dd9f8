//! The task tools: delegate_task, agent_status, set_plan, save_artifact, ask_user,
//! finish_task, read_workspace.

use hearth_protocol::ToolName;
use hearth_protocol::ipc::DelegateTaskResult;
use hearth_protocol::tasks::{PlanStep, StepStatus, TaskKind};
use serde_json::{Value, json};

use super::specs::{AskUserArgs, DelegateTaskArgs, FinishTaskArgs, SaveArtifactArgs, SetPlanArgs};
use super::{RunOutcome, ToolCall, ToolContext, ToolFuture, ToolOutput, parse_args};
use crate::journal::{EffectError, ReceiptStatus};
use crate::store::tasks::NewTask;

const MAX_TITLE: usize = 200;
const MAX_TEXT: usize = 20_000;
const MAX_ARTIFACT_BYTES: usize = 1_000_000;
const MAX_PLAN_STEPS: usize = 20;

/// Runs the task tools; `None` for any other tool.
pub fn task_tool_handler(tool: ToolName, ctx: ToolContext, call: ToolCall, args: Value) -> Option<ToolFuture> {
    let run: ToolFuture = match tool {
        ToolName::DelegateTask => Box::pin(delegate_task(ctx, call, args)),
        ToolName::AgentStatus => Box::pin(agent_status(ctx)),
        ToolName::SetPlan => Box::pin(set_plan(ctx, args)),
        ToolName::SaveArtifact => Box::pin(save_artifact(ctx, call, args)),
        ToolName::AskUser => Box::pin(async move { ask_user(args) }),
        ToolName::FinishTask => Box::pin(async move { finish_task(args) }),
        ToolName::ReadWorkspace => Box::pin(read_workspace(ctx)),
        _ => return None,
    };
    Some(run)
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

async fn delegate_task(ctx: ToolContext, call: ToolCall, args: Value) -> ToolOutput {
    let args: DelegateTaskArgs = match parse_args(ToolName::DelegateTask, args) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let title = match checked_text("title", &args.title, MAX_TITLE) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let instructions = args.instructions.unwrap_or_else(|| title.clone());
    // One task per call, however often the call is retried.
    let scope = ctx.thread_id.clone().or_else(|| ctx.task.as_ref().map(|t| t.task().id.clone())).unwrap_or_default();
    let key = format!("{scope}:{}", call.id);
    let input = json!({ "title": title, "instructions": instructions });
    match ctx
        .tasks
        .create(NewTask { idempotency_key: &key, kind: TaskKind::Agent, title: &title, input: &input, thread_id: ctx.thread_id.as_deref() })
        .await
    {
        Ok(task) => {
            let result = DelegateTaskResult { task_id: task.id, title: task.title, status: task.status };
            ToolOutput::ok(&serde_json::to_value(result).unwrap_or_default())
        }
        Err(err) => ToolOutput::error(err.to_string()),
    }
}

async fn agent_status(ctx: ToolContext) -> ToolOutput {
    match ctx.store.list_tasks(20).await {
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

async fn set_plan(ctx: ToolContext, args: Value) -> ToolOutput {
    let Some(task) = ctx.task else { return ToolOutput::error("set_plan works only inside a task.") };
    let steps = match parse_args::<SetPlanArgs>(ToolName::SetPlan, args) {
        Ok(a) => a.steps,
        Err(e) => return e,
    };
    if steps.is_empty() || steps.len() > MAX_PLAN_STEPS {
        return ToolOutput::error(format!("A plan has 1 to {MAX_PLAN_STEPS} steps."));
    }
    let mut plan = Vec::with_capacity(steps.len());
    for step in &steps {
        match Some(step.trim()) {
            Some(title) if !title.is_empty() && title.chars().count() <= MAX_TITLE => {
                plan.push(PlanStep { title: title.to_owned(), status: StepStatus::Pending });
            }
            _ => return ToolOutput::error(format!("Each step is a non-empty string of at most {MAX_TITLE} characters.")),
        }
    }
    match task.set_plan(&plan).await {
        Ok(()) => ToolOutput::ok(&json!({ "steps": plan.len() })),
        Err(err) => ToolOutput::error(err.to_string()),
    }
}

async fn save_artifact(ctx: ToolContext, call: ToolCall, args: Value) -> ToolOutput {
    let Some(task) = ctx.task else { return ToolOutput::error("save_artifact works only inside a task.") };
    let args: SaveArtifactArgs = match parse_args(ToolName::SaveArtifact, args) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let name = match checked_text("name", &args.name, 180) {
        Ok(n) => sanitize_file_name(&n),
        Err(e) => return e,
    };
    let content = args.content.as_str();
    if content.len() > MAX_ARTIFACT_BYTES {
        return ToolOutput::error(format!("The artifact is larger than {MAX_ARTIFACT_BYTES} bytes; save a summary instead."));
    }
    let dir = ctx.store.path().parent().map(|p| p.join("artifacts")).unwrap_or_default();
    let path = dir.join(format!("{}-{name}", &call.id.chars().filter(char::is_ascii_alphanumeric).take(24).collect::<String>()));
    let action = json!({ "name": name, "content": content, "path": path.to_string_lossy() });
    let content = content.to_owned();
    let receipt = task
        .effect(&call.id, ToolName::SaveArtifact.as_str(), &action, |_| async move {
            write_private(&dir, &path, content.as_bytes()).map_err(|e| EffectError::Failed(e.to_string()))?;
            Ok(json!({ "path": path.to_string_lossy(), "bytes": content.len() }))
        })
        .await;
    match receipt {
        Ok(r) if r.status == ReceiptStatus::Succeeded => {
            let recorded = task.checkpoint(&json!({ "artifacts": { name.clone(): r.value.clone() } })).await;
            match recorded {
                Ok(()) => ToolOutput::ok(&r.value),
                Err(err) => ToolOutput::error(err.to_string()),
            }
        }
        Ok(r) => ToolOutput::error(format!("The artifact was not saved: {}", r.value)),
        Err(err) => ToolOutput::error(err.to_string()),
    }
}

fn ask_user(args: Value) -> ToolOutput {
    let args: AskUserArgs = match parse_args(ToolName::AskUser, args) {
        Ok(a) => a,
        Err(e) => return e,
    };
    match checked_text("question", &args.question, MAX_TEXT) {
        Ok(question) => ToolOutput {
            outcome: Some(RunOutcome::WaitingInput(question.clone())),
            ..ToolOutput::ok(&json!({ "asked": question }))
        },
        Err(e) => e,
    }
}

fn finish_task(args: Value) -> ToolOutput {
    let args: FinishTaskArgs = match parse_args(ToolName::FinishTask, args) {
        Ok(a) => a,
        Err(e) => return e,
    };
    match checked_text("result", &args.result, MAX_TEXT) {
        Ok(result) => ToolOutput { outcome: Some(RunOutcome::Finished(result)), ..ToolOutput::ok(&json!({ "finished": true })) },
        Err(e) => e,
    }
}

async fn read_workspace(ctx: ToolContext) -> ToolOutput {
    let inbox = ctx.store.inbox().await;
    let attachments = ctx.store.attachments().await;
    let events = ctx.store.calendar_range(crate::store::now_ms(), i64::MAX, 5).await;
    match (inbox, attachments, events) {
        (Ok(inbox), Ok(attachments), Ok(events)) => {
            let latest: Vec<Value> =
                inbox.iter().take(5).map(|m| json!({ "from": m.from, "subject": m.subject, "threadId": m.thread_id })).collect();
            let files: Vec<Value> = attachments.iter().map(|a| json!({ "attachmentId": a.id, "name": a.filename })).collect();
            let upcoming: Vec<Value> = events.iter().map(|e| json!({ "title": e.title, "startsAt": e.starts_at })).collect();
            // Mail content is data from outside, never instructions.
            ToolOutput::ok(&json!({
                "untrustedData": true,
                "inbox": { "messages": inbox.len(), "latest": latest },
                "attachments": files,
                "upcoming": upcoming,
            }))
        }
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => ToolOutput::error(e.to_string()),
    }
}

/// Letters, digits, `.`, `-`, `_` and spaces; nothing that walks out of the folder.
fn sanitize_file_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| if c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | ' ') { c } else { '_' })
        .collect();
    let clean = clean.trim_start_matches('.').trim();
    if clean.is_empty() { "artifact".to_owned() } else { clean.chars().take(180).collect() }
}

fn write_private(dir: &std::path::Path, path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
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
    }
}
