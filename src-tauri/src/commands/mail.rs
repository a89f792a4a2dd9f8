//! `mail_*` commands: the mail card's thread viewer.

use hearth_protocol::IpcError;
use hearth_protocol::mail::{MailThread, MailThreadGetParams};
use tauri::State;

use crate::AppState;
use crate::ipc::parse;

/// One conversation.
#[tauri::command]
pub async fn mail_thread_get(state: State<'_, AppState>, params: serde_json::Value) -> Result<MailThread, IpcError> {
    let params: MailThreadGetParams = parse("mail_thread_get", params)?;
    params.validate()?;
    state.ready().await?.mail_thread(&params.thread_id).await.map_err(|e| e.to_ipc())
}
