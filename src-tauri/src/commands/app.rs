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

/// The window drew its first frame (the UI calls this two animation frames after it mounted).
/// Logged at info, in the words the footprint bench waits for on stderr: it times Hearth and
/// the Tauri floor (tests/floor) from process start to this same moment.
#[tauri::command]
pub fn app_painted() {
    tracing::info!("the window painted its first frame");
}
