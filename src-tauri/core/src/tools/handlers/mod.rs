//! One handler type per tool, grouped by what they touch.

pub(crate) mod browser;
pub(crate) mod choices;
pub(crate) mod computer;
pub(crate) mod documents;
pub(crate) mod finance;
pub(crate) mod goals;
pub(crate) mod mail;
pub(crate) mod memory;
pub(crate) mod monitors;
pub(crate) mod pdf;
pub(crate) mod prepare;
pub(crate) mod schedules;
pub(crate) mod search;
pub(crate) mod tasks;

use hearth_protocol::computer::MAX_OPERATION_ID;
use serde_json::{Value, json};

use super::ToolOutput;

/// Checks an operation id a caller gave (run_computer_command, page_act): 1 to 120 letters,
/// digits, `-`, `_`, `.` or `:`, else the error the model sees.
pub(crate) fn check_operation_id(id: &str) -> Result<(), super::ToolOutput> {
    let ok = (1..=MAX_OPERATION_ID).contains(&id.len())
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'));
    if ok {
        Ok(())
    } else {
        Err(super::ToolOutput::error(format!("`operationId` must be 1 to {MAX_OPERATION_ID} letters, digits, `-`, `_`, `.` or `:`.")))
    }
}

/// The result object with an `untrustedData` note saying whose writing it carries.
fn with_note(value: serde_json::Result<Value>, note: &str) -> ToolOutput {
    match value {
        Ok(Value::Object(mut map)) => {
            map.insert("untrustedData".into(), json!(note));
            ToolOutput::ok(&Value::Object(map))
        }
        Ok(other) => ToolOutput::ok(&other),
        Err(err) => ToolOutput::error(err.to_string()),
    }
}
