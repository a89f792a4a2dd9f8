//! Parsing IPC payloads ourselves, so a malformed one gets a typed error, not a string.

use hearth_protocol::IpcError;
use serde::de::DeserializeOwned;

/// Decodes a command's `params` argument.
pub fn parse<T: DeserializeOwned>(command: &str, params: serde_json::Value) -> Result<T, IpcError> {
    serde_json::from_value(params).map_err(|err| IpcError::invalid(format!("{command}: the request is malformed ({err}). Reload the app.")))
}
