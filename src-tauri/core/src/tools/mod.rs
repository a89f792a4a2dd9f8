//! Tools the agent calls, and the one path every call takes.
//!
//! A tool is a type implementing one of the [`traits`], one per effect class; [`registry`] maps
//! every `ToolName` to its handler type by an exhaustive `match`;
//! [`dispatch`] parses each call once and decides by its effect class alone — read directly,
//! effect inside the journal, prepare to the approval gate — under the one operation-key
//! function ([`OperationScope::key`]). A model may ask for several tools at once; Hearth runs
//! them one at a time, in order ([`run_serially`]). Once a call settles the run's outcome — a
//! question for the owner, a proposal awaiting review, a finished task — the remaining calls
//! do nothing.

mod context;
mod dispatch;
mod handlers;
mod held;
mod keyed;
pub(crate) mod mcp_call;
mod registry;
mod specs;
mod traits;

pub use context::{LiveOutput, OperationKey, OperationScope, StepId, TaskDesk, ToolContext, Toolbox, ToolboxParts, Vision};
pub(crate) use dispatch::call;
pub(crate) use keyed::decided_note;
/// The tools Hearth's own workflows and screens call by type ([`call`]).
pub(crate) mod typed {
    pub(crate) use super::handlers::browser::{ReadWeb, UrlArgs};
    pub(crate) use super::handlers::computer::{RunArgs, RunComputerCommand, WriteArgs, WriteComputerFile};
    pub(crate) use super::handlers::pdf::{FillArgs, FillPdf, ImportArgs, ImportPdf};
    pub(crate) use super::handlers::prepare::PrepareEmail;
    pub(crate) use super::handlers::tasks::{SaveArtifact, SaveArtifactArgs};
    pub(crate) use crate::approvals::EmailArgs;
}
pub use dispatch::{PAUSED_RESULT, dispatch, fuzz_parse_arguments, run_serially};
pub use handlers::mail::UNTRUSTED_NOTE;
pub use held::HeldCallRunner;
pub use mcp_call::{MCP_UNTRUSTED_NOTE, plugin_specs};
pub use specs::tool_specs;

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
    /// An effect of this call may or may not have happened (or another run holds it): the
    /// run stops here, so nothing — the model least of all — goes on past the doubt.
    InDoubt(String),
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
    /// Pictures for the model after the text (look_page's); nothing else carries any.
    pub images: Vec<crate::providers::ImagePart>,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(value: &serde_json::Value) -> Self {
        Self { content: value.to_string(), is_error: false, outcome: None, images: Vec::new() }
    }

    /// An error the model sees and can act on.
    pub fn error(message: impl Into<String>) -> Self {
        Self { content: serde_json::json!({ "error": message.into() }).to_string(), is_error: true, outcome: None, images: Vec::new() }
    }

    /// The same error, carrying the failure id of the effect that failed: in its message (which
    /// the card shows as it is, and the model may repeat to the owner) and as `failureId`.
    /// A result that is not an error is returned as it is.
    pub fn with_failure(mut self, id: &hearth_protocol::ids::FailureId) -> Self {
        if !self.is_error {
            return self;
        }
        if let Ok(serde_json::Value::Object(mut map)) = serde_json::from_str::<serde_json::Value>(&self.content) {
            if let Some(serde_json::Value::String(error)) = map.get_mut("error") {
                *error = crate::failures::with_failure_id(error, id);
            }
            map.insert("failureId".into(), serde_json::Value::String(id.to_string()));
            self.content = serde_json::Value::Object(map).to_string();
        }
        if let Some(RunOutcome::InDoubt(message)) = &mut self.outcome {
            *message = crate::failures::with_failure_id(message, id);
        }
        self
    }

    /// An effect that may or may not have happened: the error, marked `inDoubt` so a card can
    /// tell it from a refusal (nothing happened), and the run's outcome set to in doubt.
    pub fn in_doubt(message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            content: serde_json::json!({ "error": message, "inDoubt": true }).to_string(),
            is_error: true,
            outcome: Some(RunOutcome::InDoubt(message)),
            images: Vec::new(),
        }
    }
}
