//! Opening a Hearth on a temporary folder and collecting run streams.

use std::time::Duration;

use hearth_core::tasks::{TaskContext, TaskOutcome};
use hearth_core::tools::{RunOutcome, ToolCall, run_serially};
use hearth_core::{Config, Hearth, RunEvents};
use hearth_protocol::agui::Event;
use hearth_protocol::approvals::ProposalView;
use hearth_protocol::ids::ThreadId;
use hearth_protocol::ipc::RunStartParams;
use hearth_protocol::tasks::{TaskKind, TaskStatus};
use serde_json::json;

pub struct TestHearth {
    pub hearth: Hearth,
    pub dir: tempfile::TempDir,
}

/// A Hearth with no pacing, so tests run as fast as the machine allows.
pub async fn open() -> TestHearth {
    let dir = tempfile::tempdir().unwrap();
    let hearth = Hearth::open(fast_config(dir.path())).await.unwrap();
    TestHearth { hearth, dir }
}

/// No pacing, and no background worker: tests drive `TaskEngine::tick` themselves.
pub fn fast_config(dir: &std::path::Path) -> Config {
    let mut config = Config::new(dir);
    config.sample_chunk_delay = Duration::ZERO;
    config.sample_slow_step = Duration::ZERO;
    config.start_workers = false;
    // Approved sends leave at once; the undo window's own tests choose one.
    config.undo_window = Duration::ZERO;
    config
}

pub async fn start(hearth: &Hearth, thread_id: Option<&str>, text: &str) -> (String, String, RunEvents) {
    let params = RunStartParams { thread_id: thread_id.map(|id| ThreadId::parse(id).unwrap()), text: text.to_owned() };
    let (started, events) = hearth.start_run(params).await.unwrap();
    (started.thread_id.into_string(), started.run_id.into_string(), events)
}

pub async fn collect(mut events: RunEvents) -> Vec<Event> {
    let mut all = Vec::new();
    while let Some(event) = events.recv().await {
        all.push(event);
    }
    all
}

/// Waits until the run registry is empty (the driver recorded the run's end).
pub async fn settled(hearth: &Hearth) {
    while hearth.active_runs() > 0 {
        tokio::task::yield_now().await;
    }
}

pub fn text_of(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TextMessageContent(c) => Some(c.delta.as_str()),
            _ => None,
        })
        .collect()
}

/// Waits until the engine has no run in flight (each run's end is broadcast as a change).
pub async fn engine_idle(engine: &hearth_core::tasks::TaskEngine, changes: &mut tokio::sync::broadcast::Receiver<String>) {
    while engine.running() > 0 {
        let _ = changes.recv().await;
    }
}

/// A task input that tells the test handler how to end.
pub fn new_task<'a>(key: &'a str, input: &'a serde_json::Value) -> hearth_core::store::tasks::NewTask<'a> {
    hearth_core::store::tasks::NewTask {
        idempotency_key: key,
        kind: hearth_protocol::tasks::TaskKind::Monitor,
        title: key,
        input,
        thread_id: None,
    }
}

/// A Monitor task whose one run calls prepare_email; it ends waiting for approval.
pub async fn email_awaiting_review(t: &TestHearth) -> (String, ProposalView) {
    email_awaiting_review_in(&t.hearth).await
}

/// [`email_awaiting_review`] in any open Hearth (one the test closes itself, say).
pub async fn email_awaiting_review_in(hearth: &Hearth) -> (String, ProposalView) {
    let hearth = hearth.clone();
    let engine = hearth.tasks().clone();
    let tool_hearth = hearth.clone();
    engine.register(TaskKind::Monitor, move |ctx: TaskContext| {
        let tools = tool_hearth.toolbox().for_task(ctx);
        async move {
            let args = json!({
                "to": ["Ms. Alvarez <alvarez@Riverside-School.example>"],
                "subject": "Re: Community visit",
                "body": "Hello,\n\nThe form is attached.",
            });
            let calls = [ToolCall { id: "call-1".into(), name: "prepare_email".into(), arguments: args.to_string() }];
            let outputs = run_serially(&tools, &calls, 0).await;
            match outputs.into_iter().find_map(|(_, o)| o.outcome) {
                Some(RunOutcome::WaitingApproval(id)) => TaskOutcome::WaitingApproval(id),
                other => TaskOutcome::Failed(format!("prepare_email did not wait for approval: {other:?}")),
            }
        }
    });
    let input = json!({});
    let task = engine.create(new_task("email", &input)).await.unwrap();
    let mut changes = engine.subscribe();
    assert_eq!(engine.tick().await.unwrap(), 1, "the email task was not due");
    engine_idle(&engine, &mut changes).await;
    let task = hearth.store().get_task(&task.id).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::WaitingApproval, "{:?}", task.error);
    // Read the row directly: `approval_get` would already sweep an expired proposal.
    let proposal = hearth.store().get_proposal(task.action_id.as_deref().unwrap()).await.unwrap().unwrap().view();
    (task.id, proposal)
}

/// A bound for awaits that must finish: a test fails rather than hangs. Never a synchronisation.
pub async fn guarded<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), future).await.expect("the test's guard ran out: something hangs")
}
