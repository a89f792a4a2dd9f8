//! Canonical JSON and the action hash: equal actions hash equal however their keys were
//! ordered, and any change (one character of a 200-character text) changes the hash.

use sha2::{Digest, Sha256};

/// JSON text with object keys sorted at every level and no insignificant whitespace.
pub fn canonical_json(value: &serde_json::Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &serde_json::Value, out: &mut String) {
    match value {
        serde_json::Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(v) = map.get(key) {
                    write_canonical(v, out);
                }
            }
            out.push('}');
        }
        serde_json::Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// sha256 over the tool name and the canonical action, hex.
pub fn action_hash(tool: &str, action: &serde_json::Value) -> String {
    let mut hasher = Sha256::new();
    hasher.update(tool.as_bytes());
    hasher.update(b"\n");
    hasher.update(canonical_json(action).as_bytes());
    hex::encode(hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_matter_but_content_does() {
        let a = json!({"b": 1, "a": {"y": [1, {"q": 2, "p": 1}], "x": "s"}});
        let b: serde_json::Value = serde_json::from_str(r#"{"a":{"x":"s","y":[1,{"p":1,"q":2}]},"b":1}"#).unwrap_or_default();
        assert_eq!(canonical_json(&a), r#"{"a":{"x":"s","y":[1,{"p":1,"q":2}]},"b":1}"#);
        assert_eq!(action_hash("t", &a), action_hash("t", &b));
        assert_ne!(action_hash("t", &a), action_hash("u", &a));
        let text: String = "x".repeat(199);
        assert_ne!(action_hash("t", &json!({ "text": format!("{text}a") })), action_hash("t", &json!({ "text": format!("{text}b") })));
    }
}
