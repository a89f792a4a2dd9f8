//! Preparing proposals and deciding them.
//!
//! Only this gate holds the whole workspace (with `execute`); tools hold a [`Proposer`],
//! which can only prepare. Only the owner's `approval_decide`, from the app window, reaches
//! [`ApprovalGate::decide`].

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use hearth_protocol::approvals::{
    ApprovalDecideParams, ApprovalLeavingParams, ApprovalRecheckParams, Connection, Decision, HeldCallDraft, LeavingAction, ProposalDraft,
    ProposalKind, ProposalOrigin, ProposalStatus, ProposalView, Recheck,
};
use hearth_protocol::provenance::OutsideSource;
use tokio_util::sync::CancellationToken;

use super::hash::proposal_hash;
use super::web::{self, FormSender};
use crate::error::{CoreError, Result};
use crate::process::{Liveness, ProcessIdentity};
use crate::store::proposals::{ExecutionClaim, InsertOutcome, MandatedClaim, ProposalRow, Reclaim};
use crate::store::{Store, now_ms};
use crate::tasks::TaskEngine;
use crate::workspace::{ExecuteError, Executed, LOCAL_CONNECTION_ID, Reconciliation, Target, Workspace};

/// What the owner is told when the displayed draft is not the stored one.
pub const CHANGED_MESSAGE: &str = "This proposal changed. Open its latest review.";

/// Where an approval is, for the crash tests' hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecideStage {
    /// Claimed (`executing`), not yet carried out.
    Claimed,
    /// Carried out and its receipt recorded; the task not yet released.
    Settled,
}

/// Awaited at each [`DecideStage`] of an approval (the crash tests kill the process there).
pub type DecideHook = Arc<dyn Fn(DecideStage) -> BoxFuture<'static, ()> + Send + Sync>;

/// The connection a held call acts through: Hearth itself, on this device.
pub const HELD_CONNECTION: &str = "hearth";

/// Runs a held tool call the owner approved. The tool path implements it
/// (`tools::HeldCallRunner`); the gate holds it as this trait so that approvals do not depend
/// on the tools that depend on them.
pub trait HeldCalls: Send + Sync + 'static {
    /// Runs `draft`'s call once, under the key it was held under, its journal row claimed by
    /// `claimant`; `task_id` is the task it came from. A call that may have happened and did
    /// not report is [`ExecuteError::Uncertain`]; one refused before it ran,
    /// [`ExecuteError::Rejected`].
    fn run(
        &self,
        draft: &HeldCallDraft,
        origin: ProposalOrigin,
        task_id: Option<&str>,
        claimant: String,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, std::result::Result<Executed, ExecuteError>>;
}

struct Inner {
    store: Store,
    workspace: Arc<dyn Workspace>,
    /// The agent's browser, for a task's form submission (`web.submit`).
    forms: Arc<dyn FormSender>,
    tasks: TaskEngine,
    ttl: Duration,
    /// The undo window when the owner has not chosen one (`UNDO_WINDOW_SETTING`).
    undo_default: Duration,
    /// The end of each undo window this process is waiting out, by proposal id (so a test, or
    /// shutdown, can wait for one to be carried out or given up).
    leaving: std::sync::Mutex<std::collections::HashMap<String, tokio::task::JoinHandle<()>>>,
    stopping: CancellationToken,
    identity: ProcessIdentity,
    hook: std::sync::Mutex<Option<DecideHook>>,
    /// Runs approved held calls; set once, after the tools are built over this gate. Weak:
    /// the runner holds tools that hold this gate, and Hearth owns it.
    held: std::sync::OnceLock<std::sync::Weak<dyn HeldCalls>>,
}

/// The approval gate. Cheap to clone.
#[derive(Clone)]
pub struct ApprovalGate {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ApprovalGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalGate").field("ttl", &self.inner.ttl).finish_non_exhaustive()
    }
}

impl ApprovalGate {
    /// A gate over `store` acting through `workspace` (mail, calendar) and `forms` (the
    /// browser's form submissions); proposals live `ttl`; an approved email or event change
    /// waits `undo_default` with Undo unless the owner chose another window in Settings.
    pub fn new(
        store: Store,
        workspace: Arc<dyn Workspace>,
        forms: Arc<dyn FormSender>,
        tasks: TaskEngine,
        ttl: Duration,
        undo_default: Duration,
    ) -> Self {
        let identity = tasks.identity().clone();
        Self {
            inner: Arc::new(Inner {
                store,
                workspace,
                forms,
                tasks,
                ttl,
                undo_default,
                leaving: std::sync::Mutex::default(),
                stopping: CancellationToken::new(),
                identity,
                hook: std::sync::Mutex::new(None),
                held: std::sync::OnceLock::new(),
            }),
        }
    }

    /// The power to prepare, and nothing else: what tools get.
    pub fn proposer(&self) -> Proposer {
        Proposer { gate: self.clone() }
    }

    /// Gives the gate what runs approved held calls (once; a second call is ignored). The
    /// caller keeps `runner` alive for as long as approvals may be decided.
    pub fn set_held_calls(&self, runner: &Arc<dyn HeldCalls>) {
        if self.inner.held.set(Arc::downgrade(runner)).is_err() {
            tracing::warn!("the approval gate's held-call runner was set twice; the first one stays");
        }
    }

    /// Test hook: awaited at each stage of an approval.
    #[doc(hidden)]
    pub fn set_decide_hook(&self, hook: Option<DecideHook>) {
        *self.inner.hook.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = hook;
    }

    async fn at(&self, stage: DecideStage) {
        let hook = self.inner.hook.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        if let Some(hook) = hook {
            hook(stage).await;
        }
    }

    /// Expires overdue proposals every `every` until [`ApprovalGate::shutdown`], so a task
    /// waiting on one moves on even when nobody opens Approvals.
    pub fn start(&self, every: Duration) -> tokio::task::JoinHandle<()> {
        let gate = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = gate.inner.stopping.cancelled() => return,
                    () = tokio::time::sleep(every) => {}
                }
                if let Err(err) = gate.expire_due().await {
                    tracing::error!(error = %err, "could not expire overdue proposals");
                }
                // A window whose own timer could not carry it out (a database error then) is
                // carried out here, once due; the claim makes a second try harmless.
                if let Err(err) = gate.leave_due().await {
                    tracing::error!(error = %err, "could not carry out approved actions whose undo window ended");
                }
            }
        })
    }

    /// Stops the expiry sweep and the undo windows' timers: what is still `leaving` is not
    /// carried out by this process; the next start returns it to the owner's review.
    pub fn shutdown(&self) {
        self.inner.stopping.cancel();
    }

    /// At start-up: an approval whose executor died while carrying it out becomes `failed`
    /// when the workspace commits effect and receipt together (nothing was committed, so
    /// nothing happened), else `outcome_unknown`; its task is released with that status; a task left waiting on an already-decided proposal (a crash between the
    /// receipt and the release) is released too. Approvals a live second process is
    /// carrying out are left alone. Returns how many were stranded.
    pub async fn recover(&self) -> Result<u64> {
        let mut stranded = 0;
        for (id, kind, executor, connection_id) in self.inner.store.executing_proposals().await? {
            // Unknown liveness (no /proc) counts as gone: an uncertain receipt is safe, a second
            // execution is not.
            let dead = executor.as_deref().is_none_or(|owner| ProcessIdentity::liveness(owner) != Liveness::Alive);
            let known_undone = match carrier(kind) {
                // The local workspace commits its effect and the receipt in one transaction, so
                // one found executing did not happen; any other may have (a Google send). Decided
                // by the connection it was approved for, not by the account chosen now.
                Carrier::Workspace => connection_id == LOCAL_CONNECTION_ID,
                // A form the browser may have sent: only the site knows.
                Carrier::Browser => false,
                // A held call may have had its effect before the crash; its own journal row
                // says what it knows, and the owner reviews it.
                Carrier::Agent => false,
            };
            if dead && self.inner.store.strand_executing_proposal(&id, executor.as_deref(), known_undone).await? {
                stranded += 1;
            }
        }
        // An undo window a stop cut short: nothing was carried out (that starts only with the
        // claim to `executing`), so it goes back to the owner, unsent — never sent on its own
        // after a restart the owner may not have watched, and never dropped.
        for (id, executor, _) in self.inner.store.leaving_proposals().await? {
            let dead = executor.as_deref().is_none_or(|owner| ProcessIdentity::liveness(owner) != Liveness::Alive);
            let review_until = now_ms().saturating_add(i64::try_from(self.inner.ttl.as_millis()).unwrap_or(i64::MAX));
            if dead && self.inner.store.return_leaving_to_review(&id, executor.as_deref(), review_until, LEFT_UNSENT).await? {
                stranded += 1;
            }
        }
        for (task_id, proposal_id) in self.inner.store.waiting_on_decided().await? {
            self.inner.tasks.release_approval(&task_id, &proposal_id).await?;
        }
        Ok(stranded)
    }

    /// Stores `draft` for review under `key`. The same key with the same draft returns the
    /// existing proposal (and receipt); a changed draft is a conflict that needs a new review.
    /// With a task `fence` (task id, lease id), nothing is stored unless that lease holds, and
    /// the proposal becomes the task's current action in the same transaction.
    ///
    /// With the task's `operation` (the key's scope and id), a standing order of the task that
    /// covers the draft as resolved (`trust::mandate::covers_draft`) approves it in the owner's
    /// place: a use is counted for this operation, the proposal is stored already claimed, and
    /// it is carried out here, exactly as an approval would; the answer is then decided.
    #[expect(clippy::too_many_arguments, reason = "prepare's arguments, and the task operation a standing order is counted for")]
    async fn prepare(
        &self,
        key: &str,
        fence: Option<(&str, &str)>,
        chat_run: Option<&str>,
        origin: ProposalOrigin,
        sources: Vec<OutsideSource>,
        draft: ProposalDraft,
        operation: Option<(&str, &str)>,
    ) -> Result<ProposalRow> {
        // A retried step is matched on what it asked for, before resolving: the approval it
        // led to may itself have changed or deleted the event it resolves against.
        let request_hash = match &draft {
            // A held call is the same request when it is the same call under the same key,
            // whatever a re-dispatched run had read by then or how the card words it.
            ProposalDraft::HeldCall(call) => crate::journal::action_hash(
                "held-call-request",
                &serde_json::json!({ "tool": call.tool, "arguments": call.arguments, "scope": call.op_scope, "op": call.op_id }),
            ),
            ProposalDraft::EmailSend(_)
            | ProposalDraft::CalendarCreate(_)
            | ProposalDraft::CalendarUpdate(_)
            | ProposalDraft::CalendarDelete(_)
            | ProposalDraft::WebSubmit(_) => crate::journal::action_hash("proposal-request", &serde_json::to_value(&draft)?),
        };
        if let Some(existing) = self.inner.store.proposal_by_key(key).await? {
            return match &existing.request_hash {
                Some(asked) if *asked == request_hash => Ok(existing),
                Some(_) => Err(changed_request(&existing)),
                // Written before requests were hashed: compare after resolving; a step whose own
                // approval changed or deleted the event still gets its decided proposal.
                None => match self.prepare_resolved(key, fence, chat_run, origin, sources, draft, request_hash, operation).await {
                    Err(_) if existing.status != ProposalStatus::AwaitingReview => Ok(existing),
                    other => other,
                },
            };
        }
        self.prepare_resolved(key, fence, chat_run, origin, sources, draft, request_hash, operation).await
    }

    #[expect(clippy::too_many_arguments, reason = "prepare's arguments, and the request's hash")]
    async fn prepare_resolved(
        &self,
        key: &str,
        fence: Option<(&str, &str)>,
        chat_run: Option<&str>,
        origin: ProposalOrigin,
        sources: Vec<OutsideSource>,
        draft: ProposalDraft,
        request_hash: String,
        operation: Option<(&str, &str)>,
    ) -> Result<ProposalRow> {
        let (connection, draft, target) = self.resolve(draft).await?;
        let mandate = match (fence, operation) {
            (Some((task_id, lease_id)), Some((op_scope, op_id))) => self.standing_order(task_id, lease_id, op_scope, op_id, &draft).await,
            (Some(_), None) | (None, _) => None,
        };
        let hash = proposal_hash(&draft, &connection, &target);
        let now = now_ms();
        let ttl = i64::try_from(self.inner.ttl.as_millis()).unwrap_or(i64::MAX);
        let row = ProposalRow {
            id: uuid::Uuid::new_v4().to_string(),
            key: key.to_owned(),
            task_id: fence.map(|(task, _)| task.to_owned()),
            draft,
            connection,
            target: target.target,
            target_version: target.version,
            hash,
            status: ProposalStatus::AwaitingReview,
            created_at: now,
            expires_at: now.saturating_add(ttl),
            receipt: None,
            error: None,
            origin,
            executor: None,
            request_hash: Some(request_hash),
            sources,
            mandate_id: None,
            leaves_at: None,
            failure_id: None,
        };
        let executor = self.inner.identity.as_str();
        let claim = match (&mandate, operation) {
            (Some(mandate_id), Some((op_scope, op_id))) => Some(MandatedClaim { mandate_id, op_scope, op_id, executor }),
            (Some(_), None) | (None, _) => None,
        };
        match self.inner.store.insert_proposal(&row, fence, chat_run, claim).await? {
            None => Err(CoreError::Conflict("This run was stopped (or no longer holds its task), so nothing was prepared.".into())),
            Some(InsertOutcome::Created(stored)) if stored.status == ProposalStatus::Executing && stored.mandate_id.is_some() => {
                // Approved by the standing order as it was stored: carried out now, as the
                // owner's approval would be. A failure to record how it ended leaves it
                // `executing`, which start-up makes `outcome_unknown`; the run waits on it.
                if let Err(err) = self.carry_out(&stored, executor, Attempt::First).await {
                    tracing::error!(proposal_id = stored.id, error = %err, "a standing order's approval did not finish recording");
                }
                self.row(&stored.id).await
            }
            Some(InsertOutcome::Created(stored) | InsertOutcome::Existing(stored)) => Ok(stored),
            Some(InsertOutcome::Changed(stored)) => Err(changed_request(&stored)),
        }
    }

    /// The standing order of `task_id` that approves `draft` for the operation
    /// `(op_scope, op_id)`, with its use counted (the store's compare-and-swap re-checks life,
    /// holder, room and the run's lease); `None` when none does, or the check fails.
    async fn standing_order(&self, task_id: &str, lease_id: &str, op_scope: &str, op_id: &str, draft: &ProposalDraft) -> Option<String> {
        let now = now_ms();
        let candidates: Vec<String> = match self.inner.store.live_mandates_for_task(task_id, now).await {
            Ok(live) => live.into_iter().filter(|m| crate::trust::mandate::covers_draft(&m.grant, draft)).map(|m| m.id).collect(),
            Err(err) => {
                tracing::warn!(error = %err, "could not read a task's standing orders; its proposal waits for the owner");
                return None;
            }
        };
        if candidates.is_empty() {
            return None;
        }
        let tool = draft.kind().as_str();
        match self.inner.store.use_mandate(&candidates, task_id, lease_id, op_scope, op_id, tool, now).await {
            Ok(used) => used,
            Err(err) => {
                tracing::warn!(error = %err, "could not count a use of a standing order; the proposal waits for the owner");
                None
            }
        }
    }

    /// The account `draft` acts as now, the draft as the owner will review it, and its target
    /// with that target's version: from the workspace for mail and calendar, from the draft
    /// itself for a form (the prepare tool read the page and its form together).
    async fn resolve(&self, draft: ProposalDraft) -> Result<(Connection, ProposalDraft, Target)> {
        match draft {
            ProposalDraft::WebSubmit(form) => {
                let target = web::target(&form);
                Ok((web::connection(&form), ProposalDraft::WebSubmit(form), target))
            }
            ProposalDraft::HeldCall(call) => {
                // The call is its own target: the key it runs under, and exactly these arguments.
                let version = crate::journal::action_hash(&call.tool.journal_name(), &call.arguments);
                let target = Target { target: format!("call:{}:{}", call.op_scope, call.op_id), version };
                Ok((held_connection(), ProposalDraft::HeldCall(call), target))
            }
            ProposalDraft::EmailSend(_)
            | ProposalDraft::CalendarCreate(_)
            | ProposalDraft::CalendarUpdate(_)
            | ProposalDraft::CalendarDelete(_) => {
                // One read of the chosen account for both: a switch in between cannot bind one
                // account's name to another's data.
                self.inner.workspace.resolve(draft).await
            }
        }
    }

    /// The account a proposal of this draft would act as now.
    async fn connection_now(&self, draft: &ProposalDraft) -> Result<Connection> {
        match draft {
            ProposalDraft::WebSubmit(form) => Ok(web::connection(form)),
            ProposalDraft::HeldCall(_) => Ok(held_connection()),
            ProposalDraft::EmailSend(_)
            | ProposalDraft::CalendarCreate(_)
            | ProposalDraft::CalendarUpdate(_)
            | ProposalDraft::CalendarDelete(_) => self.inner.workspace.connection().await,
        }
    }

    /// Carries out the claimed `proposal` through whoever owns its kind.
    async fn execute(&self, proposal: &ProposalRow, claim: ExecutionClaim<'_>) -> std::result::Result<Executed, ExecuteError> {
        // The owner's approval is the decision; what stops it before the hand-over is Hearth
        // shutting down or its task's Pause or Cancel. Once handed over, a send is not cut off
        // (that would only make it uncertain).
        let cancel = self.inner.stopping.child_token();
        // A task's Pause or Cancel stops it too, while it is carried out: a held call that runs
        // on (a command, a page), and a send before its hand-over — one a standing order
        // approved in a running task included.
        let _stop = match &proposal.task_id {
            Some(task_id) => match self.inner.tasks.stop_with_task(task_id, &cancel).await {
                Ok(stop) => Some(stop),
                Err(err) => return Err(ExecuteError::Rejected(format!("Hearth could not read the task ({err})."))),
            },
            None => None,
        };
        match &proposal.draft {
            ProposalDraft::WebSubmit(form) => {
                self.inner.forms.send(form, &cancel).await.map(|receipt| Executed { receipt, settled: false })
            }
            ProposalDraft::HeldCall(call) => match self.inner.held.get().and_then(std::sync::Weak::upgrade) {
                Some(runner) => {
                    // This process and this approval: a crash leaves a row whose claimant is
                    // known to be gone, and the owner reviews it.
                    let claimant = format!("{}:approval:{}", claim.executor, proposal.id);
                    runner.run(call, proposal.origin, proposal.task_id.as_deref(), claimant, cancel).await
                }
                None => Err(ExecuteError::Rejected("Hearth cannot run agent calls in this process.".into())),
            },
            ProposalDraft::EmailSend(_)
            | ProposalDraft::CalendarCreate(_)
            | ProposalDraft::CalendarUpdate(_)
            | ProposalDraft::CalendarDelete(_) => self.inner.workspace.execute(proposal, claim, &cancel).await,
        }
    }

    /// One proposal.
    pub async fn get(&self, proposal_id: &str) -> Result<ProposalView> {
        self.expire_due().await?;
        Ok(self.row(proposal_id).await?.view())
    }

    /// Awaiting review first, then the most recent others.
    pub async fn list(&self) -> Result<Vec<ProposalView>> {
        self.expire_due().await?;
        Ok(self.inner.store.list_proposals(200).await?.iter().map(ProposalRow::view).collect())
    }

    /// Expires what is past its time and lets the waiting tasks see it.
    pub async fn expire_due(&self) -> Result<()> {
        for (proposal_id, task_id) in self.inner.store.expire_due_proposals(now_ms()).await? {
            if let Some(task_id) = task_id {
                self.inner.tasks.release_approval(&task_id, &proposal_id).await?;
            }
        }
        Ok(())
    }

    /// The owner's decision, from the app window only. See the module docs of
    /// `hearth_protocol::approvals` for what the hash binds.
    pub async fn decide(&self, params: &ApprovalDecideParams) -> Result<ProposalView> {
        params.validate()?;
        let proposal = self.row(&params.proposal_id).await?;
        if proposal.hash != params.hash {
            return Err(CoreError::Conflict(CHANGED_MESSAGE.into()));
        }
        if proposal.status != ProposalStatus::AwaitingReview {
            return Ok(proposal.view());
        }
        match params.decision {
            Decision::Deny => self.deny(&proposal).await,
            Decision::Approve => self.approve(proposal).await,
        }
    }

    async fn deny(&self, proposal: &ProposalRow) -> Result<ProposalView> {
        self.inner
            .store
            .settle_proposal(
                &proposal.id,
                ProposalStatus::AwaitingReview,
                ProposalStatus::Denied,
                None,
                Some("Denied by you. Nothing was sent or changed."),
                None,
            )
            .await?;
        self.release(proposal).await?;
        Ok(self.row(&proposal.id).await?.view())
    }

    async fn approve(&self, proposal: ProposalRow) -> Result<ProposalView> {
        if let Some(task_id) = &proposal.task_id {
            let task = self.inner.store.get_task(task_id).await?;
            let live = task.as_ref().is_some_and(|t| {
                matches!(t.status, hearth_protocol::tasks::TaskStatus::Running | hearth_protocol::tasks::TaskStatus::WaitingApproval)
            });
            if !live {
                // A racing approval may have just carried it out and released the task.
                let current = self.row(&proposal.id).await?;
                if current.status != ProposalStatus::AwaitingReview {
                    return Ok(current.view());
                }
                let status = task.map_or("gone".to_owned(), |t| t.status.as_str().replace('_', " "));
                return Err(CoreError::Conflict(format!(
                    "The task this belongs to is {status}, so it cannot be approved. Nothing was sent or changed."
                )));
            }
        }
        let now = now_ms();
        if proposal.expires_at <= now {
            self.expire_due().await?;
            return Err(CoreError::Expired(
                "This proposal expired before you approved it. Nothing was sent or changed; ask for it again.".into(),
            ));
        }
        let connection = self.connection_now(&proposal.draft).await?;
        if connection != proposal.connection {
            return Err(CoreError::Conflict(format!(
                "This was prepared for {} but the account is now {}. Nothing was sent; prepare it again for this account.",
                proposal.connection.account, connection.account
            )));
        }
        let executor = self.inner.identity.as_str();
        let window = self.undo_window(proposal.draft.kind()).await?;
        let leaves_at = window.map(|window| now.saturating_add(i64::try_from(window.as_millis()).unwrap_or(i64::MAX)));
        // The claim re-checks the account, the expiry and the task (live, and this proposal its
        // current action) in the same statement that moves it to executing (or leaving).
        if !self.inner.store.claim_proposal(&proposal.id, now, &proposal.connection, executor, leaves_at).await? {
            self.expire_due().await?;
            let current = self.row(&proposal.id).await?;
            if current.status == ProposalStatus::AwaitingReview {
                return Err(CoreError::Conflict(
                    "This proposal can no longer be approved: its task moved on to a newer one, or the account it was \
                     prepared for changed. Nothing was sent or changed."
                        .into(),
                ));
            }
            // Someone else decided it, or it expired, in the meantime.
            return Ok(current.view());
        }
        if let (Some(window), Some(_)) = (window, leaves_at) {
            self.wait_out(&proposal.id, window);
            return Ok(self.row(&proposal.id).await?.view());
        }
        self.carry_out(&proposal, executor, Attempt::First).await
    }

    /// The undo window for an approval of `kind`: `None` when it is carried out at once. Only
    /// the owner's email and calendar changes wait (what Undo send means to people); a web
    /// form and a held call go at once, as before.
    async fn undo_window(&self, kind: ProposalKind) -> Result<Option<Duration>> {
        match carrier(kind) {
            Carrier::Workspace => {}
            Carrier::Browser | Carrier::Agent => return Ok(None),
        }
        let window = match self.inner.store.setting(UNDO_WINDOW_SETTING).await? {
            Some(seconds) => match seconds.parse::<u64>() {
                Ok(seconds) => Duration::from_secs(seconds),
                Err(_) => {
                    tracing::warn!("the stored undo window is not a number of seconds; the default is used");
                    self.inner.undo_default
                }
            },
            None => self.inner.undo_default,
        };
        Ok((!window.is_zero()).then_some(window))
    }

    /// The owner's undo window in seconds (Settings).
    pub async fn undo_window_seconds(&self) -> Result<u32> {
        let default = u32::try_from(self.inner.undo_default.as_secs()).unwrap_or(u32::MAX);
        Ok(self.inner.store.setting(UNDO_WINDOW_SETTING).await?.and_then(|s| s.parse().ok()).unwrap_or(default))
    }

    /// Sets the owner's undo window (already checked in range); approvals from now on use it.
    pub async fn set_undo_window_seconds(&self, seconds: u32) -> Result<()> {
        self.inner.store.put_setting(UNDO_WINDOW_SETTING, &seconds.to_string()).await?;
        Ok(())
    }

    /// Waits out `proposal_id`'s undo window in the background, then carries it out unless it
    /// was undone (or its task stopped) meanwhile. Shutdown ends the wait with nothing done.
    fn wait_out(&self, proposal_id: &str, window: Duration) {
        let gate = self.clone();
        let id = proposal_id.to_owned();
        let handle = tokio::spawn(async move {
            tokio::select! {
                biased;
                () = gate.inner.stopping.cancelled() => return,
                () = tokio::time::sleep(window) => {}
            }
            // Shut down as the window ended: left for the next start to return to review.
            if gate.inner.stopping.is_cancelled() {
                return;
            }
            if let Err(err) = gate.leave(&id, false).await {
                // Still `leaving`: the sweep tries again, or the next start returns it to review.
                tracing::error!(proposal_id = id, error = %err, "could not carry out an approved action after its undo window");
            }
        });
        let mut leaving = self.inner.leaving.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        leaving.retain(|_, handle| !handle.is_finished());
        leaving.insert(proposal_id.to_owned(), handle);
    }

    /// Waits until this process's timer for `proposal_id`'s undo window has carried it out or
    /// given up (at once when there is none). For tests and the headless server's shutdown.
    pub async fn wait_leaving(&self, proposal_id: &str) {
        let handle = self.inner.leaving.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(proposal_id);
        if let Some(handle) = handle {
            let _ = handle.await;
        }
    }

    /// Carries out every proposal of this process whose undo window is over, and returns to
    /// the owner's review any whose process died inside its window (as start-up would: another
    /// process may stay up long after one that approved something died).
    async fn leave_due(&self) -> Result<()> {
        let me = self.inner.identity.as_str();
        let now = now_ms();
        for (id, executor, leaves_at) in self.inner.store.leaving_proposals().await? {
            let outcome = if executor.as_deref() == Some(me) {
                if leaves_at > now || self.inner.stopping.is_cancelled() {
                    continue;
                }
                self.leave(&id, false).await.map(drop)
            } else if executor.as_deref().is_none_or(|owner| ProcessIdentity::liveness(owner) != Liveness::Alive) {
                let review_until = now.saturating_add(i64::try_from(self.inner.ttl.as_millis()).unwrap_or(i64::MAX));
                self.inner
                    .store
                    .return_leaving_to_review(&id, executor.as_deref(), review_until, LEFT_UNSENT)
                    .await
                    .map(drop)
                    .map_err(Into::into)
            } else {
                continue;
            };
            // One failure does not hold back the others; the next sweep tries it again.
            if let Err(err) = outcome {
                tracing::error!(proposal_id = id, error = %err, "could not end an approved action's undo window");
            }
        }
        Ok(())
    }

    /// Ends `proposal_id`'s undo window: claims it `executing` (when due, or at once with
    /// `now_anyway`) and carries it out. One the claim cannot take — undone, or its task
    /// stopped, meanwhile; or the account it was approved for is no longer the one in use —
    /// is not carried out; a proposal still `leaving` then is settled `failed` with why.
    async fn leave(&self, proposal_id: &str, now_anyway: bool) -> Result<ProposalView> {
        let executor = self.inner.identity.as_str();
        // One reading of the clock for the claim and for "due but not taken" below, so a
        // window that ends between two readings is never taken for a refused one.
        let now = now_ms();
        if self.inner.store.claim_leaving(proposal_id, now, executor, now_anyway).await? {
            let proposal = self.row(proposal_id).await?;
            return self.carry_out(&proposal, executor, Attempt::First).await;
        }
        let current = self.row(proposal_id).await?;
        if current.status == ProposalStatus::Leaving && current.leaves_at.is_some_and(|at| now_anyway || at <= now) {
            // Due and not taken: the account changed, or the task no longer waits on it. Nothing
            // was sent; the card and the task say so.
            self.inner
                .store
                .settle_proposal(proposal_id, ProposalStatus::Leaving, ProposalStatus::Failed, None, Some(NOT_LEFT), None)
                .await?;
            self.release(&current).await?;
            return Ok(self.row(proposal_id).await?.view());
        }
        Ok(current.view())
    }

    /// The owner's Undo or Send now on an approved action in its undo window, from the app
    /// window (or a paired device that may decide approvals).
    pub async fn leaving(&self, params: &ApprovalLeavingParams) -> Result<ProposalView> {
        params.validate()?;
        let proposal = self.row(params.proposal_id.as_str()).await?;
        match params.action {
            LeavingAction::Undo => {
                if self.inner.store.undo_leaving(&proposal.id, UNDONE).await? {
                    self.release(&proposal).await?;
                    return Ok(self.row(&proposal.id).await?.view());
                }
                let current = self.row(&proposal.id).await?;
                match current.status {
                    ProposalStatus::Undone => Ok(current.view()),
                    ProposalStatus::Executing | ProposalStatus::Succeeded | ProposalStatus::OutcomeUnknown => {
                        Err(CoreError::Conflict("Too late to undo: it had already left. Check where it went (Sent, the calendar).".into()))
                    }
                    ProposalStatus::AwaitingReview
                    | ProposalStatus::Leaving
                    | ProposalStatus::Failed
                    | ProposalStatus::Denied
                    | ProposalStatus::Expired => Err(CoreError::Conflict(format!(
                        "There is nothing to undo: this is {}, not waiting to leave.",
                        current.status.as_str().replace('_', " ")
                    ))),
                }
            }
            LeavingAction::SendNow => {
                if proposal.status != ProposalStatus::Leaving {
                    return Ok(proposal.view());
                }
                self.leave(&proposal.id, true).await
            }
        }
    }

    /// Carries out `proposal`, claimed `executing` by `executor`, records how it ended, and
    /// releases its task.
    async fn carry_out(&self, proposal: &ProposalRow, executor: &str, attempt: Attempt) -> Result<ProposalView> {
        self.at(DecideStage::Claimed).await;
        let claim = ExecutionClaim { proposal_id: &proposal.id, executor };
        let outcome = self.execute(proposal, claim).await;
        let (to, receipt, error) = match &outcome {
            Ok(done) if done.settled => (None, None, None),
            Ok(done) => (Some(ProposalStatus::Succeeded), Some(done.receipt.as_str()), None),
            Err(ExecuteError::Rejected(why)) => match attempt {
                Attempt::First => (Some(ProposalStatus::Failed), None, Some(why.clone())),
                // Refused now says nothing of the first attempt, which may have happened.
                Attempt::Retry => (
                    Some(ProposalStatus::OutcomeUnknown),
                    None,
                    Some(format!("The retry was refused ({why}); the first attempt may still have happened — check before asking again.")),
                ),
            },
            Err(ExecuteError::Uncertain(why)) => (Some(ProposalStatus::OutcomeUnknown), None, Some(why.clone())),
        };
        let error = error.as_deref();
        let settled = match to {
            None => Ok(true),
            Some(to) => self.inner.store.settle_proposal(&proposal.id, ProposalStatus::Executing, to, receipt, error, Some(executor)).await,
        };
        if let Err(err) = &settled {
            // Left `executing`: start-up makes it outcome_unknown for the owner to review.
            tracing::error!(proposal_id = proposal.id, error = %err, "could not record how an approved action ended");
        }
        self.at(DecideStage::Settled).await;
        self.release(proposal).await?;
        settled?;
        Ok(self.row(&proposal.id).await?.view())
    }

    /// The owner's check — and, when asked, retry — of an approved action whose outcome is
    /// unknown, from the app window only. It always looks first where the provider keeps the
    /// effect ([`Workspace::reconcile`]): found, the proposal is `succeeded` and nothing is done
    /// again. A retry claims the proposal back **before** it looks (one statement from
    /// `outcome_unknown`), so a second retry can neither act nor look while the first one runs;
    /// only under that claim, and only when the effect is not found, is it carried out again.
    /// A retry of a task's proposal is refused once the task was cancelled or prepared a newer
    /// one of the same kind (it may already have done the same thing another way). A web form
    /// is never retried (only the site knows).
    pub async fn recheck(&self, params: &ApprovalRecheckParams) -> Result<ProposalView> {
        params.validate()?;
        let proposal = self.row(&params.proposal_id).await?;
        if proposal.hash != params.hash {
            return Err(CoreError::Conflict(CHANGED_MESSAGE.into()));
        }
        if proposal.status != ProposalStatus::OutcomeUnknown {
            return Ok(proposal.view());
        }
        match carrier(proposal.draft.kind()) {
            Carrier::Workspace => {}
            Carrier::Browser => {
                return Err(CoreError::Conflict(
                    "Only the website knows whether this form went through: check there. Hearth does not send a form again; \
                     ask for it anew if it did not arrive."
                        .into(),
                ));
            }
            Carrier::Agent => {
                return Err(CoreError::Conflict(
                    "Hearth lost track of this approved call, so it may or may not have happened: check what it would have \
                     changed. Hearth does not run it again; ask for it anew if it did not happen."
                        .into(),
                ));
            }
        }
        // The same account may have been connected again since (a new connection id): the
        // effect is found, and done again, under the account it was approved for.
        let connection = self.connection_now(&proposal.draft).await?;
        if !same_account(&connection, &proposal.connection) {
            let how = if proposal.connection.id == LOCAL_CONNECTION_ID {
                "Choose the Sample mailbox in Settings → Accounts to check it.".to_owned()
            } else {
                format!("Connect {} and choose it in Settings → Accounts to check it.", proposal.connection.account)
            };
            return Err(CoreError::Conflict(format!(
                "This was approved for {} but the account in use is {}, so Hearth cannot look for it or do it again. {how}",
                proposal.connection.account, connection.account
            )));
        }
        let rebound = ProposalRow { connection: connection.clone(), ..proposal.clone() };
        match params.action {
            Recheck::Check => {
                match self.inner.workspace.reconcile(&rebound).await? {
                    Reconciliation::Happened(receipt) => {
                        self.inner
                            .store
                            .settle_proposal(
                                &proposal.id,
                                ProposalStatus::OutcomeUnknown,
                                ProposalStatus::Succeeded,
                                Some(&receipt),
                                None,
                                None,
                            )
                            .await?;
                    }
                    Reconciliation::NotFound => {
                        // Only over the reason this check read: a retry that settled meanwhile
                        // keeps its own (newer) one.
                        let note = noted(proposal.error.as_deref(), NOT_FOUND_NOTE);
                        self.inner.store.note_unknown_proposal(&proposal.id, proposal.error.as_deref(), &note).await?;
                    }
                    Reconciliation::Unsure(unsure) => {
                        let note = noted(proposal.error.as_deref(), &format!(" — {unsure}."));
                        self.inner.store.note_unknown_proposal(&proposal.id, proposal.error.as_deref(), &note).await?;
                    }
                }
                Ok(self.row(&proposal.id).await?.view())
            }
            Recheck::Retry => {
                let executor = self.inner.identity.as_str();
                if let Reclaim::Refused(then) = self.inner.store.reclaim_unknown_proposal(&proposal.id, &connection, executor).await? {
                    // The status when the claim failed, not after: another retry may have taken
                    // it and settled it back to outcome_unknown in between.
                    if then != ProposalStatus::OutcomeUnknown {
                        // Another check or retry has it, or settled it, meanwhile.
                        return Ok(self.row(&proposal.id).await?.view());
                    }
                    return Err(CoreError::Conflict(
                        "This can no longer be retried: its task was cancelled or has since prepared a newer one like it, \
                         or the account is no longer connected. Check whether it happened instead, or ask for it anew."
                            .into(),
                    ));
                }
                // Claimed: no other retry acts or looks until this one settles.
                match self.inner.workspace.reconcile(&rebound).await {
                    Ok(Reconciliation::Happened(receipt)) => {
                        self.inner
                            .store
                            .settle_proposal(
                                &proposal.id,
                                ProposalStatus::Executing,
                                ProposalStatus::Succeeded,
                                Some(&receipt),
                                None,
                                Some(executor),
                            )
                            .await?;
                        self.release(&proposal).await?;
                        Ok(self.row(&proposal.id).await?.view())
                    }
                    Ok(Reconciliation::NotFound) => self.carry_out(&rebound, executor, Attempt::Retry).await,
                    Ok(Reconciliation::Unsure(unsure)) => {
                        // Not found, but not looked for everywhere: nothing is done again; the
                        // card says so, plainly.
                        let note = noted(proposal.error.as_deref(), &format!(" — {unsure}."));
                        self.inner
                            .store
                            .settle_proposal(
                                &proposal.id,
                                ProposalStatus::Executing,
                                ProposalStatus::OutcomeUnknown,
                                None,
                                Some(&note),
                                Some(executor),
                            )
                            .await?;
                        Err(CoreError::Conflict(format!("Not sent again. {unsure}.")))
                    }
                    Err(err) => {
                        // Nothing was done again: back to unknown, for another try.
                        self.inner
                            .store
                            .settle_proposal(
                                &proposal.id,
                                ProposalStatus::Executing,
                                ProposalStatus::OutcomeUnknown,
                                None,
                                None,
                                Some(executor),
                            )
                            .await?;
                        Err(err)
                    }
                }
            }
        }
    }

    async fn release(&self, proposal: &ProposalRow) -> Result<()> {
        if let Some(task_id) = &proposal.task_id {
            self.inner.tasks.release_approval(task_id, &proposal.id).await?;
        }
        Ok(())
    }

    async fn row(&self, proposal_id: &str) -> Result<ProposalRow> {
        self.inner.store.get_proposal(proposal_id).await?.ok_or_else(|| CoreError::NotFound(format!("There is no proposal {proposal_id}.")))
    }
}

/// The meta key of the owner's undo window, in whole seconds.
pub const UNDO_WINDOW_SETTING: &str = "undo_window_seconds";

/// What the card says of an undo window a stop cut short.
const LEFT_UNSENT: &str = "Hearth stopped before this left, so nothing was sent or changed. Approve it again to send it, or deny it.";

/// What the card says when Undo was pressed in time.
const UNDONE: &str = "Undone by you before it left. Nothing was sent or changed.";

/// What the card says when an undo window ended and the action could no longer be carried out.
const NOT_LEFT: &str = "Not sent: by the end of the undo window its task had stopped or the account in use had changed. \
                        Nothing was sent or changed; ask for it again if you still want it.";

/// What the gate tells the owner when a check did not find the effect.
const NOT_FOUND_NOTE: &str = " — Hearth looked and did not find it. That is not proof it did not happen (a fresh send can take a \
                              moment to show); if you are sure, retry it.";

/// `error` (why the outcome is unknown) with what a check found, in place of what an earlier
/// check added.
fn noted(error: Option<&str>, note: &str) -> String {
    let why = error.map(|e| e.split(" — Hearth").next().unwrap_or(e).trim_end()).unwrap_or_default();
    if why.is_empty() { note.trim_start_matches(" — ").to_owned() } else { format!("{why}{note}") }
}

/// A first execution, or the owner's retry of one whose outcome is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attempt {
    /// From an approval.
    First,
    /// From `recheck`, after the effect was not found.
    Retry,
}

/// The same account of the same provider (its connection may be newer: every sign-in mints one).
fn same_account(a: &Connection, b: &Connection) -> bool {
    a.account == b.account
        && (a.id == LOCAL_CONNECTION_ID) == (b.id == LOCAL_CONNECTION_ID)
        && (a.id == web::BROWSER_CONNECTION) == (b.id == web::BROWSER_CONNECTION)
}

/// Who carries out proposals of a kind. No wildcard: a new kind must be decided here.
enum Carrier {
    /// The owner's workspace (mail, calendar).
    Workspace,
    /// The agent's browser.
    Browser,
    /// Hearth's own tool path (a held call).
    Agent,
}

const fn carrier(kind: ProposalKind) -> Carrier {
    match kind {
        ProposalKind::EmailSend | ProposalKind::CalendarCreate | ProposalKind::CalendarUpdate | ProposalKind::CalendarDelete => {
            Carrier::Workspace
        }
        ProposalKind::WebSubmit => Carrier::Browser,
        ProposalKind::HeldCall => Carrier::Agent,
    }
}

/// The connection every held call acts through.
fn held_connection() -> Connection {
    Connection { id: HELD_CONNECTION.to_owned(), account: "Hearth on this device".to_owned() }
}

fn changed_request(stored: &ProposalRow) -> CoreError {
    CoreError::Conflict(format!(
        "A different draft was already prepared for this request (proposal {}). A changed draft needs a new \
         review: prepare it as a new request.",
        stored.id
    ))
}

/// The power to prepare a proposal for the owner's review — the only power over approvals a
/// tool holds. It cannot decide, and it cannot reach the workspace's executor.
#[derive(Clone, Debug)]
pub struct Proposer {
    gate: ApprovalGate,
}

impl Proposer {
    /// Stores `draft` for review under `key`: fenced to the task's lease when `fence` is
    /// given, recording `origin` and the outside content the agent had read (`sources`) for
    /// the card.
    pub async fn prepare(
        &self,
        key: &str,
        fence: Option<(&str, &str)>,
        chat_run: Option<&str>,
        origin: ProposalOrigin,
        sources: Vec<OutsideSource>,
        draft: ProposalDraft,
    ) -> Result<ProposalRow> {
        self.gate.prepare(key, fence, chat_run, origin, sources, draft, None).await
    }

    /// Stores a task's `draft` under `key`, fenced to the run's lease: like
    /// [`Proposer::prepare`], except that a standing order of the task that covers the draft
    /// approves it for `operation` (the key's scope and id), checked and counted by the gate —
    /// never by the caller, which can only name the operation it is.
    pub async fn prepare_for_task(
        &self,
        key: &str,
        fence: (&str, &str),
        operation: (&str, &str),
        origin: ProposalOrigin,
        sources: Vec<OutsideSource>,
        draft: ProposalDraft,
    ) -> Result<ProposalRow> {
        // The use is counted for the operation the proposal is stored under, and no other.
        if key != format!("{}:{}", operation.0, operation.1) || operation.0 != format!("task:{}", fence.0) {
            return Err(CoreError::InvalidInput(format!("The proposal key {key:?} is not this task's operation.")));
        }
        self.gate.prepare(key, Some(fence), None, origin, sources, draft, Some(operation)).await
    }

    /// A proposal as it is now (to tell a later run how an earlier one was decided).
    pub async fn current(&self, proposal_id: &str) -> Result<ProposalRow> {
        self.gate.expire_due().await?;
        self.gate.row(proposal_id).await
    }
}
