//! The worker: claims due tasks under leases, runs their handlers, renews and fences the
//! leases, interrupts what a lost lease or a dead process left, and applies the owner's
//! controls.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use hearth_protocol::tasks::{TaskControl, TaskControlParams, TaskKind, TaskStatus};
use tokio::sync::{Notify, broadcast};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::INTERRUPTED_REASON;
use super::context::TaskContext;
use super::handler::{TaskHandler, TaskOutcome};
use crate::error::{CoreError, Result};
use crate::journal::Journal;
use crate::process::{Liveness, ProcessIdentity};
use crate::store::tasks::{Claim, ControlOutcome, NewTask, RunEnding, TaskRow, task_scope};
use crate::store::{Store, now_ms};

/// How the worker paces itself.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Runs at once.
    pub max_running: usize,
    /// How long a lease lasts without renewal.
    pub lease: Duration,
    /// How often a running task's lease is renewed.
    pub renew_every: Duration,
    /// How often the worker looks for due work when nothing wakes it.
    pub poll_every: Duration,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self { max_running: 3, lease: Duration::from_secs(60), renew_every: Duration::from_secs(20), poll_every: Duration::from_secs(1) }
    }
}

/// Says what graceful shutdown leaves behind.
const CLOSED_REASON: &str = "Hearth was closed during this run. Review what it did before retrying.";

#[derive(Debug)]
struct Running {
    lease_id: String,
    cancel: CancellationToken,
}

struct Inner {
    store: Store,
    journal: Journal,
    identity: ProcessIdentity,
    config: EngineConfig,
    handlers: Mutex<HashMap<TaskKind, Arc<dyn TaskHandler>>>,
    running: Mutex<HashMap<String, Running>>,
    last_sweep: Mutex<Option<std::time::Instant>>,
    wake: Notify,
    changes: broadcast::Sender<String>,
    stopping: CancellationToken,
    runs: TaskTracker,
    /// The Stops of approved actions of tasks while they are carried out (a held call the owner
    /// approved runs outside the task's run): by task, then by registration.
    approved: Mutex<HashMap<String, HashMap<u64, CancellationToken>>>,
    next_approved: std::sync::atomic::AtomicU64,
}

/// While alive, a Pause or Cancel of its task fires its Stop. See
/// [`TaskEngine::stop_with_task`].
#[derive(Debug)]
pub struct ApprovedStop {
    engine: TaskEngine,
    task_id: String,
    id: u64,
}

impl Drop for ApprovedStop {
    fn drop(&mut self) {
        let mut approved = lock(&self.engine.inner.approved);
        if let Some(tokens) = approved.get_mut(&self.task_id) {
            tokens.remove(&self.id);
            if tokens.is_empty() {
                approved.remove(&self.task_id);
            }
        }
    }
}

/// The task engine. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct TaskEngine {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for TaskEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskEngine").field("identity", &self.inner.identity).finish_non_exhaustive()
    }
}

impl TaskEngine {
    /// An engine over `store` with no handlers yet.
    pub fn new(store: Store, config: EngineConfig) -> Self {
        let (changes, _) = broadcast::channel(1024);
        // Read once: naming this process reads /proc, and every run, journal mark and chat run
        // carries the name.
        let identity = ProcessIdentity::current();
        Self {
            inner: Arc::new(Inner {
                journal: Journal::new(store.clone(), &identity),
                store,
                identity,
                config,
                handlers: Mutex::new(HashMap::new()),
                running: Mutex::new(HashMap::new()),
                last_sweep: Mutex::new(None),
                wake: Notify::new(),
                changes,
                stopping: CancellationToken::new(),
                runs: TaskTracker::new(),
                approved: Mutex::new(HashMap::new()),
                next_approved: std::sync::atomic::AtomicU64::new(0),
            }),
        }
    }

    /// Sets the handler for `kind`.
    pub fn register(&self, kind: TaskKind, handler: impl TaskHandler) {
        lock(&self.inner.handlers).insert(kind, Arc::new(handler));
    }

    /// This process, as leases, stopping marks and chat runs name it.
    pub fn identity(&self) -> &ProcessIdentity {
        &self.inner.identity
    }

    /// The journal effects go through.
    pub fn journal(&self) -> &Journal {
        &self.inner.journal
    }

    /// Task ids as they change (created, claimed, checkpointed, finished, controlled).
    pub fn subscribe(&self) -> broadcast::Receiver<String> {
        self.inner.changes.subscribe()
    }

    /// How many runs this engine has in flight.
    pub fn running(&self) -> usize {
        lock(&self.inner.running).len()
    }

    /// Creates a task (or returns the one with the same key) and wakes the worker.
    pub async fn create(&self, new: NewTask<'_>) -> Result<TaskRow> {
        let task = self.inner.store.create_task(new).await?;
        self.changed(&task.id);
        self.inner.wake.notify_one();
        Ok(task)
    }

    /// Tasks made elsewhere (a schedule's tick, in its own transaction): tell the watchers
    /// and wake the worker.
    pub fn announce_created(&self, task_ids: &[String]) {
        for id in task_ids {
            self.changed(id);
        }
        if !task_ids.is_empty() {
            self.inner.wake.notify_one();
        }
    }

    /// [`TaskEngine::create`] fenced to a run's (task id, lease id): `None` when that run no
    /// longer holds its task.
    pub async fn create_fenced(&self, new: NewTask<'_>, fence: Option<(&str, &str)>, chat_run: Option<&str>) -> Result<Option<TaskRow>> {
        let Some(task) = self.inner.store.create_task_fenced(new, fence, chat_run).await? else { return Ok(None) };
        self.changed(&task.id);
        self.inner.wake.notify_one();
        Ok(Some(task))
    }

    /// At start-up: tasks whose lease holder died, or whose lease expired, become interrupted.
    pub async fn recover(&self) -> Result<usize> {
        let now = now_ms();
        let mut interrupted = 0;
        for (task_id, lease_id, owner, expires_at) in self.inner.store.running_leases().await? {
            let dead = ProcessIdentity::liveness(&owner) == Liveness::Dead;
            if (dead || expires_at <= now) && self.interrupt(&task_id, &lease_id, INTERRUPTED_REASON).await? {
                interrupted += 1;
            }
        }
        let mut stranded = 0;
        for (scope, op_id, claimant, owner) in self.inner.store.stopped_dispatching_operations().await? {
            let gone = owner.as_deref().is_none_or(|owner| ProcessIdentity::liveness(owner) != Liveness::Alive);
            let key = crate::store::journal::OpKey { scope: &scope, op_id: &op_id };
            let receipt =
                serde_json::json!({ "unknown": "Hearth stopped while this was being performed, so it may or may not have happened." });
            if gone
                && self
                    .inner
                    .store
                    .settle_operation(key, &claimant, crate::store::journal::OpStatus::OutcomeUnknown, Some(&receipt.to_string()))
                    .await?
            {
                stranded += 1;
            }
        }
        if stranded > 0 {
            tracing::warn!(stranded, "operations of stopped tasks were left in flight; they need the owner's review");
        }
        // Stopping marks of processes that are gone (or cannot be told here) will never clear
        // by a report: the owner's review is all that is left.
        for owner in self.inner.store.stopping_marks().await? {
            if ProcessIdentity::liveness(&owner) != Liveness::Alive {
                self.inner.store.clear_stopping_marks(&owner).await?;
            }
        }
        Ok(interrupted)
    }

    /// Interrupts every task whose lease has expired (its holder stopped renewing it).
    pub async fn sweep(&self) -> Result<usize> {
        let now = now_ms();
        *lock(&self.inner.last_sweep) = Some(std::time::Instant::now());
        let mut interrupted = 0;
        for (task_id, lease_id, _, expires_at) in self.inner.store.running_leases().await? {
            if expires_at <= now && self.interrupt(&task_id, &lease_id, INTERRUPTED_REASON).await? {
                interrupted += 1;
            }
        }
        Ok(interrupted)
    }

    /// One pass of the worker: sweep expired leases (at most once per `poll_every`; leases
    /// last far longer), then claim due tasks up to capacity. Returns how many runs it started.
    pub async fn tick(&self) -> Result<usize> {
        if self.inner.stopping.is_cancelled() {
            return Ok(0);
        }
        let sweep_due = lock(&self.inner.last_sweep).is_none_or(|at| at.elapsed() >= self.inner.config.poll_every);
        if sweep_due {
            self.sweep().await?;
        }
        let mut started = 0;
        while self.running() < self.inner.config.max_running && !self.inner.stopping.is_cancelled() {
            let lease_ms = i64::try_from(self.inner.config.lease.as_millis()).unwrap_or(i64::MAX);
            let Some(claim) = self.inner.store.claim_next(self.inner.identity.as_str(), lease_ms).await? else { break };
            self.spawn_run(claim);
            started += 1;
        }
        Ok(started)
    }

    /// Runs the worker loop until [`TaskEngine::shutdown`]: wakes on new work at once and
    /// otherwise every `poll_every`.
    pub fn start(&self) -> tokio::task::JoinHandle<()> {
        let engine = self.clone();
        tokio::spawn(async move {
            loop {
                if let Err(err) = engine.tick().await {
                    tracing::error!(error = %err, "the task worker could not claim work");
                }
                tokio::select! {
                    () = engine.inner.stopping.cancelled() => break,
                    () = engine.inner.wake.notified() => {}
                    () = tokio::time::sleep(engine.inner.config.poll_every) => {}
                }
            }
        })
    }

    /// Applies an owner's control. A running run's cancellation fires at once.
    pub async fn control(&self, params: &TaskControlParams) -> Result<TaskRow> {
        params.validate()?;
        let engine = self.clone();
        let task_id = params.task_id.clone();
        let outcome = self
            .inner
            .store
            .apply_control_then(
                &params.task_id,
                params.expected_status,
                params.expected_attempts,
                &params.control,
                move |lease| engine.cancel_local(&task_id, lease),
                |owner| may_still_report(&self.inner.identity, owner),
            )
            .await?;
        match outcome {
            ControlOutcome::Applied { task, stopped_lease } => {
                // The store denied the task's open proposals and fired the run's Stop inside the
                // transaction; firing again is harmless and covers a run claimed meanwhile.
                if let Some(lease) = stopped_lease {
                    self.cancel_local(&task.id, &lease);
                }
                match params.control {
                    // An approved action still being carried out stops with its task.
                    TaskControl::Pause | TaskControl::Cancel => self.stop_approved(&task.id),
                    TaskControl::Resume | TaskControl::Retry { .. } | TaskControl::Answer { .. } => {}
                }
                self.changed(&task.id);
                if matches!(params.control, TaskControl::Resume | TaskControl::Retry { .. } | TaskControl::Answer { .. }) {
                    self.inner.wake.notify_one();
                }
                Ok(task)
            }
            ControlOutcome::Changed(task) => Err(CoreError::Conflict(format!(
                "This task is {} now; it changed while you were looking. Check it and try again.",
                spoken(task.status)
            ))),
            ControlOutcome::NotAllowed(task) => {
                Err(CoreError::Conflict(format!("You cannot {} a task that is {}.", params.control.name(), spoken(task.status))))
            }
            ControlOutcome::StillStopping(_) => Err(CoreError::NeedsReview(
                "An action of this task is still being stopped. Wait until it reports what it did, then retry.".into(),
            )),
            ControlOutcome::NeedsReview(_) => Err(CoreError::NeedsReview(
                "Hearth stopped while an action of this task was in progress, so it may or may not have happened. \
                 Check what it did, then choose \"Retry after review\"."
                    .into(),
            )),
        }
    }

    /// Binds `cancel` — the Stop of an approved action of `task_id` being carried out — to the
    /// task's own controls: a Pause or Cancel of the task fires it, as it fires a run's Stop.
    /// Registered first and then checked, so a control committed before the registration is
    /// seen by the check and one committed after it by the registration. Held while the action
    /// runs.
    pub async fn stop_with_task(&self, task_id: &str, cancel: &CancellationToken) -> Result<ApprovedStop> {
        let id = self.inner.next_approved.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        lock(&self.inner.approved).entry(task_id.to_owned()).or_default().insert(id, cancel.clone());
        let guard = ApprovedStop { engine: self.clone(), task_id: task_id.to_owned(), id };
        let live = self
            .inner
            .store
            .get_task(task_id)
            .await?
            .is_some_and(|task| matches!(task.status, TaskStatus::Running | TaskStatus::WaitingApproval));
        if !live {
            cancel.cancel();
        }
        Ok(guard)
    }

    fn stop_approved(&self, task_id: &str) {
        if let Some(tokens) = lock(&self.inner.approved).get(task_id) {
            for token in tokens.values() {
                token.cancel();
            }
        }
    }

    /// A task waiting on `proposal_id`, now decided, goes back to the queue so its handler
    /// sees the decision. Does nothing when the task was not waiting on it (yet: a run that
    /// ends waiting on an already-decided proposal is released when it ends).
    pub async fn release_approval(&self, task_id: &str, proposal_id: &str) -> Result<bool> {
        let released = self.inner.store.release_decided_approval(task_id, proposal_id).await?;
        if released {
            self.changed(task_id);
            self.inner.wake.notify_one();
        }
        Ok(released)
    }

    /// Graceful shutdown: stop claiming, cancel every run, let them settle briefly, and mark
    /// whatever still runs here interrupted.
    pub async fn shutdown(&self) {
        self.inner.stopping.cancel();
        let leases: Vec<(String, String)> = {
            let running = lock(&self.inner.running);
            running.iter().map(|(task, run)| (task.clone(), run.lease_id.clone())).collect()
        };
        for run in lock(&self.inner.running).values() {
            run.cancel.cancel();
        }
        self.inner.runs.close();
        if tokio::time::timeout(Duration::from_secs(5), self.inner.runs.wait()).await.is_err() {
            tracing::warn!("task runs did not stop within 5 s of shutdown");
        }
        for (task_id, lease_id) in leases {
            if let Err(err) = self.interrupt(&task_id, &lease_id, CLOSED_REASON).await {
                tracing::error!(task_id, error = %err, "could not mark a task interrupted at shutdown");
            }
        }
    }

    async fn interrupt(&self, task_id: &str, lease_id: &str, reason: &str) -> Result<bool> {
        let done = self.inner.store.interrupt_run(task_id, lease_id, reason).await?;
        if done {
            self.cancel_local(task_id, lease_id);
            self.changed(task_id);
            // A schedule's run or a monitor's look with nothing in doubt is due again.
            self.inner.wake.notify_one();
        }
        Ok(done)
    }

    fn cancel_local(&self, task_id: &str, lease_id: &str) {
        if let Some(run) = lock(&self.inner.running).get(task_id)
            && run.lease_id == lease_id
        {
            run.cancel.cancel();
        }
    }

    fn changed(&self, task_id: &str) {
        let _ = self.inner.changes.send(task_id.to_owned());
    }

    fn spawn_run(&self, claim: Claim) {
        let cancel = self.inner.stopping.child_token();
        lock(&self.inner.running).insert(claim.task.id.clone(), Running { lease_id: claim.lease_id.clone(), cancel: cancel.clone() });
        self.changed(&claim.task.id);
        let handler = lock(&self.inner.handlers).get(&claim.task.kind).cloned();
        let engine = self.clone();
        self.inner.runs.spawn(async move {
            let task_id = claim.task.id.clone();
            let lease_id = claim.lease_id.clone();
            let run_id = claim.run_id.clone();
            let ctx = TaskContext {
                store: engine.inner.store.clone(),
                journal: engine.inner.journal.clone(),
                task: claim.task,
                run_id: claim.run_id,
                lease_id: lease_id.clone(),
                cancel: cancel.clone(),
                changes: engine.inner.changes.clone(),
            };
            let renewal = tokio::spawn(renew(engine.clone(), task_id.clone(), lease_id.clone(), cancel.clone()));
            let outcome = match handler {
                Some(handler) => match tokio::spawn(handler.run(ctx)).await {
                    Ok(outcome) => outcome,
                    Err(err) => TaskOutcome::Failed(format!(
                        "Hearth hit a bug while running this task ({err}). Retry it; if it happens again, report it."
                    )),
                },
                None => TaskOutcome::Failed("Hearth has no handler for this kind of task. Update Hearth.".into()),
            };
            // However the handler ended — its own answer, its time limit, a panic, shutdown —
            // what it started is stopped as Stop stops it: the run's Stop fires, and each effect
            // still running (in the journal's own task, which outlives the handler's future)
            // sees it, ends, and records what it did, before the run's end is recorded. The
            // lease is renewed meanwhile. An effect that never honours its Stop keeps the run
            // here, as it would keep a Stop's "Retry after review" waiting.
            cancel.cancel();
            engine.inner.journal.settled(&run_id).await;
            renewal.abort();
            // Whatever is still `dispatching` now lost its journal task to a bug: it may or may
            // not have happened — uncertain, and the task flagged, before the run's end is
            // recorded.
            match engine.inner.store.strand_claimed_operations(&task_scope(&task_id), &run_id).await {
                Ok(0) => {}
                Ok(stranded) => tracing::warn!(task_id, stranded, "a run ended with effects in flight; they need the owner's review"),
                Err(err) => tracing::error!(task_id, error = %err, "could not mark a run's in-flight effects uncertain"),
            }
            if let Some(mut ending) = ending(outcome) {
                // A failure's message carries its id (recorded once the end is).
                let failure = failed_with_id(&mut ending, &run_id);
                match engine.inner.store.finish_run(&task_id, &lease_id, &ending).await {
                    Ok(true) => {
                        if let Some((id, message)) = &failure {
                            let failure = crate::store::failures::NewFailure {
                                id,
                                run_id: &run_id,
                                kind: hearth_protocol::failures::FailureKind::Task,
                                thread_id: None,
                                task_id: Some(&task_id),
                                message,
                            };
                            if let Err(err) = engine.inner.store.record_failure(&failure).await {
                                tracing::error!(task_id, error = %err, "could not record a task run's failure");
                            }
                        }
                        // The owner may have decided while this run was still ending.
                        if let Some(proposal_id) = ending.action_id.as_deref()
                            && let Err(err) = engine.inner.store.release_decided_approval(&task_id, proposal_id).await
                        {
                            tracing::error!(task_id, error = %err, "could not release a decided approval");
                        }
                    }
                    Ok(false) => tracing::info!(task_id, "a run ended after losing its lease; its result was not recorded"),
                    Err(err) => tracing::error!(task_id, error = %err, "could not record the end of a task run"),
                }
            }
            {
                // A newer run of the same task (paused, resumed, claimed again while this one
                // unwound) owns the entry now: leave it, or Stop could no longer reach it.
                let mut running = lock(&engine.inner.running);
                if running.get(&task_id).is_some_and(|r| r.lease_id == lease_id) {
                    running.remove(&task_id);
                }
            }
            engine.changed(&task_id);
            engine.inner.wake.notify_one();
        });
    }
}

/// Renews the lease every `renew_every` until the run's effects have settled (they may still
/// be stopping after the run's Stop fired); a failed renewal means the lease is gone, so the
/// run is cancelled (it can no longer write anyway).
async fn renew(engine: TaskEngine, task_id: String, lease_id: String, cancel: CancellationToken) {
    let lease_ms = i64::try_from(engine.inner.config.lease.as_millis()).unwrap_or(i64::MAX);
    loop {
        tokio::time::sleep(engine.inner.config.renew_every).await;
        match engine.inner.store.renew_lease(&task_id, &lease_id, lease_ms).await {
            Ok(true) => {}
            Ok(false) => {
                // After a Pause or Cancel the lease is gone by design: nothing to warn about.
                if !cancel.is_cancelled() {
                    tracing::warn!(task_id, "lost a task's lease; stopping its run");
                }
                cancel.cancel();
                return;
            }
            Err(err) => tracing::error!(task_id, error = %err, "could not renew a task's lease"),
        }
    }
}

/// Whether `owner`, which stopped an effect, may still report what it did: this process, a
/// live one, or one whose liveness cannot be told here (the Retry then waits; start-up
/// recovery clears marks of processes that are gone or unknowable).
fn may_still_report(me: &ProcessIdentity, owner: &str) -> bool {
    owner == me.as_str() || ProcessIdentity::liveness(owner) != Liveness::Dead
}

fn ending(outcome: TaskOutcome) -> Option<RunEnding> {
    let base = |status| RunEnding { status, result: None, error: None, question: None, next_run_at: None, action_id: None };
    Some(match outcome {
        TaskOutcome::Succeeded(result) => RunEnding { result: Some(result), ..base(TaskStatus::Succeeded) },
        TaskOutcome::Failed(error) => RunEnding { error: Some(error), ..base(TaskStatus::Failed) },
        TaskOutcome::WaitingInput(question) => RunEnding { question: Some(question), ..base(TaskStatus::WaitingInput) },
        TaskOutcome::WaitingApproval(action) => RunEnding { action_id: Some(action), ..base(TaskStatus::WaitingApproval) },
        TaskOutcome::Scheduled(at) => RunEnding { next_run_at: Some(at), ..base(TaskStatus::Scheduled) },
        TaskOutcome::Interrupted(why) => RunEnding { error: Some(why), ..base(TaskStatus::Interrupted) },
        TaskOutcome::Paused(why) => RunEnding { error: Some(why), ..base(TaskStatus::Paused) },
        TaskOutcome::Stopped => return None,
    })
}

/// For a failed run: its failure id and the message as it was, with the id added to the
/// message the task keeps (what Activity shows).
fn failed_with_id(ending: &mut RunEnding, run_id: &str) -> Option<(hearth_protocol::ids::FailureId, String)> {
    if ending.status != TaskStatus::Failed {
        return None;
    }
    let message = ending.error.take().unwrap_or_default();
    let id = crate::failures::failure_id_of(run_id);
    ending.error = Some(crate::failures::with_failure_id(&message, &id));
    Some((id, message))
}

fn spoken(status: TaskStatus) -> String {
    status.as_str().replace('_', " ")
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every critical section is a single insert/remove/read: a panic cannot leave it torn.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
