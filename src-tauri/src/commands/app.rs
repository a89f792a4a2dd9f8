//! `app_*` commands.

use hearth_protocol::IpcError;
use hearth_protocol::ipc::AppInfoResponse;
use tauri::State;

use crate::AppState;

/// Version and data folder, or the start-up error (the UI shows its error screen).
#[tauri::command]
pub async fn app_info(state: State<'_, AppState>) -> Result<AppInfoResponse, IpcError> {
    Ok(state.ready().await?.app_info())
}

/// The window drew its first frame of the app: its shell, or the start-up error, never the
/// loading line while the core opens (the UI calls this two animation frames after it shows it).
/// Logged at info, in the words the footprint bench waits for on stderr: it times Hearth and
/// the Tauri floor (tests/floor) from process start to this same moment.
///
/// Start-up is over then, so the memory it freed goes back to the system (`memory.rs`).
#[tauri::command]
pub fn app_painted() {
    tracing::info!("the window painted its first frame");
    tauri::async_runtime::spawn_blocking(crate::memory::release_freed);
}
