//! `task_*` commands: the Activity screen and the delegate_task card.

use hearth_protocol::IpcError;
use hearth_protocol::tasks::{TaskChanged, TaskControlParams, TaskDetail, TaskGetParams, TaskListResponse, TaskView};
use tauri::State;
use tauri::ipc::Channel;

use crate::AppState;
use crate::ipc::parse;

/// Tasks, most recently changed first.
#[tauri::command]
pub async fn task_list(state: State<'_, AppState>) -> Result<TaskListResponse, IpcError> {
    state.ready().await?.task_list().await.map_err(|e| e.to_ipc())
}

/// One task with its runs and events.
#[tauri::command]
pub async fn task_get(state: State<'_, AppState>, params: serde_json::Value) -> Result<TaskDetail, IpcError> {
    let params: TaskGetParams = parse("task_get", params)?;
    params.validate()?;
    state.ready().await?.task_get(&params.task_id).await.map_err(|e| e.to_ipc())
}

/// Applies the owner's control (pause, resume, cancel, retry, answer).
#[tauri::command]
pub async fn task_control(state: State<'_, AppState>, params: serde_json::Value) -> Result<TaskView, IpcError> {
    let params: TaskControlParams = parse("task_control", params)?;
    params.validate()?;
    state.ready().await?.task_control(&params).await.map_err(|e| e.to_ipc())
}

/// Pushes every task change on `on_change` until the window stops listening.
/// (Async so it runs on the runtime the watcher is spawned on.)
#[tauri::command(rename_all = "camelCase")]
pub async fn task_watch(state: State<'_, AppState>, on_change: Channel<TaskChanged>) -> Result<(), IpcError> {
    let changes = state.ready().await?.task_watch();
    crate::streams::forward_tasks(changes, on_change);
    Ok(())
}

/// A finance task on a pasted statement.
#[tauri::command]
pub async fn finance_start(state: State<'_, AppState>, params: serde_json::Value) -> Result<hearth_protocol::tasks::TaskView, IpcError> {
    let params: hearth_protocol::finance::FinanceStartParams = parse("finance_start", params)?;
    params.validate()?;
    state.ready().await?.finance_start(&params).await.map_err(|e| e.to_ipc())
}
