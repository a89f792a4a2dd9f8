//! `computer_*` commands: the Computer screen and Settings → Computer.

use hearth_protocol::IpcError;
use hearth_protocol::computer::{
    CommandOutput, ComputerEnableParams, ComputerPathParams, ComputerRunParams, ComputerRunResponse, ComputerRunStopParams,
    ComputerStatusView, ComputerWriteParams, WorkspaceFile, WorkspaceListing,
};
use tauri::State;
use tauri::ipc::Channel;

use crate::AppState;
use crate::ipc::parse;

/// Where the computer stands.
#[tauri::command]
pub async fn computer_status(state: State<'_, AppState>) -> Result<ComputerStatusView, IpcError> {
    Ok(state.ready().await?.computer_status().await)
}

/// Settings → Computer on or off.
#[tauri::command]
pub async fn computer_enable(state: State<'_, AppState>, params: serde_json::Value) -> Result<ComputerStatusView, IpcError> {
    let params: ComputerEnableParams = parse("computer_enable", params)?;
    state.ready().await?.computer_enable(params.enabled).await.map_err(|e| e.to_ipc())
}

/// Start.
#[tauri::command]
pub async fn computer_start(state: State<'_, AppState>) -> Result<ComputerStatusView, IpcError> {
    state.ready().await?.computer_start().await.map_err(|e| e.to_ipc())
}

/// Stop the container.
#[tauri::command]
pub async fn computer_stop(state: State<'_, AppState>) -> Result<ComputerStatusView, IpcError> {
    state.ready().await?.computer_stop().await.map_err(|e| e.to_ipc())
}

/// Recreate: a new container from the spec; the workspace stays.
#[tauri::command]
pub async fn computer_recreate(state: State<'_, AppState>) -> Result<ComputerStatusView, IpcError> {
    state.ready().await?.computer_recreate().await.map_err(|e| e.to_ipc())
}

/// Rebuild: Hearth's image made again over the base; the container follows it, the workspace stays.
#[tauri::command]
pub async fn computer_rebuild(state: State<'_, AppState>) -> Result<ComputerStatusView, IpcError> {
    state.ready().await?.computer_rebuild().await.map_err(|e| e.to_ipc())
}

/// Reset: remove the container and the workspace (the window asked the owner first).
#[tauri::command]
pub async fn computer_reset(state: State<'_, AppState>) -> Result<ComputerStatusView, IpcError> {
    state.ready().await?.computer_reset().await.map_err(|e| e.to_ipc())
}

/// Runs a terminal command; its output arrives on `on_output` as it is printed.
#[tauri::command]
pub async fn computer_run(
    state: State<'_, AppState>,
    params: serde_json::Value,
    on_output: Channel<CommandOutput>,
) -> Result<ComputerRunResponse, IpcError> {
    let params: ComputerRunParams = parse("computer_run", params)?;
    params.validate()?;
    let hearth = state.ready().await?;
    let sink = crate::streams::forward_output(on_output);
    hearth.computer_run(&params, sink).await.map_err(|e| e.to_ipc())
}

/// Stop for one terminal command.
#[tauri::command]
pub async fn computer_run_stop(state: State<'_, AppState>, params: serde_json::Value) -> Result<bool, IpcError> {
    let params: ComputerRunStopParams = parse("computer_run_stop", params)?;
    params.validate()?;
    Ok(state.ready().await?.computer_run_stop(&params.operation_id))
}

/// A workspace folder.
#[tauri::command]
pub async fn computer_list(state: State<'_, AppState>, params: serde_json::Value) -> Result<WorkspaceListing, IpcError> {
    let params: ComputerPathParams = parse("computer_list", params)?;
    params.validate()?;
    state.ready().await?.computer_list(&params.path).await.map_err(|e| e.to_ipc())
}

/// A workspace text file, for the editor.
#[tauri::command]
pub async fn computer_read(state: State<'_, AppState>, params: serde_json::Value) -> Result<WorkspaceFile, IpcError> {
    let params: ComputerPathParams = parse("computer_read", params)?;
    params.validate()?;
    state.ready().await?.computer_read(&params.path).await.map_err(|e| e.to_ipc())
}

/// The editor's Save.
#[tauri::command]
pub async fn computer_write(state: State<'_, AppState>, params: serde_json::Value) -> Result<(), IpcError> {
    let params: ComputerWriteParams = parse("computer_write", params)?;
    params.validate()?;
    state.ready().await?.computer_write(&params).await.map_err(|e| e.to_ipc())
}
