//! The owner's MCP servers and their tools' policies (migration 0034).
//!
//! A tool without a policy row is off: "off" is the absence of a row, so nothing has to be
//! written for a tool to be denied, and a server's new tool is denied until the owner allows it
//! (invariant 19). The secret parts of a server live in the vault (`mcp::hub`), not here.

use std::collections::HashMap;

use hearth_protocol::mcp::{McpServerName, McpToolPolicy, McpTransportView};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::error::{Result, StoreError};
use super::{Store, now_ms};

/// The most servers kept.
pub const MAX_MCP_SERVERS: i64 = 32;

/// A server as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerRow {
    /// Its name.
    pub name: McpServerName,
    /// How it is reached (no secret values).
    pub transport: McpTransportView,
    /// On or off.
    pub enabled: bool,
}

fn row_of(row: &SqliteRow) -> Result<McpServerRow> {
    let name: String = row.try_get("name")?;
    let transport: String = row.try_get("transport")?;
    Ok(McpServerRow {
        name: McpServerName::parse(&name).map_err(|e| StoreError::CorruptRow(format!("an MCP server's name ({e})")))?,
        transport: serde_json::from_str(&transport)
            .map_err(|e| StoreError::CorruptRow(format!("an MCP server's transport could not be read ({e})")))?,
        enabled: row.try_get::<i64, _>("enabled")? != 0,
    })
}

impl Store {
    /// Every server, by name.
    pub async fn mcp_servers(&self) -> Result<Vec<McpServerRow>> {
        let rows = sqlx::query("SELECT name, transport, enabled FROM mcp_servers ORDER BY name").fetch_all(self.reader()).await?;
        rows.iter().map(row_of).collect()
    }

    /// One server.
    pub async fn mcp_server(&self, name: &McpServerName) -> Result<Option<McpServerRow>> {
        let row = sqlx::query("SELECT name, transport, enabled FROM mcp_servers WHERE name = ?1")
            .bind(name.as_str())
            .fetch_optional(self.reader())
            .await?;
        row.as_ref().map(row_of).transpose()
    }

    /// Adds a server (on), or changes how an existing one is reached (its policies and its
    /// on/off are kept). More than [`MAX_MCP_SERVERS`] is a conflict, with nothing written.
    pub async fn save_mcp_server(&self, name: &McpServerName, transport: &McpTransportView) -> Result<McpServerRow> {
        let json = serde_json::to_string(transport).map_err(|e| StoreError::CorruptRow(e.to_string()))?;
        let now = now_ms();
        let row = sqlx::query(
            "INSERT INTO mcp_servers (name, transport, enabled, created_at, updated_at)
             SELECT ?1, ?2, 1, ?3, ?3
             WHERE EXISTS (SELECT 1 FROM mcp_servers WHERE name = ?1) OR (SELECT count(*) FROM mcp_servers) < ?4
             ON CONFLICT(name) DO UPDATE SET transport = excluded.transport, updated_at = excluded.updated_at
             RETURNING name, transport, enabled",
        )
        .bind(name.as_str())
        .bind(json)
        .bind(now)
        .bind(MAX_MCP_SERVERS)
        .fetch_optional(&mut *self.writer().await)
        .await?;
        match row {
            Some(row) => row_of(&row),
            None => Err(StoreError::Conflict(format!("{MAX_MCP_SERVERS} MCP servers are set up already; remove one first"))),
        }
    }

    /// Turns a server on or off; `None` when there is no such server.
    pub async fn set_mcp_server_enabled(&self, name: &McpServerName, enabled: bool) -> Result<Option<McpServerRow>> {
        let row = sqlx::query("UPDATE mcp_servers SET enabled = ?2, updated_at = ?3 WHERE name = ?1 RETURNING name, transport, enabled")
            .bind(name.as_str())
            .bind(i64::from(enabled))
            .bind(now_ms())
            .fetch_optional(&mut *self.writer().await)
            .await?;
        row.as_ref().map(row_of).transpose()
    }

    /// Removes a server and its tools' policies; whether it was there.
    pub async fn delete_mcp_server(&self, name: &McpServerName) -> Result<bool> {
        let done = sqlx::query("DELETE FROM mcp_servers WHERE name = ?1").bind(name.as_str()).execute(&mut *self.writer().await).await?;
        Ok(done.rows_affected() > 0)
    }

    /// The policies the owner set for a server's tools (a tool not named is off).
    pub async fn mcp_tool_policies(&self, server: &McpServerName) -> Result<HashMap<String, McpToolPolicy>> {
        let rows = sqlx::query("SELECT tool, policy FROM mcp_tool_policies WHERE server = ?1")
            .bind(server.as_str())
            .fetch_all(self.reader())
            .await?;
        let mut policies = HashMap::with_capacity(rows.len());
        for row in rows {
            let policy: String = row.try_get("policy")?;
            let policy = McpToolPolicy::parse(&policy).ok_or_else(|| StoreError::CorruptRow(format!("an MCP tool's policy {policy:?}")))?;
            policies.insert(row.try_get("tool")?, policy);
        }
        Ok(policies)
    }

    /// The policy of one tool, read at the moment of a call: off unless a row says otherwise.
    pub async fn mcp_tool_policy(&self, server: &McpServerName, tool: &str) -> Result<McpToolPolicy> {
        let policy: Option<String> = sqlx::query_scalar(
            "SELECT p.policy FROM mcp_tool_policies p JOIN mcp_servers s ON s.name = p.server
             WHERE p.server = ?1 AND p.tool = ?2 AND s.enabled = 1",
        )
        .bind(server.as_str())
        .bind(tool)
        .fetch_optional(self.reader())
        .await?;
        match policy {
            None => Ok(McpToolPolicy::Off),
            Some(text) => McpToolPolicy::parse(&text).ok_or_else(|| StoreError::CorruptRow(format!("an MCP tool's policy {text:?}"))),
        }
    }

    /// Sets one tool's policy (off removes its row); `false` when there is no such server.
    pub async fn set_mcp_tool_policy(&self, server: &McpServerName, tool: &str, policy: McpToolPolicy) -> Result<bool> {
        let mut writer = self.writer().await;
        let exists: Option<i64> =
            sqlx::query_scalar("SELECT 1 FROM mcp_servers WHERE name = ?1").bind(server.as_str()).fetch_optional(&mut *writer).await?;
        if exists.is_none() {
            return Ok(false);
        }
        match policy {
            McpToolPolicy::Off => {
                sqlx::query("DELETE FROM mcp_tool_policies WHERE server = ?1 AND tool = ?2")
                    .bind(server.as_str())
                    .bind(tool)
                    .execute(&mut *writer)
                    .await?;
            }
            McpToolPolicy::Allowed | McpToolPolicy::Ask => {
                sqlx::query(
                    "INSERT INTO mcp_tool_policies (server, tool, policy, updated_at) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT(server, tool) DO UPDATE SET policy = excluded.policy, updated_at = excluded.updated_at",
                )
                .bind(server.as_str())
                .bind(tool)
                .bind(policy.as_str())
                .bind(now_ms())
                .execute(&mut *writer)
                .await?;
            }
        }
        Ok(true)
    }
}
