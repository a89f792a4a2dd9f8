//! What a connection to a server is bounded by and answers with: plain types, the same whether
//! this build carries the MCP client (feature `mcp`) or not.

use std::time::Duration;

use serde_json::{Map, Value};

/// The protocol revision Hearth offers: the newest with the `initialize` handshake that rmcp's
/// servers and the other SDKs answer (rmcp's own default names a revision without it).
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// Bounds on one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpLimits {
    /// Starting the server and its handshake.
    pub connect_timeout: Duration,
    /// One call or one list (a result too large for the transport never arrives: this ends it).
    pub call_timeout: Duration,
    /// The largest reply body or event an HTTP server may send.
    pub max_http_reply_bytes: usize,
}

impl Default for McpLimits {
    fn default() -> Self {
        Self { connect_timeout: Duration::from_secs(20), call_timeout: Duration::from_secs(120), max_http_reply_bytes: 4 * 1024 * 1024 }
    }
}

/// Who the server said it is, and the revision agreed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerInfo {
    /// The negotiated protocol revision.
    pub protocol_version: String,
    /// Its name, as it gave it.
    pub name: Option<String>,
    /// Its version, as it gave it.
    pub version: Option<String>,
}

/// One of a server's tools.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    /// Its name at the server.
    pub name: String,
    /// What it says it does (untrusted text, shown as such).
    pub description: String,
    /// Its arguments' JSON schema.
    pub input_schema: Map<String, Value>,
    /// The server's claim that it only reads (`readOnlyHint`): never enough alone for it to run.
    pub read_only_hint: bool,
    /// The server's claim that it may destroy (`destructiveHint`, true when unsaid).
    pub destructive_hint: bool,
}
