//! `backup_*` commands: Settings → Data. The window's only (never a paired device's).

use hearth_protocol::IpcError;
use hearth_protocol::backup::{
    BackupCreateParams, BackupMadeView, BackupRestoreParams, BackupRestoredView, BackupScheduleParams, BackupSettingsView,
};
use tauri::State;

use crate::AppState;
use crate::ipc::parse;

/// What Settings → Data shows.
#[tauri::command]
pub async fn backup_settings_get(state: State<'_, AppState>) -> Result<BackupSettingsView, IpcError> {
    state.ready().await?.backup_settings_get().await.map_err(|e| e.to_ipc())
}

/// The schedule, kept count and folder.
#[tauri::command]
pub async fn backup_schedule_set(state: State<'_, AppState>, params: serde_json::Value) -> Result<BackupSettingsView, IpcError> {
    let params: BackupScheduleParams = parse("backup_schedule_set", params)?;
    params.validate()?;
    state.ready().await?.backup_schedule_set(&params).await.map_err(|e| e.to_ipc())
}

/// "Back up now".
#[tauri::command]
pub async fn backup_create(state: State<'_, AppState>, params: serde_json::Value) -> Result<BackupMadeView, IpcError> {
    let params: BackupCreateParams = parse("backup_create", params)?;
    params.validate()?;
    state.ready().await?.backup_create(&params).await.map_err(|e| e.to_ipc())
}

/// "Restore": a backup file into a new folder.
#[tauri::command]
pub async fn backup_restore(state: State<'_, AppState>, params: serde_json::Value) -> Result<BackupRestoredView, IpcError> {
    let params: BackupRestoreParams = parse("backup_restore", params)?;
    params.validate()?;
    state.ready().await?.backup_restore(&params).await.map_err(|e| e.to_ipc())
}
