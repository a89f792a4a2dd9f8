//! `approval_*` commands: the only way anything is approved is the owner, in this window.

use hearth_protocol::IpcError;
use hearth_protocol::approvals::{
    ApprovalDecideParams, ApprovalGetParams, ApprovalLeavingParams, ApprovalListResponse, ApprovalRecheckParams, ProposalView,
};
use tauri::State;

use crate::AppState;
use crate::ipc::parse;

/// Proposals, awaiting review first.
#[tauri::command]
pub async fn approval_list(state: State<'_, AppState>) -> Result<ApprovalListResponse, IpcError> {
    let proposals = state.ready().await?.approval_list().await.map_err(|e| e.to_ipc())?;
    Ok(ApprovalListResponse { proposals })
}

/// One proposal, for its card.
#[tauri::command]
pub async fn approval_get(state: State<'_, AppState>, params: serde_json::Value) -> Result<ProposalView, IpcError> {
    let params: ApprovalGetParams = parse("approval_get", params)?;
    params.validate()?;
    state.ready().await?.approval_get(&params.proposal_id).await.map_err(|e| e.to_ipc())
}

/// Approve or deny the proposal whose hash the owner was shown.
#[tauri::command]
pub async fn approval_decide(state: State<'_, AppState>, params: serde_json::Value) -> Result<ProposalView, IpcError> {
    let params: ApprovalDecideParams = parse("approval_decide", params)?;
    params.validate()?;
    state.ready().await?.approval_decide(&params).await.map_err(|e| e.to_ipc())
}

/// Check — and, when asked, retry — an approved action whose outcome is unknown.
#[tauri::command]
pub async fn approval_recheck(state: State<'_, AppState>, params: serde_json::Value) -> Result<ProposalView, IpcError> {
    let params: ApprovalRecheckParams = parse("approval_recheck", params)?;
    params.validate()?;
    state.ready().await?.approval_recheck(&params).await.map_err(|e| e.to_ipc())
}

/// Undo, or send now, an approved action waiting out its undo window.
#[tauri::command]
pub async fn approval_leaving(state: State<'_, AppState>, params: serde_json::Value) -> Result<ProposalView, IpcError> {
    let params: ApprovalLeavingParams = parse("approval_leaving", params)?;
    params.validate()?;
    state.ready().await?.approval_leaving(&params).await.map_err(|e| e.to_ipc())
}
