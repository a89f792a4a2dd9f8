//! Failures the owner can follow: each failed run gets a short id ([`FailureId`]) shown with its
//! message, the model provider's tries are recorded as they end, and a failure id opens the run's
//! timeline with a redacted report the owner can send to someone helping.
//!
//! `id` derives the id, `tries` records the provider's tries, `timeline` reads a run's history
//! back in order, `redact` and `report` make the text "Copy details" gives.

mod id;
pub mod redact;
mod report;
mod timeline;
mod tries;

pub use id::{failure_id_of, with_failure_id};
pub use report::{Holdings, report};
pub use timeline::{effect_timeline, run_timeline};
pub(crate) use tries::record_tries;
