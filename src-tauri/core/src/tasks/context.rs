//! What a running handler holds: its task, its run, its lease, its cancellation — and the
//! only ways to write, each fenced to the lease.

use std::future::Future;

use hearth_protocol::tasks::{PlanStep, TaskEventKind};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::error::CoreError;
use crate::journal::{EffectError, Journal, JournalError, Operation, Receipt};
use crate::store::Store;
use crate::store::journal::OpKey;
use crate::store::tasks::{TaskRow, task_scope};

/// Why a handler must stop or an effect was refused.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// The owner pressed Stop (cancel or pause), or Hearth is closing.
    #[error("the run was stopped")]
    Cancelled,
    /// This run's lease is gone: interrupted, taken over or the task left `running`.
    #[error("this run no longer holds the lease of task {task_id} (it was interrupted, paused, cancelled or taken over); it must stop")]
    Fenced {
        /// The task.
        task_id: String,
    },
    /// The journal refused or failed the effect.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// Storage failed.
    #[error(transparent)]
    Core(#[from] CoreError),
}

/// A handler's handle on its run.
#[derive(Debug, Clone)]
pub struct TaskContext {
    pub(super) store: Store,
    pub(super) journal: Journal,
    pub(super) task: TaskRow,
    pub(super) run_id: String,
    pub(super) lease_id: String,
    pub(super) cancel: CancellationToken,
    pub(super) changes: broadcast::Sender<String>,
}

impl TaskContext {
    /// The task as it was claimed (input, state, attempts).
    pub fn task(&self) -> &TaskRow {
        &self.task
    }

    /// The store, for reads a handler's tools need.
    pub fn task_store(&self) -> Store {
        self.store.clone()
    }

    /// This run's id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// This run's lease.
    pub fn lease_id(&self) -> &str {
        &self.lease_id
    }

    /// Fires when the owner stops the task or the lease is lost; pass it into every I/O future.
    pub fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Fails unless this run may go on: not cancelled, the lease still held, the task still running.
    pub async fn guard(&self) -> Result<(), TaskError> {
        if self.cancel.is_cancelled() {
            return Err(TaskError::Cancelled);
        }
        if !self.store.holds_lease(&self.task.id, &self.lease_id).await? {
            return Err(self.fenced());
        }
        Ok(())
    }

    /// Merges `patch` into the task's durable state (RFC 7386), fenced to the lease.
    pub async fn checkpoint(&self, patch: &serde_json::Value) -> Result<(), TaskError> {
        if self.cancel.is_cancelled() {
            return Err(TaskError::Cancelled);
        }
        if !self.store.checkpoint(&self.task.id, &self.lease_id, patch).await? {
            return Err(self.fenced());
        }
        self.changed();
        Ok(())
    }

    /// Replaces the plan, fenced to the lease.
    pub async fn set_plan(&self, plan: &[PlanStep]) -> Result<(), TaskError> {
        self.guard().await?;
        if !self.store.set_plan(&self.task.id, &self.lease_id, plan).await? {
            return Err(self.fenced());
        }
        if !self
            .store
            .append_task_event_fenced(&self.task.id, &self.lease_id, &self.run_id, TaskEventKind::Plan, &plan_summary(plan))
            .await?
        {
            return Err(self.fenced());
        }
        self.changed();
        Ok(())
    }

    /// Records something that happened in this run.
    pub async fn event(&self, kind: TaskEventKind, message: &str) -> Result<(), TaskError> {
        if self.cancel.is_cancelled() {
            return Err(TaskError::Cancelled);
        }
        if !self.store.append_task_event_fenced(&self.task.id, &self.lease_id, &self.run_id, kind, message).await? {
            return Err(self.fenced());
        }
        self.changed();
        Ok(())
    }

    /// (task id, lease id): what a write of this run is fenced to.
    pub fn fence(&self) -> (&str, &str) {
        (&self.task.id, &self.lease_id)
    }

    /// Performs an effect at most once per `op_id` for this task, through the journal, fenced
    /// to this run's lease and claimed by this run. `op_id` must be a step the task owns (a
    /// stable name, or the step counter of its conversation), never a model's call id.
    pub(crate) async fn effect<F, Fut>(&self, op_id: &str, tool: &str, action: &serde_json::Value, effect: F) -> Result<Receipt, TaskError>
    where
        F: FnOnce(CancellationToken) -> Fut + Send + 'static,
        Fut: Future<Output = Result<serde_json::Value, EffectError>> + Send + 'static,
    {
        self.guard().await?;
        let scope = task_scope(&self.task.id);
        let op = Operation {
            key: OpKey { scope: &scope, op_id },
            tool,
            action,
            claimant: &self.run_id,
            fence: Some((self.task.id.as_str(), self.lease_id.as_str())),
            cancel: &self.cancel,
        };
        Ok(self.journal.perform(&op, effect).await?)
    }

    /// The test-only door to [`TaskContext::effect`] for the engine's own tests and examples
    /// (a test effect that is no tool). Product code goes through `tools::dispatch`.
    #[doc(hidden)]
    pub async fn test_effect<F, Fut>(&self, op_id: &str, tool: &str, action: &serde_json::Value, effect: F) -> Result<Receipt, TaskError>
    where
        F: FnOnce(CancellationToken) -> Fut + Send + 'static,
        Fut: Future<Output = Result<serde_json::Value, EffectError>> + Send + 'static,
    {
        self.effect(op_id, tool, action, effect).await
    }

    fn fenced(&self) -> TaskError {
        TaskError::Fenced { task_id: self.task.id.clone() }
    }

    fn changed(&self) {
        // No subscriber is fine: nobody is watching.
        let _ = self.changes.send(self.task.id.clone());
    }
}

fn plan_summary(plan: &[PlanStep]) -> String {
    let steps: Vec<&str> = plan.iter().map(|s| s.title.as_str()).collect();
    format!("Plan: {}", steps.join(" → "))
}

impl From<crate::store::StoreError> for TaskError {
    fn from(err: crate::store::StoreError) -> Self {
        TaskError::Core(err.into())
    }
}
