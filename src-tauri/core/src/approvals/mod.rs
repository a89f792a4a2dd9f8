//! The approval gate: prepare tools turn arguments into a normalized draft and a proposal;
//! only the owner's decision, through the app, carries one out — once, and only the exact
//! draft, destination and account that were shown.

mod address;
mod gate;
mod hash;
pub mod normalize;
pub mod web;

pub use address::normalize_address;
pub use gate::{ApprovalGate, CHANGED_MESSAGE, DecideHook, DecideStage, HELD_CONNECTION, HeldCalls, Proposer};
pub use hash::proposal_hash;
pub use normalize::{EmailArgs, EventArgs, email_draft, event_draft};
pub use web::FormSender;

/// How long a proposal can be approved after it was prepared.
pub const PROPOSAL_TTL: std::time::Duration = std::time::Duration::from_secs(30 * 60);
