//! The [`Hearth`] handle: what the shell (and tests) hold to drive the core.

use std::sync::Arc;

use hearth_protocol::agui::{Message, RunAgentInput, UserMessage};
use hearth_protocol::ids::{RunId, ThreadId};
use hearth_protocol::ipc::{
    AppInfoResponse, HISTORY_PAGE_EVENTS, HISTORY_RUN_EVENTS, RunStartParams, RunStartResponse, ThreadHistoryResponse, ThreadListResponse,
};
use hearth_protocol::tasks::{TaskControlParams, TaskDetail, TaskKind, TaskListResponse, TaskView};

use hearth_protocol::approvals::{ApprovalDecideParams, ApprovalRecheckParams, ProposalView};
use hearth_protocol::files::{FileDetail, FileFillParams, FileRenderParams, FileRenderResponse, FileView};
use hearth_protocol::mail::MailThread;

use crate::agent::{Agent, NoModelHandler, SampleAgent};

use crate::approvals::ApprovalGate;
use crate::browser::profiles::Browsers;
use crate::computer::{Computer, ComputerSpec};
use crate::config::Config;
use crate::documents::DocumentTask;
use crate::error::{CoreError, Result};
use crate::files::FileStore;
use crate::runs::{RunEvents, RunRegistry, spawn_run};
use crate::store::Store;
use crate::store::threads::{RunAdmission, RunOrigin};
use crate::tasks::TaskEngine;
use crate::tools::Toolbox;
use crate::workspace::seed;
use crate::workspace::{ChosenWorkspace, LocalWorkspace, Workspace, WorkspaceReader};

mod accounts;
mod agents;
mod backup;
mod browser;
mod companion;
mod computer;
mod conversations;
mod devices;
mod documents;
mod failures;
mod goals;
mod host_link;
mod ideas;
mod inbox;
mod mandates;
mod mcp;
mod memory;
mod settings;
mod threads;
mod web_search;

/// The running core. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Hearth {
    config: Arc<Config>,
    store: Store,
    /// Who answers the chat now (Settings can swap it while Hearth runs).
    agent: Arc<std::sync::RwLock<(hearth_protocol::settings::AgentMode, Arc<dyn Agent>)>>,
    /// The offline sample agent, kept to switch back to.
    sample: Arc<dyn Agent>,
    settings: crate::settings::Settings,
    endpoint: Arc<tokio::sync::Mutex<Option<crate::agui_server::AguiServer>>>,
    runs: RunRegistry,
    tasks: TaskEngine,
    approvals: ApprovalGate,
    files: FileStore,
    /// What tool contexts are built from.
    toolbox: Toolbox,
    /// Runs the held calls the owner approves. Only kept alive here: the gate holds it weakly,
    /// since the runner's tools hold the gate.
    #[expect(dead_code, reason = "owned for the gate's weak reference, never read")]
    held_calls: Arc<dyn crate::approvals::HeldCalls>,
    /// The owner's MCP servers (Settings → Tools; the tool path calls them).
    mcp: crate::mcp::McpHub,
    /// The owner's document folders and their index (the Documents screen; search_documents
    /// reads the same index).
    documents: crate::doc_index::DocIndex,
    /// The workspace, read-only, for the window's mail views.
    mail: WorkspaceReader,
    /// The account the mail and calendar tools use, and the gate acts through.
    chosen: Arc<ChosenWorkspace>,
    /// Settings → Accounts: sign-ins in progress, opened Google accounts.
    accounts: Arc<accounts::AccountsState>,
    /// The computer.
    computer: Computer,
    /// The agent's browsers, by profile.
    browsers: Browsers,
    /// The Computer screen's commands in flight (their Stop).
    screen_runs: computer::ScreenRuns,
    /// Recently used threads' conversations, so a Send reads only what their logs gained.
    conversations: Arc<conversations::Conversations>,
    /// Schedules (the Activity screen's, and the agent's schedule_task).
    schedules: crate::schedules::Schedules,
    /// Ends the background loops Hearth started itself (the schedules' tick).
    background: tokio_util::sync::CancellationToken,
    /// The newest notice when this Hearth opened, before its workers started: where the OS
    /// notifications' watch begins ([`Hearth::notification_watch_since_open`]).
    notices_at_open: i64,
    /// The model on this computer, while it answers the chat (for what it is doing).
    local_model: Arc<std::sync::Mutex<Option<crate::local_model::LocalModel>>>,
    /// How far the probe suite has got while it runs (one run at a time).
    probe_progress: Arc<std::sync::Mutex<Option<hearth_protocol::settings::ProbeProgress>>>,
    /// The pairing host, once it serves the owner's other devices (Settings → Devices).
    pairing: Arc<tokio::sync::Mutex<Option<crate::pairing::host_store::PairingService>>>,
    /// This app's link to the owner's Hearth at home, when it works as a companion; read from
    /// the vault on first use.
    host_link: host_link::LinkSlot,
    /// The window's page loads (`Hearth::window_reloaded`), for the link's streams.
    window_epoch: crate::pairing::WindowEpoch,
}

/// The one owner's id in names and labels (Hearth is single-owner).
const OWNER: &str = "owner";

impl std::fmt::Debug for Hearth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hearth").field("data_dir", &self.config.data_dir).finish_non_exhaustive()
    }
}

impl Hearth {
    /// Opens the data directory: creates it, opens and migrates the database, closes runs a
    /// crash left open, and seeds the sample workspace on first start.
    pub async fn open(config: Config) -> Result<Self> {
        // The data folder and the folders Hearth keeps in it (`artifacts` is where
        // `save_artifact` writes) are the owner's only: 0700, tightened if looser.
        for dir in [config.data_dir.clone(), config.attachments_dir(), config.files_dir(), config.data_dir.join("artifacts")] {
            Store::create_private_dir(&dir)?;
        }
        let store = Store::open(&config.database_path(), config.busy_timeout).await?;
        close_orphan_runs(&store).await?;
        seed::seed_if_empty(&store, &config.attachments_dir()).await?;
        let notices_at_open = store.newest_notification_id().await?;
        let tasks = TaskEngine::new(store.clone(), config.engine.clone());
        tasks.register(TaskKind::Agent, NoModelHandler);
        tasks.register(TaskKind::Plan, NoModelHandler);
        tasks.register(TaskKind::Reminder, crate::schedules::run_reminder);
        let schedules = crate::schedules::Schedules::new(store.clone(), tasks.clone());
        // The sample mailbox until the owner picks a connected account.
        let local: Arc<dyn Workspace> = Arc::new(LocalWorkspace::new(store.clone(), config.attachments_dir()));
        let chosen = Arc::new(ChosenWorkspace::new(local.clone()));
        let workspace: Arc<dyn Workspace> = chosen.clone();
        let files = FileStore::new(store.clone(), config.files_dir(), config.pdfium_library.clone());
        // Tools see the workspace read-only and the gate as a proposer: only `approval_decide`
        // reaches the executor.
        let mail = WorkspaceReader::new(workspace.clone());
        let computer = Computer::in_data_dir(
            ComputerSpec::new(config.computer.image.clone(), &config.computer.deployment, OWNER),
            config.computer.enabled,
            config.computer.command_time_limit,
            &config.data_dir,
        );
        let resolver = match config.browser_dns {
            Some(server) => crate::browser::proxy::resolver_at(server),
            None => crate::browser::proxy::system_resolver().unwrap_or_else(|err| {
                // Hearth still starts; every page is then refused for want of an address.
                tracing::warn!(error = %err, "the system's DNS settings could not be read; the browser can reach no site");
                crate::browser::proxy::offline_resolver()
            }),
        };
        let browsers = Browsers::new(config.browser.clone(), resolver, config.data_dir.join("browser-shots"));
        if config.start_workers {
            browsers.start_idle_close();
        }
        // Profiles the owner picked for a chat or a task are never removed to make room.
        browsers.keep(store.chosen_browser_profiles().await?.iter().filter_map(|p| crate::browser::profiles::ProfileId::parse(p).ok()));
        browser::forget_profiles_of_ended_tasks(&tasks, store.clone(), browsers.clone());
        // The gate sends a task's reviewed form through the browsers, as it sends mail through
        // the workspace; tools reach neither executor.
        let approvals = ApprovalGate::new(
            store.clone(),
            workspace.clone(),
            Arc::new(browsers.clone()),
            tasks.clone(),
            config.approval_ttl,
            config.undo_window,
        );
        let vault = crate::vault::Vault::open_in(store.clone(), &config.data_dir).await?;
        // The owner's MCP servers: their secrets in the vault; started below with the workers.
        let mcp = crate::mcp::McpHub::new(store.clone(), vault.clone(), config.mcp);
        let toolbox = Toolbox::new(crate::tools::ToolboxParts {
            store: store.clone(),
            mail: mail.clone(),
            files: files.clone(),
            tasks: tasks.clone(),
            proposer: approvals.proposer(),
            computer: computer.clone(),
            browsers: browsers.clone(),
            mcp: mcp.clone(),
        });
        // Approved held calls run through the same tool path, under the key they were held under.
        let held_calls: Arc<dyn crate::approvals::HeldCalls> = Arc::new(crate::tools::HeldCallRunner::new(toolbox.clone()));
        approvals.set_held_calls(&held_calls);
        tasks.register(TaskKind::Document, DocumentTask::new(files.clone(), toolbox.clone()));
        tasks.register(TaskKind::Finance, crate::finance_task::task_handler(toolbox.clone()));
        tasks.register(TaskKind::Monitor, crate::monitors::task_handler(toolbox.clone()));
        let stranded = approvals.recover().await?;
        if stranded > 0 {
            tracing::warn!(stranded, "approved actions were cut off by a stop; they need the owner's review");
        }
        let interrupted = tasks.recover().await?;
        if interrupted > 0 {
            tracing::info!(interrupted, "tasks left running by a stopped Hearth are now interrupted");
        }
        let documents = crate::doc_index::DocIndex::new(store.clone(), files.clone(), &config.data_dir, config.documents);
        let runs = RunRegistry::default();
        let sample: Arc<dyn Agent> = Arc::new(SampleAgent::new(
            store.clone(),
            agents::chat_tool_factory(toolbox.clone(), runs.clone(), agents::Driver::Hearth),
            config.sample_chunk_delay,
            config.sample_slow_step,
        ));
        let hearth = Self {
            config: Arc::new(config),
            settings: crate::settings::Settings::new(store.clone(), vault),
            store,
            agent: Arc::new(std::sync::RwLock::new((hearth_protocol::settings::AgentMode::Sample, sample.clone()))),
            sample,
            endpoint: Arc::default(),
            runs,
            tasks,
            approvals,
            files,
            toolbox,
            held_calls,
            mcp,
            documents,
            mail,
            chosen,
            accounts: Arc::new(accounts::AccountsState::new(local)),
            computer,
            browsers,
            screen_runs: computer::ScreenRuns::default(),
            conversations: Arc::default(),
            schedules,
            background: tokio_util::sync::CancellationToken::new(),
            notices_at_open,
            local_model: Arc::default(),
            probe_progress: Arc::default(),
            pairing: Arc::default(),
            host_link: Arc::default(),
            window_epoch: Arc::default(),
        };
        // The account chosen last time first: neither the tasks recovery just requeued nor a
        // client of the AG-UI endpoint (which the settings start) may read, or prepare for, the
        // sample mailbox in its place.
        hearth.restore_account().await;
        hearth.apply_settings().await;
        if hearth.config.start_workers {
            hearth.tasks.start();
            hearth.approvals.start(std::time::Duration::from_secs(15));
            hearth.schedules.start(hearth.config.engine.poll_every, hearth.background.clone());
            hearth.mcp.start();
            hearth.start_document_index();
            hearth.start_scheduled_backups();
        }
        hearth.serve_paired_devices().await;
        Ok(hearth)
    }

    /// The secrets vault (Settings keeps model keys and tokens there; a backup may carry its
    /// key when the owner asks).
    pub fn vault(&self) -> &crate::vault::Vault {
        self.settings.vault()
    }

    /// The task engine.
    pub fn tasks(&self) -> &TaskEngine {
        &self.tasks
    }

    /// The approval gate.
    pub fn approvals(&self) -> &ApprovalGate {
        &self.approvals
    }

    /// From now on the mail and calendar tools read, and approvals act, through `workspace`
    /// (the account the owner picked). What was prepared for another account can no longer
    /// be approved.
    pub fn choose_workspace(&self, workspace: Arc<dyn Workspace>) {
        self.chosen.choose(workspace);
    }

    /// The computer (its container, through the Docker engine).
    pub fn computer(&self) -> &Computer {
        &self.computer
    }

    /// The owner's files.
    pub fn files(&self) -> &FileStore {
        &self.files
    }

    /// The workspace, read-only.
    pub fn mail(&self) -> &WorkspaceReader {
        &self.mail
    }

    /// The agent's browsers (the Browser screen, and tests of profiles).
    pub fn browsers(&self) -> &Browsers {
        &self.browsers
    }

    /// What tool contexts are built from (tests build contexts for tasks and chats with it).
    pub fn toolbox(&self) -> &Toolbox {
        &self.toolbox
    }

    /// Proposals: awaiting review first.
    pub async fn approval_list(&self) -> Result<Vec<ProposalView>> {
        self.approvals.list().await
    }

    /// One proposal.
    pub async fn approval_get(&self, proposal_id: &str) -> Result<ProposalView> {
        self.approvals.get(proposal_id).await
    }

    /// The owner's decision on a proposal (the app window is the only caller).
    pub async fn approval_decide(&self, params: &ApprovalDecideParams) -> Result<ProposalView> {
        self.approvals.decide(params).await
    }

    /// The owner's Undo or Send now on an approved action in its undo window (the app window,
    /// or a paired device that may decide approvals, is the only caller).
    pub async fn approval_leaving(&self, params: &hearth_protocol::approvals::ApprovalLeavingParams) -> Result<ProposalView> {
        self.approvals.leaving(params).await
    }

    /// The owner's check or retry of an approved action whose outcome is unknown (the app
    /// window is the only caller).
    pub async fn approval_recheck(&self, params: &ApprovalRecheckParams) -> Result<ProposalView> {
        self.approvals.recheck(params).await
    }

    /// Files, newest first.
    pub async fn file_list(&self) -> Result<Vec<FileView>> {
        self.files.list().await
    }

    /// One file with its pages and fields.
    pub async fn file_get(&self, file_id: &str) -> Result<FileDetail> {
        self.files.detail(file_id).await
    }

    /// One page as a PNG.
    pub async fn file_render(&self, params: &FileRenderParams) -> Result<FileRenderResponse> {
        params.validate()?;
        self.files.render(&params.file_id, params.page, params.scale).await
    }

    /// The owner fills a copy by hand.
    pub async fn file_fill(&self, params: &FileFillParams) -> Result<FileView> {
        params.validate()?;
        let row = self.files.fill(&params.file_id, params.values.clone(), &uuid::Uuid::new_v4().to_string()).await?;
        self.files.view(&row).await
    }

    /// The owner imports a PDF from their disk: checked and stored through the same import as
    /// an attachment's, under the window's operation id (a repeated request keeps one file).
    pub async fn file_import(&self, params: &hearth_protocol::files::FileImportParams) -> Result<FileView> {
        use base64::Engine;
        params.validate()?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(params.bytes_base64.as_bytes())
            .map_err(|_| CoreError::InvalidInput(format!("{} did not arrive whole; choose it again.", params.name)))?;
        let row = self.files.import_from_disk(&params.operation_id, bytes, &params.name).await?;
        self.files.view(&row).await
    }

    /// The owner deletes a file's bytes; its record stays for the receipts that name it.
    pub async fn file_delete(&self, file_id: &str) -> Result<()> {
        self.files.delete(file_id).await
    }

    /// A mail thread, for the mail card's viewer.
    pub async fn mail_thread(&self, thread_id: &str) -> Result<MailThread> {
        self.mail.read_thread(thread_id).await
    }

    /// Tasks, most recently changed first.
    pub async fn task_list(&self) -> Result<TaskListResponse> {
        let tasks = self.store.list_tasks(500).await?;
        Ok(TaskListResponse { tasks: tasks.iter().map(|t| t.view()).collect() })
    }

    /// One task with its runs and newest events.
    pub async fn task_get(&self, task_id: &str) -> Result<TaskDetail> {
        let task = self.store.get_task(task_id).await?.ok_or_else(|| CoreError::NotFound(format!("There is no task {task_id}.")))?;
        let finance = task.state.get(crate::finance::TRACKER).and_then(|t| serde_json::from_value(t.clone()).ok());
        Ok(TaskDetail {
            finance,
            task: task.view(),
            runs: self.store.task_runs(task_id).await?,
            events: self.store.task_events(task_id, 200).await?,
        })
    }

    /// Applies the owner's control to a task.
    pub async fn task_control(&self, params: &TaskControlParams) -> Result<TaskView> {
        Ok(self.tasks.control(params).await?.view())
    }

    /// A finance task on a statement the owner pasted in Activity.
    pub async fn finance_start(&self, params: &hearth_protocol::finance::FinanceStartParams) -> Result<hearth_protocol::tasks::TaskView> {
        params.validate()?;
        let key = format!("owner:finance:{}", uuid::Uuid::new_v4());
        let input = crate::finance::task_input(&params.csv);
        let new = crate::store::tasks::NewTask {
            idempotency_key: &key,
            kind: TaskKind::Finance,
            title: crate::finance::TASK_TITLE,
            input: &input,
            thread_id: None,
        };
        Ok(self.tasks.create(new).await?.view())
    }

    /// Every task change, as the task is after it. Ends when Hearth shuts down.
    pub fn task_watch(&self) -> tokio::sync::mpsc::Receiver<TaskView> {
        let (tx, rx) = tokio::sync::mpsc::channel(256);
        let mut changes = self.tasks.subscribe();
        let store = self.store.clone();
        tokio::spawn(async move {
            loop {
                let task_id = match changes.recv().await {
                    Ok(id) => id,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "a task watcher fell behind; it will see the next changes");
                        continue;
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                match store.get_task(&task_id).await {
                    Ok(Some(task)) => {
                        if tx.send(task.view()).await.is_err() {
                            return;
                        }
                    }
                    Ok(None) => {}
                    Err(err) => tracing::error!(error = %err, "could not read a changed task"),
                }
            }
        });
        rx
    }

    /// The store (tests count effects through it).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The configuration Hearth started with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Starts a run for the owner's message and returns its events.
    pub async fn start_run(&self, params: RunStartParams) -> Result<(RunStartResponse, RunEvents)> {
        self.start_run_from(params, RunOrigin::Window).await
    }

    /// [`Hearth::start_run`] for a chat sent from a paired device: the same conversation, but
    /// its run starts as outside content (`SourceKind::PairedDevice`), so every effect it asks
    /// for waits on a card, whatever the device may decide.
    pub async fn start_device_run(&self, params: RunStartParams) -> Result<(RunStartResponse, RunEvents)> {
        self.start_run_from(params, RunOrigin::PairedDevice).await
    }

    async fn start_run_from(&self, params: RunStartParams, origin: RunOrigin) -> Result<(RunStartResponse, RunEvents)> {
        params.validate()?;
        let thread_id = match params.thread_id {
            Some(id) => {
                if !self.store.thread_exists(&id).await? {
                    return Err(CoreError::NotFound(format!("There is no conversation {id}. Start a new one.")));
                }
                id
            }
            None => ThreadId::trusted(uuid::Uuid::new_v4().to_string()),
        };
        let run_id = RunId::trusted(uuid::Uuid::new_v4().to_string());
        // The whole conversation so far, as an AG-UI client would send it.
        let mut messages = match self.store.thread_exists(&thread_id).await? {
            true => self.conversations.messages(&self.store, &thread_id).await?,
            false => Vec::new(),
        };
        messages.push(Message::User(UserMessage {
            id: uuid::Uuid::new_v4().to_string(),
            content: params.text.clone().into(),
            ..Default::default()
        }));
        let new_from = messages.len() - 1;
        let input = RunAgentInput { thread_id: thread_id.to_string(), run_id: run_id.to_string(), messages, ..Default::default() };
        let events = self.launch(input, &params.text, new_from, origin).await?;
        Ok((RunStartResponse { thread_id, run_id }, events))
    }

    /// Starts a run for a `RunAgentInput` that arrived from an AG-UI client: the client's
    /// thread and run ids, its messages. Dropping the events cancels the run. A thread the
    /// endpoint did not start (the owner's) is `Forbidden`, with nothing written.
    pub async fn start_agui_run(&self, input: RunAgentInput) -> Result<RunEvents> {
        // AG-UI's ids are free strings; Hearth stores only ids it can name safely, so an
        // endpoint client's must pass as Hearth's own before anything is read or written.
        ThreadId::parse(input.thread_id.as_str())?;
        RunId::parse(input.run_id.as_str())?;
        let Some(text) = crate::agent::last_user_text(&input) else {
            return Err(CoreError::InvalidInput("The input has no user message to answer.".into()));
        };
        if self.store.run_exists(&input.run_id).await? {
            return Err(CoreError::Conflict(format!("A run {} already exists; start a new run id.", input.run_id)));
        }
        // Refused before this thread's log is read: a request for a thread the endpoint may not
        // continue loads nothing. (`open_run` decides again, in its transaction.)
        if !self.store.endpoint_may_continue(&input.thread_id).await? {
            return Err(not_the_endpoints(&input.thread_id));
        }
        // What the client sends beyond what this thread's log already holds is new.
        let held = match self.store.thread_exists(&input.thread_id).await? {
            true => self.conversations.messages(&self.store, &input.thread_id).await?.len(),
            false => 0,
        };
        let new_from = held.min(input.messages.len().saturating_sub(1));
        self.launch(input, &text, new_from, RunOrigin::AguiEndpoint).await
    }

    async fn launch(&self, input: RunAgentInput, title: &str, new_from: usize, origin: RunOrigin) -> Result<RunEvents> {
        let (thread_id, run_id) = (input.thread_id.clone(), input.run_id.clone());
        match self.store.open_run(&thread_id, &run_id, title, self.tasks.identity().as_str(), origin.stored()).await? {
            RunAdmission::Opened => {}
            RunAdmission::NotTheEndpoints => return Err(not_the_endpoints(&thread_id)),
            RunAdmission::Deleted => {
                return Err(CoreError::NotFound(format!(
                    "The conversation {thread_id} was deleted; nothing was written. Start a new conversation."
                )));
            }
        }
        let Some(events) = spawn_run(&self.runs, self.store.clone(), self.current_agent(), input, new_from, origin) else {
            self.store.end_run(&run_id, crate::store::threads::RunEnd::Failed).await?;
            return Err(CoreError::Conflict("A reply is still streaming in this conversation. Stop it or wait for it to finish.".into()));
        };
        Ok(events)
    }

    /// Stops a run. `false` when it had already ended.
    pub fn stop_run(&self, run_id: &str) -> bool {
        self.runs.cancel(run_id)
    }

    /// How many runs are in flight.
    pub fn active_runs(&self) -> usize {
        self.runs.len()
    }

    /// Conversations, newest first.
    pub async fn thread_list(&self) -> Result<ThreadListResponse> {
        Ok(ThreadListResponse { threads: self.store.list_threads().await? })
    }

    /// A conversation's whole stored log (what the tests and the benches read; the chat reads
    /// it a page at a time through [`Hearth::thread_history_page`]).
    pub async fn thread_history(&self, thread_id: &str) -> Result<ThreadHistoryResponse> {
        if !self.store.thread_exists(thread_id).await? {
            return Err(CoreError::NotFound(format!("There is no conversation {thread_id}.")));
        }
        let events = self.store.thread_events(thread_id).await?;
        Ok(ThreadHistoryResponse { thread_id: ThreadId::trusted(thread_id), events, earlier: None, starts_inside_run: false })
    }

    /// One page of a thread's log for the chat: the newest [`HISTORY_PAGE_EVENTS`] events, or
    /// those just before `before`, back to where their oldest run began (up to
    /// [`HISTORY_RUN_EVENTS`] more), with the cursor of the page before when there is one.
    pub async fn thread_history_page(&self, thread_id: &ThreadId, before: Option<i64>) -> Result<ThreadHistoryResponse> {
        if !self.store.thread_exists(thread_id).await? {
            return Err(CoreError::NotFound(format!("There is no conversation {thread_id}.")));
        }
        let page = self.store.thread_events_page(thread_id, before, HISTORY_PAGE_EVENTS, HISTORY_RUN_EVENTS).await?;
        let earlier = if page.more { page.events.first().map(|(number, _)| *number) } else { None };
        Ok(ThreadHistoryResponse {
            thread_id: thread_id.clone(),
            events: page.events.into_iter().map(|(_, event)| event).collect(),
            earlier,
            starts_inside_run: page.starts_inside_run,
        })
    }

    /// Version, data directory and agent, for Settings and the start screen.
    pub fn app_info(&self) -> AppInfoResponse {
        AppInfoResponse {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            data_dir: self.config.data_dir.to_string_lossy().into_owned(),
            agent: self.agent_mode(),
        }
    }

    /// Graceful shutdown: cancels every chat run (each ends `cancelled` in its log) and
    /// every task run (each ends interrupted, for the owner to review).
    pub async fn shutdown(&self) {
        self.background.cancel();
        self.runs.cancel_all();
        // The Computer screen's commands end with the app, as chat runs do.
        self.screen_runs.cancel_all();
        if let Some(endpoint) = self.endpoint.lock().await.take() {
            endpoint.stop();
        }
        // The owner's other devices are told the host is closing.
        self.pairing_shutdown().await;
        self.host_link_close().await;
        self.approvals.shutdown();
        self.tasks.shutdown().await;
        // The owner's MCP servers end with the app (a stdio server's process group is killed),
        // after the runs and approvals that call them have seen their Stop.
        self.mcp.shutdown().await;
        self.browsers.close_all().await;
    }
}

/// The AG-UI endpoint starts its runs through this, and reaches nothing else of Hearth.
impl crate::agui_server::RunStarter for Hearth {
    fn start_agui_run(&self, input: RunAgentInput) -> impl Future<Output = Result<RunEvents>> + Send {
        Hearth::start_agui_run(self, input)
    }
}

/// Runs a previous process left open get a RUN_ERROR in their log, so replay shows them
/// as interrupted instead of forever streaming.
async fn close_orphan_runs(store: &Store) -> Result<()> {
    use crate::process::{Liveness, ProcessIdentity};
    let dead = |owner: Option<&str>| owner.is_none_or(|o| ProcessIdentity::liveness(o) != Liveness::Alive);
    for orphan in store.take_orphan_runs(dead).await? {
        let event = hearth_protocol::agui::Event::RunError(hearth_protocol::agui::RunErrorEvent {
            message: "Hearth stopped during this reply. Review what it did before asking again.".into(),
            code: Some("interrupted".into()),
            timestamp: Some(crate::store::now_ms()),
            ..Default::default()
        });
        store.append_event(&orphan.thread_id, &orphan.run_id, &event).await?;
    }
    // What those runs left in flight may or may not have happened.
    let mut stranded = store.strand_orphan_chat_operations().await?;
    stranded += store.strand_orphan_owner_operations(|claimant| dead(Some(claimant))).await?;
    if stranded > 0 {
        tracing::warn!(stranded, "chat effects were cut off by a stop; they need the owner's review");
    }
    Ok(())
}

/// The refusal of an endpoint run on a thread the endpoint did not start.
fn not_the_endpoints(thread_id: &str) -> CoreError {
    CoreError::Forbidden(format!(
        "The conversation {thread_id} was not started through Hearth's AG-UI endpoint, so an endpoint client may \
         not add to it; nothing was written. Send a new threadId to start a conversation of your own."
    ))
}
