//! Settings → Tools: the owner's MCP servers and what each of their tools may do. Only the
//! window at home reaches these (the companion reach table says `Never` for every one).

use hearth_protocol::mcp::{McpServerName, McpServerSaveParams, McpServerView, McpToolPolicyParams};

use super::Hearth;
use crate::error::{CoreError, Result};

fn name_of(name: &str) -> Result<McpServerName> {
    McpServerName::parse(name).map_err(CoreError::InvalidInput)
}

impl Hearth {
    /// The owner's MCP servers: how each is reached (no secret shown), its connection, its tools.
    pub async fn mcp_servers(&self) -> Result<Vec<McpServerView>> {
        self.mcp.views().await
    }

    /// Adds a server or changes how it is reached; it is started and its tools listed (a failure
    /// shows on the view; the setting is kept). A new server's tools are all off.
    pub async fn mcp_server_save(&self, params: &McpServerSaveParams) -> Result<McpServerView> {
        self.mcp.save(params).await
    }

    /// Starts a server again now and lists its tools (Test).
    pub async fn mcp_server_test(&self, name: &str) -> Result<McpServerView> {
        self.mcp.restart(&name_of(name)?).await
    }

    /// Turns a server on or off.
    pub async fn mcp_server_enable(&self, name: &str, enabled: bool) -> Result<McpServerView> {
        self.mcp.enable(&name_of(name)?, enabled).await
    }

    /// Removes a server, its secrets and its tools' policies; answers the servers that remain.
    pub async fn mcp_server_remove(&self, name: &str) -> Result<Vec<McpServerView>> {
        self.mcp.remove(&name_of(name)?).await?;
        self.mcp.views().await
    }

    /// What a server's newest process wrote to its standard error.
    pub async fn mcp_server_log(&self, name: &str) -> Result<Vec<String>> {
        self.mcp.log(&name_of(name)?).await
    }

    /// Sets what one tool may do.
    pub async fn mcp_tool_policy(&self, params: &McpToolPolicyParams) -> Result<McpServerView> {
        if params.tool.is_empty() || params.tool.chars().count() > 128 {
            return Err(CoreError::InvalidInput("A tool's name is 1 to 128 characters.".into()));
        }
        self.mcp.set_policy(&name_of(&params.server)?, &params.tool, params.policy, params.fingerprint.as_deref()).await
    }
}
