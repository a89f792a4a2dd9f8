//! The agent seam: anything that turns a `RunAgentInput` into a stream of AG-UI events.
//!
//! The sample agent, model-backed agents and external AG-UI harnesses all sit behind
//! [`Agent`]; the run driver (`crate::runs`) makes every stream well-formed and stoppable.

mod emit;
pub mod harness;
mod history;
mod model;
pub mod no_model;
pub mod sample;
mod task_loop;

use futures::stream::BoxStream;
use hearth_protocol::agui::{Event, Message, RunAgentInput};
use tokio_util::sync::CancellationToken;

pub use emit::Emitter;
pub use history::{HistoryFold, conversation_from_events};
pub use model::{CONTINUE_NOTE, MAX_TOOL_STEPS, ModelAgent, SYSTEM_PROMPT};

/// Which of Hearth's tools a model is offered (all, when there is none): a local model is
/// offered what prepares or changes things only for the task families it passed
/// (`local_model::probe::offered`). Its answer's grammar is built from the offered tools, so
/// a tool not offered cannot be called.
pub type ToolOffer = std::sync::Arc<dyn Fn(hearth_protocol::ToolName) -> bool + Send + Sync>;

/// Whether `offer` lets a model see the tool named `name` (Hearth's; a client's own tools are
/// the client's business).
pub(crate) fn offers(offer: Option<&ToolOffer>, name: &str) -> bool {
    match (offer, hearth_protocol::ToolName::from_wire(name)) {
        (None, _) | (Some(_), None) => true,
        (Some(offer), Some(tool)) => offer(tool),
    }
}
pub use no_model::NoModelHandler;
pub use sample::SampleAgent;
pub use task_loop::{MAX_TASK_RUN, MAX_TASK_STEPS, ModelTaskHandler, RunDeadline};

/// Produces a run's AG-UI events.
///
/// The stream starts with `RUN_STARTED` and should end with `RUN_FINISHED` or `RUN_ERROR`;
/// the driver repairs a stream that doesn't. `cancel` fires when the owner presses Stop:
/// pass it into every I/O future so the effect itself stops, not just the stream.
pub trait Agent: Send + Sync + 'static {
    /// Starts a run.
    fn run(&self, input: RunAgentInput, cancel: CancellationToken) -> BoxStream<'static, Event>;
}

/// Builds the tool context of one chat run from its thread id, its run id and its
/// cancellation. Shared by every agent that runs Hearth's tools (sample, model, external
/// harness), so they all key effects and proposals the same way.
pub type ToolContextFactory = std::sync::Arc<dyn Fn(&str, &str, CancellationToken) -> crate::tools::ToolContext + Send + Sync>;

/// The text of the newest user message in the input (what the owner just said).
pub fn last_user_text(input: &RunAgentInput) -> Option<String> {
    input.messages.iter().rev().find_map(|message| match message {
        Message::User(user) => Some(user.content.to_text()),
        _ => None,
    })
}
