//! The durable task engine: workers claim due tasks under leases, handlers run them with a
//! context that fences every write to the lease, and the owner's controls apply as
//! compare-and-swaps. A lost lease or a crash never replays work: the task becomes
//! *interrupted* and waits for the owner.

mod context;
mod engine;
mod handler;

pub use context::{TaskContext, TaskError};
pub use engine::{ApprovedStop, EngineConfig, TaskEngine};
pub use handler::{BoxTaskFuture, TaskHandler, TaskOutcome};

/// What an interrupted task says, so the owner knows what to check.
pub const INTERRUPTED_REASON: &str = "Hearth stopped during this run. Review what it did before retrying.";
