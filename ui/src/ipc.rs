//! The only file that talks to the backend: typed wrappers over Tauri's `invoke` and
//! `Channel`. Screens call these functions and never see `JsValue`.
//!
//! Payloads cross as JSON text parsed on each side, so the serde types in
//! `hearth-protocol` define the wire exactly as the backend reads it.

use hearth_protocol::accounts::{
    AccountAccess, AccountAttemptParams, AccountConnectParams, AccountParams, AccountsView, ConnectBegun, GoogleClientParams,
};
use hearth_protocol::agui::Event;
use hearth_protocol::approvals::{
    ApprovalDecideParams, ApprovalGetParams, ApprovalLeavingParams, ApprovalListResponse, ApprovalRecheckParams, ProposalView,
};
use hearth_protocol::backup::{
    BackupCreateParams, BackupMadeView, BackupRestoreParams, BackupRestoredView, BackupScheduleParams, BackupSettingsView,
};
use hearth_protocol::browser::{
    BrowserListResponse, ControlFrame, ControlInput, ControlInputParams, ControlStarted, ControlStopParams, ProfileParams,
    ScreenshotParams, ScreenshotResponse, UseProfileParams,
};
use hearth_protocol::commands::{self as cmd, Command};
use hearth_protocol::computer::{
    CommandOutput, ComputerEnableParams, ComputerPathParams, ComputerRunParams, ComputerRunResponse, ComputerRunStopParams,
    ComputerStatusView, ComputerWriteParams, WorkspaceFile, WorkspaceListing,
};
use hearth_protocol::documents::{
    DocFolderAddParams, DocFolderId, DocFolderListResponse, DocFolderRemoveParams, DocPreview, DocPreviewParams, DocSearchParams,
    DocSearchResponse,
};
use hearth_protocol::failures::{FailureListResponse, FailureTimeline, FailureTimelineParams};
use hearth_protocol::files::{
    FileDeleteParams, FileDetail, FileFillParams, FileGetParams, FileImportParams, FileListResponse, FileRenderParams, FileRenderResponse,
    FileView,
};
use hearth_protocol::goals::{
    GoalAction, GoalControlParams, GoalCreateParams, GoalListResponse, GoalMilestonesParams, GoalView, MilestoneChange,
};
use hearth_protocol::ideas::{IdeaAccepted, IdeaListResponse, IdeaParams};
use hearth_protocol::ids::{FileId, OperationId, ProposalId, RunId, TaskId, ThreadId};
use hearth_protocol::ipc::{
    AppInfoResponse, RunStartParams, RunStartResponse, RunStopParams, RunStopResponse, ThreadDeleteParams, ThreadDeleteResponse,
    ThreadHistoryParams, ThreadHistoryResponse, ThreadListResponse,
};
use hearth_protocol::mail::{MailThread, MailThreadGetParams};
use hearth_protocol::mcp::{McpServerEnableParams, McpServerParams, McpServerSaveParams, McpServerView, McpToolPolicyParams};
use hearth_protocol::memory::{MemoryForgetParams, MemoryListResponse, MemorySaveParams, MemoryView};
use hearth_protocol::notifications::{NotificationListResponse, NotificationOpened, NotificationReadParams, NotificationView};
use hearth_protocol::schedules::{ScheduleControlParams, ScheduleCreateParams, ScheduleListResponse, ScheduleView};
use hearth_protocol::settings::{
    AgentMode, AgentModeParams, ConnectionTestResponse, EndpointParams, HarnessSettingsParams, LocalModelActivity, LocalModelInfo,
    LocalModelInspectParams, LocalModelOverrideParams, ModelSettingsParams, ProbeProgress, SettingsView, UndoWindowParams,
};
use hearth_protocol::tasks::{TaskChanged, TaskControlParams, TaskDetail, TaskGetParams, TaskListResponse, TaskView};
use hearth_protocol::web_search::{WebSearchSetParams, WebSearchView};
use hearth_protocol::{ErrorCode, IpcError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["window", "__TAURI__", "core"], js_name = invoke, catch)]
    async fn tauri_invoke(cmd: &str, args: JsValue) -> Result<JsValue, JsValue>;

    /// Tauri's streaming channel (`window.__TAURI__.core.Channel`).
    #[wasm_bindgen(js_namespace = ["window", "__TAURI__", "core"], js_name = Channel)]
    pub type TauriChannel;

    #[wasm_bindgen(constructor, js_namespace = ["window", "__TAURI__", "core"], js_class = Channel)]
    fn new() -> TauriChannel;

    #[wasm_bindgen(method, setter, js_name = onmessage)]
    fn set_onmessage(this: &TauriChannel, handler: &Closure<dyn FnMut(JsValue)>);
}

/// Where the window's commands go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// This app's own core (the desktop at home, or a phone on its own).
    Local,
    /// The owner's Hearth at home, through this app's paired link (`host_call`, `host_stream`):
    /// its agent, its tools, its data, and its decision on what this device may do.
    Home,
}

thread_local! {
    // The window is one thread (wasm): a cell, set once the link is known and on every change.
    static TRANSPORT: std::cell::Cell<Transport> = const { std::cell::Cell::new(Transport::Local) };
}

/// The transport in use.
pub fn transport() -> Transport {
    TRANSPORT.with(std::cell::Cell::get)
}

/// Chooses the transport: from the link's status at start, and after pairing or forgetting.
pub fn set_transport(transport: Transport) {
    TRANSPORT.with(|cell| cell.set(transport));
}

/// Commands about this app itself, answered by its own core whatever the transport: its
/// version, its first frame, its OS notifications' clicks, giving back its own browser at
/// start, and the link itself.
const ALWAYS_HERE: &[Command] = &[
    cmd::APP_INFO,
    cmd::APP_PAINTED,
    cmd::NOTIFICATION_OPEN_WATCH,
    cmd::BROWSER_CONTROL_RELEASE_ALL,
    cmd::HOST_LINK_STATUS,
    cmd::HOST_LINK_PAIR,
    cmd::HOST_LINK_FORGET,
    cmd::HOST_CALL,
    cmd::HOST_STREAM,
];

fn goes_home(cmd: Command) -> bool {
    transport() == Transport::Home && !ALWAYS_HERE.contains(&cmd)
}

/// Whether this app works through a Hearth at home, and which (always asked of this app).
pub async fn host_link_status() -> Result<hearth_protocol::devices::HostLinkStatus, IpcError> {
    call(cmd::HOST_LINK_STATUS, &serde_json::json!({})).await
}

/// Pairs this app with the owner's Hearth at home.
pub async fn host_link_pair(
    params: &hearth_protocol::devices::HostLinkPairParams,
) -> Result<hearth_protocol::devices::HostLinkStatus, IpcError> {
    params.validate()?;
    call(cmd::HOST_LINK_PAIR, &serde_json::json!({ "params": params })).await
}

/// Forgets the Hearth at home: this app works on its own again.
pub async fn host_link_forget() -> Result<hearth_protocol::devices::HostLinkStatus, IpcError> {
    call(cmd::HOST_LINK_FORGET, &serde_json::json!({})).await
}

/// A run's event subscription; dropping it stops delivery to the UI.
pub struct RunSubscription {
    _channel: TauriChannel,
    _handler: Closure<dyn FnMut(JsValue)>,
}

/// The task watch; dropping it stops delivery to the UI.
pub struct TaskSubscription {
    _channel: TauriChannel,
    _handler: Closure<dyn FnMut(JsValue)>,
}

/// The notice watch; dropping it stops delivery to the UI.
pub struct NoticeSubscription {
    _channel: TauriChannel,
    _handler: Closure<dyn FnMut(JsValue)>,
}

/// The watch of clicked OS notifications; dropping it stops delivery to the UI.
pub struct NoticeOpenSubscription {
    _channel: TauriChannel,
    _handler: Closure<dyn FnMut(JsValue)>,
}

/// Take control's frames; dropping it stops delivery to the UI (Give back ends the screencast).
pub struct ControlSubscription {
    /// Names the session for [`browser_control_stop`].
    pub ticket: u64,
    _channel: TauriChannel,
    _handler: Closure<dyn FnMut(JsValue)>,
}

/// Version and data folder; an error here means the core could not start.
pub async fn app_info() -> Result<AppInfoResponse, IpcError> {
    call(cmd::APP_INFO, &serde_json::json!({})).await
}

/// Tells the backend the window drew its first frame (it logs the moment; the footprint bench
/// times start-up to it). Nothing depends on the answer.
pub async fn app_painted() {
    if let Err(err) = call::<_, ()>(cmd::APP_PAINTED, &serde_json::json!({})).await {
        web_sys_log(&format!("app_painted: {}", err.message));
    }
}

/// Starts a run; `on_event` gets each AG-UI event as it arrives.
pub async fn run_start(
    params: &RunStartParams,
    on_event: impl FnMut(Event) + 'static,
) -> Result<(RunStartResponse, RunSubscription), IpcError> {
    params.validate()?;
    let (channel, handler) = listen("an event", on_event);
    let args = js_sys::Object::new();
    set(&args, "params", &to_js(params)?)?;
    let started = invoke_stream(cmd::RUN_START, &args, "onEvent", &channel).await?;
    Ok((started, RunSubscription { _channel: channel, _handler: handler }))
}

/// Stops a run.
pub async fn run_stop(run_id: &str) -> Result<RunStopResponse, IpcError> {
    call(cmd::RUN_STOP, &serde_json::json!({ "params": RunStopParams { run_id: RunId::parse(run_id)? } })).await
}

/// Conversations, newest first.
pub async fn thread_list() -> Result<ThreadListResponse, IpcError> {
    call(cmd::THREAD_LIST, &serde_json::json!({})).await
}

/// One page of a conversation's stored events: the newest, or those just before `before`.
pub async fn thread_history(thread_id: &str, before: Option<i64>) -> Result<ThreadHistoryResponse, IpcError> {
    let params = ThreadHistoryParams { thread_id: ThreadId::parse(thread_id)?, before };
    params.validate()?;
    call(cmd::THREAD_HISTORY, &serde_json::json!({ "params": params })).await
}

/// Deletes a chat with its messages and its own browser profile; `acknowledge_uncertain` after
/// the owner has seen that some of its actions may or may not have happened.
pub async fn thread_delete(thread_id: &str, acknowledge_uncertain: bool) -> Result<ThreadDeleteResponse, IpcError> {
    let params = ThreadDeleteParams { thread_id: ThreadId::parse(thread_id)?, acknowledge_uncertain };
    params.validate()?;
    call(cmd::THREAD_DELETE, &serde_json::json!({ "params": params })).await
}

/// Every task, most recently changed first.
pub async fn task_list() -> Result<TaskListResponse, IpcError> {
    call(cmd::TASK_LIST, &serde_json::json!({})).await
}

/// The newest failures, newest first.
pub async fn failure_list() -> Result<FailureListResponse, IpcError> {
    call(cmd::FAILURE_LIST, &serde_json::json!({})).await
}

/// The timeline of the run a failure id (as the owner typed it) or a run id names, with the
/// redacted report "Copy details" gives.
pub async fn failure_timeline(id: &str) -> Result<FailureTimeline, IpcError> {
    let params = FailureTimelineParams { id: id.trim().to_owned() };
    params.key()?;
    call(cmd::FAILURE_TIMELINE, &serde_json::json!({ "params": params })).await
}

/// One task with its runs and events.
pub async fn task_get(task_id: &str) -> Result<TaskDetail, IpcError> {
    let params = TaskGetParams { task_id: TaskId::parse(task_id)? };
    params.validate()?;
    call(cmd::TASK_GET, &serde_json::json!({ "params": params })).await
}

/// Applies the owner's control; answers the task as it is afterwards. A `conflict` error
/// means the task was no longer in `expected_status`.
pub async fn task_control(params: &TaskControlParams) -> Result<TaskView, IpcError> {
    params.validate()?;
    call(cmd::TASK_CONTROL, &serde_json::json!({ "params": params })).await
}

/// Starts the task watch: `on_change` gets every change to any task until the returned
/// subscription is dropped. Call once per app.
pub async fn task_watch(on_change: impl FnMut(TaskChanged) + 'static) -> Result<TaskSubscription, IpcError> {
    let (channel, handler) = listen("a task change", on_change);
    let args = js_sys::Object::new();
    invoke_stream::<()>(cmd::TASK_WATCH, &args, "onChange", &channel).await?;
    Ok(TaskSubscription { _channel: channel, _handler: handler })
}

/// Every schedule, newest first.
pub async fn schedule_list() -> Result<ScheduleListResponse, IpcError> {
    call(cmd::SCHEDULE_LIST, &serde_json::json!({})).await
}

/// Makes a schedule.
pub async fn schedule_create(params: &ScheduleCreateParams) -> Result<ScheduleView, IpcError> {
    params.validate()?;
    call(cmd::SCHEDULE_CREATE, &serde_json::json!({ "params": params })).await
}

/// Pause, resume, run now or delete; `None` after a delete.
pub async fn schedule_control(params: &ScheduleControlParams) -> Result<Option<ScheduleView>, IpcError> {
    params.validate()?;
    call(cmd::SCHEDULE_CONTROL, &serde_json::json!({ "params": params })).await
}

/// A finance task on a pasted statement.
pub async fn finance_start(csv: &str) -> Result<TaskView, IpcError> {
    let params = hearth_protocol::finance::FinanceStartParams { csv: csv.to_owned() };
    params.validate()?;
    call(cmd::FINANCE_START, &serde_json::json!({ "params": params })).await
}

/// Every goal.
pub async fn goal_list() -> Result<GoalListResponse, IpcError> {
    call(cmd::GOAL_LIST, &serde_json::json!({})).await
}

/// Makes a goal.
pub async fn goal_create(params: &GoalCreateParams) -> Result<GoalView, IpcError> {
    params.validate()?;
    call(cmd::GOAL_CREATE, &serde_json::json!({ "params": params })).await
}

/// Adds, renames or removes one of a goal's milestones.
pub async fn goal_milestones(goal_id: &str, change: MilestoneChange) -> Result<GoalView, IpcError> {
    let params = GoalMilestonesParams { goal_id: goal_id.to_owned(), change };
    params.validate()?;
    call(cmd::GOAL_MILESTONES, &serde_json::json!({ "params": params })).await
}

/// Pauses or resumes a goal with its tasks and schedules.
pub async fn goal_control(goal_id: &str, action: GoalAction) -> Result<GoalView, IpcError> {
    let params = GoalControlParams { goal_id: goal_id.to_owned(), action };
    params.validate()?;
    call(cmd::GOAL_CONTROL, &serde_json::json!({ "params": params })).await
}

/// Every fact and the requests that carried some.
pub async fn memory_list() -> Result<MemoryListResponse, IpcError> {
    call(cmd::MEMORY_LIST, &serde_json::json!({})).await
}

/// The document folders, with their counts and skipped notes.
pub async fn document_folder_list() -> Result<DocFolderListResponse, IpcError> {
    call(cmd::DOCUMENT_FOLDER_LIST, &serde_json::json!({})).await
}

/// Adds a document folder (it is indexed before the answer).
pub async fn document_folder_add(params: &DocFolderAddParams) -> Result<DocFolderListResponse, IpcError> {
    params.validate()?;
    call(cmd::DOCUMENT_FOLDER_ADD, &serde_json::json!({ "params": params })).await
}

/// Removes a document folder and forgets its text.
pub async fn document_folder_remove(id: DocFolderId) -> Result<DocFolderListResponse, IpcError> {
    let params = DocFolderRemoveParams { id };
    params.validate()?;
    call(cmd::DOCUMENT_FOLDER_REMOVE, &serde_json::json!({ "params": params })).await
}

/// Reads every document folder again.
pub async fn document_rescan() -> Result<DocFolderListResponse, IpcError> {
    call(cmd::DOCUMENT_RESCAN, &serde_json::json!({})).await
}

/// Searches the documents.
pub async fn document_search(params: &DocSearchParams) -> Result<DocSearchResponse, IpcError> {
    params.validate()?;
    call(cmd::DOCUMENT_SEARCH, &serde_json::json!({ "params": params })).await
}

/// A hit's text around its first match.
pub async fn document_preview(params: &DocPreviewParams) -> Result<DocPreview, IpcError> {
    params.validate()?;
    call(cmd::DOCUMENT_PREVIEW, &serde_json::json!({ "params": params })).await
}

/// Keeps a new fact (no id) or corrects one.
pub async fn memory_save(params: &MemorySaveParams) -> Result<MemoryView, IpcError> {
    params.validate()?;
    call(cmd::MEMORY_SAVE, &serde_json::json!({ "params": params })).await
}

/// Forgets a fact; answers the list as it is then.
pub async fn memory_forget(id: i64) -> Result<MemoryListResponse, IpcError> {
    MemoryForgetParams { id }.validate()?;
    call(cmd::MEMORY_FORGET, &serde_json::json!({ "params": MemoryForgetParams { id } })).await
}

/// A task's standing orders.
pub async fn mandate_list(task_id: &str) -> Result<hearth_protocol::mandates::MandateListResponse, IpcError> {
    use hearth_protocol::mandates::{MandateHolder, MandateListParams};
    let params = MandateListParams { holder: Some(MandateHolder::Task { task_id: TaskId::parse(task_id)? }) };
    params.validate()?;
    call(cmd::MANDATE_LIST, &serde_json::json!({ "params": params })).await
}

/// Grants a standing order.
pub async fn mandate_grant(params: &hearth_protocol::mandates::MandateGrantParams) -> Result<hearth_protocol::mandates::Mandate, IpcError> {
    params.validate()?;
    call(cmd::MANDATE_GRANT, &serde_json::json!({ "params": params })).await
}

/// Revokes a standing order; the runs it covers stop.
pub async fn mandate_revoke(mandate_id: &str) -> Result<hearth_protocol::mandates::Mandate, IpcError> {
    let params = hearth_protocol::mandates::MandateRevokeParams { mandate_id: mandate_id.to_owned() };
    params.validate()?;
    call(cmd::MANDATE_REVOKE, &serde_json::json!({ "params": params })).await
}

/// A scheduled monitor looks at its page now.
pub async fn monitor_check_now(task_id: &str) -> Result<TaskView, IpcError> {
    let params = TaskGetParams { task_id: TaskId::parse(task_id)? };
    params.validate()?;
    call(cmd::MONITOR_CHECK_NOW, &serde_json::json!({ "params": params })).await
}

/// Ideas not decided yet.
pub async fn idea_list() -> Result<IdeaListResponse, IpcError> {
    call(cmd::IDEA_LIST, &serde_json::json!({})).await
}

/// Accepts an idea.
pub async fn idea_accept(idea_id: &str) -> Result<IdeaAccepted, IpcError> {
    let params = IdeaParams { idea_id: idea_id.to_owned() };
    params.validate()?;
    call(cmd::IDEA_ACCEPT, &serde_json::json!({ "params": params })).await
}

/// Dismisses an idea.
pub async fn idea_dismiss(idea_id: &str) -> Result<IdeaListResponse, IpcError> {
    let params = IdeaParams { idea_id: idea_id.to_owned() };
    params.validate()?;
    call(cmd::IDEA_DISMISS, &serde_json::json!({ "params": params })).await
}

/// The inbox: the newest notices and the unread count.
pub async fn notification_list() -> Result<NotificationListResponse, IpcError> {
    call(cmd::NOTIFICATION_LIST, &serde_json::json!({})).await
}

/// Marks notices read; answers the inbox as it is then.
pub async fn notification_read(params: &NotificationReadParams) -> Result<NotificationListResponse, IpcError> {
    params.validate()?;
    call(cmd::NOTIFICATION_READ, &serde_json::json!({ "params": params })).await
}

/// Starts the notice watch: `on_notice` gets every new notice until the subscription is
/// dropped. Call once per app.
pub async fn notification_watch(on_notice: impl FnMut(NotificationView) + 'static) -> Result<NoticeSubscription, IpcError> {
    let (channel, handler) = listen("a notice", on_notice);
    let args = js_sys::Object::new();
    invoke_stream::<()>(cmd::NOTIFICATION_WATCH, &args, "onNotice", &channel).await?;
    Ok(NoticeSubscription { _channel: channel, _handler: handler })
}

/// Starts the watch of clicked OS notifications: `on_open` gets each notice whose
/// notification the owner clicked, until the subscription is dropped. Call once per app.
pub async fn notification_open_watch(on_open: impl FnMut(NotificationOpened) + 'static) -> Result<NoticeOpenSubscription, IpcError> {
    let (channel, handler) = listen("a clicked notification", on_open);
    let args = js_sys::Object::new();
    set(&args, "onOpen", channel.as_ref())?;
    invoke_raw::<()>(cmd::NOTIFICATION_OPEN_WATCH, args.into()).await?;
    Ok(NoticeOpenSubscription { _channel: channel, _handler: handler })
}

/// Proposals: awaiting review first, then the most recent decided ones.
pub async fn approval_list() -> Result<ApprovalListResponse, IpcError> {
    call(cmd::APPROVAL_LIST, &serde_json::json!({})).await
}

/// One proposal, with the hash to send back with a decision.
pub async fn approval_get(proposal_id: &str) -> Result<ProposalView, IpcError> {
    let params = ApprovalGetParams { proposal_id: ProposalId::parse(proposal_id)? };
    params.validate()?;
    call(cmd::APPROVAL_GET, &serde_json::json!({ "params": params })).await
}

/// Approves or denies the proposal whose `hash` the owner was shown; answers it as it is
/// afterwards. A `conflict` error means the proposal changed since it was displayed.
pub async fn approval_decide(params: &ApprovalDecideParams) -> Result<ProposalView, IpcError> {
    params.validate()?;
    call(cmd::APPROVAL_DECIDE, &serde_json::json!({ "params": params })).await
}

/// Looks for an approved action whose outcome is unknown — and, with [`Recheck::Retry`], does
/// it again only when it is not found; answers the proposal as it is afterwards.
pub async fn approval_recheck(params: &ApprovalRecheckParams) -> Result<ProposalView, IpcError> {
    params.validate()?;
    call(cmd::APPROVAL_RECHECK, &serde_json::json!({ "params": params })).await
}

/// Undo, or send now, an approved action waiting out its undo window; answers the proposal as
/// it is afterwards.
pub async fn approval_leaving(params: &ApprovalLeavingParams) -> Result<ProposalView, IpcError> {
    params.validate()?;
    call(cmd::APPROVAL_LEAVING, &serde_json::json!({ "params": params })).await
}

/// The owner's files, newest first.
pub async fn file_list() -> Result<FileListResponse, IpcError> {
    call(cmd::FILE_LIST, &serde_json::json!({})).await
}

/// One file with its pages and form fields (with their current values).
pub async fn file_get(file_id: &str) -> Result<FileDetail, IpcError> {
    let params = FileGetParams { file_id: FileId::parse(file_id)? };
    params.validate()?;
    call(cmd::FILE_GET, &serde_json::json!({ "params": params })).await
}

/// One page rendered by the backend as a PNG data URL.
pub async fn file_render(params: &FileRenderParams) -> Result<FileRenderResponse, IpcError> {
    params.validate()?;
    call(cmd::FILE_RENDER, &serde_json::json!({ "params": params })).await
}

/// Fills a new copy of a file (the original never changes); answers the copy.
pub async fn file_fill(params: &FileFillParams) -> Result<FileView, IpcError> {
    params.validate()?;
    call(cmd::FILE_FILL, &serde_json::json!({ "params": params })).await
}

/// Imports a PDF the owner chose from their disk; answers it as Files lists it.
pub async fn file_import(params: &FileImportParams) -> Result<FileView, IpcError> {
    params.validate()?;
    call(cmd::FILE_IMPORT, &serde_json::json!({ "params": params })).await
}

/// Deletes a file's bytes (its record stays for receipts).
pub async fn file_delete(file_id: &str) -> Result<(), IpcError> {
    let params = FileDeleteParams { file_id: FileId::parse(file_id)? };
    params.validate()?;
    call(cmd::FILE_DELETE, &serde_json::json!({ "params": params })).await
}

/// One mail conversation (the mail card's thread viewer).
pub async fn mail_thread_get(thread_id: &str) -> Result<MailThread, IpcError> {
    let params = MailThreadGetParams { thread_id: thread_id.to_owned() };
    params.validate()?;
    call(cmd::MAIL_THREAD_GET, &serde_json::json!({ "params": params })).await
}

/// Settings → Accounts: the sample mailbox, connected Google accounts, the chosen one and the
/// OAuth client (never its secret).
pub async fn accounts_get() -> Result<AccountsView, IpcError> {
    call(cmd::ACCOUNTS_GET, &serde_json::json!({})).await
}

/// Stores the owner's Google OAuth client (a `None` secret keeps the stored one).
pub async fn accounts_client_set(params: GoogleClientParams) -> Result<AccountsView, IpcError> {
    params.validate()?;
    call(cmd::ACCOUNTS_CLIENT_SET, &serde_json::json!({ "params": params })).await
}

/// Starts a Google sign-in; the backend opens the consent page in the system browser.
pub async fn account_connect_begin(access: AccountAccess) -> Result<ConnectBegun, IpcError> {
    call(cmd::ACCOUNT_CONNECT_BEGIN, &serde_json::json!({ "params": AccountConnectParams { access } })).await
}

/// Waits (up to 10 minutes) for Google to send the browser back; answers the accounts after.
pub async fn account_connect_finish(attempt_id: String) -> Result<AccountsView, IpcError> {
    let params = AccountAttemptParams { attempt_id };
    params.validate()?;
    call(cmd::ACCOUNT_CONNECT_FINISH, &serde_json::json!({ "params": params })).await
}

/// The account the agent's mail and calendar tools use.
pub async fn account_choose(connection_id: String) -> Result<AccountsView, IpcError> {
    let params = AccountParams { connection_id };
    params.validate()?;
    call(cmd::ACCOUNT_CHOOSE, &serde_json::json!({ "params": params })).await
}

/// Disconnects a Google account.
pub async fn account_disconnect(connection_id: String) -> Result<AccountsView, IpcError> {
    let params = AccountParams { connection_id };
    params.validate()?;
    call(cmd::ACCOUNT_DISCONNECT, &serde_json::json!({ "params": params })).await
}

/// Settings as stored: the mode, the model provider, the external agent and Hearth's
/// endpoint. Secrets never come back, only whether one is stored.
pub async fn settings_get() -> Result<SettingsView, IpcError> {
    call(cmd::SETTINGS_GET, &serde_json::json!({})).await
}

/// Switches who answers the chat; Model and External agent are refused until configured.
pub async fn settings_mode_set(mode: AgentMode) -> Result<SettingsView, IpcError> {
    let params = AgentModeParams { mode };
    call(cmd::SETTINGS_MODE_SET, &serde_json::json!({ "params": params })).await
}

/// Stores the model provider. `api_key` absent keeps the stored key, empty removes it.
pub async fn settings_model_set(params: &ModelSettingsParams) -> Result<SettingsView, IpcError> {
    params.validate()?;
    call(cmd::SETTINGS_MODEL_SET, &serde_json::json!({ "params": params })).await
}

/// Sends the stored model provider a small request; `ok` says whether it answered.
pub async fn settings_model_test() -> Result<ConnectionTestResponse, IpcError> {
    call(cmd::SETTINGS_MODEL_TEST, &serde_json::json!({})).await
}

/// A model file's facts (name, size, parameters, context, chat template, memory), before it is kept.
pub async fn settings_local_model_inspect(path: &str) -> Result<LocalModelInfo, IpcError> {
    let params = LocalModelInspectParams { path: path.trim().to_owned() };
    call(cmd::SETTINGS_LOCAL_MODEL_INSPECT, &serde_json::json!({ "params": params })).await
}

/// Runs the probe suite on the local model (a minute or more); the view carries its scores.
pub async fn settings_local_model_probe() -> Result<SettingsView, IpcError> {
    call(cmd::SETTINGS_LOCAL_MODEL_PROBE, &serde_json::json!({})).await
}

/// Lets the local model act in families it did not pass (`true`), or takes that back.
pub async fn settings_local_model_override(act_untested: bool) -> Result<SettingsView, IpcError> {
    let params = LocalModelOverrideParams { act_untested };
    call(cmd::SETTINGS_LOCAL_MODEL_OVERRIDE, &serde_json::json!({ "params": params })).await
}

/// What the model on this computer is doing, for the chat's header (none for other agents).
pub async fn local_model_activity() -> Result<Option<LocalModelActivity>, IpcError> {
    call(cmd::LOCAL_MODEL_ACTIVITY, &serde_json::json!({})).await
}

/// Opens the system's file chooser for a model file: the chosen path, or none.
pub async fn local_model_choose_file() -> Result<Option<String>, IpcError> {
    call(cmd::LOCAL_MODEL_CHOOSE_FILE, &serde_json::json!({})).await
}

/// How far the local model's probe suite has got (none when it is not running).
pub async fn local_model_probe_progress() -> Result<Option<ProbeProgress>, IpcError> {
    call(cmd::LOCAL_MODEL_PROBE_PROGRESS, &serde_json::json!({})).await
}

/// Stores the external AG-UI agent. `token` absent keeps the stored token, empty removes it.
pub async fn settings_harness_set(params: &HarnessSettingsParams) -> Result<SettingsView, IpcError> {
    params.validate()?;
    call(cmd::SETTINGS_HARNESS_SET, &serde_json::json!({ "params": params })).await
}

/// Turns Hearth's own AG-UI endpoint on or off.
pub async fn settings_endpoint_set(enabled: bool) -> Result<SettingsView, IpcError> {
    let params = EndpointParams { enabled };
    call(cmd::SETTINGS_ENDPOINT_SET, &serde_json::json!({ "params": params })).await
}

/// Makes a new token for Hearth's AG-UI endpoint; clients sending the old one are refused
/// from now on. The view carries the new token while the endpoint runs.
pub async fn settings_endpoint_regenerate() -> Result<SettingsView, IpcError> {
    call(cmd::SETTINGS_ENDPOINT_REGENERATE, &serde_json::json!({})).await
}

/// How long an approved email or event change waits with Undo (0: it leaves at once).
pub async fn settings_undo_window_set(seconds: u32) -> Result<SettingsView, IpcError> {
    let params = UndoWindowParams { seconds };
    params.validate()?;
    call(cmd::SETTINGS_UNDO_WINDOW_SET, &serde_json::json!({ "params": params })).await
}

/// The search page search_web opens.
pub async fn settings_web_search_get() -> Result<WebSearchView, IpcError> {
    call(cmd::SETTINGS_WEB_SEARCH_GET, &serde_json::json!({})).await
}

/// Stores the owner's search page; the core refuses one that fails its check, and nothing changes.
pub async fn settings_web_search_set(params: &WebSearchSetParams) -> Result<WebSearchView, IpcError> {
    call(cmd::SETTINGS_WEB_SEARCH_SET, &serde_json::json!({ "params": params })).await
}

/// Settings → Data: the schedule, the kept count, the folder and the newest backup.
pub async fn backup_settings_get() -> Result<BackupSettingsView, IpcError> {
    call(cmd::BACKUP_SETTINGS_GET, &serde_json::json!({})).await
}

/// Stores the backup schedule, kept count and folder.
pub async fn backup_schedule_set(params: &BackupScheduleParams) -> Result<BackupSettingsView, IpcError> {
    params.validate()?;
    call(cmd::BACKUP_SCHEDULE_SET, &serde_json::json!({ "params": params })).await
}

/// Makes a backup now (with the vault key, sealed under the passphrase, only when asked).
pub async fn backup_create(params: &BackupCreateParams) -> Result<BackupMadeView, IpcError> {
    params.validate()?;
    call(cmd::BACKUP_CREATE, &serde_json::json!({ "params": params })).await
}

/// Restores a backup file into a new or empty folder.
pub async fn backup_restore(params: &BackupRestoreParams) -> Result<BackupRestoredView, IpcError> {
    params.validate()?;
    call(cmd::BACKUP_RESTORE, &serde_json::json!({ "params": params })).await
}

/// The picture a browse_web result names.
pub async fn browser_screenshot(id: &str) -> Result<ScreenshotResponse, IpcError> {
    call(cmd::BROWSER_SCREENSHOT, &serde_json::json!({ "params": ScreenshotParams { id: id.to_owned() } })).await
}

/// Take control of a profile's browser: `on_frame` gets each frame of its live view.
pub async fn browser_control_start(id: &str, on_frame: impl FnMut(ControlFrame) + 'static) -> Result<ControlSubscription, IpcError> {
    let (channel, handler) = listen("a browser frame", on_frame);
    let args = js_sys::Object::new();
    set(&args, "params", &to_js(&ProfileParams { id: id.to_owned() })?)?;
    set(&args, "frames", channel.as_ref())?;
    let started: ControlStarted = invoke_raw(cmd::BROWSER_CONTROL_START, args.into()).await?;
    Ok(ControlSubscription { ticket: started.ticket, _channel: channel, _handler: handler })
}

/// One input of the owner's to the browser under control.
pub async fn browser_control_input(id: &str, input: ControlInput) -> Result<(), IpcError> {
    call(cmd::BROWSER_CONTROL_INPUT, &serde_json::json!({ "params": ControlInputParams { id: id.to_owned(), input } })).await
}

/// Give back the browser to the agent: the session `ticket` (none: the view closed before it
/// started).
pub async fn browser_control_stop(id: &str, ticket: Option<u64>) -> Result<(), IpcError> {
    call(cmd::BROWSER_CONTROL_STOP, &serde_json::json!({ "params": ControlStopParams { id: id.to_owned(), ticket } })).await
}

/// Ends every Take control (when the window loads: a view open before a reload could not give
/// back).
pub async fn browser_control_release_all() -> Result<(), IpcError> {
    call(cmd::BROWSER_CONTROL_RELEASE_ALL, &serde_json::json!({})).await
}

/// The saved browser profiles.
pub async fn browser_list() -> Result<BrowserListResponse, IpcError> {
    call(cmd::BROWSER_LIST, &serde_json::json!({})).await
}

/// Closes a profile's browser.
pub async fn browser_close(id: &str) -> Result<BrowserListResponse, IpcError> {
    call(cmd::BROWSER_CLOSE, &serde_json::json!({ "params": ProfileParams { id: id.to_owned() } })).await
}

/// Picks the profile a chat or a task browses in (`None`: its own).
pub async fn browser_use_profile(params: &UseProfileParams) -> Result<(), IpcError> {
    call(cmd::BROWSER_USE_PROFILE, &serde_json::json!({ "params": params })).await
}

/// Deletes a profile with its logins.
pub async fn browser_delete_profile(id: &str) -> Result<BrowserListResponse, IpcError> {
    call(cmd::BROWSER_DELETE_PROFILE, &serde_json::json!({ "params": ProfileParams { id: id.to_owned() } })).await
}

/// Where the computer stands.
pub async fn computer_status() -> Result<ComputerStatusView, IpcError> {
    call(cmd::COMPUTER_STATUS, &serde_json::json!({})).await
}

/// Settings → Computer on or off.
pub async fn computer_enable(enabled: bool) -> Result<ComputerStatusView, IpcError> {
    call(cmd::COMPUTER_ENABLE, &serde_json::json!({ "params": ComputerEnableParams { enabled } })).await
}

/// Start the computer.
pub async fn computer_start() -> Result<ComputerStatusView, IpcError> {
    call(cmd::COMPUTER_START, &serde_json::json!({})).await
}

/// Stop the computer's container.
pub async fn computer_stop() -> Result<ComputerStatusView, IpcError> {
    call(cmd::COMPUTER_STOP, &serde_json::json!({})).await
}

/// A new container from the spec; the workspace's files stay.
pub async fn computer_recreate() -> Result<ComputerStatusView, IpcError> {
    call(cmd::COMPUTER_RECREATE, &serde_json::json!({})).await
}

/// Hearth's image made again over the base; the container follows it, the files stay.
pub async fn computer_rebuild() -> Result<ComputerStatusView, IpcError> {
    call(cmd::COMPUTER_REBUILD, &serde_json::json!({})).await
}

/// Remove the container and the workspace (after the owner confirmed).
pub async fn computer_reset() -> Result<ComputerStatusView, IpcError> {
    call(cmd::COMPUTER_RESET, &serde_json::json!({})).await
}

/// Runs a terminal command; `on_output` gets its output as it is printed. The answer comes
/// when the command ends.
pub async fn computer_run(
    params: &ComputerRunParams,
    on_output: impl FnMut(CommandOutput) + 'static,
) -> Result<ComputerRunResponse, IpcError> {
    params.validate()?;
    let (channel, _handler) = listen("command output", on_output);
    let args = js_sys::Object::new();
    set(&args, "params", &to_js(params)?)?;
    set(&args, "onOutput", channel.as_ref())?;
    invoke_raw(cmd::COMPUTER_RUN, args.into()).await
}

/// Stop for one terminal command; `false` when it had ended.
pub async fn computer_run_stop(operation_id: &str) -> Result<bool, IpcError> {
    let params = ComputerRunStopParams { operation_id: OperationId::parse(operation_id)? };
    params.validate()?;
    call(cmd::COMPUTER_RUN_STOP, &serde_json::json!({ "params": params })).await
}

/// A workspace folder.
pub async fn computer_list(path: &str) -> Result<WorkspaceListing, IpcError> {
    let params = ComputerPathParams { path: path.to_owned() };
    params.validate()?;
    call(cmd::COMPUTER_LIST, &serde_json::json!({ "params": params })).await
}

/// A workspace text file.
pub async fn computer_read(path: &str) -> Result<WorkspaceFile, IpcError> {
    let params = ComputerPathParams { path: path.to_owned() };
    params.validate()?;
    call(cmd::COMPUTER_READ, &serde_json::json!({ "params": params })).await
}

/// The editor's Save.
pub async fn computer_write(params: &ComputerWriteParams) -> Result<(), IpcError> {
    params.validate()?;
    call(cmd::COMPUTER_WRITE, &serde_json::json!({ "params": params })).await
}

/// A channel whose messages are parsed as `T` and handed to `on_message`; an unreadable
/// message is logged and dropped rather than ending the stream.
fn listen<T: DeserializeOwned + 'static>(
    what: &'static str,
    mut on_message: impl FnMut(T) + 'static,
) -> (TauriChannel, Closure<dyn FnMut(JsValue)>) {
    let channel = TauriChannel::new();
    let handler = Closure::<dyn FnMut(JsValue)>::new(move |message: JsValue| match from_js::<T>(&message) {
        Ok(value) => on_message(value),
        Err(err) => web_sys_log(&format!("Hearth: dropped {what} the UI could not read: {}", err.message)),
    });
    channel.set_onmessage(&handler);
    (channel, handler)
}

async fn call<A: Serialize, T: DeserializeOwned>(cmd: Command, args: &A) -> Result<T, IpcError> {
    invoke_raw(cmd, to_js(args)?).await
}

/// Invokes `cmd` — a declared command, never a name typed here — where the [`Transport`] sends it.
async fn invoke_raw<T: DeserializeOwned>(cmd: Command, args: JsValue) -> Result<T, IpcError> {
    if goes_home(cmd) {
        let outer = js_sys::Object::new();
        set(&outer, "request", &home_request(cmd, &args)?)?;
        return invoke_here(cmd::HOST_CALL, outer.into()).await;
    }
    invoke_here(cmd, args).await
}

/// Invokes a command that opens a stream, whose events go to `channel` (passed as `key` to
/// this app's own core, as `onEvent` through the Hearth at home).
async fn invoke_stream<T: DeserializeOwned>(cmd: Command, args: &js_sys::Object, key: &str, channel: &TauriChannel) -> Result<T, IpcError> {
    if goes_home(cmd) {
        let outer = js_sys::Object::new();
        set(&outer, "request", &home_request(cmd, args)?)?;
        set(&outer, "onEvent", channel.as_ref())?;
        return invoke_here(cmd::HOST_STREAM, outer.into()).await;
    }
    set(args, key, channel.as_ref())?;
    invoke_here(cmd, args.clone().into()).await
}

/// `{command, params}` for the Hearth at home: the command's name and the `params` the window
/// would pass this app's own core.
fn home_request(cmd: Command, args: &JsValue) -> Result<JsValue, IpcError> {
    let params = js_sys::Reflect::get(args, &JsValue::from_str("params")).unwrap_or(JsValue::NULL);
    let request = js_sys::Object::new();
    set(&request, "command", &JsValue::from_str(cmd.name()))?;
    let params = if params.is_undefined() { JsValue::NULL } else { params };
    set(&request, "params", &params)?;
    Ok(request.into())
}

/// Invokes `cmd` on this app's own core.
async fn invoke_here<T: DeserializeOwned>(cmd: Command, args: JsValue) -> Result<T, IpcError> {
    match tauri_invoke(cmd.name(), args).await {
        Ok(value) => from_js(&value),
        // Hearth's commands reject with an IpcError; anything else is Tauri's own string.
        Err(err) => Err(from_js::<IpcError>(&err)
            .unwrap_or_else(|_| IpcError::new(ErrorCode::Internal, err.as_string().unwrap_or_else(|| format!("{cmd} failed"))))),
    }
}

fn to_js<T: Serialize>(value: &T) -> Result<JsValue, IpcError> {
    let text = serde_json::to_string(value).map_err(|e| internal(&e.to_string()))?;
    js_sys::JSON::parse(&text).map_err(|_| internal("could not encode a request"))
}

fn from_js<T: DeserializeOwned>(value: &JsValue) -> Result<T, IpcError> {
    if value.is_undefined() || value.is_null() {
        return serde_json::from_str("null").map_err(|e| internal(&e.to_string()));
    }
    let text: String = js_sys::JSON::stringify(value).map_err(|_| internal("could not read a reply"))?.into();
    serde_json::from_str(&text).map_err(|e| internal(&format!("could not read a reply ({e})")))
}

fn set(target: &js_sys::Object, key: &str, value: &JsValue) -> Result<(), IpcError> {
    js_sys::Reflect::set(target, &JsValue::from_str(key), value).map(|_| ()).map_err(|_| internal("could not build a request"))
}

fn internal(message: &str) -> IpcError {
    IpcError::new(ErrorCode::Internal, format!("Hearth's window and backend disagree: {message}. Reload the app."))
}

fn web_sys_log(message: &str) {
    leptos::logging::warn!("{message}");
}

/// The paired devices (Settings → Devices), most recently paired first.
pub async fn device_list() -> Result<Vec<hearth_protocol::devices::PairedDeviceView>, IpcError> {
    call(cmd::DEVICE_LIST, &serde_json::json!({})).await
}

/// A one-time pairing offer for a device the owner names, with the scopes chosen for it.
pub async fn device_pair_offer(
    params: &hearth_protocol::devices::DevicePairOfferParams,
) -> Result<hearth_protocol::devices::PairingOfferView, IpcError> {
    params.validate()?;
    call(cmd::DEVICE_PAIR_OFFER, &serde_json::json!({ "params": params })).await
}

/// Revokes a paired device: refused from its next request, its open streams closed.
pub async fn device_revoke(id: &str) -> Result<hearth_protocol::devices::PairedDeviceView, IpcError> {
    let params = hearth_protocol::devices::DeviceRevokeParams { id: hearth_protocol::ids::DeviceId::parse(id)? };
    call(cmd::DEVICE_REVOKE, &serde_json::json!({ "params": params })).await
}

/// Settings → Tools: the owner's MCP servers, each with its connection and its tools.
pub async fn mcp_server_list() -> Result<Vec<McpServerView>, IpcError> {
    call(cmd::MCP_SERVER_LIST, &serde_json::json!({})).await
}

/// Adds a server or changes one (its tools' policies are kept); it is connected and its tools
/// listed before the answer.
pub async fn mcp_server_save(params: &McpServerSaveParams) -> Result<McpServerView, IpcError> {
    call(cmd::MCP_SERVER_SAVE, &serde_json::json!({ "params": params })).await
}

/// Connects to a server again now and lists its tools; its connection says how that went.
pub async fn mcp_server_test(name: &str) -> Result<McpServerView, IpcError> {
    call(cmd::MCP_SERVER_TEST, &serde_json::json!({ "params": McpServerParams { name: name.to_owned() } })).await
}

/// Turns a server on (started and offered) or off (stopped, none of its tools offered).
pub async fn mcp_server_enable(name: &str, enabled: bool) -> Result<McpServerView, IpcError> {
    let params = McpServerEnableParams { name: name.to_owned(), enabled };
    call(cmd::MCP_SERVER_ENABLE, &serde_json::json!({ "params": params })).await
}

/// Removes a server with its tools' policies; answers the servers that remain.
pub async fn mcp_server_remove(name: &str) -> Result<Vec<McpServerView>, IpcError> {
    call(cmd::MCP_SERVER_REMOVE, &serde_json::json!({ "params": McpServerParams { name: name.to_owned() } })).await
}

/// A server's recent lines on its standard error.
pub async fn mcp_server_log(name: &str) -> Result<Vec<String>, IpcError> {
    call(cmd::MCP_SERVER_LOG, &serde_json::json!({ "params": McpServerParams { name: name.to_owned() } })).await
}

/// What one tool of a server may do; answers the server.
pub async fn mcp_tool_policy(params: &McpToolPolicyParams) -> Result<McpServerView, IpcError> {
    call(cmd::MCP_TOOL_POLICY, &serde_json::json!({ "params": params })).await
}
