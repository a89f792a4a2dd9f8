//! The browser card's pictures and the Browser screen's profiles.

use hearth_protocol::IpcError;
use hearth_protocol::browser::{BrowserListResponse, ProfileParams, ScreenshotParams, ScreenshotResponse};
use tauri::State;

use crate::state::AppState;

/// The picture a browse_web result names.
#[tauri::command]
pub async fn browser_screenshot(state: State<'_, AppState>, params: ScreenshotParams) -> Result<ScreenshotResponse, IpcError> {
    state.ready()?.browser_screenshot(&params.id).await.map_err(|e| e.to_ipc())
}

/// The saved browser profiles, running ones first.
#[tauri::command]
pub async fn browser_list(state: State<'_, AppState>) -> Result<BrowserListResponse, IpcError> {
    Ok(state.ready()?.browser_list().await)
}

/// Closes a profile's browser; its logins stay.
#[tauri::command]
pub async fn browser_close(state: State<'_, AppState>, params: ProfileParams) -> Result<BrowserListResponse, IpcError> {
    let hearth = state.ready()?;
    hearth.browser_close(&params.id).await.map_err(|e| e.to_ipc())?;
    Ok(hearth.browser_list().await)
}

/// Deletes a profile with its cookies and logins (the window asked the owner first).
#[tauri::command]
pub async fn browser_delete_profile(state: State<'_, AppState>, params: ProfileParams) -> Result<BrowserListResponse, IpcError> {
    let hearth = state.ready()?;
    hearth.browser_delete_profile(&params.id).await.map_err(|e| e.to_ipc())?;
    Ok(hearth.browser_list().await)
}
