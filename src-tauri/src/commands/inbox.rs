//! `schedule_*`, `monitor_check_now` and `notification_*` commands: the Activity screen's
//! schedules and monitors, and the inbox.

use hearth_protocol::IpcError;
use hearth_protocol::notifications::{NotificationListResponse, NotificationOpened, NotificationReadParams, NotificationView};
use hearth_protocol::schedules::{ScheduleControlParams, ScheduleCreateParams, ScheduleListResponse, ScheduleView};
use tauri::State;
use tauri::ipc::Channel;

use crate::AppState;
use crate::ipc::parse;

/// Every schedule.
#[tauri::command]
pub async fn schedule_list(state: State<'_, AppState>) -> Result<ScheduleListResponse, IpcError> {
    state.ready().await?.schedule_list().await.map_err(|e| e.to_ipc())
}

/// A schedule the owner makes.
#[tauri::command]
pub async fn schedule_create(state: State<'_, AppState>, params: serde_json::Value) -> Result<ScheduleView, IpcError> {
    let params: ScheduleCreateParams = parse("schedule_create", params)?;
    params.validate()?;
    state.ready().await?.schedule_create(&params).await.map_err(|e| e.to_ipc())
}

/// Pause, resume, run now, delete (`null` after a delete).
#[tauri::command]
pub async fn schedule_control(state: State<'_, AppState>, params: serde_json::Value) -> Result<Option<ScheduleView>, IpcError> {
    let params: ScheduleControlParams = parse("schedule_control", params)?;
    params.validate()?;
    state.ready().await?.schedule_control(&params).await.map_err(|e| e.to_ipc())
}

/// A scheduled monitor looks at its page now.
#[tauri::command]
pub async fn monitor_check_now(
    state: State<'_, AppState>,
    params: serde_json::Value,
) -> Result<hearth_protocol::tasks::TaskView, IpcError> {
    let params: hearth_protocol::tasks::TaskGetParams = parse("monitor_check_now", params)?;
    params.validate()?;
    state.ready().await?.monitor_check_now(&params.task_id).await.map_err(|e| e.to_ipc())
}

/// Ideas not decided yet.
#[tauri::command]
pub async fn idea_list(state: State<'_, AppState>) -> Result<hearth_protocol::ideas::IdeaListResponse, IpcError> {
    state.ready().await?.idea_list().await.map_err(|e| e.to_ipc())
}

/// Accepts an idea: Hearth makes its task or schedule.
#[tauri::command]
pub async fn idea_accept(state: State<'_, AppState>, params: serde_json::Value) -> Result<hearth_protocol::ideas::IdeaAccepted, IpcError> {
    let params: hearth_protocol::ideas::IdeaParams = parse("idea_accept", params)?;
    params.validate()?;
    state.ready().await?.idea_accept(&params).await.map_err(|e| e.to_ipc())
}

/// Dismisses an idea for good.
#[tauri::command]
pub async fn idea_dismiss(
    state: State<'_, AppState>,
    params: serde_json::Value,
) -> Result<hearth_protocol::ideas::IdeaListResponse, IpcError> {
    let params: hearth_protocol::ideas::IdeaParams = parse("idea_dismiss", params)?;
    params.validate()?;
    state.ready().await?.idea_dismiss(&params).await.map_err(|e| e.to_ipc())
}

/// The inbox.
#[tauri::command]
pub async fn notification_list(state: State<'_, AppState>) -> Result<NotificationListResponse, IpcError> {
    state.ready().await?.notification_list().await.map_err(|e| e.to_ipc())
}

/// Marks notices read.
#[tauri::command]
pub async fn notification_read(state: State<'_, AppState>, params: serde_json::Value) -> Result<NotificationListResponse, IpcError> {
    let params: NotificationReadParams = parse("notification_read", params)?;
    params.validate()?;
    state.ready().await?.notification_read(&params).await.map_err(|e| e.to_ipc())
}

/// Pushes every new notice on `on_notice` until the window stops listening.
#[tauri::command(rename_all = "camelCase")]
pub async fn notification_watch(state: State<'_, AppState>, on_notice: Channel<NotificationView>) -> Result<(), IpcError> {
    let notices = state.ready().await?.notification_watch().await.map_err(|e| e.to_ipc())?;
    crate::streams::forward_notices(notices, on_notice);
    Ok(())
}

/// Sends each notice whose OS notification the owner clicks on `on_open`, so the window opens
/// it. Needs no core: clicks come from the desktop (desktop_notices.rs).
#[tauri::command(rename_all = "camelCase")]
pub fn notification_open_watch(requests: State<'_, crate::desktop_notices::OpenRequests>, on_open: Channel<NotificationOpened>) {
    requests.subscribe(on_open);
}
