//! The document task's handler.

use hearth_protocol::ToolName;
use hearth_protocol::approvals::{PrepareResult, ProposalStatus};
use hearth_protocol::files::FileView;
use hearth_protocol::pdf::{FieldValues, PdfField};
use hearth_protocol::tasks::{PlanStep, StepStatus, TaskEventKind};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::answer::parse_answer;
use crate::approvals::normalize_address;
use crate::files::FileStore;
use crate::journal::action_hash;
use crate::tasks::{BoxTaskFuture, TaskContext, TaskError, TaskHandler, TaskOutcome};
use crate::tools::{StepId, ToolContext, ToolOutput, Toolbox, call, typed};

/// What a document task starts from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentInput {
    /// The message carrying the form.
    pub message_id: String,
    /// Values to fill, when already known (otherwise the task asks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<FieldValues>,
}

/// The reply's default body.
const REPLY_BODY: &str = "Hello,\n\nPlease find the completed form attached.\n\nBest regards";

/// Runs document tasks. Every step that does something — import, fill, the reply's
/// proposal — is a call through the one tool dispatch, under a step name the task owns
/// (`import`, `fill:<values hash>`, `reply:<generation>`), so a Pause, a crash or a Retry
/// finds the receipt of what already happened instead of doing it again.
#[derive(Debug, Clone)]
pub struct DocumentTask {
    files: FileStore,
    tools: Toolbox,
}

impl DocumentTask {
    /// A handler reading forms through `files` and acting through the tools of `tools`.
    pub fn new(files: FileStore, tools: Toolbox) -> Self {
        Self { files, tools }
    }
}

impl TaskHandler for DocumentTask {
    fn run(&self, ctx: TaskContext) -> BoxTaskFuture {
        let this = self.clone();
        Box::pin(async move {
            match this.advance(&ctx).await {
                Ok(outcome) => outcome,
                Err(TaskError::Cancelled | TaskError::Fenced { .. }) => TaskOutcome::Stopped,
                Err(err) => TaskOutcome::Failed(err.to_string()),
            }
        })
    }
}

/// A step that ends the run early with an outcome.
enum Step<T> {
    Go(T),
    End(TaskOutcome),
}

impl DocumentTask {
    async fn advance(&self, ctx: &TaskContext) -> Result<TaskOutcome, TaskError> {
        ctx.guard().await?;
        let input: DocumentInput = match serde_json::from_value(ctx.task().input.clone()) {
            Ok(input) => input,
            Err(err) => return Ok(TaskOutcome::Failed(format!("This document task's input is unreadable ({err})."))),
        };
        let store = ctx.task_store();
        let Some(message) = store.get_message(&input.message_id).await? else {
            return Ok(TaskOutcome::Failed(format!("The message {} is no longer in the mailbox.", input.message_id)));
        };
        let attachments = store.message_attachments(&message.id).await?;
        let Some(attachment) =
            attachments.iter().find(|a| a.mime_type == "application/pdf" || a.filename.to_ascii_lowercase().ends_with(".pdf"))
        else {
            return Ok(TaskOutcome::Failed(format!("The message \"{}\" has no PDF attachment.", message.subject)));
        };
        self.plan(ctx, 0).await?;
        let tools = self.tools.for_task(ctx.clone()).for_workflow();

        let original = match self.import(ctx, &tools, &attachment.id).await? {
            Step::Go(file) => file,
            Step::End(outcome) => return Ok(outcome),
        };
        let detail = self.files.detail(&original.id).await?;
        let fields: Vec<PdfField> = detail.info.fields.into_iter().filter(|f| f.kind.is_fillable()).collect();
        let state = current_state(ctx).await?;
        let values = match values(&input, &state, &fields) {
            Ok(values) => values,
            Err(question) => return Ok(TaskOutcome::WaitingInput(question)),
        };
        self.plan(ctx, 1).await?;

        let filled = match self.fill(ctx, &tools, &original.id, &values).await? {
            Step::Go(file) => file,
            Step::End(outcome) => return Ok(outcome),
        };
        self.plan(ctx, 2).await?;

        let generation = state.get("replyGeneration").and_then(Value::as_u64).unwrap_or(0);
        let sender = match normalize_address(&message.from) {
            Ok(address) => address,
            Err(why) => return Ok(TaskOutcome::Failed(format!("The sender's address cannot be replied to: {why}"))),
        };
        let subject = if message.subject.to_ascii_lowercase().starts_with("re:") {
            message.subject.clone()
        } else {
            format!("Re: {}", message.subject)
        };
        let args = typed::EmailArgs {
            to: vec![sender],
            subject,
            body: REPLY_BODY.into(),
            attachment_ids: vec![filled.id.into_string()],
            thread_id: Some(message.thread_id),
            reply_to_message_id: Some(message.id),
            ..typed::EmailArgs::default()
        };
        let output = call::<typed::PrepareEmail>(&tools, args, StepId::Named(format!("reply:{generation}"))).await;
        let prepared: PrepareResult = match parse_output(ctx, output, "prepare the reply")? {
            Step::Go(prepared) => prepared,
            Step::End(outcome) => return Ok(outcome),
        };
        let proposal = self.tools.proposer().current(&prepared.proposal_id).await?;
        Ok(match proposal.status {
            ProposalStatus::AwaitingReview | ProposalStatus::Leaving | ProposalStatus::Executing => {
                self.plan(ctx, 3).await?;
                ctx.event(TaskEventKind::Observation, "The reply is ready for your review in Approvals.").await?;
                TaskOutcome::WaitingApproval(proposal.id)
            }
            ProposalStatus::Succeeded => {
                self.plan(ctx, 5).await?;
                TaskOutcome::Succeeded(proposal.receipt.unwrap_or_else(|| "Sent.".into()))
            }
            ProposalStatus::OutcomeUnknown => TaskOutcome::Failed(format!(
                "Sending the reply may or may not have happened ({}). Check Sent mail before sending it again.",
                proposal.error.unwrap_or_default()
            )),
            ended @ (ProposalStatus::Denied | ProposalStatus::Undone | ProposalStatus::Expired | ProposalStatus::Failed) => {
                // Retry prepares a fresh reply for a fresh review.
                ctx.checkpoint(&json!({ "replyGeneration": generation + 1 })).await?;
                let why = match ended {
                    ProposalStatus::Denied => match proposal.error.as_deref() {
                        Some(why) if !why.starts_with("Denied by you") => format!("The reply was withdrawn ({why})"),
                        _ => "You denied the reply".to_owned(),
                    },
                    ProposalStatus::Expired => "The reply expired before it was approved".to_owned(),
                    ProposalStatus::Undone => match proposal.error.as_deref() {
                        Some(why) if !why.starts_with("Undone by you") => format!("The reply was taken back before it left ({why})"),
                        _ => "You undid the reply before it left".to_owned(),
                    },
                    _ => format!("Sending failed ({})", proposal.error.unwrap_or_default()),
                };
                TaskOutcome::Failed(format!("{why}, so nothing was sent. Retry to prepare it again."))
            }
        })
    }

    async fn import(&self, ctx: &TaskContext, tools: &ToolContext, attachment_id: &str) -> Result<Step<FileView>, TaskError> {
        let args = typed::ImportArgs { attachment_id: attachment_id.to_owned() };
        let output = call::<typed::ImportPdf>(tools, args, StepId::Named("import".into())).await;
        parse_output(ctx, output, "import the form")
    }

    async fn fill(
        &self,
        ctx: &TaskContext,
        tools: &ToolContext,
        original: &str,
        values: &FieldValues,
    ) -> Result<Step<FileView>, TaskError> {
        // Same values, same copy: a new answer fills a new copy, a replay never does. (The key
        // hashes the arguments as JSON, as it always has, so a task checkpointed by an earlier
        // Hearth keeps its key.)
        let step = format!("fill:{}", &action_hash(ToolName::FillPdf.as_str(), &json!({ "fileId": original, "values": values }))[..16]);
        let args = typed::FillArgs { file_id: original.to_owned(), values: values.clone() };
        let output = call::<typed::FillPdf>(tools, args, StepId::Named(step)).await;
        let step = parse_output::<FileView>(ctx, output, "fill the form")?;
        if let Step::Go(file) = &step {
            ctx.checkpoint(&json!({ "filledFileId": file.id })).await?;
        }
        Ok(step)
    }

    async fn plan(&self, ctx: &TaskContext, done: usize) -> Result<(), TaskError> {
        let titles = ["Import the PDF form", "Fill a copy", "Prepare the reply", "Your approval", "Sent"];
        let plan: Vec<PlanStep> = titles
            .iter()
            .enumerate()
            .map(|(i, title)| PlanStep {
                title: (*title).to_owned(),
                status: match i.cmp(&done) {
                    std::cmp::Ordering::Less => StepStatus::Done,
                    std::cmp::Ordering::Equal => StepStatus::Active,
                    std::cmp::Ordering::Greater => StepStatus::Pending,
                },
            })
            .collect();
        if ctx.task().plan != plan {
            ctx.set_plan(&plan).await?;
        }
        Ok(())
    }
}

async fn current_state(ctx: &TaskContext) -> Result<Value, TaskError> {
    Ok(ctx.task_store().get_task(&ctx.task().id).await?.map(|t| t.state).unwrap_or_else(|| json!({})))
}

/// The values to fill: from the input, else from the owner's answer; otherwise the question.
fn values(input: &DocumentInput, state: &Value, fields: &[PdfField]) -> Result<FieldValues, String> {
    if let Some(values) = &input.values {
        return Ok(values.clone());
    }
    let listing: Vec<String> = fields
        .iter()
        .map(|f| match f.kind {
            hearth_protocol::pdf::FieldKind::Checkbox => format!("{}: yes/no", f.name),
            _ if !f.options.is_empty() => format!("{}: one of {}", f.name, f.options.join(" / ")),
            _ => format!("{}: …", f.name),
        })
        .collect();
    let ask = format!("Which values should go in the form? Answer with one line per field:\n{}", listing.join("\n"));
    match state.get("answer").and_then(Value::as_str) {
        None => Err(ask),
        Some(answer) => parse_answer(answer, fields).map_err(|why| format!("{why}\n\n{ask}")),
    }
}

/// A tool's output as this workflow needs it: the typed result, or the run's end. A call
/// refused because the run was stopped or fenced ends the run without recording anything;
/// any other refusal fails the task with the tool's own words.
fn parse_output<T: serde::de::DeserializeOwned>(ctx: &TaskContext, output: ToolOutput, what: &str) -> Result<Step<T>, TaskError> {
    if output.is_error {
        if ctx.cancel_token().is_cancelled() {
            return Ok(Step::End(TaskOutcome::Stopped));
        }
        let message = serde_json::from_str::<Value>(&output.content)
            .ok()
            .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or(output.content);
        return Ok(Step::End(TaskOutcome::Failed(format!("Hearth could not {what}: {message}"))));
    }
    Ok(match serde_json::from_str::<T>(&output.content) {
        Ok(value) => Step::Go(value),
        Err(err) => Step::End(TaskOutcome::Failed(format!("Hearth could not read back what it did to {what} ({err})."))),
    })
}
