//! `app_*` commands.

use hearth_protocol::IpcError;
use hearth_protocol::ipc::AppInfoResponse;
use tauri::State;

use crate::AppState;

/// Version and data folder, or the start-up error (the UI shows its error screen).
#[tauri::command]
pub fn app_info(state: State<'_, AppState>) -> Result<AppInfoResponse, IpcError> {
    Ok(state.ready()?.app_info())
}
