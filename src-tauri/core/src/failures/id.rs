//! A failure's id, derived from its run: the same run always has the same id, so a message shown
//! before a restart and the timeline opened after it agree, and nothing has to be stored before
//! the id can be shown.

use hearth_protocol::ids::FailureId;
use sha2::{Digest, Sha256};

/// The failure id of run `run_id`: 40 bits of `sha256("failure:" + run_id)`. Two runs share one
/// with odds of about one in a trillion; the store keeps the first (a unique id), so a second
/// would open the first's timeline — and its run id still opens its own.
pub fn failure_id_of(run_id: &str) -> FailureId {
    let digest = Sha256::digest(format!("failure:{run_id}").as_bytes());
    let bits = digest.iter().take(5).fold(0u64, |acc, byte| (acc << 8) | u64::from(*byte));
    FailureId::from_bits(bits)
}

/// The message as the owner sees it: what failed, then the id to quote and where it opens.
pub fn with_failure_id(message: &str, id: &FailureId) -> String {
    format!("{} (Failure {id}: Activity → Failures shows what happened.)", message.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_has_one_stable_id_and_runs_differ() {
        let a = failure_id_of("0b5e3c1a-7f2d-4c4e-9a51-2d3f6b7c8e90");
        assert_eq!(a, failure_id_of("0b5e3c1a-7f2d-4c4e-9a51-2d3f6b7c8e90"));
        assert_ne!(a, failure_id_of("0b5e3c1a-7f2d-4c4e-9a51-2d3f6b7c8e91"));
        assert_eq!(a.as_str().len(), hearth_protocol::ids::FAILURE_ID_LEN);
        assert!(with_failure_id("It failed. ", &a).contains(&a.to_string()));
    }
}
