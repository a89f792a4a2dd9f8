//! What a tool can reach, and under which operation scope its effects are keyed.
//!
//! A tool gets readers (the store for reads, the mail/calendar reader, files), a
//! [`Proposer`] that can only *prepare*, and a [`TaskDesk`] that can only create and list
//! tasks. It never gets the approval gate's `decide`, the workspace's executor, the task
//! engine's controls or the journal: only [`super::dispatch`] reaches the journal, and only
//! the owner's `approval_decide` reaches the executor.

use hearth_protocol::ToolName;
use hearth_protocol::approvals::{HeldCallDraft, ProposalOrigin};
use hearth_protocol::provenance::SourceKind;
use hearth_protocol::schedules::ScheduleView;
use hearth_protocol::tasks::TaskKind;
use tokio_util::sync::CancellationToken;

use crate::approvals::Proposer;
use crate::browser::profiles::Browsers;
use crate::computer::{Computer, OutputSink};
use crate::error::{CoreError, Result};
use crate::files::FileStore;
use crate::journal::Journal;
use crate::mcp::McpHub;
use crate::schedules::{ScheduleSpec, Schedules};
use crate::store::Store;
use crate::store::tasks::{NewTask, TaskRow, task_scope};
use crate::tasks::{TaskContext, TaskEngine};
use crate::trust::{Provenance, Trust};
use crate::workspace::WorkspaceReader;

/// Where a call's effects are keyed, and who performs them.
#[derive(Debug, Clone)]
pub enum OperationScope {
    /// Inside a task run: keys are the task's own steps, writes are fenced to its lease.
    /// (Boxed: a task context is large next to a chat's ids.)
    Task(Box<TaskContext>),
    /// A chat turn: keys are the chat run's call ids.
    Chat {
        /// The conversation.
        thread_id: String,
        /// The chat run performing the calls (the claimant of its journal rows).
        run_id: String,
        /// Who is driving this chat run.
        origin: ProposalOrigin,
        /// The journal (chat effects are not fenced to a lease; the run's Stop is the fence).
        journal: Journal,
    },
    /// The owner, acting on one of the app's screens (the Computer screen's terminal): keys are
    /// the operation ids the screen gives.
    Owner {
        /// Which screen (`computer`).
        screen: &'static str,
        /// The journal (the screen's Stop is the fence).
        journal: Journal,
    },
    /// One call the trust policy held, which the owner approved on its card: it runs under
    /// the key it was asked under (so asking again finds its receipt), claimed by the
    /// approval. Its writes are fenced by the approval's claim, which re-checked the task.
    Approved {
        /// The key the call was asked under.
        key: OperationKey,
        /// The conversation it came from (its browser profile).
        thread_id: Option<String>,
        /// The task it came from (its browser profile).
        task_id: Option<String>,
        /// Who asked.
        origin: ProposalOrigin,
        /// This process and the approval: the claimant of the call's journal row.
        claimant: String,
        /// The outside content the agent had read when it asked (what made it wait): work the
        /// call starts carries it, so that work's own runs are not taken for the owner's words.
        sources: Vec<hearth_protocol::provenance::OutsideSource>,
        /// The journal.
        journal: Journal,
    },
}

/// The step a call belongs to. Inside a task it is a step the task owns — the counter of
/// its conversation or a fixed name of its workflow — never a model's call id, so a
/// re-asked call after a crash or a decision finds the stored receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepId {
    /// The n-th tool call of a task's conversation.
    Step(u64),
    /// A named step of a fixed workflow (`import`, `fill:<hash>`, `reply:<generation>`).
    Named(String),
    /// A chat call, by the id the model or harness gave it.
    Call(String),
    /// An operation id the caller gave in the arguments (run_computer_command's
    /// `operationId`): keyed in the task, thread or screen, not in the run, so asking again
    /// from a later run (a Retry, after a restart) still finds the first receipt.
    Operation(String),
}

/// An operation's full key: the journal scope and the id within it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationKey {
    /// `task:<id>` or `thread:<id>`.
    pub scope: String,
    /// Unique within the scope.
    pub op_id: String,
}

impl OperationKey {
    /// The key as one string (proposal keys, task idempotency keys).
    pub fn joined(&self) -> String {
        format!("{}:{}", self.scope, self.op_id)
    }
}

impl OperationScope {
    /// **The** operation-key function: every caller (chat, task, endpoint, harness, document
    /// workflow, sample agent) keys effects, proposals and delegated tasks through it.
    pub fn key(&self, step: &StepId) -> OperationKey {
        match self {
            OperationScope::Task(task) => {
                let op_id = match step {
                    StepId::Step(n) => format!("step-{n}"),
                    StepId::Named(name) => name.clone(),
                    // A task's calls are numbered by the task; a call id here would change on
                    // every run, so it is scoped as a call (kept apart from steps).
                    StepId::Call(id) => format!("call-{id}"),
                    StepId::Operation(id) => format!("op:{id}"),
                };
                OperationKey { scope: task_scope(&task.task().id), op_id }
            }
            OperationScope::Chat { thread_id, run_id, .. } => {
                let op_id = match step {
                    StepId::Step(n) => format!("{run_id}:step-{n}"),
                    StepId::Named(name) => format!("{run_id}:{name}"),
                    StepId::Call(id) => format!("{run_id}:{id}"),
                    // Thread-wide: the id is the model's, and outlives the run that gave it.
                    StepId::Operation(id) => format!("op:{id}"),
                };
                OperationKey { scope: format!("thread:{thread_id}"), op_id }
            }
            OperationScope::Owner { screen, .. } => {
                let op_id = match step {
                    StepId::Step(n) => format!("step-{n}"),
                    StepId::Named(name) => name.clone(),
                    StepId::Call(id) => format!("call-{id}"),
                    StepId::Operation(id) => format!("op:{id}"),
                };
                OperationKey { scope: format!("owner:{screen}"), op_id }
            }
            // The one call the owner approved, whatever step it is asked as.
            OperationScope::Approved { key, .. } => key.clone(),
        }
    }

    /// The outside content that led to this call, when it is a held call the owner approved.
    pub fn approved_sources(&self) -> &[hearth_protocol::provenance::OutsideSource] {
        match self {
            OperationScope::Approved { sources, .. } => sources,
            OperationScope::Task(_) | OperationScope::Chat { .. } | OperationScope::Owner { .. } => &[],
        }
    }

    /// The task run, when the call is inside one.
    pub fn task(&self) -> Option<&TaskContext> {
        match self {
            OperationScope::Task(task) => Some(task),
            OperationScope::Chat { .. } | OperationScope::Owner { .. } | OperationScope::Approved { .. } => None,
        }
    }

    /// The chat thread, when the call came from a chat turn.
    pub fn thread_id(&self) -> Option<&str> {
        match self {
            OperationScope::Task(task) => task.task().thread_id.as_deref(),
            OperationScope::Chat { thread_id, .. } => Some(thread_id),
            OperationScope::Owner { .. } => None,
            OperationScope::Approved { thread_id, .. } => thread_id.as_deref(),
        }
    }

    /// The chat run, when the call came from a chat turn: its writes are fenced to it.
    pub fn chat_run(&self) -> Option<&str> {
        match self {
            OperationScope::Task(_) => None,
            OperationScope::Chat { run_id, .. } => Some(run_id),
            OperationScope::Owner { .. } | OperationScope::Approved { .. } => None,
        }
    }

    /// Who asked, as a proposal records it.
    pub fn origin(&self) -> ProposalOrigin {
        match self {
            OperationScope::Task(_) => ProposalOrigin::Task,
            OperationScope::Chat { origin, .. } | OperationScope::Approved { origin, .. } => *origin,
            OperationScope::Owner { .. } => ProposalOrigin::OwnerChat,
        }
    }
}

/// Creating and listing tasks, and making schedules — the only task powers a tool has (no
/// controls: a tool cannot pause, resume or delete a schedule, or run one now).
#[derive(Debug, Clone)]
pub struct TaskDesk {
    engine: TaskEngine,
    schedules: Schedules,
    /// For the bookkeeping writes below (facts, goals), each fenced in its insert.
    store: Store,
}

impl TaskDesk {
    /// Creates a task under `key`. The same key with the same kind, title and input returns
    /// the existing task; the same key with anything changed is a conflict.
    ///
    /// Inside a task run, pass its `fence`: a run that lost its lease creates nothing; in a
    /// chat, pass its `chat_run`: an ended run creates nothing.
    #[expect(clippy::too_many_arguments, reason = "the task's fields, its key, and the two fences")]
    pub async fn create(
        &self,
        key: &str,
        kind: TaskKind,
        title: &str,
        input: &serde_json::Value,
        thread_id: Option<&str>,
        fence: Option<(&str, &str)>,
        chat_run: Option<&str>,
    ) -> Result<TaskRow> {
        let new = NewTask { idempotency_key: key, kind, title, input, thread_id };
        let task = self.engine.create_fenced(new, fence, chat_run).await?.ok_or_else(|| {
            CoreError::Conflict(
                "This run no longer holds its task (it was stopped, paused, cancelled or interrupted), so it delegated nothing.".into(),
            )
        })?;
        if task.kind != kind || task.title != title || &task.input != input {
            return Err(CoreError::Conflict(format!(
                "A different task was already delegated for this step (task {}, \"{}\"). Delegate the changed job as a \
                 new step, or use agent_status to follow the existing one.",
                task.id, task.title
            )));
        }
        Ok(task)
    }

    /// Makes a schedule under `key` (the same key and rule returns it; a changed one is a
    /// conflict), fenced like [`TaskDesk::create`].
    pub async fn schedule(
        &self,
        key: &str,
        spec: &ScheduleSpec,
        sources: &[hearth_protocol::provenance::OutsideSource],
        thread_id: Option<&str>,
        fence: Option<(&str, &str)>,
        chat_run: Option<&str>,
    ) -> Result<ScheduleView> {
        self.schedules.create(key, spec, sources, thread_id, fence, chat_run, crate::store::now_ms()).await?.ok_or_else(|| {
            CoreError::Conflict(
                "This run no longer holds its task (it was stopped, paused, cancelled or interrupted), so it scheduled nothing.".into(),
            )
        })
    }

    /// Keeps a fact the owner told the agent (remember_fact), fenced like [`TaskDesk::create`];
    /// a fact the owner forgot under this key is not kept again.
    pub async fn remember(
        &self,
        key: &str,
        text: &str,
        fence: Option<(&str, &str)>,
        chat_run: Option<&str>,
    ) -> Result<Option<crate::store::memory::Remembered>> {
        self.store.remember(key, text, hearth_protocol::memory::MemorySource::Agent, fence, chat_run).await.map_err(Into::into)
    }

    /// Records a goal (create_goal), fenced like [`TaskDesk::create`].
    pub async fn create_goal(
        &self,
        new: &crate::store::goals::NewGoal<'_>,
        fence: Option<(&str, &str)>,
        chat_run: Option<&str>,
    ) -> Result<Option<hearth_protocol::goals::GoalView>> {
        self.store.create_goal(new, fence, chat_run).await.map_err(Into::into)
    }

    /// The most recently changed tasks.
    pub async fn list(&self, store: &Store, limit: i64) -> Result<Vec<TaskRow>> {
        store.list_tasks(limit).await.map_err(Into::into)
    }
}

/// What a tool call can reach.
#[derive(Clone)]
pub struct ToolContext {
    pub(crate) store: Store,
    pub(crate) mail: WorkspaceReader,
    pub(crate) files: FileStore,
    pub(crate) desk: TaskDesk,
    pub(crate) proposer: Proposer,
    pub(crate) computer: Computer,
    pub(crate) browsers: Browsers,
    /// The owner's MCP servers (the plug-in tools' client; the tool path decides what runs).
    pub(crate) mcp: McpHub,
    pub(crate) scope: OperationScope,
    pub(crate) cancel: CancellationToken,
    /// Where a command's output goes as it arrives (the Computer screen's terminal).
    pub(crate) output: Option<OutputSink>,
    /// Makes a sink per call (a chat run streams each command's output to its card).
    pub(crate) live: Option<LiveOutput>,
    /// What the model behind these calls can take in: look_page answers only a model that
    /// sees pictures (a call from any other gets an error, and no picture is taken).
    pub(crate) vision: Vision,
    /// Who chooses these calls, and what the run has read from outside the owner.
    pub(crate) trust: Trust,
    /// While an effect runs: the key the journal runs it under (set by dispatch), so what it
    /// makes is named by the operation, not by chance, and a retry finds the same thing.
    pub(crate) effect_key: Option<OperationKey>,
}

/// Makes the output sink of the call with this id, and a future that ends when everything sent
/// to it has been passed on (awaited before the call's result is emitted, so its output never
/// lands after it).
pub type LiveOutput = std::sync::Arc<dyn Fn(&str) -> (OutputSink, futures::future::BoxFuture<'static, ()>) + Send + Sync>;

impl ToolContext {
    /// Fires on Stop.
    pub fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Where this call's effects are keyed.
    pub fn scope(&self) -> &OperationScope {
        &self.scope
    }

    /// This context, with command output sent to `sink` as it arrives.
    pub fn with_output(mut self, sink: OutputSink) -> Self {
        self.output = Some(sink);
        self
    }

    /// This context, with each call's command output sent to the sink `make` gives for its id.
    pub fn with_live_output(mut self, make: LiveOutput) -> Self {
        self.live = Some(make);
        self
    }

    /// This context, for a model that sees as `vision`.
    pub fn with_vision(mut self, vision: Vision) -> Self {
        self.vision = vision;
        self
    }

    /// This context, for the fixed steps of Hearth's own workflow code (the document task, a
    /// monitor's look, the finance tracker): arguments Hearth built, not a model's choice, so
    /// the trust policy is not asked.
    pub fn for_workflow(mut self) -> Self {
        self.trust = Trust::Workflow;
        self
    }

    /// The id of the file an effect makes, derived from its operation key (`what` tells one
    /// file of an effect from another): the same operation asked again after a crash names
    /// the same file, which the store keeps once. A random id only outside an effect.
    pub(crate) fn effect_file_id(&self, what: &str) -> String {
        match &self.effect_key {
            Some(key) => crate::files::sha256_hex(format!("file:{what}:{}:{}", key.scope, key.op_id).as_bytes()),
            None => uuid::Uuid::new_v4().to_string(),
        }
    }

    /// What this run has read from outside the owner, when a model chooses its calls.
    pub fn provenance(&self) -> Option<&crate::trust::Provenance> {
        self.trust.provenance()
    }
}

/// What a [`Toolbox`] is made of.
pub struct ToolboxParts {
    /// The database.
    pub store: Store,
    /// Mail and calendar, read-only.
    pub mail: WorkspaceReader,
    /// Files.
    pub files: FileStore,
    /// The task engine.
    pub tasks: TaskEngine,
    /// The gate's power to prepare.
    pub proposer: Proposer,
    /// The computer.
    pub computer: Computer,
    /// The agent's browsers.
    pub browsers: Browsers,
    /// The owner's MCP servers.
    pub mcp: McpHub,
}

/// What every tool context is built from; Hearth holds one.
#[derive(Clone)]
pub struct Toolbox {
    store: Store,
    mail: WorkspaceReader,
    files: FileStore,
    tasks: TaskEngine,
    proposer: Proposer,
    computer: Computer,
    browsers: Browsers,
    mcp: McpHub,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext").field("scope", &self.scope).finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Toolbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolbox").finish_non_exhaustive()
    }
}

impl Toolbox {
    /// A toolbox over these parts.
    pub fn new(parts: ToolboxParts) -> Self {
        let ToolboxParts { store, mail, files, tasks, proposer, computer, browsers, mcp } = parts;
        Self { store, mail, files, tasks, proposer, computer, browsers, mcp }
    }

    /// The owner's MCP servers.
    pub fn mcp(&self) -> &McpHub {
        &self.mcp
    }

    /// The power to prepare (and to read back how a proposal was decided).
    pub fn proposer(&self) -> &Proposer {
        &self.proposer
    }

    /// The context of a model's calls inside a task run: its Stop, its lease, its steps.
    /// (Workflow code turns it into [`ToolContext::for_workflow`].)
    pub fn for_task(&self, task: TaskContext) -> ToolContext {
        let cancel = task.cancel_token().clone();
        self.context(OperationScope::Task(Box::new(task)), cancel, Trust::model())
    }

    /// The context of the owner's own operations on `screen` (the Computer screen's terminal),
    /// through the same effect path as a model's calls.
    pub fn for_owner(&self, screen: &'static str, cancel: CancellationToken) -> ToolContext {
        let scope = OperationScope::Owner { screen, journal: self.tasks.journal().clone() };
        self.context(scope, cancel, Trust::Owner)
    }

    /// The context of calls in a chat run. A run an endpoint client or an external agent
    /// drives starts with outside content: its messages are not the owner's.
    pub fn for_chat(&self, thread_id: &str, run_id: &str, origin: ProposalOrigin, cancel: CancellationToken) -> ToolContext {
        let scope = OperationScope::Chat {
            thread_id: thread_id.to_owned(),
            run_id: run_id.to_owned(),
            origin,
            journal: self.tasks.journal().clone(),
        };
        let provenance = match origin {
            ProposalOrigin::OwnerChat | ProposalOrigin::Task => Provenance::new(),
            ProposalOrigin::AguiEndpoint => Provenance::from_outside(SourceKind::EndpointClient, thread_id),
            ProposalOrigin::PairedDevice => Provenance::from_outside(SourceKind::PairedDevice, thread_id),
            ProposalOrigin::ExternalAgent => Provenance::from_outside(SourceKind::ExternalAgent, thread_id),
        };
        self.context(scope, cancel, Trust::Model(provenance))
    }

    /// The context of one held call the owner approved (`ApprovalGate` runs it through
    /// [`super::HeldCalls`]): the key it was asked under, claimed by `claimant`.
    pub(crate) fn for_approved(
        &self,
        draft: &HeldCallDraft,
        origin: ProposalOrigin,
        task_id: Option<&str>,
        claimant: String,
        cancel: CancellationToken,
    ) -> ToolContext {
        let scope = OperationScope::Approved {
            key: OperationKey { scope: draft.op_scope.clone(), op_id: draft.op_id.clone() },
            thread_id: draft.thread_id.clone().map(String::from),
            task_id: task_id.map(str::to_owned),
            origin,
            claimant,
            sources: draft.sources.clone(),
            journal: self.tasks.journal().clone(),
        };
        self.context(scope, cancel, Trust::Owner)
    }

    fn context(&self, scope: OperationScope, cancel: CancellationToken, trust: Trust) -> ToolContext {
        ToolContext {
            store: self.store.clone(),
            mail: self.mail.clone(),
            files: self.files.clone(),
            desk: TaskDesk {
                engine: self.tasks.clone(),
                schedules: Schedules::new(self.store.clone(), self.tasks.clone()),
                store: self.store.clone(),
            },
            proposer: self.proposer.clone(),
            computer: self.computer.clone(),
            browsers: self.browsers.clone(),
            mcp: self.mcp.clone(),
            scope,
            cancel,
            output: None,
            live: None,
            vision: Vision::TextOnly,
            trust,
            effect_key: None,
        }
    }
}

/// What the caller's model can take in besides text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Vision {
    /// Text only: a task (whose conversation is checkpointed), an external agent (AG-UI tool
    /// results are text), or a model the owner did not set to accept images.
    #[default]
    TextOnly,
    /// Text and pictures: look_page is offered and its picture sent.
    Images,
}

impl Vision {
    /// Whether `tool` is offered to a caller that sees this way.
    pub fn offers(self, tool: ToolName) -> bool {
        match self {
            Vision::Images => true,
            Vision::TextOnly => tool != ToolName::LookPage,
        }
    }
}
