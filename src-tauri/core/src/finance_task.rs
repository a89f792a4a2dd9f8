//! The `finance` task kind: reads the statement its input names (pasted, a PDF in Files, a
//! document of the owner's folders), sums it with [`crate::finance`], keeps the tracker and saves
//! it as an artifact through the one tool path. Apart from `finance.rs` because it uses the tool
//! path, which `summarize_statement` (a tool) reaches `finance.rs` from: one file each way would
//! be an import circle.

use crate::finance::{StatementSource, TRACKER, parse_statement, summarize};

/// The statement a finance task's input names, read now: a PDF's text (the extraction ended
/// by the task's Stop), or a document's text as the index holds it at this run.
async fn statement_of(input: &serde_json::Value, tools: &crate::tools::ToolContext) -> Result<String, String> {
    match StatementSource::of(input) {
        Some(StatementSource::Pasted(csv)) => Ok(csv),
        Some(StatementSource::File(id)) => {
            let pages = tools
                .files
                .text_unless_stopped(id.as_str(), tools.cancel_token())
                .await
                .map_err(|err| format!("Hearth could not read the statement's file: {err}"))?;
            Ok(pages.join("\n"))
        }
        Some(StatementSource::Document(path)) => match tools.store.doc_text_at(&path).await {
            Ok(Some(text)) => Ok(text.body),
            Ok(None) => Err(format!("The statement {path} is no longer in your document folders.")),
            Err(err) => Err(format!("The document index could not be read ({err}).")),
        },
        None => Err("This task names no statement (neither CSV, a file in Files nor a document).".into()),
    }
}

/// The `finance` task: input `{ "title", "csv" | "fileId" | "documentPath" }`. A statement Hearth cannot read fails the
/// task with the reason (nothing is kept); a readable one keeps the tracker (fenced) and saves
/// it as an artifact through dispatch, keyed by the named step `tracker`, so a retried run
/// saves it once.
pub fn task_handler(toolbox: crate::tools::Toolbox) -> impl crate::tasks::TaskHandler {
    move |ctx: crate::tasks::TaskContext| {
        let toolbox = toolbox.clone();
        async move {
            use crate::tasks::TaskOutcome;
            let tools = toolbox.for_task(ctx.clone()).for_workflow();
            let csv = match statement_of(&ctx.task().input, &tools).await {
                Ok(csv) => csv,
                // Stopped while the statement was read (PDF text stops with the run): a Stop, not a failure.
                Err(_) if ctx.cancel_token().is_cancelled() => return TaskOutcome::Stopped,
                Err(why) => return TaskOutcome::Failed(why),
            };
            let summary = match parse_statement(&csv).and_then(|rows| summarize(&rows)) {
                Ok(summary) => summary,
                Err(err) => return TaskOutcome::Failed(format!("Hearth could not read this statement: {err}.")),
            };
            let view = summary.view();
            if ctx.checkpoint(&serde_json::json!({ TRACKER: view })).await.is_err() {
                return TaskOutcome::Stopped;
            }
            let artifact = crate::tools::typed::SaveArtifactArgs {
                name: "finance-tracker.json".into(),
                content: serde_json::to_string_pretty(&view).unwrap_or_default(),
            };
            let saved =
                crate::tools::call::<crate::tools::typed::SaveArtifact>(&tools, artifact, crate::tools::StepId::Named("tracker".into()))
                    .await;
            if let Some(crate::tools::RunOutcome::InDoubt(_)) = saved.outcome {
                return TaskOutcome::Interrupted(crate::store::tasks::UNCERTAIN_REASON.into());
            }
            if ctx.cancel_token().is_cancelled() {
                return TaskOutcome::Stopped;
            }
            if saved.is_error {
                return TaskOutcome::Failed(format!("The summary was made but its artifact was not saved: {}", saved.content));
            }
            TaskOutcome::Succeeded(summary.sentence())
        }
    }
}
