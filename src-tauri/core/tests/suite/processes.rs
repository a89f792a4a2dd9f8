//! Crashes and races across real processes: a worker SIGKILLed mid-run, and two workers
//! claiming from one database. The worker is `examples/task_worker.rs`.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use hearth_core::Hearth;
use hearth_core::tasks::{INTERRUPTED_REASON, TaskContext, TaskOutcome};
use hearth_protocol::ids::TaskId;
use hearth_protocol::tasks::{TaskControl, TaskControlParams, TaskKind, TaskStatus};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::effects::Effects;
use super::support::{engine_idle, fast_config, new_task};

fn worker_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().and_then(Path::parent).unwrap().join("examples").join("task_worker");
    assert!(path.is_file(), "{} is missing; `cargo test` builds it (cargo build --examples -p hearth-core)", path.display());
    path
}

pub fn spawn_worker(dir: &Path, mode: &str) -> Child {
    Command::new(worker_binary())
        .arg(dir.join("data"))
        .arg(dir.join("effects.db"))
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

/// Waits for the worker to say its effect happened, then SIGKILLs it.
async fn kill_after_effect(mut child: Child) {
    let stdout = child.stdout.take().unwrap();
    let line = BufReader::new(stdout).lines().next_line().await.unwrap();
    assert_eq!(line.as_deref(), Some("EFFECT_DONE"), "the worker did not reach its effect");
    child.start_kill().unwrap();
    let status = child.wait().await.unwrap();
    assert!(!status.success(), "the worker was killed, not finished");
}

/// The same effect the worker performs, for the parent's engine after restart.
fn resend_handler(
    effects: Effects,
) -> impl Fn(TaskContext) -> std::pin::Pin<Box<dyn std::future::Future<Output = TaskOutcome> + Send>> + Send + Sync + 'static {
    move |ctx: TaskContext| {
        let effects = effects.clone();
        Box::pin(async move {
            let action = json!({ "to": "sam@example.com", "body": "hello" });
            let receipt = ctx
                .test_effect("send-1", "test_send", &action, |_| async move {
                    effects.record("send-1", "hello").await;
                    Ok(json!({ "sent": true }))
                })
                .await;
            match receipt {
                Ok(r) => TaskOutcome::Succeeded(format!("replayed={}", r.replayed)),
                Err(e) => TaskOutcome::Failed(e.to_string()),
            }
        })
    }
}

async fn prepare(dir: &Path) -> String {
    let hearth = Hearth::open(fast_config(&dir.join("data"))).await.unwrap();
    let input = json!({});
    let task = hearth.tasks().create(new_task("crash-me", &input)).await.unwrap();
    hearth.store().close().await;
    task.id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_after_the_effect_interrupts_and_retry_does_not_repeat_it() {
    let dir = tempfile::tempdir().unwrap();
    let task_id = prepare(dir.path()).await;
    kill_after_effect(spawn_worker(dir.path(), "after-effect")).await;

    let effects = Effects::open(&dir.path().join("effects.db")).await;
    assert_eq!(effects.count().await, 1);
    let hearth = Hearth::open(fast_config(&dir.path().join("data"))).await.unwrap();
    let engine = hearth.tasks();
    engine.register(TaskKind::Monitor, resend_handler(effects.clone()));
    let detail = hearth.task_get(&task_id).await.unwrap();
    assert_eq!(detail.task.status, TaskStatus::Interrupted);
    assert_eq!(detail.task.error.as_deref(), Some(INTERRUPTED_REASON));
    assert!(!detail.task.outcome_uncertain, "the effect had settled before the kill");
    let first_run = detail.runs[0].clone();
    assert_eq!(first_run.status, hearth_protocol::tasks::TaskRunStatus::Interrupted);

    // No automatic replay, however often the worker looks.
    for _ in 0..3 {
        assert_eq!(engine.tick().await.unwrap(), 0);
    }
    assert_eq!(effects.count().await, 1);

    let retry = TaskControlParams {
        task_id: TaskId::trusted(task_id.as_str()),
        expected_status: TaskStatus::Interrupted,
        expected_attempts: 1,
        control: TaskControl::Retry { acknowledge_uncertain: false },
    };
    hearth.task_control(&retry).await.unwrap();
    let mut changes = engine.subscribe();
    assert_eq!(engine.tick().await.unwrap(), 1);
    engine_idle(engine, &mut changes).await;
    let detail = hearth.task_get(&task_id).await.unwrap();
    assert_eq!(detail.task.status, TaskStatus::Succeeded);
    assert_eq!(detail.task.result.as_deref(), Some("replayed=true"), "the journal returned the stored receipt");
    assert_eq!(detail.runs.len(), 2);
    assert_ne!(detail.runs[1].id, first_run.id, "a new run");
    let leases: Vec<String> = sqlx::query_scalar("SELECT lease_id FROM task_runs WHERE task_id = ?1 ORDER BY attempt")
        .bind(&task_id)
        .fetch_all(&sqlite(dir.path()).await)
        .await
        .unwrap();
    assert_eq!(leases.len(), 2);
    assert_ne!(leases[0], leases[1], "a new lease");
    assert_eq!(effects.count().await, 1, "the effect happened exactly once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_the_effect_leaves_its_outcome_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let task_id = prepare(dir.path()).await;
    kill_after_effect(spawn_worker(dir.path(), "during-effect")).await;

    let effects = Effects::open(&dir.path().join("effects.db")).await;
    let hearth = Hearth::open(fast_config(&dir.path().join("data"))).await.unwrap();
    hearth.tasks().register(TaskKind::Monitor, resend_handler(effects.clone()));
    let task = hearth.store().get_task(&task_id).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::Interrupted);
    assert!(task.outcome_uncertain);
    let scope = format!("task:{task_id}");
    let op = hearth.store().get_operation(hearth_core::store::journal::OpKey { scope: &scope, op_id: "send-1" }).await.unwrap().unwrap();
    assert_eq!(op.status, hearth_core::store::journal::OpStatus::OutcomeUnknown);

    let retry = TaskControlParams {
        task_id: TaskId::trusted(task_id.as_str()),
        expected_status: TaskStatus::Interrupted,
        expected_attempts: 1,
        control: TaskControl::Retry { acknowledge_uncertain: false },
    };
    assert!(hearth.task_control(&retry).await.is_err(), "Retry waits for the owner's review");
    assert_eq!(hearth.tasks().tick().await.unwrap(), 0);
    assert_eq!(effects.count().await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_claim_two_hundred_tasks_each_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut total = 0;
    // Two rounds of 100: the cap on unfinished tasks is 100.
    for round in 0..2 {
        let hearth = Hearth::open(fast_config(&data)).await.unwrap();
        let input = json!({});
        for i in 0..100 {
            hearth.tasks().create(new_task(&format!("race-{round}-{i}"), &input)).await.unwrap();
        }
        hearth.store().close().await;
        total += 100;
        let (a, b) = (spawn_worker(dir.path(), "drain"), spawn_worker(dir.path(), "drain"));
        let (a, b) = tokio::join!(a.wait_with_output(), b.wait_with_output());
        assert!(a.unwrap().status.success() && b.unwrap().status.success(), "a worker failed");
    }
    let db = sqlite(dir.path()).await;
    let tasks: i64 =
        sqlx::query_scalar("SELECT count(*) FROM tasks WHERE status = 'succeeded' AND attempts = 1").fetch_one(&db).await.unwrap();
    assert_eq!(tasks, total);
    let runs: i64 = sqlx::query_scalar("SELECT count(*) FROM task_runs").fetch_one(&db).await.unwrap();
    // With every task at attempts = 1 and one run row per task, no task was claimed twice
    // (a second claim would have counted a second attempt and opened a second run).
    assert_eq!(runs, total, "each task was claimed exactly once");
}

async fn sqlite(dir: &Path) -> sqlx::SqlitePool {
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(dir.join("data").join("hearth.db"));
    // No idle reaping or lifetime limit, so no sqlx maintenance task (see `pool_options` in
    // core/src/store/open.rs: sqlx#3645 wedged this very pool).
    sqlx::sqlite::SqlitePoolOptions::new().max_connections(1).idle_timeout(None).max_lifetime(None).connect_with(options).await.unwrap()
}
