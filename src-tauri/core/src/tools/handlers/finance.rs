//! summarize_statement: starts the finance task (a statement summary, no model) from CSV the
//! owner pasted, a PDF in Files or a file in the owner's document folders — what the sample agent's
//! "summarize this CSV" does, for a model. A Control tool: it changes only Hearth's own
//! bookkeeping (a task), keyed by the call's operation key like delegate_task, so a retried
//! step makes one task and a changed one is a conflict. The task itself reads, adds up and
//! saves an artifact; nothing leaves the machine.

use hearth_protocol::ToolName;
use hearth_protocol::ids::{FileId, TaskId};
use hearth_protocol::ipc::DelegateTaskResult;
use hearth_protocol::tasks::TaskKind;
use serde::Deserialize;

use crate::finance::{MAX_CSV_CHARS, StatementSource, TASK_TITLE};
use crate::store::tasks::task_id_for_key;
use crate::tools::ToolOutput;
use crate::tools::context::{StepId, ToolContext};
use crate::tools::traits::{DirectTool, Tool};

/// `summarize_statement`'s arguments: exactly one of the three.
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
    /// Or the path of such a file in the owner's document folders, as search_documents gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_path: Option<String>,
}

/// `summarize_statement`.
pub(crate) struct SummarizeStatement;

impl Tool for SummarizeStatement {
    const NAME: ToolName = ToolName::SummarizeStatement;
    const DESCRIPTION: &'static str = "Start a statement summary in Activity: income, spending by category and by month, charted, \
                                       from a bank statement as CSV pasted by the owner (`csv`), a PDF in Files (`fileId`) or a \
                                       file in the owner's document folders (`documentPath`). Give exactly one.";
    type Args = SummarizeStatementArgs;
}

/// The one source the arguments name, or the model's error.
pub(crate) fn source_of(
    csv: Option<String>,
    file_id: Option<String>,
    document_path: Option<String>,
) -> Result<StatementSource, ToolOutput> {
    match (csv, file_id, document_path) {
        (Some(csv), None, None) => {
            let csv = csv.trim();
            if csv.is_empty() || csv.chars().count() > MAX_CSV_CHARS {
                return Err(ToolOutput::error(format!("`csv` is 1 to {MAX_CSV_CHARS} characters of the statement.")));
            }
            Ok(StatementSource::Pasted(csv.to_owned()))
        }
        (None, Some(file_id), None) => FileId::parse(file_id)
            .map(StatementSource::File)
            .map_err(|_| ToolOutput::error("`fileId` is the id of a file in Files, as the Files screen or import_pdf gives it.")),
        (None, None, Some(path)) => {
            let path = path.trim();
            if path.is_empty() || path.len() > MAX_PATH_BYTES {
                return Err(ToolOutput::error(format!("`documentPath` is 1 to {MAX_PATH_BYTES} bytes, as search_documents gives it.")));
            }
            Ok(StatementSource::Document(path.to_owned()))
        }
        _ => Err(ToolOutput::error("Give exactly one of `csv`, `fileId` or `documentPath`.")),
    }
}

/// The longest document path taken.
const MAX_PATH_BYTES: usize = 4096;

impl DirectTool for SummarizeStatement {
    async fn run(ctx: &ToolContext, step: &StepId, args: SummarizeStatementArgs) -> ToolOutput {
        let source = match source_of(args.csv, args.file_id, args.document_path) {
            Ok(source) => source,
            Err(refused) => return refused,
        };
        let key = ctx.scope.key(step).joined();
        // Checked only for a step that made nothing yet: a retried step answers the task it
        // made even when the file has gone since (one task per key, whatever happened after).
        let made = matches!(ctx.store.get_task(&task_id_for_key(&key)).await, Ok(Some(_)));
        if !made && let Err(why) = source.check(&ctx.files, &ctx.store).await {
            return ToolOutput::error(why);
        }
        if ctx.cancel.is_cancelled() {
            return ToolOutput::error("The run was stopped, so no summary was started.");
        }
        let fence = ctx.scope.task().map(|t| t.fence());
        let input = source.task_input();
        match ctx.desk.create(&key, TaskKind::Finance, TASK_TITLE, &input, ctx.scope.thread_id(), fence, ctx.scope.chat_run()).await {
            Ok(task) => {
                let result = DelegateTaskResult { task_id: TaskId::trusted(task.id), title: task.title, status: task.status };
                ToolOutput::ok(&serde_json::to_value(result).unwrap_or_default())
            }
            Err(err) => ToolOutput::error(err.to_string()),
        }
    }
}
