//! Dispatching one effect through the journal.

use std::future::Future;

use tokio_util::sync::CancellationToken;

use super::canonical::{action_hash, canonical_json};
use crate::error::CoreError;
use crate::store::Store;

/// How an effect ended, as its receipt says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiptStatus {
    /// It happened.
    Succeeded,
    /// It definitely did not happen.
    Failed,
    /// Stop reached it while it ran.
    Interrupted,
}

/// The stored outcome of an operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Receipt {
    /// How it ended.
    pub status: ReceiptStatus,
    /// What the effect returned (or why it failed).
    pub value: serde_json::Value,
    /// `true` when this receipt came from the journal, not from a dispatch just now.
    pub replayed: bool,
}

/// An effect's failure, as the effect knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EffectError {
    /// It did not happen (refused before sending, validation, a definite 4xx …).
    Failed(String),
    /// It may have happened (connection lost after sending, timeout …).
    Uncertain(String),
}

/// Why an operation was not performed.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Stopped before the effect started; nothing happened.
    #[error("interrupted before execution: the run was stopped before {op_id} started, so nothing was done")]
    Cancelled {
        /// The operation.
        op_id: String,
    },
    /// The same operation id arrived with a different action.
    #[error(
        "operation {op_id} was already recorded with different content; a changed action needs a new operation and a new review"
    )]
    Conflict {
        /// The operation.
        op_id: String,
    },
    /// A previous attempt may have happened; the owner must review before it is retried.
    #[error(
        "operation {op_id} may already have happened (Hearth lost track of it); review it in Activity before retrying"
    )]
    OutcomeUnknown {
        /// The operation.
        op_id: String,
    },
    /// The task's lease is gone (interrupted, taken over, expired): this run may not act.
    #[error("operation {op_id} was refused: this run no longer holds its task's lease, so it must stop")]
    Fenced {
        /// The operation.
        op_id: String,
    },
    /// Another dispatch of the same operation is in flight right now.
    #[error("operation {op_id} is being performed right now; wait for it to finish")]
    InFlight {
        /// The operation.
        op_id: String,
    },
    /// The journal's storage failed.
    #[error(transparent)]
    Core(#[from] CoreError),
}

/// Runs effects through the journal.
#[derive(Debug, Clone)]
pub struct Journal {
    store: Store,
}

impl Journal {
    /// A journal over `store`.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Performs `effect` at most once for (`scope`, `op_id`).
    ///
    /// The row holding `action` is committed before `effect` is called; `cancel` is checked
    /// before and after that write, raced against the effect, and passed into it so the I/O
    /// itself can stop. With a `fence` (task id, lease id) — every task run passes one — the
    /// intent is written only while that lease still holds, in the same statement, so a run
    /// whose lease lapsed a moment after its last guard cannot start an effect.
    #[allow(clippy::too_many_arguments, reason = "the operation's key and content, its cancellation and fence, and the effect")]
    pub async fn perform<F, Fut>(
        &self,
        scope: &str,
        op_id: &str,
        tool: &str,
        action: &serde_json::Value,
        cancel: &CancellationToken,
        fence: Option<(&str, &str)>,
        effect: F,
    ) -> Result<Receipt, JournalError>
    where
        F: FnOnce(CancellationToken) -> Fut,
        Fut: Future<Output = Result<serde_json::Value, EffectError>>,
    {
        let cancelled = || JournalError::Cancelled { op_id: op_id.to_owned() };
        if cancel.is_cancelled() {
            return Err(cancelled());
        }
        let hash = action_hash(tool, action);
        let canonical = canonical_json(action);
        let inserted = match fence {
            Some(fence) => self.store.insert_operation_fenced(scope, op_id, tool, &canonical, &hash, fence).await?,
            None => self.store.insert_operation(scope, op_id, tool, &canonical, &hash).await?,
        };
        if !inserted {
            if fence.is_some() && self.store.get_operation(scope, op_id).await?.is_none() {
                return Err(JournalError::Fenced { op_id: op_id.to_owned() });
            }
            match self.classify_existing(scope, op_id, &hash, fence).await? {
                Existing::Dispatch => {}
                Existing::Replay => return self.stored_receipt(scope, op_id).await,
                Existing::Refuse(err) => return Err(err),
            }
        }
        if cancel.is_cancelled() {
            // Nothing started: withdraw the intent so a later retry may perform it — but only
            // an intent written just now; a row taken back from `acknowledged` goes back there.
            if inserted {
                self.store.withdraw_operation(scope, op_id).await?;
            } else {
                self.store.settle_operation(scope, op_id, "dispatching", "acknowledged", None).await?;
            }
            return Err(cancelled());
        }

        let running = effect(cancel.clone());
        tokio::pin!(running);
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            outcome = &mut running => Some(outcome),
        };
        let Some(outcome) = outcome else {
            let receipt = serde_json::json!({ "interrupted": "Stopped while it was running." });
            self.store.settle_operation(scope, op_id, "dispatching", "interrupted", Some(&receipt.to_string())).await?;
            // Let the effect observe the cancellation and finish; whatever it reports now
            // cannot change the receipt (the settle below is a CAS from `dispatching`).
            let late = running.await;
            if late.is_ok() {
                tracing::warn!(scope, op_id, "an effect reported success after Stop; its receipt stays interrupted");
            }
            return Ok(Receipt { status: ReceiptStatus::Interrupted, value: receipt, replayed: false });
        };
        let (status, to, value) = match outcome {
            Ok(value) => (ReceiptStatus::Succeeded, "succeeded", value),
            Err(EffectError::Failed(why)) => (ReceiptStatus::Failed, "failed", serde_json::json!({ "error": why })),
            Err(EffectError::Uncertain(why)) => {
                let receipt = serde_json::json!({ "error": why });
                self.store.settle_operation(scope, op_id, "dispatching", "outcome_unknown", Some(&receipt.to_string())).await?;
                return Err(JournalError::OutcomeUnknown { op_id: op_id.to_owned() });
            }
        };
        if !self.store.settle_operation(scope, op_id, "dispatching", to, Some(&value.to_string())).await? {
            // Someone else (a lease sweep) already decided this row; report what is stored.
            return self.stored_receipt(scope, op_id).await;
        }
        Ok(Receipt { status, value, replayed: false })
    }

    /// What to do about an operation that already has a row.
    async fn classify_existing(
        &self,
        scope: &str,
        op_id: &str,
        hash: &str,
        fence: Option<(&str, &str)>,
    ) -> Result<Existing, JournalError> {
        let refuse = |err: fn(String) -> JournalError| Ok(Existing::Refuse(err(op_id.to_owned())));
        let Some(row) = self.store.get_operation(scope, op_id).await? else {
            // Withdrawn between our insert attempt and this read: another dispatcher owns it.
            return refuse(|op_id| JournalError::InFlight { op_id });
        };
        if row.action_hash != hash {
            return refuse(|op_id| JournalError::Conflict { op_id });
        }
        match row.status.as_str() {
            "succeeded" | "failed" | "interrupted" => Ok(Existing::Replay),
            // The owner reviewed an unknown outcome and asked for it again: take it back.
            "acknowledged" if self.store.reclaim_acknowledged(scope, op_id, fence).await? => Ok(Existing::Dispatch),
            "outcome_unknown" | "acknowledged" => refuse(|op_id| JournalError::OutcomeUnknown { op_id }),
            _ => refuse(|op_id| JournalError::InFlight { op_id }),
        }
    }

    async fn stored_receipt(&self, scope: &str, op_id: &str) -> Result<Receipt, JournalError> {
        let row = self.store.get_operation(scope, op_id).await?.ok_or_else(|| JournalError::InFlight { op_id: op_id.to_owned() })?;
        let value = row.receipt.as_deref().and_then(|r| serde_json::from_str(r).ok()).unwrap_or(serde_json::Value::Null);
        let status = match row.status.as_str() {
            "succeeded" => ReceiptStatus::Succeeded,
            "failed" => ReceiptStatus::Failed,
            "interrupted" => ReceiptStatus::Interrupted,
            "outcome_unknown" | "acknowledged" => return Err(JournalError::OutcomeUnknown { op_id: op_id.to_owned() }),
            _ => return Err(JournalError::InFlight { op_id: op_id.to_owned() }),
        };
        Ok(Receipt { status, value, replayed: true })
    }
}

/// What an existing row means for a new request with the same key.
enum Existing {
    /// Perform the effect (the row is ours, `dispatching`).
    Dispatch,
    /// Return the stored receipt; perform nothing.
    Replay,
    /// Perform nothing; report this.
    Refuse(JournalError),
}
