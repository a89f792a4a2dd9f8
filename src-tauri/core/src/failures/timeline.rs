//! A run's timeline, read back in order from what Hearth already keeps: the run's own log (a
//! chat's `thread_events`, a task's `task_events`), the provider's tries (`provider_tries`) and
//! the journal's rows the run claimed. Only the kind and size of contents are taken from the log:
//! the timeline and the report never repeat a message, a mail or a tool's arguments.

use hearth_protocol::failures::{FailureKind, FailureTimeline, FailureView, TimelineEntry};
use hearth_protocol::ids::RunId;
use serde_json::Value;

use super::report::{Holdings, report};
use crate::error::{CoreError, Result};
use crate::secret::SecretString;
use crate::store::Store;
use crate::store::failures::EffectSubject;

/// The timeline of run `run_id` (a chat's or a task's), with its failure if it failed, and the
/// redacted report. `secrets` are the values the report must never contain (the vault's).
pub async fn run_timeline(store: &Store, run_id: &str, failure: Option<FailureView>, secrets: &[SecretString]) -> Result<FailureTimeline> {
    let mut entries = Vec::new();
    let mut holdings = Holdings::default();
    let kind = if let Some((thread_id, started_at, _)) = store.chat_run(run_id).await? {
        entries.push(TimelineEntry::Started { at: started_at });
        for event in store.chat_run_events(&thread_id, run_id).await? {
            // A row that is not JSON is skipped: a timeline with a gap beats none.
            if let Ok(event) = serde_json::from_str::<Value>(&event) {
                chat_event(&event, &mut entries, &mut holdings);
            }
        }
        receipts(store, &format!("thread:{thread_id}"), run_id, &mut entries, &mut holdings).await?;
        FailureKind::Chat
    } else if let Some(task_run) = store.task_run_for_timeline(run_id).await? {
        entries.push(TimelineEntry::Started { at: task_run.started_at });
        for (kind, text, at) in store.task_run_notes(&task_run.task_id, run_id).await? {
            holdings.notes += 1;
            holdings.note_chars += text.chars().count();
            entries.push(match kind.as_str() {
                "error" => TimelineEntry::Failed { at, message: text },
                _ => TimelineEntry::Note { at, kind, text: format!("{} characters", text.chars().count()) },
            });
        }
        receipts(store, &format!("task:{}", task_run.task_id), run_id, &mut entries, &mut holdings).await?;
        FailureKind::Task
    } else {
        return Err(CoreError::NotFound(format!(
            "No run {run_id} is kept (a chat's runs stay; a task keeps its newest 100). Check the id, or look in Activity."
        )));
    };
    for tried in store.provider_tries(run_id).await? {
        entries.push(TimelineEntry::ProviderTry {
            at: tried.at,
            provider: tried.provider,
            try_number: tried.try_number,
            retry: tried.retry,
            outcome: tried.outcome,
        });
    }
    match &failure {
        // An effect failed inside the run (which may have gone on): its failure is always shown.
        Some(failure) if failure.kind == FailureKind::Effect => entries.push(effect_failed(failure)),
        Some(failure) if !entries.iter().any(|e| matches!(e, TimelineEntry::Failed { .. })) => {
            entries.push(TimelineEntry::Failed { at: failure.at, message: failure.message.clone() });
        }
        Some(_) | None => {}
    }
    // What failed: the run, or an effect inside it.
    let kind = failure.as_ref().map_or(kind, |failure| failure.kind);
    Ok(finish(failure, Some(RunId::trusted(run_id)), kind, entries, &holdings, secrets))
}

/// The timeline of a failed effect with no run of its own to show: an approved action, or an
/// effect whose run is no longer kept (or was an approval's held call). `subject` says where it
/// is kept; only its kind, status and times are read.
pub async fn effect_timeline(
    store: &Store,
    failure: FailureView,
    subject: &EffectSubject,
    secrets: &[SecretString],
) -> Result<FailureTimeline> {
    let mut entries = Vec::new();
    let mut holdings = Holdings::default();
    match subject {
        EffectSubject::Operation { scope, op_id, .. } => {
            if let Some(operation) = store.operation_for_timeline(scope, op_id).await? {
                entries.push(TimelineEntry::Started { at: operation.created_at });
                holdings.receipt_chars += operation.receipt_chars;
                entries.push(TimelineEntry::Receipt {
                    at: operation.settled_at.unwrap_or(operation.created_at),
                    tool: operation.tool,
                    status: operation.status,
                });
            }
        }
        EffectSubject::Proposal(proposal_id) => {
            if let Some(proposal) = store.proposal_for_timeline(proposal_id).await? {
                entries.push(TimelineEntry::Started { at: proposal.created_at });
                entries.push(TimelineEntry::Note { at: proposal.created_at, kind: "prepared".into(), text: proposal.kind.clone() });
                if let Some(decided_at) = proposal.decided_at {
                    entries.push(TimelineEntry::Note { at: decided_at, kind: "decided".into(), text: "approved".into() });
                }
                holdings.receipt_chars += proposal.receipt_chars;
                entries.push(TimelineEntry::Receipt { at: failure.at, tool: proposal.kind, status: proposal.status });
            }
        }
    }
    entries.push(effect_failed(&failure));
    let kind = failure.kind;
    let run_id = failure.run_id.clone();
    Ok(finish(Some(failure), run_id, kind, entries, &holdings, secrets))
}

/// A failed effect's entry: the tool, then what the owner saw.
fn effect_failed(failure: &FailureView) -> TimelineEntry {
    let message = match &failure.tool {
        Some(tool) => format!("{tool}: {}", failure.message),
        None => failure.message.clone(),
    };
    TimelineEntry::Failed { at: failure.at, message }
}

/// Orders the entries and makes the report.
fn finish(
    failure: Option<FailureView>,
    run_id: Option<RunId>,
    kind: FailureKind,
    mut entries: Vec<TimelineEntry>,
    holdings: &Holdings,
    secrets: &[SecretString],
) -> FailureTimeline {
    // Stable: within one millisecond, the start first, the failure last, the rest as read.
    entries.sort_by_key(|entry| {
        let rank = match entry {
            TimelineEntry::Started { .. } => 0,
            TimelineEntry::Failed { .. } => 2,
            TimelineEntry::ProviderTry { .. }
            | TimelineEntry::ToolCall { .. }
            | TimelineEntry::Receipt { .. }
            | TimelineEntry::Note { .. } => 1,
        };
        (entry.at(), rank)
    });
    let report = report(failure.as_ref(), run_id.as_ref(), kind, &entries, holdings, secrets);
    FailureTimeline { failure, run_id, entries, report }
}

/// One stored AG-UI event of a chat run: the start, tool calls and the error become entries;
/// texts, arguments and results are only counted.
fn chat_event(event: &Value, entries: &mut Vec<TimelineEntry>, holdings: &mut Holdings) {
    let at = event.get("timestamp").and_then(Value::as_i64).unwrap_or_default();
    let size = |field: &str| match event.get(field) {
        Some(Value::String(text)) => text.chars().count(),
        Some(other) => other.to_string().chars().count(),
        None => 0,
    };
    match event.get("type").and_then(Value::as_str).unwrap_or_default() {
        "RUN_STARTED" => holdings.asked_chars += size("input"),
        "TEXT_MESSAGE_CONTENT" => holdings.answer_chars += size("delta"),
        "TOOL_CALL_START" => {
            let tool = event.get("toolCallName").and_then(Value::as_str).unwrap_or_default().to_owned();
            let effect_class = hearth_protocol::ToolName::from_wire(&tool).map(hearth_protocol::ToolName::effect_class);
            entries.push(TimelineEntry::ToolCall { at, tool, effect_class });
        }
        "TOOL_CALL_ARGS" => holdings.argument_chars += size("delta"),
        "TOOL_CALL_RESULT" => {
            holdings.results += 1;
            holdings.result_chars += size("content");
        }
        "RUN_ERROR" => {
            let message = event.get("message").and_then(Value::as_str).unwrap_or_default().to_owned();
            entries.push(TimelineEntry::Failed { at, message });
        }
        _ => {}
    }
}

/// The journal's rows the run claimed in `scope`, as receipts (never their contents).
async fn receipts(store: &Store, scope: &str, run_id: &str, entries: &mut Vec<TimelineEntry>, holdings: &mut Holdings) -> Result<()> {
    for operation in store.operations_of_run(scope, run_id).await? {
        holdings.receipt_chars += operation.receipt_chars;
        entries.push(TimelineEntry::Receipt {
            at: operation.settled_at.unwrap_or(operation.created_at),
            tool: operation.tool,
            status: operation.status,
        });
    }
    Ok(())
}
