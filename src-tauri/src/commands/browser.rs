//! The browser card's pictures and the Browser screen's profiles.

use hearth_protocol::IpcError;
use hearth_protocol::browser::{
    BrowserListResponse, ControlFrame, ControlInputParams, ControlStarted, ControlStopParams, ProfileParams, ScreenshotParams,
    ScreenshotResponse, UseProfileParams,
};
use tauri::State;
use tauri::ipc::Channel;

use crate::state::AppState;

/// The picture a browse_web result names.
#[tauri::command]
pub async fn browser_screenshot(state: State<'_, AppState>, params: ScreenshotParams) -> Result<ScreenshotResponse, IpcError> {
    state.ready().await?.browser_screenshot(&params.id).await.map_err(|e| e.to_ipc())
}

/// The saved browser profiles, running ones first.
#[tauri::command]
pub async fn browser_list(state: State<'_, AppState>) -> Result<BrowserListResponse, IpcError> {
    Ok(state.ready().await?.browser_list().await)
}

/// Closes a profile's browser; its logins stay.
#[tauri::command]
pub async fn browser_close(state: State<'_, AppState>, params: ProfileParams) -> Result<BrowserListResponse, IpcError> {
    let hearth = state.ready().await?;
    hearth.browser_close(&params.id).await.map_err(|e| e.to_ipc())?;
    Ok(hearth.browser_list().await)
}

/// The owner picks the profile a chat or a task browses in (or gives it back its own).
#[tauri::command]
pub async fn browser_use_profile(state: State<'_, AppState>, params: UseProfileParams) -> Result<(), IpcError> {
    state.ready().await?.browser_use_profile(&params).await.map_err(|e| e.to_ipc())
}

/// Deletes a profile with its cookies and logins (the window asked the owner first).
#[tauri::command]
pub async fn browser_delete_profile(state: State<'_, AppState>, params: ProfileParams) -> Result<BrowserListResponse, IpcError> {
    let hearth = state.ready().await?;
    hearth.browser_delete_profile(&params.id).await.map_err(|e| e.to_ipc())?;
    Ok(hearth.browser_list().await)
}

/// Take control: the profile's browser streams its frames to the window until Give back; the
/// agent's calls on it are refused meanwhile.
#[tauri::command]
pub async fn browser_control_start(
    state: State<'_, AppState>,
    params: ProfileParams,
    frames: Channel<ControlFrame>,
) -> Result<ControlStarted, IpcError> {
    let (tx, rx) = tokio::sync::mpsc::channel(2);
    let ticket = state.ready().await?.browser_control_start(&params.id, tx).await.map_err(|e| e.to_ipc())?;
    crate::streams::forward_frames(rx, frames);
    Ok(ControlStarted { ticket })
}

/// One input of the owner's (mouse, key, text, back/forward/reload).
#[tauri::command]
pub async fn browser_control_input(state: State<'_, AppState>, params: ControlInputParams) -> Result<(), IpcError> {
    state.ready().await?.browser_control_input(&params.id, &params.input).await.map_err(|e| e.to_ipc())
}

/// Give back.
#[tauri::command]
pub async fn browser_control_stop(state: State<'_, AppState>, params: ControlStopParams) -> Result<(), IpcError> {
    state.ready().await?.browser_control_stop(&params.id, params.ticket).await.map_err(|e| e.to_ipc())
}

/// Ends every Take control: the window calls it when it loads, since a view open when the
/// window went away (a reload) could not give back.
#[tauri::command]
pub async fn browser_control_release_all(state: State<'_, AppState>) -> Result<(), IpcError> {
    state.ready().await?.browser_control_release_all().await;
    Ok(())
}
