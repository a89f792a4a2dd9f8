//! prepare_email and prepare_event: they store a proposal for the owner's review and end
//! the run. They never send or write; only the owner's approval in the app does.

use hearth_protocol::ToolName;
use hearth_protocol::approvals::{PrepareResult, ProposalDraft};
use serde_json::Value;

use super::{RunOutcome, ToolCall, ToolContext, ToolFuture, ToolOutput, parse_args};
use crate::approvals::{EmailArgs, EventArgs, email_draft, event_draft};
use crate::approvals::normalize::EventAction;
use crate::store::tasks::task_scope;

const NOTE: &str = "Nothing has been sent or changed. The owner reviews this in Hearth and decides; \
                    do not say it happened unless a receipt says so.";

/// Runs the prepare tools; `None` for any other tool.
pub fn prepare_tool_handler(tool: ToolName, ctx: ToolContext, call: ToolCall, args: Value) -> Option<ToolFuture> {
    let run: ToolFuture = match tool {
        ToolName::PrepareEmail => Box::pin(prepare_email(ctx, call, args)),
        ToolName::PrepareEvent => Box::pin(prepare_event(ctx, call, args)),
        _ => return None,
    };
    Some(run)
}

async fn prepare_email(ctx: ToolContext, call: ToolCall, args: Value) -> ToolOutput {
    let args: EmailArgs = match parse_args(ToolName::PrepareEmail, args) {
        Ok(a) => a,
        Err(e) => return e,
    };
    match email_draft(&ctx.store, args).await {
        Ok(draft) => propose(&ctx, &call, ProposalDraft::EmailSend(draft)).await,
        Err(err) => ToolOutput::error(err.to_string()),
    }
}

async fn prepare_event(ctx: ToolContext, call: ToolCall, args: Value) -> ToolOutput {
    let args: EventArgs = match parse_args(ToolName::PrepareEvent, args) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let draft = match event_draft(args) {
        Ok((EventAction::Create, d)) => ProposalDraft::CalendarCreate(d),
        Ok((EventAction::Update, d)) => ProposalDraft::CalendarUpdate(d),
        Ok((EventAction::Delete, d)) => ProposalDraft::CalendarDelete(d),
        Err(err) => return ToolOutput::error(err.to_string()),
    };
    propose(&ctx, &call, draft).await
}

/// Stores the proposal under a key made of the run's scope and the call id, so a retried
/// call returns the same proposal and a changed one is refused.
async fn propose(ctx: &ToolContext, call: &ToolCall, draft: ProposalDraft) -> ToolOutput {
    let task_id = ctx.task.as_ref().map(|t| t.task().id.clone());
    let scope = match (&task_id, &ctx.thread_id) {
        (Some(task), _) => task_scope(task),
        (None, Some(thread)) => format!("thread:{thread}"),
        (None, None) => "direct".to_owned(),
    };
    let key = format!("{scope}:{}", call.id);
    match ctx.approvals.prepare(&key, task_id.as_deref(), draft).await {
        Ok(proposal) => {
            let result = PrepareResult {
                proposal_id: proposal.id.clone(),
                kind: proposal.draft.kind(),
                status: proposal.status,
                note: NOTE.to_owned(),
            };
            ToolOutput {
                outcome: Some(RunOutcome::WaitingApproval(proposal.id)),
                ..ToolOutput::ok(&serde_json::to_value(result).unwrap_or_default())
            }
        }
        Err(err) => ToolOutput::error(err.to_string()),
    }
}
