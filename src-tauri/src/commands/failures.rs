//! `failure_*` commands: Activity's failures, a failure's timeline and its redacted report.

use hearth_protocol::IpcError;
use hearth_protocol::failures::{FailureListResponse, FailureTimeline, FailureTimelineParams};
use tauri::State;

use crate::AppState;
use crate::ipc::parse;

/// The newest failures, newest first.
#[tauri::command]
pub async fn failure_list(state: State<'_, AppState>) -> Result<FailureListResponse, IpcError> {
    state.ready().await?.failure_list().await.map_err(|e| e.to_ipc())
}

/// The timeline of the run a failure id (or a run id) names, with its redacted report.
#[tauri::command]
pub async fn failure_timeline(state: State<'_, AppState>, params: serde_json::Value) -> Result<FailureTimeline, IpcError> {
    let params: FailureTimelineParams = parse("failure_timeline", params)?;
    params.key()?;
    state.ready().await?.failure_timeline(&params).await.map_err(|e| e.to_ipc())
}
