//! summarize_statement: starts the finance task (a statement summary, no model) from CSV the
//! owner pasted or from a PDF in Files whose text is the statement — what the sample agent's
//! "summarize this CSV" does, for a model. A Control tool: it changes only Hearth's own
//! bookkeeping (a task), keyed by the call's operation key like delegate_task, so a retried
//! step makes one task and a changed one is a conflict. The task itself reads, adds up and
//! saves an artifact; nothing leaves the machine.

use hearth_protocol::ToolName;
use hearth_protocol::ids::{FileId, TaskId};
use hearth_protocol::ipc::DelegateTaskResult;
use hearth_protocol::tasks::TaskKind;
use serde::Deserialize;

use crate::finance::{MAX_CSV_CHARS, TASK_TITLE};
use crate::tools::ToolOutput;
use crate::tools::context::{StepId, ToolContext};
use crate::tools::traits::{DirectTool, Tool};

/// `summarize_statement`'s arguments: exactly one of the two.
#[derive(Deserialize, schemars::JsonSchema, serde::Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SummarizeStatementArgs {
    /// The statement as CSV text with the columns date (YYYY-MM-DD), description, amount and
    /// optionally category, as the owner pasted it (at most 500,000 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csv: Option<String>,
    /// Or the id of a PDF in Files whose text is such a statement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_id: Option<String>,
}

/// `summarize_statement`.
pub(crate) struct SummarizeStatement;

impl Tool for SummarizeStatement {
    const NAME: ToolName = ToolName::SummarizeStatement;
    const DESCRIPTION: &'static str = "Start a statement summary in Activity: income, spending by category and by month, charted, \
                                       from a bank statement as CSV (pasted by the owner) or from a PDF in Files. Give `csv` or \
                                       `fileId`, not both.";
    type Args = SummarizeStatementArgs;
}

impl DirectTool for SummarizeStatement {
    async fn run(ctx: &ToolContext, step: &StepId, args: SummarizeStatementArgs) -> ToolOutput {
        let input = match (args.csv, args.file_id) {
            (Some(csv), None) => {
                let csv = csv.trim();
                if csv.is_empty() || csv.chars().count() > MAX_CSV_CHARS {
                    return ToolOutput::error(format!("`csv` is 1 to {MAX_CSV_CHARS} characters of the statement."));
                }
                crate::finance::task_input(csv)
            }
            (None, Some(file_id)) => {
                let Ok(file_id) = FileId::parse(&file_id) else {
                    return ToolOutput::error("`fileId` is the id of a file in Files, as the Files screen or import_pdf gives it.");
                };
                // Read now, so a wrong id is said in this reply rather than as a failed task.
                if let Err(err) = ctx.files.read(file_id.as_str()).await {
                    return ToolOutput::error(format!("That file cannot be read: {err}"));
                }
                crate::finance::file_task_input(&file_id)
            }
            (Some(_), Some(_)) | (None, None) => return ToolOutput::error("Give either `csv` or `fileId`."),
        };
        if ctx.cancel.is_cancelled() {
            return ToolOutput::error("The run was stopped, so no summary was started.");
        }
        let key = ctx.scope.key(step).joined();
        let fence = ctx.scope.task().map(|t| t.fence());
        match ctx.desk.create(&key, TaskKind::Finance, TASK_TITLE, &input, ctx.scope.thread_id(), fence, ctx.scope.chat_run()).await {
            Ok(task) => {
                let result = DelegateTaskResult { task_id: TaskId::trusted(task.id), title: task.title, status: task.status };
                ToolOutput::ok(&serde_json::to_value(result).unwrap_or_default())
            }
            Err(err) => ToolOutput::error(err.to_string()),
        }
    }
}
