//! The operation journal: every effect is written down, in full, before it happens.
//!
//! Keyed by (scope, operation id) — the scope is the chat thread or the task, the id a step
//! the caller owns (never a model's call id inside a task). The row with the normalized action,
//! its hash and its claimant is committed before dispatch, so:
//! - the same key with the same action returns the stored receipt and dispatches nothing;
//! - the same key with a different action is a conflict (it needs a new review, not a redo);
//! - a crash, a lost response or a Stop after dispatch leaves `outcome_unknown`, never
//!   retried on its own; what the effect reports after Stop is kept beside it;
//! - a Stop before dispatch withdraws the intent: nothing happened.
//!
//! Only `tools::dispatch` (and the task context it runs under) calls [`Journal::perform`].

mod canonical;
mod dispatch;

pub use canonical::{action_hash, canonical_json};
pub use dispatch::{EffectError, EffectHook, Journal, JournalError, Operation, Receipt, ReceiptStatus};
