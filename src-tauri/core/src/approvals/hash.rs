//! The proposal hash: what an approval binds to.

use hearth_protocol::approvals::{Connection, ProposalDraft};
use sha2::{Digest, Sha256};

use crate::journal::canonical_json;
use crate::workspace::Target;

/// sha256 (hex) of the canonical JSON of {input, connection, target, targetVersion}: the same
/// draft for the same account and target version hashes the same, and any change does not.
pub fn proposal_hash(draft: &ProposalDraft, connection: &Connection, target: &Target) -> String {
    let value = serde_json::json!({
        "input": draft,
        "connection": connection,
        "target": target.target,
        "targetVersion": target.version,
    });
    hex::encode(Sha256::digest(canonical_json(&value).as_bytes()))
}
