//! `run_*` and `thread_*` commands: the chat.

use hearth_protocol::IpcError;
use hearth_protocol::agui::Event;
use hearth_protocol::ipc::{
    RunStartParams, RunStartResponse, RunStopParams, RunStopResponse, ThreadDeleteParams, ThreadDeleteResponse, ThreadHistoryParams,
    ThreadHistoryResponse, ThreadListResponse,
};
use tauri::State;
use tauri::ipc::Channel;

use crate::AppState;
use crate::ipc::parse;
use crate::streams::forward;

/// Starts a run; its AG-UI events stream on `on_event`.
#[tauri::command(rename_all = "camelCase")]
pub async fn run_start(
    state: State<'_, AppState>,
    params: serde_json::Value,
    on_event: Channel<Event>,
) -> Result<RunStartResponse, IpcError> {
    let params: RunStartParams = parse("run_start", params)?;
    let hearth = state.ready().await?;
    let (started, events) = hearth.start_run(params).await.map_err(|e| e.to_ipc())?;
    forward(hearth, started.run_id.clone(), events, on_event);
    Ok(started)
}

/// Stops a run (idempotent).
#[tauri::command]
pub async fn run_stop(state: State<'_, AppState>, params: serde_json::Value) -> Result<RunStopResponse, IpcError> {
    let params: RunStopParams = parse("run_stop", params)?;
    params.validate()?;
    Ok(RunStopResponse { was_running: state.ready().await?.stop_run(&params.run_id) })
}

/// Conversations, newest first.
#[tauri::command]
pub async fn thread_list(state: State<'_, AppState>) -> Result<ThreadListResponse, IpcError> {
    state.ready().await?.thread_list().await.map_err(|e| e.to_ipc())
}

/// One page of a conversation's stored events, the newest first.
#[tauri::command]
pub async fn thread_history(state: State<'_, AppState>, params: serde_json::Value) -> Result<ThreadHistoryResponse, IpcError> {
    let params: ThreadHistoryParams = parse("thread_history", params)?;
    params.validate()?;
    state.ready().await?.thread_history_page(&params.thread_id, params.before).await.map_err(|e| e.to_ipc())
}

/// Deletes a chat with its messages and its own browser profile (unless the owner kept it).
#[tauri::command]
pub async fn thread_delete(state: State<'_, AppState>, params: serde_json::Value) -> Result<ThreadDeleteResponse, IpcError> {
    let params: ThreadDeleteParams = parse("thread_delete", params)?;
    params.validate()?;
    state.ready().await?.thread_delete(&params).await.map_err(|e| e.to_ipc())
}
