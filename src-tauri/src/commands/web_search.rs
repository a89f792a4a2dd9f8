//! `settings_web_search_*` commands: Settings → Web search, the page search_web opens.

use hearth_protocol::IpcError;
use hearth_protocol::web_search::{WebSearchSetParams, WebSearchView};
use tauri::State;

use crate::AppState;
use crate::ipc::parse;

/// The search page in use.
#[tauri::command]
pub async fn settings_web_search_get(state: State<'_, AppState>) -> Result<WebSearchView, IpcError> {
    state.ready().await?.settings_web_search_get().await.map_err(|e| e.to_ipc())
}

/// The owner's search page: a preset's template or their own, checked by the core.
#[tauri::command]
pub async fn settings_web_search_set(state: State<'_, AppState>, params: serde_json::Value) -> Result<WebSearchView, IpcError> {
    let params: WebSearchSetParams = parse("settings_web_search_set", params)?;
    state.ready().await?.settings_web_search_set(&params).await.map_err(|e| e.to_ipc())
}
