//! Dispatching one effect through the journal.
//!
//! The rules, each an invariant of `docs/ARCHITECTURE.md` ("Durable tasks and the four
//! controls"):
//! - the full canonical action is committed (`dispatching`, with its claimant) before the
//!   effect starts, fenced to the task's lease when there is one;
//! - the same key and action returns the stored receipt; a changed action is a conflict;
//! - a Stop that arrives before the effect was first polled withdraws the intent (nothing
//!   happened, a later retry may perform it) — there is no window in which an effect is
//!   started after Stop;
//! - a Stop while it runs makes the row `outcome_unknown` at once (durable before anything
//!   else), then waits for the effect to honour its token and records what it reported as
//!   the late result — never discarded;
//! - `outcome_unknown` is never performed again until the owner acknowledges it; an
//!   acknowledged row whose late result was a success becomes that success, so the owner's
//!   Retry never performs an effect twice;
//! - a `failed` row (definitely did not happen) is replayed to the run that failed it and may
//!   be performed again by a later run;
//! - once its intent is committed, an effect runs in a task of its own, with its settling: a
//!   caller that goes away (a run's time limit, a panic, shutdown) cannot cut it off or lose
//!   what it reports. A task run's effects are tracked under the run, and the engine fires
//!   the run's Stop and waits for them ([`Journal::settled`]) before it records the run's end;
//!   an effect that panics is `outcome_unknown`.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use super::canonical::{action_hash, canonical_json};
use crate::error::CoreError;
use crate::store::journal::{OpKey, OpStatus};
use crate::store::{Store, now_ms};

/// How an effect ended, as its receipt says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiptStatus {
    /// It happened.
    Succeeded,
    /// It definitely did not happen.
    Failed,
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
    /// It did not happen (refused before sending, validation, a definite 4xx, or it saw the
    /// Stop before doing anything irreversible).
    Failed(String),
    /// It may have happened (connection lost after sending, timeout …).
    Uncertain(String),
}

/// Why an operation was not performed (or not known to be).
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Stopped before the effect started; nothing happened.
    #[error("interrupted before execution: the run was stopped before {op_id} started, so nothing was done")]
    Cancelled {
        /// The operation.
        op_id: String,
    },
    /// Stopped while the effect ran: it may or may not have happened. The row is
    /// `outcome_unknown`, the task is flagged, and what the effect reported afterwards is kept.
    #[error(
        "{op_id} was stopped while it was running, so it may or may not have happened; the owner reviews it before \
         anything is retried"
    )]
    Stopped {
        /// The operation.
        op_id: String,
    },
    /// The same operation id arrived with a different action.
    #[error("operation {op_id} was already recorded with different content; a changed action needs a new operation and a new review")]
    Conflict {
        /// The operation.
        op_id: String,
    },
    /// A previous attempt may have happened; the owner must review before it is retried.
    #[error("operation {op_id} may already have happened (Hearth lost track of it); review it in Activity before retrying")]
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

/// One operation as a caller hands it to [`Journal::perform`].
#[derive(Debug, Clone, Copy)]
pub struct Operation<'a> {
    /// Its scope and id (from [`crate::tools::OperationScope::key`] for every tool caller).
    pub key: OpKey<'a>,
    /// The tool that performs it.
    pub tool: &'a str,
    /// The full validated action: any byte changed is a different action.
    pub action: &'a serde_json::Value,
    /// The run performing it (task run id or chat run id).
    pub claimant: &'a str,
    /// (task id, lease id) for a task's run: the intent is written only while it holds.
    pub fence: Option<(&'a str, &'a str)>,
    /// The run's Stop.
    pub cancel: &'a CancellationToken,
}

/// Awaited after an effect finished and before the journal sees its result (tests make an
/// effect "slow" with it, deterministically, instead of racing a sleep).
pub type EffectHook = Arc<dyn Fn(&str) -> BoxFuture<'static, ()> + Send + Sync>;

/// Test hooks, each awaited with the tool's name.
#[derive(Default)]
struct Hooks {
    /// After the intent is committed, before the effect is first polled.
    intent: Option<EffectHook>,
    /// After the effect ended, before the journal sees its result.
    effect: Option<EffectHook>,
    /// Test hook: the next recording of an effect's result fails, as a full disk would.
    fail_next_settle: bool,
}

/// Runs effects through the journal.
#[derive(Clone)]
pub struct Journal {
    store: Store,
    /// This process, recorded on a stopped effect until it reports.
    identity: Arc<str>,
    hooks: Arc<Mutex<Hooks>>,
    /// The effects of each task run (by run id) still running, so the run's end can wait for them.
    runs: Arc<Mutex<HashMap<String, TaskTracker>>>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal").finish_non_exhaustive()
    }
}

impl Journal {
    /// The process this journal runs in (the claimant of the owner's own operations, so a
    /// start-up after a crash can tell which of them were cut off).
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// A journal over `store`, in the process named `identity`.
    pub fn new(store: Store, identity: &crate::process::ProcessIdentity) -> Self {
        Self { store, identity: identity.as_str().into(), hooks: Arc::default(), runs: Arc::default() }
    }

    fn hooks(&self) -> std::sync::MutexGuard<'_, Hooks> {
        self.hooks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn runs(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskTracker>> {
        // Each critical section is one insert, lookup or removal: a panic cannot leave it torn.
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until every effect task run `claimant` started has ended and recorded what it
    /// did (for a stopped one, its late result). The engine calls it after the run's handler
    /// returned — or was dropped by its time limit, or panicked — and after firing the run's
    /// Stop, so the run is recorded as ended only once nothing of it can still act.
    pub async fn settled(&self, claimant: &str) {
        let tracker = self.runs().remove(claimant);
        if let Some(tracker) = tracker {
            tracker.close();
            tracker.wait().await;
        }
    }

    /// Test hook: awaited (with the tool's name) after every effect ends, before its result
    /// is recorded. `None` removes it.
    #[doc(hidden)]
    pub fn set_effect_hook(&self, hook: Option<EffectHook>) {
        self.hooks().effect = hook;
    }

    /// Test hook: awaited (with the tool's name) after an intent is committed and before its
    /// effect is first polled — the window in which a Stop must still prevent the effect.
    #[doc(hidden)]
    pub fn set_intent_hook(&self, hook: Option<EffectHook>) {
        self.hooks().intent = hook;
    }

    /// Test hook: the next time an effect's result is to be recorded, the store fails (as a
    /// full disk or a lost database would), after the effect itself ran.
    #[doc(hidden)]
    pub fn fail_next_settle(&self) {
        self.hooks().fail_next_settle = true;
    }

    /// Performs `effect` at most once for the operation's key. See the module docs.
    ///
    /// Once the effect has started, a failure to record what it did is a doubt, never a plain
    /// error: the effect may have happened, so the answer is `OutcomeUnknown` (the row stays
    /// `dispatching` under this claimant, and the run's end strands it for the owner's review),
    /// and nothing — the model least of all — may take it for "nothing happened" and redo it.
    pub async fn perform<F, Fut>(&self, op: &Operation<'_>, effect: F) -> Result<Receipt, JournalError>
    where
        F: FnOnce(CancellationToken) -> Fut + Send + 'static,
        Fut: Future<Output = Result<serde_json::Value, EffectError>> + Send + 'static,
    {
        let op_id = op.key.op_id;
        if op.cancel.is_cancelled() {
            return Err(JournalError::Cancelled { op_id: op_id.to_owned() });
        }
        let hash = action_hash(op.tool, op.action);
        let canonical = canonical_json(op.action);
        let taken = if self.store.insert_operation(op.key, op.tool, &canonical, &hash, op.claimant, op.fence).await? {
            Taken::Inserted
        } else {
            match self.classify_existing(op, &hash).await? {
                Existing::Dispatch(taken) => taken,
                Existing::Replay => return self.stored_receipt(op.key).await,
                Existing::Refuse(err) => return Err(err),
            }
        };

        // From here the effect and its settling run in a task of their own (no await between
        // the committed intent and the spawn): dropping this caller leaves them running.
        let held = Held {
            scope: op.key.scope.to_owned(),
            op_id: op_id.to_owned(),
            tool: op.tool.to_owned(),
            claimant: op.claimant.to_owned(),
            cancel: op.cancel.clone(),
        };
        let journal = self.clone();
        // In the caller's span, so its logs still name the run.
        let run = async move { journal.run_effect(&held, taken, effect).await }.instrument(tracing::Span::current());
        let handle = match op.fence {
            // A task run's effect: its run's end waits for it.
            Some(_) => self.runs().entry(op.claimant.to_owned()).or_default().spawn(run),
            None => tokio::spawn(run),
        };
        match handle.await {
            Ok(outcome) => outcome,
            // The journal's own task failed (a bug): the row stays `dispatching` until the run's
            // end or the next start makes it `outcome_unknown`; the caller is told as much now.
            Err(err) => {
                tracing::error!(op_id, error = %err, "an effect's journal task ended abnormally");
                Err(JournalError::OutcomeUnknown { op_id: op_id.to_owned() })
            }
        }
    }

    /// Runs the effect of an intent this dispatch holds, and records how it ended. Once the
    /// effect has started, a store failure while recording it is a doubt (see [`Self::perform`]).
    async fn run_effect<F, Fut>(&self, op: &Held, taken: Taken, effect: F) -> Result<Receipt, JournalError>
    where
        F: FnOnce(CancellationToken) -> Fut,
        Fut: Future<Output = Result<serde_json::Value, EffectError>>,
    {
        let started = AtomicBool::new(false);
        match self.run_effect_once(op, taken, effect, &started).await {
            Err(JournalError::Core(err)) if started.load(Ordering::SeqCst) => {
                tracing::error!(scope = op.scope, op_id = op.op_id, error = %err, "an effect ran but its result could not be recorded; it is left in doubt");
                Err(JournalError::OutcomeUnknown { op_id: op.op_id.clone() })
            }
            other => other,
        }
    }

    async fn run_effect_once<F, Fut>(&self, op: &Held, taken: Taken, effect: F, started: &AtomicBool) -> Result<Receipt, JournalError>
    where
        F: FnOnce(CancellationToken) -> Fut,
        Fut: Future<Output = Result<serde_json::Value, EffectError>>,
    {
        let op_id = op.op_id.as_str();
        let intent_hook = self.hooks().intent.clone();
        if let Some(hook) = intent_hook {
            hook(&op.tool).await;
        }
        let hook = self.hooks().effect.clone();
        let token = op.cancel.clone();
        let running = async {
            started.store(true, Ordering::SeqCst);
            // An effect that panics stopped somewhere in the middle: it may or may not have
            // happened. (What it held is dropped with it; the computer's admission then stops
            // the container before its lock is released.)
            let outcome = AssertUnwindSafe(async move { effect(token).await }).catch_unwind().await.unwrap_or_else(|_| {
                tracing::error!(op_id, tool = %op.tool, "an effect panicked; it may or may not have happened");
                Err(EffectError::Uncertain("it stopped midway on a bug in Hearth (please report it)".into()))
            });
            if let Some(hook) = hook {
                hook(&op.tool).await;
            }
            outcome
        };
        tokio::pin!(running);
        // Biased to Stop: if it has fired by the first poll, the effect is never polled.
        let outcome = tokio::select! {
            biased;
            () = op.cancel.cancelled() => None,
            outcome = &mut running => Some(outcome),
        };
        let outcome = match outcome {
            None if !started.load(Ordering::SeqCst) => {
                self.undo(op, taken).await?;
                return Err(JournalError::Cancelled { op_id: op_id.to_owned() });
            }
            None => {
                // Uncertain, durably; meanwhile the effect (which has the token) keeps being
                // polled to its end — it may hold the store's writer right now, so leaving it
                // unpolled while marking the row would deadlock. What it reports is kept.
                let (marked, late) = tokio::join!(self.mark_stopped(op), &mut running);
                marked?;
                return self.record_late(op, &late).await;
            }
            // Stop arrived while the effect ran, even if it then finished in the same poll: the
            // owner stopped it, so it is reviewed like any effect Stop reached.
            Some(outcome) if op.cancel.is_cancelled() => {
                self.mark_stopped(op).await?;
                return self.record_late(op, &outcome).await;
            }
            Some(outcome) => outcome,
        };
        if std::mem::take(&mut self.hooks().fail_next_settle) {
            return Err(JournalError::Core(CoreError::CorruptRow("the test hook failed this settle".into())));
        }
        let (to, status, value) = match outcome {
            Ok(value) => (OpStatus::Succeeded, ReceiptStatus::Succeeded, value),
            Err(EffectError::Failed(why)) => (OpStatus::Failed, ReceiptStatus::Failed, serde_json::json!({ "error": why })),
            Err(EffectError::Uncertain(why)) => {
                let receipt = serde_json::json!({ "error": why });
                if !self.store.settle_operation(op.key(), &op.claimant, OpStatus::OutcomeUnknown, Some(&receipt.to_string())).await? {
                    // A sweep or a Pause got there first: report to it, so its stopping mark clears.
                    let late = late_json(OpStatus::OutcomeUnknown, &receipt);
                    self.store.record_late_result(op.key(), &op.claimant, &late.to_string(), false).await?;
                }
                return Err(JournalError::OutcomeUnknown { op_id: op_id.to_owned() });
            }
        };
        if !self.store.settle_operation(op.key(), &op.claimant, to, Some(&value.to_string())).await? {
            // A lease sweep made it uncertain while it ran: keep what it reported beside that,
            // and report it as stopped — never another claimant's receipt as this run's own.
            let late = late_json(to, &value);
            let nothing_happened = status == ReceiptStatus::Failed;
            self.store.record_late_result(op.key(), &op.claimant, &late.to_string(), nothing_happened).await?;
            return Err(JournalError::Stopped { op_id: op_id.to_owned() });
        }
        Ok(Receipt { status, value, replayed: false })
    }

    /// Stop reached a running effect: its row becomes `outcome_unknown`, the task flagged, and
    /// the row names this process until the effect reports.
    async fn mark_stopped(&self, op: &Held) -> Result<(), JournalError> {
        let receipt = serde_json::json!({
            "stopped": "Stopped while it was running, so it may or may not have happened.",
            "stoppedAt": now_ms(),
        });
        self.store.mark_stopped(op.key(), &op.claimant, &self.identity, &receipt.to_string()).await?;
        Ok(())
    }

    /// Records what a stopped effect reported afterwards, beside its uncertain receipt.
    async fn record_late(&self, op: &Held, late: &Result<serde_json::Value, EffectError>) -> Result<Receipt, JournalError> {
        let (late, nothing_happened) = match late {
            Ok(value) => (late_json(OpStatus::Succeeded, value), false),
            Err(EffectError::Failed(why)) => (late_json(OpStatus::Failed, &serde_json::json!({ "error": why })), true),
            Err(EffectError::Uncertain(why)) => (late_json(OpStatus::OutcomeUnknown, &serde_json::json!({ "error": why })), false),
        };
        if late.get("status").and_then(serde_json::Value::as_str) == Some("succeeded") {
            tracing::warn!(scope = %op.scope, op_id = %op.op_id, "an effect reported success after Stop; it is kept for the owner's review");
        }
        self.store.record_late_result(op.key(), &op.claimant, &late.to_string(), nothing_happened).await?;
        Err(JournalError::Stopped { op_id: op.op_id.clone() })
    }

    /// Nothing started: give the row back as it was before this dispatch took it.
    async fn undo(&self, op: &Held, taken: Taken) -> Result<(), JournalError> {
        match taken {
            Taken::Inserted => self.store.withdraw_operation(op.key(), &op.claimant).await?,
            Taken::Acknowledged => self.store.return_acknowledged(op.key(), &op.claimant).await?,
            // It had failed before; withdrawing lets a later retry perform it, as a failure would.
            Taken::Failed => self.store.withdraw_operation(op.key(), &op.claimant).await?,
        };
        Ok(())
    }

    /// What to do about an operation that already has a row.
    async fn classify_existing(&self, op: &Operation<'_>, hash: &str) -> Result<Existing, JournalError> {
        let op_id = || op.key.op_id.to_owned();
        let Some(row) = self.store.get_operation(op.key).await? else {
            // Either the fence refused the insert, or a dispatcher withdrew it just now.
            return Ok(Existing::Refuse(match op.fence {
                Some(_) => JournalError::Fenced { op_id: op_id() },
                None => JournalError::InFlight { op_id: op_id() },
            }));
        };
        if row.action_hash != hash {
            return Ok(Existing::Refuse(JournalError::Conflict { op_id: op_id() }));
        }
        let lost = |this: &Self| {
            let fence = op.fence;
            let store = this.store.clone();
            async move {
                match fence {
                    Some((task, lease)) if !store.holds_lease(task, lease).await? => {
                        Ok::<_, CoreError>(JournalError::Fenced { op_id: op_id() })
                    }
                    _ => Ok(JournalError::InFlight { op_id: op_id() }),
                }
            }
        };
        Ok(match row.status {
            OpStatus::Succeeded => Existing::Replay,
            OpStatus::Failed if row.claimant.as_deref() == Some(op.claimant) => Existing::Replay,
            OpStatus::Failed => {
                if self.store.reclaim_operation(op.key, OpStatus::Failed, op.claimant, op.fence).await? {
                    Existing::Dispatch(Taken::Failed)
                } else {
                    Existing::Refuse(lost(self).await?)
                }
            }
            OpStatus::OutcomeUnknown => Existing::Refuse(JournalError::OutcomeUnknown { op_id: op_id() }),
            OpStatus::Acknowledged => {
                if self.store.accept_late_success(op.key).await? {
                    Existing::Replay
                } else if self.store.reclaim_operation(op.key, OpStatus::Acknowledged, op.claimant, op.fence).await? {
                    Existing::Dispatch(Taken::Acknowledged)
                } else {
                    Existing::Refuse(lost(self).await?)
                }
            }
            OpStatus::Dispatching => Existing::Refuse(JournalError::InFlight { op_id: op_id() }),
        })
    }

    async fn stored_receipt(&self, key: OpKey<'_>) -> Result<Receipt, JournalError> {
        let op_id = || key.op_id.to_owned();
        let row = self.store.get_operation(key).await?.ok_or_else(|| JournalError::InFlight { op_id: op_id() })?;
        let value = match row.receipt.as_deref() {
            None => serde_json::Value::Null,
            Some(text) => serde_json::from_str(text)
                .map_err(|err| CoreError::CorruptRow(format!("the receipt of operation {} cannot be read ({err})", key.op_id)))?,
        };
        let status = match row.status {
            OpStatus::Succeeded => ReceiptStatus::Succeeded,
            OpStatus::Failed => ReceiptStatus::Failed,
            OpStatus::OutcomeUnknown | OpStatus::Acknowledged => return Err(JournalError::OutcomeUnknown { op_id: op_id() }),
            OpStatus::Dispatching => return Err(JournalError::InFlight { op_id: op_id() }),
        };
        Ok(Receipt { status, value, replayed: true })
    }
}

/// The late result as stored: `{status, value, at}`.
fn late_json(status: OpStatus, value: &serde_json::Value) -> serde_json::Value {
    serde_json::json!({ "status": status.as_str(), "value": value, "at": now_ms() })
}

/// What an effect's own task keeps of its operation once the intent is committed.
struct Held {
    scope: String,
    op_id: String,
    tool: String,
    claimant: String,
    cancel: CancellationToken,
}

impl Held {
    fn key(&self) -> OpKey<'_> {
        OpKey { scope: &self.scope, op_id: &self.op_id }
    }
}

/// How this dispatch came to hold the row.
#[derive(Debug, Clone, Copy)]
enum Taken {
    /// It wrote the intent just now.
    Inserted,
    /// It took back a row the owner acknowledged.
    Acknowledged,
    /// It took back a row an earlier run failed.
    Failed,
}

/// What an existing row means for a new request with the same key.
enum Existing {
    /// Perform the effect (the row is ours, `dispatching`).
    Dispatch(Taken),
    /// Return the stored receipt; perform nothing.
    Replay,
    /// Perform nothing; report this.
    Refuse(JournalError),
}

impl From<crate::store::StoreError> for JournalError {
    fn from(err: crate::store::StoreError) -> Self {
        JournalError::Core(err.into())
    }
}
