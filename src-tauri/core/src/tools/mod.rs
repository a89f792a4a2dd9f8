//! Tools the agent calls, and the one path every call takes.
//!
//! A model may ask for several tools at once; Hearth runs them one at a time, in order
//! ([`run_serially`]). Once a call settles the run's outcome — a question for the owner, a
//! proposal awaiting review, a finished task — the remaining calls do nothing.

mod pdf_tools;
mod prepare_tools;
mod serial;
mod specs;
mod task_tools;
mod workspace_tools;

use std::future::Future;
use std::pin::Pin;

use hearth_protocol::ToolName;
use tokio_util::sync::CancellationToken;

pub use serial::{PAUSED_RESULT, run_serially};
pub use specs::tool_specs;
pub use pdf_tools::pdf_tool_handler;
pub use prepare_tools::prepare_tool_handler;
pub use task_tools::task_tool_handler;
pub use workspace_tools::{UNTRUSTED_NOTE, workspace_tool_handler};

/// Every handler Hearth has, in the order they are asked.
pub const ALL_HANDLERS: &[ToolHandlerFn] =
    &[task_tool_handler, workspace_tool_handler, prepare_tool_handler, pdf_tool_handler];

use crate::approvals::ApprovalGate;
use crate::files::FileStore;
use crate::store::Store;
use crate::tasks::{TaskContext, TaskEngine};

/// One call as the model sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The model's id for the call.
    pub id: String,
    /// The tool's wire name (may be one Hearth does not know).
    pub name: String,
    /// The arguments, as JSON text (may be malformed).
    pub arguments: String,
}

/// How a call ends the run, when it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    /// The task waits for the owner's answer.
    WaitingInput(String),
    /// The task waits for the owner's review of a proposal.
    WaitingApproval(String),
    /// The task is done.
    Finished(String),
}

/// What a call returns to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// JSON text for the model (results and errors alike: the model can recover from errors).
    pub content: String,
    /// The call failed.
    pub is_error: bool,
    /// The call settled the run's outcome.
    pub outcome: Option<RunOutcome>,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(value: &serde_json::Value) -> Self {
        Self { content: value.to_string(), is_error: false, outcome: None }
    }

    /// An error the model sees and can act on.
    pub fn error(message: impl Into<String>) -> Self {
        Self { content: serde_json::json!({ "error": message.into() }).to_string(), is_error: true, outcome: None }
    }
}

/// What a tool can reach.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The store (reads).
    pub store: Store,
    /// The task engine (delegate_task, agent_status).
    pub tasks: TaskEngine,
    /// The approval gate (prepare tools) and, through it, the workspace (mail, calendar).
    pub approvals: ApprovalGate,
    /// Files and PDFs.
    pub files: FileStore,
    /// The task this call runs in, if any (set_plan, save_artifact, ask_user, finish_task).
    pub task: Option<TaskContext>,
    /// The chat thread, if the call came from a chat turn.
    pub thread_id: Option<String>,
    /// Fires on Stop.
    pub cancel: CancellationToken,
}

/// A boxed tool future.
pub type ToolFuture = Pin<Box<dyn Future<Output = ToolOutput> + Send>>;

/// Runs one known tool. Returns `None` for tools this handler does not implement.
pub type ToolHandlerFn = fn(ToolName, ToolContext, ToolCall, serde_json::Value) -> Option<ToolFuture>;

/// Parses a tool's arguments into its typed form, or an error the model can fix.
pub(crate) fn parse_args<T: serde::de::DeserializeOwned>(tool: ToolName, args: serde_json::Value) -> Result<T, ToolOutput> {
    serde_json::from_value(args)
        .map_err(|err| ToolOutput::error(format!("The arguments for {tool} do not fit ({err}). Fix them and call it again.")))
}
