//! `account*` commands: Settings → Accounts. Tokens and the client secret go in, never out.

use hearth_protocol::IpcError;
use hearth_protocol::accounts::{
    AccountAttemptParams, AccountConnectParams, AccountParams, AccountsView, ConnectBegun, GoogleClientParams,
};
use tauri::{AppHandle, Runtime, State};

use crate::AppState;
use crate::ipc::parse;

/// What Accounts shows.
#[tauri::command]
pub async fn accounts_get(state: State<'_, AppState>) -> Result<AccountsView, IpcError> {
    state.ready().await?.accounts_get().await.map_err(|e| e.to_ipc())
}

/// The owner's own Google OAuth client.
#[tauri::command]
pub async fn accounts_client_set(state: State<'_, AppState>, params: serde_json::Value) -> Result<AccountsView, IpcError> {
    let params: GoogleClientParams = parse("accounts_client_set", params)?;
    params.validate()?;
    state.ready().await?.accounts_client_set(&params).await.map_err(|e| e.to_ipc())
}

/// Starts a Google sign-in and opens its consent page in the owner's own browser.
#[tauri::command]
pub async fn account_connect_begin<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    params: serde_json::Value,
) -> Result<ConnectBegun, IpcError> {
    let params: AccountConnectParams = parse("account_connect_begin", params)?;
    let begun = state.ready().await?.account_connect_begin(params.access).await.map_err(|e| e.to_ipc())?;
    open_in_browser(&app, &begun.consent_url);
    Ok(begun)
}

/// The system browser, never the webview: the owner signs in where their Google session is,
/// and the consent page never runs inside Hearth. The end-to-end build opens nothing (the test
/// plays the browser), and a failure only leaves the address on screen to open by hand.
fn open_in_browser<R: Runtime>(app: &AppHandle<R>, url: &str) {
    #[cfg(feature = "e2e")]
    let _ = (app, url);
    #[cfg(not(feature = "e2e"))]
    {
        use tauri_plugin_opener::OpenerExt;
        if let Err(err) = app.opener().open_url(url, None::<&str>) {
            tracing::warn!(error = %err, "could not open the system browser for the Google sign-in");
        }
    }
}

/// Waits for Google to send the browser back and completes the sign-in.
#[tauri::command]
pub async fn account_connect_finish(state: State<'_, AppState>, params: serde_json::Value) -> Result<AccountsView, IpcError> {
    let params: AccountAttemptParams = parse("account_connect_finish", params)?;
    params.validate()?;
    state.ready().await?.account_connect_finish(&params.attempt_id).await.map_err(|e| e.to_ipc())
}

/// The account the agent's mail and calendar tools use.
#[tauri::command]
pub async fn account_choose(state: State<'_, AppState>, params: serde_json::Value) -> Result<AccountsView, IpcError> {
    let params: AccountParams = parse("account_choose", params)?;
    params.validate()?;
    state.ready().await?.account_choose(&params.connection_id).await.map_err(|e| e.to_ipc())
}

/// Disconnects a Google account (revoked at Google, forgotten here).
#[tauri::command]
pub async fn account_disconnect(state: State<'_, AppState>, params: serde_json::Value) -> Result<AccountsView, IpcError> {
    let params: AccountParams = parse("account_disconnect", params)?;
    params.validate()?;
    state.ready().await?.account_disconnect(&params.connection_id).await.map_err(|e| e.to_ipc())
}
