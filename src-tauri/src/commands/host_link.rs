//! `host_*` commands: this app working through the owner's Hearth at home (a companion).
//!
//! Only this app's window calls them, and they are never forwarded (the reach table names them
//! `Never`). When the app is a companion the window's one IPC layer sends its other commands
//! through `host_call` and `host_stream`; the Hearth at home decides what they may do.

use hearth_protocol::IpcError;
use hearth_protocol::commands::RUN_STOP;
use hearth_protocol::devices::{HostLinkPairParams, HostLinkStatus, HostRequest};
use serde_json::Value;
use tauri::State;
use tauri::ipc::Channel;

use crate::AppState;
use crate::ipc::parse;

/// Whether this app works through a Hearth at home, and which.
#[tauri::command]
pub async fn host_link_status(state: State<'_, AppState>) -> Result<HostLinkStatus, IpcError> {
    state.ready().await?.host_link_status().await.map_err(|e| e.to_ipc())
}

/// Pairs this app with the owner's Hearth at home.
#[tauri::command]
pub async fn host_link_pair(state: State<'_, AppState>, params: Value) -> Result<HostLinkStatus, IpcError> {
    let params: HostLinkPairParams = parse("host_link_pair", params)?;
    params.validate()?;
    state.ready().await?.host_link_pair(&params).await.map_err(|e| e.to_ipc())
}

/// Forgets the Hearth at home: this app works on its own again.
#[tauri::command]
pub async fn host_link_forget(state: State<'_, AppState>) -> Result<HostLinkStatus, IpcError> {
    state.ready().await?.host_link_forget().await.map_err(|e| e.to_ipc())
}

/// One of the window's commands, answered by the Hearth at home.
#[tauri::command]
pub async fn host_call(state: State<'_, AppState>, request: Value) -> Result<Value, IpcError> {
    let request: HostRequest = parse("host_call", request)?;
    state.ready().await?.host_call(&request).await
}

/// A command that opens a stream at the Hearth at home (a chat, a watch): its answer, and its
/// events on `on_event`. A chat whose window stops listening is stopped at home, as a local
/// chat is (streams.rs). A chat whose stream ends without its last event (the connection ended,
/// this app fell behind, or an event was too large to send) is stopped at home too, and the
/// window gets a `RUN_ERROR` saying so, so its run ends rather than waiting.
#[tauri::command(rename_all = "camelCase")]
pub async fn host_stream(state: State<'_, AppState>, request: Value, on_event: Channel<Value>) -> Result<Value, IpcError> {
    let request: HostRequest = parse("host_stream", request)?;
    let hearth = state.ready().await?;
    let (answer, mut events) = hearth.host_stream(&request).await?;
    let run_id = answer.get("runId").cloned().filter(|_| request.command == hearth_protocol::commands::RUN_START.name());
    tauri::async_runtime::spawn(async move {
        let stop_at_home = |run_id: Value| {
            let hearth = hearth.clone();
            async move {
                let stop = HostRequest { command: RUN_STOP.name().to_owned(), params: serde_json::json!({ "runId": run_id }) };
                if let Err(err) = hearth.host_call(&stop).await {
                    tracing::warn!(code = ?err.code, "a chat at home could not be stopped");
                }
            }
        };
        let mut ended = false;
        while let Some(event) = events.recv().await {
            ended |= matches!(event.get("type").and_then(Value::as_str), Some("RUN_FINISHED" | "RUN_ERROR"));
            if on_event.send(event).is_err() {
                if let Some(run_id) = run_id {
                    stop_at_home(run_id).await;
                }
                return;
            }
        }
        if let Some(run_id) = run_id.filter(|_| !ended) {
            // Stopped at home whatever ended the stream (a lost connection stopped it already;
            // stopping twice is harmless), then the window's run ends.
            stop_at_home(run_id).await;
            let lost = hearth_protocol::agui::Event::RunError(hearth_protocol::agui::RunErrorEvent {
                message:
                    "This chat's stream from your Hearth at home ended early, so it was stopped there. Its history there has what was done."
                        .to_owned(),
                code: Some("home_link_lost".to_owned()),
                ..Default::default()
            });
            if let Ok(lost) = serde_json::to_value(lost) {
                let _ = on_event.send(lost);
            }
        }
    });
    Ok(answer)
}
