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

/// What the owner chose for one tool, and what the tool said about itself then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPolicy {
    /// Allowed or ask (off is no row).
    pub policy: McpToolPolicy,
    /// The hash of the tool's description, schema and hints when the owner chose.
    pub fingerprint: String,
}

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

fn stored(row: &SqliteRow) -> Result<StoredPolicy> {
    let policy: String = row.try_get("policy")?;
    Ok(StoredPolicy {
        policy: McpToolPolicy::parse(&policy).ok_or_else(|| StoreError::CorruptRow(format!("an MCP tool's policy {policy:?}")))?,
        fingerprint: row.try_get("fingerprint")?,
    })
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
    pub async fn save_mcp_server(&self, name: &McpServerName, transport: &McpTransportView, reach: &str) -> Result<McpServerRow> {
        let json = serde_json::to_string(transport).map_err(|e| StoreError::CorruptRow(e.to_string()))?;
        let now = now_ms();
        let mut writer = self.writer().await;
        // Another program or address under the same name is another server: what the owner
        // allowed of the old one does not carry over.
        sqlx::query(
            "DELETE FROM mcp_tool_policies WHERE server = ?1
             AND EXISTS (SELECT 1 FROM mcp_servers WHERE name = ?1 AND reach <> ?2)",
        )
        .bind(name.as_str())
        .bind(reach)
        .execute(&mut *writer)
        .await?;
        let row = sqlx::query(
            "INSERT INTO mcp_servers (name, transport, reach, enabled, created_at, updated_at)
             SELECT ?1, ?2, ?5, 1, ?3, ?3
             WHERE EXISTS (SELECT 1 FROM mcp_servers WHERE name = ?1) OR (SELECT count(*) FROM mcp_servers) < ?4
             ON CONFLICT(name) DO UPDATE SET transport = excluded.transport, reach = excluded.reach,
                 updated_at = excluded.updated_at
             RETURNING name, transport, enabled",
        )
        .bind(name.as_str())
        .bind(json)
        .bind(now)
        .bind(MAX_MCP_SERVERS)
        .bind(reach)
        .fetch_optional(&mut *writer)
        .await?;
        match row {
            Some(row) => row_of(&row),
            None => Err(StoreError::Conflict(format!("{MAX_MCP_SERVERS} MCP servers are set up already; remove one first"))),
        }
    }

    /// Whether a server of this name may be saved: it exists already, or there is room for one
    /// more (a conflict that says what to do otherwise). `save_mcp_server` checks again itself.
    pub async fn check_mcp_room(&self, name: &McpServerName) -> Result<()> {
        let room: bool =
            sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM mcp_servers WHERE name = ?1) OR (SELECT count(*) FROM mcp_servers) < ?2")
                .bind(name.as_str())
                .bind(MAX_MCP_SERVERS)
                .fetch_one(self.reader())
                .await?;
        if room { Ok(()) } else { Err(StoreError::Conflict(format!("{MAX_MCP_SERVERS} MCP servers are set up already; remove one first"))) }
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
    pub async fn mcp_tool_policies(&self, server: &McpServerName) -> Result<HashMap<String, StoredPolicy>> {
        let rows = sqlx::query("SELECT tool, policy, fingerprint FROM mcp_tool_policies WHERE server = ?1")
            .bind(server.as_str())
            .fetch_all(self.reader())
            .await?;
        let mut policies = HashMap::with_capacity(rows.len());
        for row in rows {
            policies.insert(row.try_get("tool")?, stored(&row)?);
        }
        Ok(policies)
    }

    /// The policy of one tool, read at the moment of a call: `None` (off) unless a row says
    /// otherwise and the server is on.
    pub async fn mcp_tool_policy(&self, server: &McpServerName, tool: &str) -> Result<Option<StoredPolicy>> {
        let row = sqlx::query(
            "SELECT p.policy, p.fingerprint FROM mcp_tool_policies p JOIN mcp_servers s ON s.name = p.server
             WHERE p.server = ?1 AND p.tool = ?2 AND s.enabled = 1",
        )
        .bind(server.as_str())
        .bind(tool)
        .fetch_optional(self.reader())
        .await?;
        row.as_ref().map(stored).transpose()
    }

    /// Sets one tool's policy (off removes its row); `false` when there is no such server.
    pub async fn set_mcp_tool_policy(&self, server: &McpServerName, tool: &str, policy: McpToolPolicy, fingerprint: &str) -> Result<bool> {
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
                    "INSERT INTO mcp_tool_policies (server, tool, policy, fingerprint, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT(server, tool) DO UPDATE SET policy = excluded.policy, fingerprint = excluded.fingerprint,
                         updated_at = excluded.updated_at",
                )
                .bind(server.as_str())
                .bind(tool)
                .bind(policy.as_str())
                .bind(fingerprint)
                .bind(now_ms())
                .execute(&mut *writer)
                .await?;
            }
        }
        Ok(true)
    }
}
