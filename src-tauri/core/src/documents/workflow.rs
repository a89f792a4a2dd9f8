//! The document task's handler.

use hearth_protocol::ToolName;
use hearth_protocol::approvals::{DraftAttachment, EmailDraft, ProposalDraft, ProposalStatus};
use hearth_protocol::files::FileView;
use hearth_protocol::pdf::{FieldValues, PdfField};
use hearth_protocol::tasks::{PlanStep, StepStatus, TaskEventKind};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::answer::parse_answer;
use crate::approvals::{ApprovalGate, normalize_address};
use crate::files::FileStore;
use crate::journal::{EffectError, ReceiptStatus, action_hash};
use crate::store::tasks::task_scope;
use crate::tasks::{BoxTaskFuture, TaskContext, TaskError, TaskHandler, TaskOutcome};

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

/// Runs document tasks.
#[derive(Debug, Clone)]
pub struct DocumentTask {
    files: FileStore,
    approvals: ApprovalGate,
}

impl DocumentTask {
    /// A handler filling through `files` and proposing through `approvals`.
    pub fn new(files: FileStore, approvals: ApprovalGate) -> Self {
        Self { files, approvals }
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
        let Some(attachment) = attachments
            .iter()
            .find(|a| a.mime_type == "application/pdf" || a.filename.to_ascii_lowercase().ends_with(".pdf"))
        else {
            return Ok(TaskOutcome::Failed(format!("The message \"{}\" has no PDF attachment.", message.subject)));
        };
        self.plan(ctx, 0).await?;

        let original = match self.import(ctx, &attachment.id).await? {
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

        let filled = match self.fill(ctx, &original.id, &values).await? {
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
        let draft = ProposalDraft::EmailSend(EmailDraft {
            to: vec![sender],
            cc: vec![],
            bcc: vec![],
            subject,
            body: REPLY_BODY.to_owned(),
            attachments: vec![DraftAttachment {
                file_id: filled.id.clone(),
                name: filled.name.clone(),
                size: filled.size,
                sha256: filled.sha256.clone(),
            }],
            thread_id: Some(message.thread_id.clone()),
            in_reply_to: Some(message.id.clone()),
        });
        ctx.guard().await?;
        let key = format!("{}:reply:{generation}", task_scope(&ctx.task().id));
        let proposal = self.approvals.prepare(&key, Some(&ctx.task().id), draft).await?;
        Ok(match proposal.status {
            ProposalStatus::AwaitingReview | ProposalStatus::Executing => {
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
            ended @ (ProposalStatus::Denied | ProposalStatus::Expired | ProposalStatus::Failed) => {
                // Retry prepares a fresh reply for a fresh review.
                ctx.checkpoint(&json!({ "replyGeneration": generation + 1 })).await?;
                let why = match ended {
                    ProposalStatus::Denied => "You denied the reply".to_owned(),
                    ProposalStatus::Expired => "The reply expired before it was approved".to_owned(),
                    _ => format!("Sending failed ({})", proposal.error.unwrap_or_default()),
                };
                TaskOutcome::Failed(format!("{why}, so nothing was sent. Retry to prepare it again."))
            }
        })
    }

    async fn import(&self, ctx: &TaskContext, attachment_id: &str) -> Result<Step<FileView>, TaskError> {
        let files = self.files.clone();
        let approvals = self.approvals.clone();
        let attachment = attachment_id.to_owned();
        let receipt = ctx
            .effect("import", ToolName::ImportPdf.as_str(), &json!({ "attachmentId": attachment_id }), |_| async move {
                let (info, bytes) = approvals.workspace().fetch_attachment(&attachment).await.map_err(|e| EffectError::Failed(e.to_string()))?;
                let row = files
                    .import(&uuid::Uuid::new_v4().to_string(), bytes, &info.filename, &info.id)
                    .await
                    .map_err(|e| EffectError::Failed(e.to_string()))?;
                let view = files.view(&row).await.map_err(|e| EffectError::Failed(e.to_string()))?;
                serde_json::to_value(view).map_err(|e| EffectError::Failed(e.to_string()))
            })
            .await?;
        file_from_receipt(receipt.status, receipt.value, "import the form")
    }

    async fn fill(&self, ctx: &TaskContext, original: &str, values: &FieldValues) -> Result<Step<FileView>, TaskError> {
        let action = json!({ "fileId": original, "values": values });
        // Same values, same copy: a new answer fills a new copy, a replay never does.
        let op_id = format!("fill:{}", &action_hash(ToolName::FillPdf.as_str(), &action)[..16]);
        let files = self.files.clone();
        let (original, values) = (original.to_owned(), values.clone());
        let receipt = ctx
            .effect(&op_id, ToolName::FillPdf.as_str(), &action, |_| async move {
                let row = files
                    .fill(&original, values, &uuid::Uuid::new_v4().to_string())
                    .await
                    .map_err(|e| EffectError::Failed(e.to_string()))?;
                let view = files.view(&row).await.map_err(|e| EffectError::Failed(e.to_string()))?;
                serde_json::to_value(view).map_err(|e| EffectError::Failed(e.to_string()))
            })
            .await?;
        let step = file_from_receipt(receipt.status, receipt.value, "fill the form")?;
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
    let ask = format!(
        "Which values should go in the form? Answer with one line per field:\n{}",
        listing.join("\n")
    );
    match state.get("answer").and_then(Value::as_str) {
        None => Err(ask),
        Some(answer) => parse_answer(answer, fields).map_err(|why| format!("{why}\n\n{ask}")),
    }
}

fn file_from_receipt(status: ReceiptStatus, value: Value, what: &str) -> Result<Step<FileView>, TaskError> {
    Ok(match status {
        ReceiptStatus::Succeeded => match serde_json::from_value::<FileView>(value) {
            Ok(file) => Step::Go(file),
            Err(err) => Step::End(TaskOutcome::Failed(format!("Hearth could not read back the file it made ({err})."))),
        },
        ReceiptStatus::Failed => Step::End(TaskOutcome::Failed(format!(
            "Hearth could not {what}: {}",
            value.as_str().map_or_else(|| value.to_string(), str::to_owned)
        ))),
        ReceiptStatus::Interrupted => Step::End(TaskOutcome::Stopped),
    })
}
