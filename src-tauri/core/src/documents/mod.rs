//! The document workflow: a mail's PDF form, filled and sent back — code owns it, not a model.
//!
//! mail → first PDF attachment → import → (no values: wait for the owner's answer listing the
//! fields) → fill a new copy → prepare the reply → wait for approval → the owner approves in
//! the app → sent → succeeded with the receipt. Every step is replay-safe: imports and fills
//! go through the journal, the reply is a proposal with a stable key.

mod answer;
mod workflow;

pub use answer::parse_answer;
pub use workflow::{DocumentInput, DocumentTask};
