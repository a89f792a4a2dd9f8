//! The handler for open-ended tasks while no model is configured: they wait, saying why.

use hearth_protocol::tasks::TaskEventKind;

use crate::tasks::{BoxTaskFuture, TaskContext, TaskHandler, TaskOutcome};

/// What an open-ended task says while Hearth has no model.
pub const MODEL_REQUIRED: &str = "A model is required for this task — add one in Settings, then say continue.";

/// Parks agent and plan tasks in `waiting_input` until a model exists.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoModelHandler;

impl TaskHandler for NoModelHandler {
    fn run(&self, ctx: TaskContext) -> BoxTaskFuture {
        Box::pin(async move {
            match ctx.event(TaskEventKind::Observation, "No model is configured.").await {
                Ok(()) => TaskOutcome::WaitingInput(MODEL_REQUIRED.to_owned()),
                Err(_) => TaskOutcome::Stopped,
            }
        })
    }
}
