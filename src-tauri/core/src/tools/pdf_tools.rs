//! import_pdf, inspect_pdf and fill_pdf. Import and fill write files, so they go through the
//! journal: a retried call returns the first file instead of writing a second.

use hearth_protocol::ToolName;
use hearth_protocol::files::FileDetail;
use hearth_protocol::pdf::FieldValues;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolCall, ToolContext, ToolFuture, ToolOutput, parse_args};
use crate::error::CoreError;
use crate::journal::{EffectError, Receipt, ReceiptStatus};

/// Runs the PDF tools; `None` for any other tool.
pub fn pdf_tool_handler(tool: ToolName, ctx: ToolContext, call: ToolCall, args: Value) -> Option<ToolFuture> {
    let run: ToolFuture = match tool {
        ToolName::ImportPdf => Box::pin(import_pdf(ctx, call, args)),
        ToolName::InspectPdf => Box::pin(inspect_pdf(ctx, args)),
        ToolName::FillPdf => Box::pin(fill_pdf(ctx, call, args)),
        _ => return None,
    };
    Some(run)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ImportArgs {
    /// The attachment's id, from read_mail_thread.
    attachment_id: String,
}

async fn import_pdf(ctx: ToolContext, call: ToolCall, args: Value) -> ToolOutput {
    let args: ImportArgs = match parse_args(ToolName::ImportPdf, args) {
        Ok(a) => a,
        Err(e) => return e,
    };
    if !hearth_protocol::ids::is_valid_id(&args.attachment_id) {
        return ToolOutput::error("`attachmentId` is not a valid id; read_mail_thread lists attachment ids.");
    }
    let action = json!({ "attachmentId": args.attachment_id });
    let work = ctx.clone();
    let receipt = journaled(&ctx, &call, ToolName::ImportPdf, &action, move || async move {
        let (info, bytes) = work.approvals.workspace().fetch_attachment(&args.attachment_id).await.map_err(failed)?;
        let file_id = uuid::Uuid::new_v4().to_string();
        let row = work.files.import(&file_id, bytes, &info.filename, &info.id).await.map_err(failed)?;
        let view = work.files.view(&row).await.map_err(failed)?;
        serde_json::to_value(view).map_err(|e| EffectError::Failed(e.to_string()))
    })
    .await;
    settle(receipt)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct InspectArgs {
    /// The file's id, from import_pdf or fill_pdf.
    file_id: String,
}

async fn inspect_pdf(ctx: ToolContext, args: Value) -> ToolOutput {
    let args: InspectArgs = match parse_args(ToolName::InspectPdf, args) {
        Ok(a) => a,
        Err(e) => return e,
    };
    if !hearth_protocol::ids::is_valid_id(&args.file_id) {
        return ToolOutput::error("`fileId` is not a valid id; import_pdf returns one.");
    }
    match ctx.files.detail(&args.file_id).await {
        Ok(detail) => ToolOutput::ok(&serde_json::to_value::<FileDetail>(detail).unwrap_or_default()),
        Err(err) => ToolOutput::error(err.to_string()),
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct FillArgs {
    /// The PDF to fill (from import_pdf); it is never changed.
    file_id: String,
    /// Field name → text, the option to choose, or true/false for a checkbox.
    #[schemars(with = "std::collections::BTreeMap<String, serde_json::Value>")]
    values: FieldValues,
}

async fn fill_pdf(ctx: ToolContext, call: ToolCall, args: Value) -> ToolOutput {
    let args: FillArgs = match parse_args(ToolName::FillPdf, args) {
        Ok(a) => a,
        Err(e) => return e,
    };
    if !hearth_protocol::ids::is_valid_id(&args.file_id) {
        return ToolOutput::error("`fileId` is not a valid id; import_pdf returns one.");
    }
    if args.values.is_empty() {
        return ToolOutput::error("`values` is empty; give at least one field name and value (inspect_pdf lists them).");
    }
    let action = json!({ "fileId": args.file_id, "values": args.values });
    // The same fill of the same file in this task returns the copy it already made, even
    // under a new call id (a model that lost track of its call ids cannot duplicate it).
    let fill_key = crate::journal::action_hash(ToolName::FillPdf.as_str(), &action);
    if let Some(task) = &ctx.task
        && let Ok(Some(current)) = ctx.store.get_task(&task.task().id).await
        && let Some(file_id) = current.state.pointer(&format!("/filled/{fill_key}")).and_then(Value::as_str)
        && let Ok(Some(row)) = ctx.store.get_file(file_id).await
        && let Ok(view) = ctx.files.view(&row).await
    {
        return ToolOutput::ok(&serde_json::to_value(view).unwrap_or_default());
    }
    let work = ctx.clone();
    let receipt = journaled(&ctx, &call, ToolName::FillPdf, &action, move || async move {
        let file_id = uuid::Uuid::new_v4().to_string();
        let row = work.files.fill(&args.file_id, args.values, &file_id).await.map_err(failed)?;
        let view = work.files.view(&row).await.map_err(failed)?;
        serde_json::to_value(view).map_err(|e| EffectError::Failed(e.to_string()))
    })
    .await;
    if let (Ok(r), Some(task)) = (&receipt, &ctx.task)
        && r.status == ReceiptStatus::Succeeded
        && let Some(file_id) = r.value.get("id").and_then(Value::as_str)
        && let Err(err) = task.checkpoint(&json!({ "filled": { fill_key: file_id } })).await
    {
        return ToolOutput::error(err.to_string());
    }
    settle(receipt)
}

fn failed(err: CoreError) -> EffectError {
    EffectError::Failed(err.to_string())
}

/// Performs `effect` through the journal of the task, or of the chat thread.
async fn journaled<F, Fut>(
    ctx: &ToolContext,
    call: &ToolCall,
    tool: ToolName,
    action: &Value,
    effect: F,
) -> Result<Receipt, String>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<Value, EffectError>>,
{
    match &ctx.task {
        Some(task) => task.effect(&call.id, tool.as_str(), action, |_| effect()).await.map_err(|e| e.to_string()),
        None => {
            let scope = format!("thread:{}", ctx.thread_id.as_deref().unwrap_or("direct"));
            ctx.tasks
                .journal()
                .perform(&scope, &call.id, tool.as_str(), action, &ctx.cancel, None, |_| effect())
                .await
                .map_err(|e| e.to_string())
        }
    }
}

fn settle(receipt: Result<Receipt, String>) -> ToolOutput {
    match receipt {
        Ok(r) if r.status == ReceiptStatus::Succeeded => ToolOutput::ok(&r.value),
        Ok(r) => ToolOutput::error(r.value.as_str().map_or_else(|| r.value.to_string(), str::to_owned)),
        Err(message) => ToolOutput::error(message),
    }
}
