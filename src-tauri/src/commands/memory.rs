//! `memory_*` commands: the Memory screen.

use hearth_protocol::IpcError;
use hearth_protocol::memory::{MemoryForgetParams, MemoryListResponse, MemorySaveParams, MemoryView};
use tauri::State;

use crate::AppState;
use crate::ipc::parse;

/// Every fact and the requests that carried some.
#[tauri::command]
pub async fn memory_list(state: State<'_, AppState>) -> Result<MemoryListResponse, IpcError> {
    state.ready().await?.memory_list().await.map_err(|e| e.to_ipc())
}

/// Keeps a new fact or corrects one.
#[tauri::command]
pub async fn memory_save(state: State<'_, AppState>, params: serde_json::Value) -> Result<MemoryView, IpcError> {
    let params: MemorySaveParams = parse("memory_save", params)?;
    params.validate()?;
    state.ready().await?.memory_save(&params).await.map_err(|e| e.to_ipc())
}

/// Forgets a fact.
#[tauri::command]
pub async fn memory_forget(state: State<'_, AppState>, params: serde_json::Value) -> Result<MemoryListResponse, IpcError> {
    let params: MemoryForgetParams = parse("memory_forget", params)?;
    params.validate()?;
    state.ready().await?.memory_forget(&params).await.map_err(|e| e.to_ipc())
}
