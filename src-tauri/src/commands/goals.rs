//! `goal_*` commands: the Goals screen.

use hearth_protocol::IpcError;
use hearth_protocol::goals::{GoalControlParams, GoalCreateParams, GoalListResponse, GoalMilestonesParams, GoalView};
use tauri::State;

use crate::AppState;
use crate::ipc::parse;

/// Every goal.
#[tauri::command]
pub async fn goal_list(state: State<'_, AppState>) -> Result<GoalListResponse, IpcError> {
    state.ready().await?.goal_list().await.map_err(|e| e.to_ipc())
}

/// A goal the owner makes.
#[tauri::command]
pub async fn goal_create(state: State<'_, AppState>, params: serde_json::Value) -> Result<GoalView, IpcError> {
    let params: GoalCreateParams = parse("goal_create", params)?;
    params.validate()?;
    state.ready().await?.goal_create(&params).await.map_err(|e| e.to_ipc())
}

/// Pause or resume a goal with its tasks and schedules.
#[tauri::command]
pub async fn goal_control(state: State<'_, AppState>, params: serde_json::Value) -> Result<GoalView, IpcError> {
    let params: GoalControlParams = parse("goal_control", params)?;
    params.validate()?;
    state.ready().await?.goal_control(&params).await.map_err(|e| e.to_ipc())
}

/// Adds, renames or removes a goal's milestone.
#[tauri::command]
pub async fn goal_milestones(state: State<'_, AppState>, params: serde_json::Value) -> Result<GoalView, IpcError> {
    let params: GoalMilestonesParams = parse("goal_milestones", params)?;
    params.validate()?;
    state.ready().await?.goal_milestones(&params).await.map_err(|e| e.to_ipc())
}
