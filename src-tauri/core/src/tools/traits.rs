//! What a tool is: one trait per effect class, and the registry's visitor.
//!
//! A tool is a type implementing [`DirectTool`] (Read and Control), [`EffectTool`] or
//! [`PrepareTool`]; [`super::registry`] decides which, per `ToolName`, and
//! [`super::dispatch`] runs it by that class alone. The handlers and the dispatcher both
//! stand on these traits, so neither reaches into the other through the registry.

use std::future::Future;

use hearth_protocol::ToolName;
use hearth_protocol::approvals::ProposalDraft;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::ToolOutput;
use super::context::{StepId, ToolContext};
use crate::journal::{EffectError, Receipt, ReceiptStatus};

/// What every tool declares.
pub(crate) trait Tool: 'static {
    /// Its name on the wire.
    const NAME: ToolName;
    /// What the model is told it does.
    const DESCRIPTION: &'static str;
    /// Its arguments, parsed once; the JSON Schema the model sees is generated from this type.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
}

/// Read and Control tools: they run directly. Control tools change only Hearth's own
/// bookkeeping, through the fenced task context or the task desk.
pub(crate) trait DirectTool: Tool {
    /// Runs the call.
    fn run(ctx: &ToolContext, step: &StepId, args: Self::Args) -> impl Future<Output = ToolOutput> + Send;
}

/// Effect tools: they change the world, so they run only inside the journal.
pub(crate) trait EffectTool: Tool {
    /// An operation id the caller gave in the arguments, when the tool takes one: the call is
    /// then keyed by it (within the task or chat run) instead of by its step, so asking again
    /// under the same id returns the first receipt.
    fn operation_id(_args: &Self::Args) -> Option<&str> {
        None
    }

    /// Checks the arguments and returns the full action the journal records (any byte of it
    /// changed under the same key is a conflict), or an error for the model.
    fn action(args: &Self::Args) -> Result<Value, ToolOutput>;

    /// The effect itself. It must honour `cancel` (stop its I/O, or report
    /// [`EffectError::Failed`] when it stopped before anything irreversible).
    fn perform(
        ctx: ToolContext,
        args: Self::Args,
        cancel: CancellationToken,
    ) -> impl Future<Output = Result<Value, EffectError>> + Send + 'static;

    /// What the model sees of a receipt (or of the journal's refusal).
    fn present(_ctx: &ToolContext, receipt: Result<Receipt, String>) -> impl Future<Output = ToolOutput> + Send {
        async move { present_receipt(receipt) }
    }
}

/// Prepare tools: they turn arguments into a normalized draft; the gate stores it for the
/// owner's review. They never send or write.
pub(crate) trait PrepareTool: Tool {
    /// The normalized draft, or an error for the model.
    fn draft(ctx: &ToolContext, args: Self::Args) -> impl Future<Output = Result<ProposalDraft, ToolOutput>> + Send;
}

/// What the registry is asked to do with a tool's type.
pub(crate) trait Visitor {
    /// The answer.
    type Out;
    /// A Read or Control tool.
    fn direct<T: DirectTool>(self) -> Self::Out;
    /// An Effect tool.
    fn effect<T: EffectTool>(self) -> Self::Out;
    /// A Prepare tool.
    fn prepare<T: PrepareTool>(self) -> Self::Out;
}

/// The default presentation of a receipt.
pub(crate) fn present_receipt(receipt: Result<Receipt, String>) -> ToolOutput {
    match receipt {
        Ok(r) if r.status == ReceiptStatus::Succeeded => ToolOutput::ok(&r.value),
        Ok(r) => ToolOutput::error(r.value.get("error").and_then(Value::as_str).map_or_else(|| r.value.to_string(), str::to_owned)),
        Err(message) => ToolOutput::error(message),
    }
}
