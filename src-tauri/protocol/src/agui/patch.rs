//! RFC 6902 JSON Patch operations, as `STATE_DELTA.delta` and `ACTIVITY_DELTA.patch`
//! carry them.
//!
//! Typed (rather than `Vec<Value>`) because the 1.0 schema types them: a patch with an
//! unknown `op` or a missing `path` is not a valid event. Pointer syntax (RFC 6901) and
//! whether an operation applies to its target are left to the applier, as in the spec.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One JSON Patch operation, discriminated by `op`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum JsonPatchOp {
    /// Insert `value` at `path` (RFC 6902 §4.1).
    Add {
        /// JSON Pointer to the target location.
        path: String,
        /// The value to insert (any JSON value, including null).
        value: Value,
    },
    /// Remove the value at `path` (§4.2).
    Remove {
        /// JSON Pointer to the value to remove.
        path: String,
    },
    /// Replace the value at `path` (§4.3).
    Replace {
        /// JSON Pointer to the value to replace.
        path: String,
        /// The replacement.
        value: Value,
    },
    /// Move the value at `from` to `path` (§4.4).
    Move {
        /// JSON Pointer to the source.
        from: String,
        /// JSON Pointer to the destination.
        path: String,
    },
    /// Copy the value at `from` to `path` (§4.5).
    Copy {
        /// JSON Pointer to the source.
        from: String,
        /// JSON Pointer to the destination.
        path: String,
    },
    /// Assert the value at `path` equals `value` (§4.6).
    Test {
        /// JSON Pointer to the value to test.
        path: String,
        /// The expected value.
        value: Value,
    },
}

impl JsonPatchOp {
    /// The operation's target pointer.
    pub fn path(&self) -> &str {
        match self {
            JsonPatchOp::Add { path, .. }
            | JsonPatchOp::Remove { path }
            | JsonPatchOp::Replace { path, .. }
            | JsonPatchOp::Move { path, .. }
            | JsonPatchOp::Copy { path, .. }
            | JsonPatchOp::Test { path, .. } => path,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn ops_serialise_per_rfc_6902() {
        let ops = vec![
            JsonPatchOp::Add { path: "/a".into(), value: Value::Null },
            JsonPatchOp::Remove { path: "/b".into() },
            JsonPatchOp::Move { from: "/c".into(), path: "/d".into() },
        ];
        let s = serde_json::to_string(&ops).unwrap();
        assert_eq!(s, r#"[{"op":"add","path":"/a","value":null},{"op":"remove","path":"/b"},{"op":"move","from":"/c","path":"/d"}]"#);
        assert_eq!(serde_json::from_str::<Vec<JsonPatchOp>>(&s).unwrap(), ops);
    }

    #[test]
    fn add_requires_value_and_unknown_op_fails() {
        assert!(serde_json::from_str::<JsonPatchOp>(r#"{"op":"add","path":"/a"}"#).is_err());
        assert!(serde_json::from_str::<JsonPatchOp>(r#"{"op":"merge","path":"/a"}"#).is_err());
        // Members an operation does not define are ignored (RFC 6902 §4).
        let op: JsonPatchOp = serde_json::from_str(r#"{"op":"remove","path":"/a","value":1}"#).unwrap();
        assert_eq!(op.path(), "/a");
    }
}
