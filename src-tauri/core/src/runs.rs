//! The run driver: starts agent runs, persists their events, and makes Stop reach them.
//!
//! Whatever the agent does, the stream the UI sees is well-formed AG-UI: events are
//! checked by the verifier as they pass; on Stop the driver closes what is open and ends
//! with `RUN_FINISHED` (cancelled); a stream that ends early or breaks the rules ends with
//! `RUN_ERROR`. Every event is stored before it is sent, so a reload shows what was seen.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures::StreamExt;
use hearth_protocol::agui::verify::Verifier;
use hearth_protocol::agui::{Event, RunAgentInput, RunErrorEvent, RunFinishedEvent, RunStartedEvent};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::store::failures::NewFailure;
use crate::store::threads::{RunEnd, RunOrigin};
use crate::store::{Store, now_ms};
use hearth_protocol::failures::FailureKind;

/// The receiving end of one run's events.
pub type RunEvents = mpsc::Receiver<Event>;

/// How many events may wait for a slow reader before the agent is held back.
const RUN_CHANNEL_CAPACITY: usize = 256;

#[derive(Debug)]
struct ActiveRun {
    thread_id: String,
    origin: RunOrigin,
    cancel: CancellationToken,
}

/// The runs in flight, by run id.
#[derive(Debug, Clone, Default)]
pub struct RunRegistry {
    active: Arc<Mutex<HashMap<String, ActiveRun>>>,
}

impl RunRegistry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, ActiveRun>> {
        // A panic while holding this lock leaves the map consistent (single inserts/removes).
        self.active.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a run unless its thread already has one in flight.
    fn try_insert(&self, run_id: &str, thread_id: &str, origin: RunOrigin, cancel: CancellationToken) -> bool {
        let mut active = self.lock();
        if active.values().any(|run| run.thread_id == thread_id) {
            return false;
        }
        active.insert(run_id.to_owned(), ActiveRun { thread_id: thread_id.to_owned(), origin, cancel });
        true
    }

    /// Whether a run of `thread_id` is in flight (its driver has not finished: it may still be
    /// recording its end or marking its effects in flight uncertain).
    pub fn has_thread(&self, thread_id: &str) -> bool {
        self.lock().values().any(|run| run.thread_id == thread_id)
    }

    /// Who started a run in flight (`None` when it is not running).
    pub fn origin(&self, run_id: &str) -> Option<RunOrigin> {
        self.lock().get(run_id).map(|run| run.origin)
    }

    fn remove(&self, run_id: &str) {
        self.lock().remove(run_id);
    }

    /// Fires the run's cancellation. `false` if it is not running (Stop is idempotent).
    pub fn cancel(&self, run_id: &str) -> bool {
        match self.lock().get(run_id) {
            Some(run) => {
                run.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Cancels every run in flight that `origin` started; returns how many.
    pub fn cancel_from(&self, origin: RunOrigin) -> usize {
        let active = self.lock();
        let mut cancelled = 0;
        for run in active.values().filter(|run| run.origin == origin) {
            run.cancel.cancel();
            cancelled += 1;
        }
        cancelled
    }

    /// Cancels every run (graceful shutdown).
    pub fn cancel_all(&self) {
        for run in self.lock().values() {
            run.cancel.cancel();
        }
    }

    /// How many runs are in flight.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no run is in flight.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Starts `agent` on `input` and returns its events. The thread and run rows must exist.
/// `input.messages[new_from..]` are the messages the thread's log does not hold yet; they are
/// stored with the run's RUN_STARTED.
///
/// Returns `None` when the thread already has a run in flight.
pub(crate) fn spawn_run(
    registry: &RunRegistry,
    store: Store,
    agent: Arc<dyn Agent>,
    input: RunAgentInput,
    new_from: usize,
    origin: RunOrigin,
) -> Option<RunEvents> {
    let cancel = CancellationToken::new();
    if !registry.try_insert(&input.run_id, &input.thread_id, origin, cancel.clone()) {
        return None;
    }
    let (tx, rx) = mpsc::channel(RUN_CHANNEL_CAPACITY);
    let registry = registry.clone();
    tokio::spawn(async move {
        let run_id = input.run_id.clone();
        let scope = format!("thread:{}", input.thread_id);
        let mut driver = Driver { store, tx, cancel, verifier: Verifier::new(), input, new_from };
        let end = driver.drive(agent).await;
        // However the run ended (finished, stopped, a stream that broke the rules), its agent
        // may still be working in its own task: its Stop fires now, so the journal admits no
        // effect and the dispatch no proposal of this run after its end.
        driver.cancel.cancel();
        if let Err(err) = driver.store.end_run(&run_id, end).await {
            tracing::error!(run_id, error = %err, "could not record the end of a run");
        }
        // An effect the run's agent still had `dispatching` when the run ended (its future was
        // dropped, the client went away) may or may not have happened.
        match driver.store.strand_claimed_operations(&scope, &run_id).await {
            Ok(0) => {}
            Ok(stranded) => tracing::warn!(run_id, stranded, "a chat run ended with effects in flight; they need review"),
            Err(err) => tracing::error!(run_id, error = %err, "could not mark a chat run's in-flight effects uncertain"),
        }
        registry.remove(&run_id);
    });
    Some(rx)
}

struct Driver {
    store: Store,
    tx: mpsc::Sender<Event>,
    cancel: CancellationToken,
    verifier: Verifier,
    input: RunAgentInput,
    new_from: usize,
}

impl Driver {
    async fn drive(&mut self, agent: Arc<dyn Agent>) -> RunEnd {
        let mut events = agent.run(self.input.clone(), self.cancel.clone());
        loop {
            let next = tokio::select! {
                biased;
                () = self.cancel.cancelled() => break,
                // Nobody is listening any more (the window closed): stop now, not at the next event.
                () = self.tx.closed() => {
                    self.cancel.cancel();
                    break;
                }
                next = events.next() => next,
            };
            let Some(mut event) = next else {
                drop(events);
                return self.fail("The agent stopped without finishing its reply. Try again.").await;
            };
            if let Event::RunStarted(started) = &mut event {
                // The stored log must show what the owner asked, so replay renders it — only
                // the messages the log does not hold yet.
                if started.input.is_none() {
                    let mut input = self.input.clone();
                    let from = self.new_from.min(input.messages.len());
                    input.messages.drain(..from);
                    started.input = Some(Box::new(input));
                }
            }
            if let Err(err) = self.verifier.check(&event) {
                drop(events);
                return self.fail(&format!("The agent sent an invalid event stream ({err}). The reply was stopped.")).await;
            }
            if let Event::RunError(error) = &mut event {
                self.mark_failure(error).await;
            }
            let end = match &event {
                Event::RunFinished(_) => Some(RunEnd::Finished),
                Event::RunError(_) => Some(RunEnd::Failed),
                _ => None,
            };
            self.emit(event).await;
            if let Some(end) = end {
                return end;
            }
        }
        // Stop: drop the agent's stream first so nothing more is produced, then close.
        drop(events);
        self.close_open().await;
        let finished = RunFinishedEvent::cancelled(self.input.thread_id.clone(), self.input.run_id.clone());
        self.emit_unchecked(Event::RunFinished(finished)).await;
        RunEnd::Cancelled
    }

    /// Ends the run with RUN_ERROR (allowed with open messages; nothing follows it).
    async fn fail(&mut self, message: &str) -> RunEnd {
        self.ensure_started().await;
        let mut error = RunErrorEvent { message: message.to_owned(), ..Default::default() };
        self.mark_failure(&mut error).await;
        self.emit_unchecked(Event::RunError(error)).await;
        RunEnd::Failed
    }

    /// Gives the failure its id: recorded with the message the owner sees, and said at the end
    /// of that message, so the owner can quote it and Activity can open the run's timeline.
    async fn mark_failure(&mut self, error: &mut RunErrorEvent) {
        let id = crate::failures::failure_id_of(&self.input.run_id);
        let failure = NewFailure {
            id: &id,
            run_id: &self.input.run_id,
            kind: FailureKind::Chat,
            thread_id: Some(&self.input.thread_id),
            task_id: None,
            message: &error.message,
        };
        if let Err(err) = self.store.record_failure(&failure).await {
            tracing::error!(run_id = %self.input.run_id, error = %err, "could not record a run's failure");
        }
        error.message = crate::failures::with_failure_id(&error.message, &id);
    }

    /// Emits RUN_STARTED if the agent never did, so the stream is well-formed.
    async fn ensure_started(&mut self) {
        if !self.verifier.is_run_active() {
            let started = RunStartedEvent {
                thread_id: self.input.thread_id.clone(),
                run_id: self.input.run_id.clone(),
                input: Some(Box::new(self.input.clone())),
                ..Default::default()
            };
            self.emit_unchecked(Event::RunStarted(started)).await;
        }
    }

    /// Closes everything open (innermost first) so `RUN_FINISHED` is allowed.
    async fn close_open(&mut self) {
        self.ensure_started().await;
        for event in self.verifier.closing_events() {
            self.emit_unchecked(event).await;
        }
    }

    /// Records an event the driver made itself (the verifier still tracks it).
    async fn emit_unchecked(&mut self, event: Event) {
        if let Err(err) = self.verifier.check(&event) {
            tracing::error!(error = %err, "the run driver produced an event out of order");
        }
        self.emit(event).await;
    }

    /// Stamps, stores, then sends. A reader that went away cancels the run.
    async fn emit(&mut self, mut event: Event) {
        stamp(&mut event);
        if let Err(err) = self.store.append_event(&self.input.thread_id, &self.input.run_id, &event).await {
            tracing::error!(run_id = %self.input.run_id, error = %err, "could not store a run event");
        }
        if self.tx.send(event).await.is_err() {
            self.cancel.cancel();
        }
    }
}

/// Sets the event's timestamp when the agent left it empty.
fn stamp(event: &mut Event) {
    let now = now_ms();
    let slot = event.timestamp_mut();
    if slot.is_none() {
        *slot = Some(now);
    }
}
