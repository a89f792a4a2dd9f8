//! `mandate_*` commands: the standing orders the owner grants a task or a schedule.

use hearth_protocol::IpcError;
use hearth_protocol::mandates::{Mandate, MandateGrantParams, MandateListParams, MandateListResponse, MandateRevokeParams};
use tauri::State;

use crate::AppState;
use crate::ipc::parse;

/// Every standing order, or one task's or schedule's.
#[tauri::command]
pub async fn mandate_list(state: State<'_, AppState>, params: serde_json::Value) -> Result<MandateListResponse, IpcError> {
    let params: MandateListParams = parse("mandate_list", params)?;
    params.validate()?;
    state.ready().await?.mandate_list(&params).await.map_err(|e| e.to_ipc())
}

/// Grants a standing order.
#[tauri::command]
pub async fn mandate_grant(state: State<'_, AppState>, params: serde_json::Value) -> Result<Mandate, IpcError> {
    let params: MandateGrantParams = parse("mandate_grant", params)?;
    params.validate()?;
    state.ready().await?.mandate_grant(&params).await.map_err(|e| e.to_ipc())
}

/// Revokes a standing order and stops the runs it covers.
#[tauri::command]
pub async fn mandate_revoke(state: State<'_, AppState>, params: serde_json::Value) -> Result<Mandate, IpcError> {
    let params: MandateRevokeParams = parse("mandate_revoke", params)?;
    params.validate()?;
    state.ready().await?.mandate_revoke(&params).await.map_err(|e| e.to_ipc())
}
