//! What a task kind implements.

use std::future::Future;
use std::pin::Pin;

use super::context::TaskContext;

/// A boxed handler future (handlers are stored as trait objects by kind).
pub type BoxTaskFuture = Pin<Box<dyn Future<Output = TaskOutcome> + Send>>;

/// How a run ended, as the handler decided.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskOutcome {
    /// Done, with a result for the owner.
    Succeeded(String),
    /// Gave up; the message says why and what to do.
    Failed(String),
    /// Needs an answer from the owner.
    WaitingInput(String),
    /// Needs the owner to approve a proposal (its id).
    WaitingApproval(String),
    /// Run again at this time (Unix ms).
    Scheduled(i64),
    /// Stop taking turns until the owner resumes (a monitor that keeps failing); the reason
    /// is shown as the task's error.
    Paused(String),
    /// An effect may or may not have happened: the task waits for the owner's review
    /// ("Retry after review").
    Interrupted(String),
    /// The run was stopped (cancelled, paused or fenced): record nothing.
    Stopped,
}

/// Runs tasks of one kind.
pub trait TaskHandler: Send + Sync + 'static {
    /// Runs one attempt. Use `ctx.guard()` between steps and `tools::dispatch` for every
    /// effect (it runs them through the journal), so Stop and a lost lease reach them.
    fn run(&self, ctx: TaskContext) -> BoxTaskFuture;
}

impl<F, Fut> TaskHandler for F
where
    F: Fn(TaskContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = TaskOutcome> + Send + 'static,
{
    fn run(&self, ctx: TaskContext) -> BoxTaskFuture {
        Box::pin(self(ctx))
    }
}
