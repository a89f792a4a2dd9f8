//! A build without the MCP client (feature `mcp` off: the phone builds, where plug-in tools run on
//! the owner's Hearth at home). The same API as `client.rs`; nothing connects, so no server is
//! ever listed, offered or called, and Settings says why.

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::McpError;
use super::result::McpOutput;
use super::spec::McpServerSpec;
use super::stderr::StderrLog;
use super::types::{McpLimits, McpServerInfo, McpTool};

/// What a connection attempt answers in this build.
const NOT_HERE: &str = "Plug-in tools run on your Hearth at home: this build has no MCP client.";

/// A connection that is never made.
pub struct McpClient {
    info: McpServerInfo,
    stderr: StderrLog,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient").finish_non_exhaustive()
    }
}

impl McpClient {
    /// Refuses: this build reaches no server.
    pub async fn connect(_spec: &McpServerSpec, _limits: McpLimits) -> Result<Self, McpError> {
        Err(McpError::InvalidSpec(NOT_HERE.into()))
    }

    /// Who the server is.
    pub fn info(&self) -> &McpServerInfo {
        &self.info
    }

    /// Its standard error.
    pub fn stderr(&self) -> &StderrLog {
        &self.stderr
    }

    /// Always closed.
    pub fn is_closed(&self) -> bool {
        true
    }

    /// Nothing to end.
    pub fn cancel(&self) {}

    /// Nothing to end.
    pub fn end_group_now(&self) {}

    /// No tools.
    pub async fn tools(&self) -> Result<Vec<McpTool>, McpError> {
        Ok(Vec::new())
    }

    /// Never sent.
    pub async fn call(&self, _tool: &str, _arguments: Map<String, Value>, _cancel: &CancellationToken) -> Result<McpOutput, McpError> {
        Err(McpError::NotSent(NOT_HERE.into()))
    }

    /// Nothing to close.
    pub async fn close(self) {}
}
