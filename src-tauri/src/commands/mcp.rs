//! `mcp_*` commands: Settings → Tools, the owner's MCP servers and their tools' policies. Only
//! the window calls them (the companion reach table never forwards them).

use hearth_protocol::IpcError;
use hearth_protocol::mcp::{McpServerEnableParams, McpServerParams, McpServerSaveParams, McpServerView, McpToolPolicyParams};
use tauri::State;

use crate::AppState;
use crate::ipc::parse;

/// The servers, with their connections and tools.
#[tauri::command]
pub async fn mcp_server_list(state: State<'_, AppState>) -> Result<Vec<McpServerView>, IpcError> {
    state.ready().await?.mcp_servers().await.map_err(|e| e.to_ipc())
}

/// Adds or changes a server (its secrets go to the vault), then starts it and lists its tools.
#[tauri::command]
pub async fn mcp_server_save(state: State<'_, AppState>, params: serde_json::Value) -> Result<McpServerView, IpcError> {
    let params: McpServerSaveParams = parse("mcp_server_save", params)?;
    state.ready().await?.mcp_server_save(&params).await.map_err(|e| e.to_ipc())
}

/// Starts a server again now and lists its tools.
#[tauri::command]
pub async fn mcp_server_test(state: State<'_, AppState>, params: serde_json::Value) -> Result<McpServerView, IpcError> {
    let params: McpServerParams = parse("mcp_server_test", params)?;
    state.ready().await?.mcp_server_test(&params.name).await.map_err(|e| e.to_ipc())
}

/// Turns a server on or off.
#[tauri::command]
pub async fn mcp_server_enable(state: State<'_, AppState>, params: serde_json::Value) -> Result<McpServerView, IpcError> {
    let params: McpServerEnableParams = parse("mcp_server_enable", params)?;
    state.ready().await?.mcp_server_enable(&params.name, params.enabled).await.map_err(|e| e.to_ipc())
}

/// Removes a server; answers the servers that remain.
#[tauri::command]
pub async fn mcp_server_remove(state: State<'_, AppState>, params: serde_json::Value) -> Result<Vec<McpServerView>, IpcError> {
    let params: McpServerParams = parse("mcp_server_remove", params)?;
    state.ready().await?.mcp_server_remove(&params.name).await.map_err(|e| e.to_ipc())
}

/// A server's recent standard error.
#[tauri::command]
pub async fn mcp_server_log(state: State<'_, AppState>, params: serde_json::Value) -> Result<Vec<String>, IpcError> {
    let params: McpServerParams = parse("mcp_server_log", params)?;
    state.ready().await?.mcp_server_log(&params.name).await.map_err(|e| e.to_ipc())
}

/// Sets what one tool may do.
#[tauri::command]
pub async fn mcp_tool_policy(state: State<'_, AppState>, params: serde_json::Value) -> Result<McpServerView, IpcError> {
    let params: McpToolPolicyParams = parse("mcp_tool_policy", params)?;
    state.ready().await?.mcp_tool_policy(&params).await.map_err(|e| e.to_ipc())
}
