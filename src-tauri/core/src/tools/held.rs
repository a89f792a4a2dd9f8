//! Running a held call the owner approved.
//!
//! The trust policy held the call at dispatch (see `trust`); the owner approved exactly this
//! call on its card; the gate claimed the proposal (re-checking its expiry and, for a task's,
//! that the task still waits on it) and now runs it here, once, through the same tool path —
//! effects inside the journal under the key the call was held under, so a repeat finds its
//! receipt — with the trust policy not asked again.

use futures::FutureExt;
use futures::future::BoxFuture;
use hearth_protocol::approvals::{HeldCallDraft, ProposalOrigin};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{RunOutcome, Toolbox};
use crate::approvals::HeldCalls;
use crate::workspace::{ExecuteError, Executed};

/// The longest receipt kept for a held call (characters): a page read can be long, and the
/// receipt is stored with the proposal and read back by the task that asked.
const MAX_RECEIPT: usize = 32 * 1024;

/// Runs approved held calls in contexts from its toolbox.
#[derive(Clone)]
pub struct HeldCallRunner {
    toolbox: Toolbox,
}

impl std::fmt::Debug for HeldCallRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeldCallRunner").finish_non_exhaustive()
    }
}

impl HeldCallRunner {
    /// A runner over `toolbox`.
    pub fn new(toolbox: Toolbox) -> Self {
        Self { toolbox }
    }
}

impl HeldCalls for HeldCallRunner {
    fn run(
        &self,
        draft: &HeldCallDraft,
        origin: ProposalOrigin,
        task_id: Option<&str>,
        claimant: String,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<Executed, ExecuteError>> {
        let ctx = self.toolbox.for_approved(draft, origin, task_id, claimant, cancel);
        let (tool, arguments) = (draft.tool.clone(), draft.arguments.clone());
        async move {
            let output = super::dispatch::run_approved(&ctx, tool, arguments).await;
            match (output.outcome, output.is_error) {
                (Some(RunOutcome::InDoubt(why)), _) => Err(ExecuteError::Uncertain(why)),
                (_, true) => Err(ExecuteError::Rejected(error_text(&output.content))),
                (_, false) => Ok(Executed { receipt: receipt_text(&output.content), settled: false }),
            }
        }
        .boxed()
    }
}

/// The error a tool returned, as words.
fn error_text(content: &str) -> String {
    serde_json::from_str::<Value>(content)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| content.to_owned())
}

/// The tool's result, bounded.
fn receipt_text(content: &str) -> String {
    if content.chars().count() <= MAX_RECEIPT {
        return content.to_owned();
    }
    let mut cut: String = content.chars().take(MAX_RECEIPT).collect();
    cut.push_str(" …(cut)");
    cut
}
