//! Applying a harness's `STATE_DELTA` (RFC 6902 JSON Patch) to the state Hearth sends back.
//!
//! The protocol's typed operations are translated to `json_patch`'s and applied by it; this
//! module only turns its errors into sentences that say which operation failed and where.

use hearth_protocol::agui::JsonPatchOp;
use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, CopyOperation, MoveOperation, PatchOperation, RemoveOperation, ReplaceOperation, TestOperation};
use serde_json::Value;

/// Applies `ops` in order, all or nothing: on an error `state` is unchanged.
pub(super) fn apply(state: &mut Value, ops: &[JsonPatchOp]) -> Result<(), String> {
    let patch = ops.iter().enumerate().map(|(index, op)| translate(index, op)).collect::<Result<Vec<_>, _>>()?;
    json_patch::patch(state, &patch).map_err(|e| {
        let op = ops.get(e.operation).map_or("?", op_name);
        format!("JSON Patch operation {} ({op}) failed at {:?}: {}", e.operation, e.path.as_str(), e.kind)
    })
}

fn op_name(op: &JsonPatchOp) -> &'static str {
    match op {
        JsonPatchOp::Add { .. } => "add",
        JsonPatchOp::Remove { .. } => "remove",
        JsonPatchOp::Replace { .. } => "replace",
        JsonPatchOp::Move { .. } => "move",
        JsonPatchOp::Copy { .. } => "copy",
        JsonPatchOp::Test { .. } => "test",
    }
}

fn translate(index: usize, op: &JsonPatchOp) -> Result<PatchOperation, String> {
    let pointer = |p: &str| {
        PointerBuf::parse(p).map_err(|_| format!("JSON Patch operation {index} ({}): {p:?} is not a JSON Pointer (RFC 6901)", op_name(op)))
    };
    Ok(match op {
        JsonPatchOp::Add { path, value } => PatchOperation::Add(AddOperation { path: pointer(path)?, value: value.clone() }),
        JsonPatchOp::Remove { path } => PatchOperation::Remove(RemoveOperation { path: pointer(path)? }),
        JsonPatchOp::Replace { path, value } => PatchOperation::Replace(ReplaceOperation { path: pointer(path)?, value: value.clone() }),
        JsonPatchOp::Move { from, path } => PatchOperation::Move(MoveOperation { from: pointer(from)?, path: pointer(path)? }),
        JsonPatchOp::Copy { from, path } => PatchOperation::Copy(CopyOperation { from: pointer(from)?, path: pointer(path)? }),
        JsonPatchOp::Test { path, value } => PatchOperation::Test(TestOperation { path: pointer(path)?, value: value.clone() }),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ops(v: Value) -> Vec<JsonPatchOp> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_rfc_6902_operations_apply_in_order() {
        let mut state = json!({ "todo": ["a", "c"], "count": 1, "a/b": { "x": 1 } });
        let patch = ops(json!([
            { "op": "add", "path": "/todo/1", "value": "b" },
            { "op": "add", "path": "/todo/-", "value": "d" },
            { "op": "replace", "path": "/count", "value": 4 },
            { "op": "test", "path": "/count", "value": 4 },
            { "op": "copy", "from": "/count", "path": "/before" },
            { "op": "move", "from": "/a~1b", "path": "/moved" },
            { "op": "remove", "path": "/todo/0" }
        ]));
        apply(&mut state, &patch).unwrap();
        assert_eq!(state, json!({ "todo": ["b", "c", "d"], "count": 4, "before": 4, "moved": { "x": 1 } }));
    }

    #[test]
    fn a_failing_patch_changes_nothing() {
        let mut state = json!({ "count": 1 });
        for patch in [
            json!([{ "op": "replace", "path": "/count", "value": 2 }, { "op": "test", "path": "/count", "value": 3 }]),
            json!([{ "op": "remove", "path": "/nope" }]),
            json!([{ "op": "add", "path": "/count/x", "value": 1 }]),
            json!([{ "op": "add", "path": "count", "value": 1 }]),
            json!([{ "op": "add", "path": "/n", "value": 1 }, { "op": "move", "from": "/count", "path": "/count/x" }]),
        ] {
            assert!(apply(&mut state, &ops(patch)).is_err());
            assert_eq!(state, json!({ "count": 1 }));
        }
    }

    #[test]
    fn a_failing_test_says_which_operation_and_where() {
        let mut state = json!({ "plan": { "step": 2 } });
        let patch = ops(json!([
            { "op": "replace", "path": "/plan/step", "value": 3 },
            { "op": "test", "path": "/plan/step", "value": 2 }
        ]));
        let err = apply(&mut state, &patch).unwrap_err();
        assert!(err.contains("operation 1 (test)"), "{err}");
        assert!(err.contains("/plan/step"), "{err}");
        assert_eq!(state, json!({ "plan": { "step": 2 } }), "the replace before it is undone");

        let err = apply(&mut state, &ops(json!([{ "op": "add", "path": "plan", "value": 1 }]))).unwrap_err();
        assert!(err.contains("operation 0 (add)") && err.contains("\"plan\""), "{err}");
    }

    #[test]
    fn move_and_copy_work_across_objects_and_arrays() {
        let mut state = json!({ "done": [], "todo": ["a", "b"], "meta": { "owner": "me" } });
        let patch = ops(json!([
            { "op": "move", "from": "/todo/0", "path": "/done/-" },
            { "op": "copy", "from": "/meta", "path": "/done/0/../x" }
        ]));
        // A pointer token of ".." is just a key: the copy's parent "/done/0" is a string, so it fails.
        assert!(apply(&mut state, &patch).is_err());
        assert_eq!(state, json!({ "done": [], "todo": ["a", "b"], "meta": { "owner": "me" } }));

        let patch = ops(json!([
            { "op": "move", "from": "/todo/0", "path": "/done/-" },
            { "op": "copy", "from": "/meta", "path": "/todo/0" },
            { "op": "move", "from": "/meta/owner", "path": "/owner" }
        ]));
        apply(&mut state, &patch).unwrap();
        assert_eq!(state, json!({ "done": ["a"], "todo": [{ "owner": "me" }, "b"], "meta": {}, "owner": "me" }));
    }
}
