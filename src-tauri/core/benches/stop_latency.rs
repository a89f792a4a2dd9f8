//! Invariant 14 of the controls: how fast Pause reaches an effect in flight. Each run starts
//! a task whose effect (inside the journal, as every tool effect is) waits on its token; the
//! bench presses Pause and measures the time from the control call to (a) the effect seeing
//! its cancellation and (b) the run having ended with the effect's row `outcome_unknown` and
//! the task flagged. The times are figures, never asserted (it only checks each run was flagged).
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Instant;

use hearth_core::tasks::{TaskContext, TaskOutcome};
use hearth_core::{Config, Hearth};
use hearth_protocol::ids::TaskId;
use hearth_protocol::tasks::{TaskControl, TaskControlParams, TaskKind, TaskStatus};
use tokio::sync::Notify;

#[path = "support/figure.rs"]
mod figure;
const RUNS: usize = 200;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average before: {}", load.trim());
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(dir.path());
    config.start_workers = false;
    let hearth = Hearth::open(config).await.unwrap();
    let engine = hearth.tasks().clone();
    let started = Arc::new(Notify::new());
    let seen: Arc<Mutex<Option<Instant>>> = Arc::default();
    let (started_in, seen_in) = (started.clone(), seen.clone());
    engine.register(TaskKind::Monitor, move |ctx: TaskContext| {
        let (started, seen) = (started_in.clone(), seen_in.clone());
        async move {
            let _ = ctx
                .test_effect("long", "bench_effect", &serde_json::json!({}), |token| async move {
                    started.notify_one();
                    token.cancelled().await;
                    *seen.lock().unwrap() = Some(Instant::now());
                    Ok(serde_json::json!({}))
                })
                .await;
            TaskOutcome::Stopped
        }
    });
    let (mut to_effect, mut to_settled) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
    for n in 0..RUNS {
        let key = format!("stop-{n}");
        let input = serde_json::json!({});
        let task = engine
            .create(hearth_core::store::tasks::NewTask {
                idempotency_key: &key,
                kind: TaskKind::Monitor,
                title: &key,
                input: &input,
                thread_id: None,
            })
            .await
            .unwrap();
        let mut changes = engine.subscribe();
        engine.tick().await.unwrap();
        started.notified().await;
        let params = TaskControlParams {
            task_id: TaskId::trusted(task.id.as_str()),
            expected_status: TaskStatus::Running,
            expected_attempts: 1,
            control: TaskControl::Pause,
        };
        let pressed = Instant::now();
        hearth.task_control(&params).await.unwrap();
        while engine.running() > 0 {
            let _ = changes.recv().await;
        }
        let settled = pressed.elapsed();
        let effect = seen.lock().unwrap().take().expect("the effect saw its cancellation") - pressed;
        let after = hearth.store().get_task(&task.id).await.unwrap().unwrap();
        assert!(after.outcome_uncertain, "the stopped effect flagged its task");
        // Paused tasks count against the open-task cap: cancel it.
        let cancel = TaskControlParams {
            task_id: TaskId::trusted(task.id.as_str()),
            expected_status: after.status,
            expected_attempts: after.attempts,
            control: TaskControl::Cancel,
        };
        hearth.task_control(&cancel).await.unwrap();
        to_effect.push(effect);
        to_settled.push(settled);
    }
    for (what, mut figures) in [("Pause → effect cancelled", to_effect), ("Pause → run ended, row outcome_unknown", to_settled)] {
        figures.sort();
        let at = |q: f64| figures[((figures.len() as f64 * q) as usize).min(figures.len() - 1)];
        println!("{what}, {RUNS} runs: median {:?}, p95 {:?}, max {:?}", at(0.5), at(0.95), figures[figures.len() - 1]);
        figure::figure(
            &format!("task Stop: {what}, median"),
            &format!("{:.2} ms (p95 {:.2})", at(0.5).as_secs_f64() * 1e3, at(0.95).as_secs_f64() * 1e3),
            "none (no peer publishes it)",
            "no target (reported)",
        );
    }
}
