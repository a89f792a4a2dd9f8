//! Applying a harness's `STATE_DELTA` (RFC 6902 JSON Patch) to the state Hearth sends back.

use hearth_protocol::agui::JsonPatchOp;
use serde_json::Value;

/// Applies `ops` in order, all or nothing: on an error `state` is unchanged.
pub(super) fn apply(state: &mut Value, ops: &[JsonPatchOp]) -> Result<(), String> {
    let mut next = state.clone();
    for op in ops {
        apply_one(&mut next, op)?;
    }
    *state = next;
    Ok(())
}

fn apply_one(doc: &mut Value, op: &JsonPatchOp) -> Result<(), String> {
    match op {
        JsonPatchOp::Add { path, value } => add(doc, path, value.clone()),
        JsonPatchOp::Remove { path } => remove(doc, path).map(drop),
        JsonPatchOp::Replace { path, value } => {
            let target = doc.pointer_mut(path).ok_or_else(|| missing(path))?;
            *target = value.clone();
            Ok(())
        }
        JsonPatchOp::Move { from, path } => {
            if path.starts_with(&format!("{from}/")) {
                return Err(format!("cannot move {from} into its own child {path}"));
            }
            let value = remove(doc, from)?;
            add(doc, path, value)
        }
        JsonPatchOp::Copy { from, path } => {
            let value = doc.pointer(from).cloned().ok_or_else(|| missing(from))?;
            add(doc, path, value)
        }
        JsonPatchOp::Test { path, value } => match doc.pointer(path) {
            Some(found) if found == value => Ok(()),
            _ => Err(format!("test failed at {path}")),
        },
    }
}

fn missing(path: &str) -> String {
    format!("no value at {path}")
}

/// Splits a pointer into its parent pointer and its unescaped last token.
fn split(path: &str) -> Result<(&str, String), String> {
    let cut = path.rfind('/').ok_or_else(|| format!("{path:?} is not a JSON Pointer"))?;
    Ok((&path[..cut], path[cut + 1..].replace("~1", "/").replace("~0", "~")))
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, token) = split(path)?;
    match doc.pointer_mut(parent).ok_or_else(|| missing(parent))? {
        Value::Object(map) => {
            map.insert(token, value);
            Ok(())
        }
        Value::Array(items) => {
            let index = if token == "-" { items.len() } else { index(&token, items.len() + 1, path)? };
            items.insert(index, value);
            Ok(())
        }
        _ => Err(format!("{parent} is neither an object nor an array")),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    if path.is_empty() {
        return Ok(std::mem::take(doc));
    }
    let (parent, token) = split(path)?;
    match doc.pointer_mut(parent).ok_or_else(|| missing(parent))? {
        Value::Object(map) => map.remove(&token).ok_or_else(|| missing(path)),
        Value::Array(items) => {
            let index = index(&token, items.len(), path)?;
            Ok(items.remove(index))
        }
        _ => Err(missing(path)),
    }
}

/// An array index below `bound`, without leading zeros.
fn index(token: &str, bound: usize, path: &str) -> Result<usize, String> {
    let valid = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) && (token == "0" || !token.starts_with('0'));
    match token.parse::<usize>() {
        Ok(i) if valid && i < bound => Ok(i),
        _ => Err(format!("{path} is not an index into the array")),
    }
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
        ] {
            assert!(apply(&mut state, &ops(patch)).is_err());
            assert_eq!(state, json!({ "count": 1 }));
        }
    }
}
