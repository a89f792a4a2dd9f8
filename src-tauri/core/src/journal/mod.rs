//! The operation journal: every effect is written down, in full, before it happens.
//!
//! Keyed by (scope, operation id) — the scope is the chat turn or the task. The row with the
//! normalized action and its hash is committed before dispatch, so:
//! - the same key with the same action returns the stored receipt and dispatches nothing;
//! - the same key with a different action is a conflict (it needs a new review, not a redo);
//! - a crash or lost response after dispatch leaves `outcome_unknown`, never retried on its own;
//! - Stop settles the receipt `interrupted` first, so a late success cannot overwrite it.

mod canonical;
mod dispatch;

pub use canonical::{action_hash, canonical_json};
pub use dispatch::{EffectError, Journal, JournalError, Receipt, ReceiptStatus};
