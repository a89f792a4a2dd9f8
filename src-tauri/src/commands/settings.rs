//! `settings_*` commands: the Settings screen. Keys and tokens go in; views never carry them.

use hearth_protocol::IpcError;
use hearth_protocol::settings::{
    AgentModeParams, ConnectionTestResponse, EndpointParams, HarnessSettingsParams, LocalModelActivity, LocalModelInfo,
    LocalModelInspectParams, LocalModelOverrideParams, ModelSettingsParams, ProbeProgress, SettingsView,
};
use tauri::{AppHandle, Runtime, State};
use tauri_plugin_dialog::DialogExt;

use crate::AppState;
use crate::ipc::parse;

/// What Settings shows.
#[tauri::command]
pub async fn settings_get(state: State<'_, AppState>) -> Result<SettingsView, IpcError> {
    state.ready().await?.settings_get().await.map_err(|e| e.to_ipc())
}

/// Who answers the chat.
#[tauri::command]
pub async fn settings_mode_set(state: State<'_, AppState>, params: serde_json::Value) -> Result<SettingsView, IpcError> {
    let params: AgentModeParams = parse("settings_mode_set", params)?;
    state.ready().await?.settings_mode_set(params.mode).await.map_err(|e| e.to_ipc())
}

/// The model provider.
#[tauri::command]
pub async fn settings_model_set(state: State<'_, AppState>, params: serde_json::Value) -> Result<SettingsView, IpcError> {
    let params: ModelSettingsParams = parse("settings_model_set", params)?;
    params.validate()?;
    state.ready().await?.settings_model_set(&params).await.map_err(|e| e.to_ipc())
}

/// "Test connection".
#[tauri::command]
pub async fn settings_model_test(state: State<'_, AppState>) -> Result<ConnectionTestResponse, IpcError> {
    state.ready().await?.settings_model_test().await.map_err(|e| e.to_ipc())
}

/// A model file's facts, before the owner keeps it.
#[tauri::command]
pub async fn settings_local_model_inspect(state: State<'_, AppState>, params: serde_json::Value) -> Result<LocalModelInfo, IpcError> {
    let params: LocalModelInspectParams = parse("settings_local_model_inspect", params)?;
    state.ready().await?.settings_local_model_inspect(&params).await.map_err(|e| e.to_ipc())
}

/// Runs the probe suite on the local model ("Test on Hearth's tasks").
#[tauri::command]
pub async fn settings_local_model_probe(state: State<'_, AppState>) -> Result<SettingsView, IpcError> {
    state.ready().await?.settings_local_model_probe().await.map_err(|e| e.to_ipc())
}

/// Lets the local model act in families it did not pass, or takes that back.
#[tauri::command]
pub async fn settings_local_model_override(state: State<'_, AppState>, params: serde_json::Value) -> Result<SettingsView, IpcError> {
    let params: LocalModelOverrideParams = parse("settings_local_model_override", params)?;
    state.ready().await?.settings_local_model_override(params.act_untested).await.map_err(|e| e.to_ipc())
}

/// What the model on this computer is doing (none when another agent answers).
#[tauri::command]
pub async fn local_model_activity(state: State<'_, AppState>) -> Result<Option<LocalModelActivity>, IpcError> {
    Ok(state.ready().await?.local_model_activity())
}

/// The system's file chooser, for a model file: the path the owner chose, or none if they
/// closed it. The path only fills the form; `settings_local_model_inspect` checks the file.
#[tauri::command]
pub async fn local_model_choose_file<R: Runtime>(app: AppHandle<R>) -> Result<Option<String>, IpcError> {
    let (chosen, choice) = tokio::sync::oneshot::channel();
    app.dialog().file().set_title("Choose a GGUF model file").add_filter("GGUF model", &["gguf"]).pick_file(move |path| {
        // The window may have stopped waiting (closed); then nobody needs the answer.
        let _ = chosen.send(path);
    });
    let Ok(Some(path)) = choice.await else { return Ok(None) };
    let path = path.into_path().map_err(|err| IpcError::invalid(format!("That choice is not a file on this computer: {err}")))?;
    Ok(Some(path.display().to_string()))
}

/// How far the local model's probe suite has got (none when it is not running).
#[tauri::command]
pub async fn local_model_probe_progress(state: State<'_, AppState>) -> Result<Option<ProbeProgress>, IpcError> {
    Ok(state.ready().await?.local_model_probe_progress())
}

/// The external AG-UI agent.
#[tauri::command]
pub async fn settings_harness_set(state: State<'_, AppState>, params: serde_json::Value) -> Result<SettingsView, IpcError> {
    let params: HarnessSettingsParams = parse("settings_harness_set", params)?;
    params.validate()?;
    state.ready().await?.settings_harness_set(&params).await.map_err(|e| e.to_ipc())
}

/// Hearth's own AG-UI endpoint on or off.
#[tauri::command]
pub async fn settings_endpoint_set(state: State<'_, AppState>, params: serde_json::Value) -> Result<SettingsView, IpcError> {
    let params: EndpointParams = parse("settings_endpoint_set", params)?;
    state.ready().await?.settings_endpoint_set(params.enabled).await.map_err(|e| e.to_ipc())
}

/// "Regenerate token": a new endpoint token; the running endpoint refuses the old one at once.
#[tauri::command]
pub async fn settings_endpoint_regenerate(state: State<'_, AppState>) -> Result<SettingsView, IpcError> {
    state.ready().await?.settings_endpoint_regenerate().await.map_err(|e| e.to_ipc())
}

/// How long an approved email or event change waits with Undo before it leaves.
#[tauri::command]
pub async fn settings_undo_window_set(state: State<'_, AppState>, params: serde_json::Value) -> Result<SettingsView, IpcError> {
    let params: hearth_protocol::settings::UndoWindowParams = parse("settings_undo_window_set", params)?;
    params.validate()?;
    state.ready().await?.settings_undo_window_set(&params).await.map_err(|e| e.to_ipc())
}
