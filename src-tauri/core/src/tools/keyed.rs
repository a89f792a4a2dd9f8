//! The journal and the approval gate under one operation key: where every call that changes
//! something settles — Hearth's own tools ([`super::dispatch`]) and the owner's plug-in tools
//! ([`super::mcp_call`]) alike. An effect runs inside the journal, claimed as its scope claims
//! it; a call for the owner becomes a proposal, and a waiting one ends the run.

use hearth_protocol::approvals::{PrepareResult, ProposalDraft, ProposalStatus};
use hearth_protocol::ids::ProposalId;
use hearth_protocol::mandates::MandateGrant;
use serde_json::Value;

use super::context::{OperationKey, OperationScope, ToolContext};
use super::{RunOutcome, ToolOutput};
use crate::journal::{JournalError, Operation, Receipt};
use crate::store::journal::{OpKey, OpStatus};
use crate::tasks::TaskError;
use crate::trust;

/// What a prepare tool tells the model while the owner has not decided.
const PREPARED_NOTE: &str = "Nothing has been sent or changed. The owner reviews this in Hearth and decides; \
                             do not say it happened unless a receipt says so.";

/// A result that ran under a standing order names it: a JSON object gains `mandateId`.
pub(super) fn cite_mandate(mut output: ToolOutput, mandate: &str) -> ToolOutput {
    output.content = match serde_json::from_str::<Value>(&output.content) {
        Ok(Value::Object(mut fields)) => {
            fields.insert("mandateId".into(), Value::String(mandate.to_owned()));
            Value::Object(fields).to_string()
        }
        Ok(other) => serde_json::json!({ "result": other, "mandateId": mandate }).to_string(),
        Err(_) => serde_json::json!({ "result": output.content, "mandateId": mandate }).to_string(),
    };
    output
}

/// Whether the journal already holds this operation as succeeded: asking again can then only
/// return the stored receipt (the same action) or a conflict (another one), and performs
/// nothing. `succeeded` is final — no row in it is withdrawn or taken again — so the answer
/// cannot change between this read and the journal's own. Any other state (failed,
/// acknowledged for a retry, in doubt, in flight) could lead to a new effect, so the call is
/// held.
pub(super) async fn journal_answers_without_acting(ctx: &ToolContext, key: &OperationKey) -> bool {
    let stored = ctx.store.get_operation(OpKey { scope: &key.scope, op_id: &key.op_id }).await;
    match stored {
        Ok(Some(row)) => row.status == OpStatus::Succeeded,
        Ok(None) => false,
        Err(err) => {
            tracing::warn!(error = %err, "could not read the journal before holding a call; it is held");
            false
        }
    }
}

/// Stores `draft` for the owner's review under `key`, naming the outside content the run had
/// read; a proposal still waiting ends the run. A task's prepared draft names its `operation`,
/// so that a standing order the gate finds covering it approves it there (its result then
/// cites the order, and the run goes on).
pub(super) async fn propose(ctx: &ToolContext, key: &str, operation: Option<&OperationKey>, draft: ProposalDraft) -> ToolOutput {
    // A task's proposal is fenced to its lease in the insert itself; a chat's stops with
    // its run (the driver fires the run's Stop when the run ends).
    let fence = ctx.scope.task().map(|t| t.fence());
    if ctx.cancel.is_cancelled() {
        return ToolOutput::error("The run was stopped, so nothing was prepared.");
    }
    let sources = ctx.provenance().map(trust::Provenance::sources).unwrap_or_default();
    let prepared = match (fence, operation) {
        (Some(fence), Some(op)) => {
            ctx.proposer.prepare_for_task(key, fence, (&op.scope, &op.op_id), ctx.scope.origin(), sources, draft).await
        }
        (Some(_), None) | (None, _) => ctx.proposer.prepare(key, fence, ctx.scope.chat_run(), ctx.scope.origin(), sources, draft).await,
    };
    match prepared {
        Ok(proposal)
            if proposal.mandate_id.is_some() && matches!(proposal.status, ProposalStatus::OutcomeUnknown | ProposalStatus::Executing) =>
        {
            // Sent under a standing order, and nobody knows whether it arrived: the run ends in
            // doubt (the store flagged the task), so nothing sends it again before the owner
            // has looked.
            ToolOutput::in_doubt(format!(
                "It was sent under a standing order, but Hearth lost track of it, so it may or may not have happened ({}). \
                 Do not redo it; the owner reviews it.",
                proposal.error.as_deref().unwrap_or("no answer")
            ))
        }
        Ok(proposal) => {
            let waiting = matches!(proposal.status, ProposalStatus::AwaitingReview | ProposalStatus::Leaving | ProposalStatus::Executing);
            let result = PrepareResult {
                proposal_id: ProposalId::trusted(proposal.id.as_str()),
                kind: proposal.draft.kind(),
                status: proposal.status,
                note: match (&proposal.mandate_id, proposal.status) {
                    (Some(_), ProposalStatus::Succeeded) => format!(
                        "Done under a standing order the owner granted this task: {}",
                        proposal.receipt.as_deref().unwrap_or("done")
                    ),
                    _ => {
                        decided_note(proposal.status, proposal.receipt.as_deref(), proposal.error.as_deref(), proposal.failure_id.as_ref())
                    }
                },
            };
            let output = ToolOutput::ok(&serde_json::to_value(result).unwrap_or_default());
            // Waiting ends the run; a proposal decided already is a result the model reads.
            if waiting {
                ToolOutput { outcome: Some(RunOutcome::WaitingApproval(proposal.id)), ..output }
            } else if let Some(mandate) = &proposal.mandate_id {
                cite_mandate(output, mandate)
            } else {
                output
            }
        }
        Err(err) => ToolOutput::error(err.to_string()),
    }
}

/// What the model is told about a proposal, by its status.
/// A failed or uncertain one names its failure id, which the owner can open in Activity.
pub(crate) fn decided_note(
    status: ProposalStatus,
    receipt: Option<&str>,
    error: Option<&str>,
    failure: Option<&hearth_protocol::ids::FailureId>,
) -> String {
    let why = error.unwrap_or("no reason given");
    let why = match failure {
        Some(id) => crate::failures::with_failure_id(why, id),
        None => why.to_owned(),
    };
    match status {
        ProposalStatus::AwaitingReview | ProposalStatus::Executing => PREPARED_NOTE.to_owned(),
        ProposalStatus::Leaving => {
            "The owner approved it; it leaves in a few seconds unless they undo it. Do not prepare it again.".to_owned()
        }
        // Undone by the owner, or by its task's Pause or Cancel: the reason says which.
        ProposalStatus::Undone => format!("It was approved, then taken back before it left, so nothing was sent or changed ({why})."),
        ProposalStatus::Succeeded => format!("The owner approved it and it was done: {}", receipt.unwrap_or("done")),
        ProposalStatus::Denied => format!("The owner did not approve it, so nothing was sent or changed ({why})."),
        ProposalStatus::Expired => "Nobody approved it in time, so it expired; nothing was sent or changed.".to_owned(),
        ProposalStatus::Failed => format!("It was approved but failed, so nothing happened: {why}"),
        ProposalStatus::OutcomeUnknown => {
            format!("It was approved but Hearth lost track of it, so it may or may not have happened ({why}). Do not redo it.")
        }
    }
}

/// Runs `effect` inside the journal under `key`, as `tool` with `action`, claimed as the scope
/// claims: a task's fenced to its lease, a chat's by its run, an approved call's by its approval.
pub(super) async fn perform_keyed<F, Fut>(
    ctx: &ToolContext,
    key: &OperationKey,
    tool: &str,
    action: &Value,
    effect: F,
) -> Result<Receipt, JournalError>
where
    F: FnOnce(tokio_util::sync::CancellationToken) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<Value, crate::journal::EffectError>> + Send + 'static,
{
    match &ctx.scope {
        OperationScope::Task(task) => match task.effect(&key.op_id, tool, action, effect).await {
            Ok(receipt) => Ok(receipt),
            Err(TaskError::Journal(err)) => Err(err),
            Err(TaskError::Cancelled) => Err(JournalError::Cancelled { op_id: key.op_id.clone() }),
            Err(TaskError::Fenced { .. }) => Err(JournalError::Fenced { op_id: key.op_id.clone() }),
            Err(TaskError::Core(err)) => Err(JournalError::Core(err)),
        },
        OperationScope::Chat { run_id, journal, .. } => {
            let op = Operation {
                key: OpKey { scope: &key.scope, op_id: &key.op_id },
                tool,
                action,
                claimant: run_id,
                fence: None,
                cancel: &ctx.cancel,
            };
            journal.perform(&op, effect).await
        }
        OperationScope::Approved { journal, claimant, .. } => {
            let op =
                Operation { key: OpKey { scope: &key.scope, op_id: &key.op_id }, tool, action, claimant, fence: None, cancel: &ctx.cancel };
            journal.perform(&op, effect).await
        }
        OperationScope::Owner { journal, .. } => {
            // This process (so a start-up after a crash can tell its rows were cut off), and
            // this dispatch (so a failed or acknowledged row can be taken again by a retry).
            let claimant = format!("{}:{}", journal.identity(), uuid::Uuid::new_v4().simple());
            let op = Operation {
                key: OpKey { scope: &key.scope, op_id: &key.op_id },
                tool,
                action,
                claimant: &claimant,
                fence: None,
                cancel: &ctx.cancel,
            };
            journal.perform(&op, effect).await
        }
    }
}

/// The standing order that lets a held call run, when one does: only inside a task (never a
/// chat, an endpoint client's or an external agent's run), a live mandate of the task or of
/// its schedule whose grant covers this exact call, with a use counted for this operation in
/// the store's compare-and-swap (which re-checks life, holder, room and the run's lease).
pub(super) async fn standing_order(
    ctx: &ToolContext,
    tool: &str,
    covered: impl Fn(&MandateGrant) -> bool,
    key: &OperationKey,
) -> Option<String> {
    let OperationScope::Task(task) = &ctx.scope else { return None };
    let (task_id, lease_id) = task.fence();
    let now = crate::store::now_ms();
    let live = match ctx.store.live_mandates_for_task(task_id, now).await {
        Ok(live) => live,
        Err(err) => {
            tracing::warn!(error = %err, "could not read the standing orders of a task; the call is held");
            return None;
        }
    };
    let candidates: Vec<String> = live.into_iter().filter(|m| covered(&m.grant)).map(|m| m.id).collect();
    if candidates.is_empty() {
        return None;
    }
    match ctx.store.use_mandate(&candidates, task_id, lease_id, &key.scope, &key.op_id, tool, now).await {
        Ok(used) => used,
        Err(err) => {
            tracing::warn!(error = %err, "could not count a use of a standing order; the call is held");
            None
        }
    }
}

/// Holds a call for the owner: a `HeldCall` proposal of `tool(arguments)` under `key`, naming the
/// outside content the run had read. Hearth's tools and plug-in tools are held the same way.
pub(super) async fn propose_held(
    ctx: &ToolContext,
    key: &OperationKey,
    tool: hearth_protocol::approvals::HeldTool,
    summary: String,
    arguments: Value,
    why: &str,
) -> ToolOutput {
    let draft = ProposalDraft::HeldCall(hearth_protocol::approvals::HeldCallDraft {
        tool,
        summary,
        arguments,
        reason: why.to_owned(),
        sources: ctx.provenance().map(trust::Provenance::sources).unwrap_or_default(),
        op_scope: key.scope.clone(),
        op_id: key.op_id.clone(),
        thread_id: ctx.scope.thread_id().map(hearth_protocol::ids::ThreadId::trusted),
    });
    propose(ctx, &format!("held:{}", key.joined()), None, draft).await
}

/// `output` with the failure id the store gave the failed effect under `key` (migration 0040's
/// triggers made it as the failure was recorded). A failure whose row could not be read — or
/// was never settled, as when the store itself failed — is shown without one.
pub(super) async fn with_failure_id(ctx: &ToolContext, key: &OperationKey, output: ToolOutput) -> ToolOutput {
    match ctx.store.operation_failure_id(&key.scope, &key.op_id).await {
        Ok(Some(id)) => output.with_failure(&id),
        Ok(None) => output,
        Err(err) => {
            tracing::warn!(error = %err, "could not read a failed effect's id");
            output
        }
    }
}
