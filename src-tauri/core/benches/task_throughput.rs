//! Task engine throughput on one SQLite file: 10,000 no-op tasks through
//! create → claim → checkpoint → finish, against the floor of raw single-row UPDATEs on the
//! same file with the same settings. Prints figures; asserts nothing about time.
//!
//! The machine is shared and a single two-second sample of the floor swings by ±15%, so the
//! bench runs several rounds, each on a fresh file, measuring the floor right before the
//! engine, and reports every round and the median ratio.
//!
//! `cargo bench -p hearth-core --bench task_throughput`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::Path;
use std::time::{Duration, Instant};

use hearth_core::store::tasks::{NewTask, RunEnding};
use hearth_core::tasks::{TaskContext, TaskOutcome};
use hearth_core::{Config, Hearth};
use hearth_protocol::tasks::{TaskKind, TaskStatus};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection};

#[path = "support/figure.rs"]
mod figure;
const TASKS: usize = 10_000;
const BATCH: usize = 100; // the cap on unfinished tasks
const UPDATES: usize = 20_000;
const ROUNDS: usize = 3;
const TRANSITIONS: usize = TASKS * 4;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut engine_ratios = Vec::new();
    let mut floors = Vec::new();
    let mut store_ratios = Vec::new();
    for round in 1..=ROUNDS {
        let dir = tempfile::tempdir().unwrap();
        let hearth = open(dir.path()).await;
        let floor = raw_update_rate(dir.path()).await;
        let engine = engine_rate(&hearth).await;
        let store = store_rate(&hearth).await;
        println!(
            "round {round}: floor {floor:.0} UPDATE/s; engine {engine:.0} transitions/s ({:.0}%); store path {store:.0} transitions/s ({:.0}%)",
            engine / floor * 100.0,
            store / floor * 100.0
        );
        engine_ratios.push(engine / floor);
        floors.push(floor);
        store_ratios.push(store / floor);
    }
    let (engine, store) = (median(&mut engine_ratios), median(&mut store_ratios));
    println!("median over {ROUNDS} rounds: engine / floor = {:.0}%, store path / floor = {:.0}%", engine * 100.0, store * 100.0);
    figure::figure(
        "task engine transitions (create, claim, checkpoint, finish)",
        &format!("{:.0}% of the raw rate through the worker, {:.0}% through the store", engine * 100.0, store * 100.0),
        &format!("raw SQLite single-row UPDATEs, same file and settings: {:.0}/s", median(&mut floors)),
        "no target (reported)",
    );
}

async fn open(dir: &Path) -> Hearth {
    let mut config = Config::new(dir);
    config.start_workers = false;
    let hearth = Hearth::open(config).await.unwrap();
    hearth.tasks().register(TaskKind::Monitor, |ctx: TaskContext| async move {
        match ctx.checkpoint(&serde_json::json!({ "step": 1 })).await {
            Ok(()) => TaskOutcome::Succeeded("ok".into()),
            Err(e) => TaskOutcome::Failed(e.to_string()),
        }
    });
    hearth
}

/// Transitions per second through the worker: batches of 100 created, then claimed,
/// checkpointed by the handler and finished, up to 3 runs at once.
async fn engine_rate(hearth: &Hearth) -> f64 {
    let engine = hearth.tasks().clone();
    let input = serde_json::json!({});
    let mut changes = engine.subscribe();
    let started = Instant::now();
    for batch in 0..TASKS / BATCH {
        for i in 0..BATCH {
            let key = format!("bench-{batch}-{i}");
            engine
                .create(NewTask { idempotency_key: &key, kind: TaskKind::Monitor, title: &key, input: &input, thread_id: None })
                .await
                .unwrap();
        }
        loop {
            let claimed = engine.tick().await.unwrap();
            if claimed == 0 && engine.running() == 0 {
                break;
            }
            if engine.running() > 0 {
                let _ = changes.recv().await;
            }
        }
    }
    let elapsed = started.elapsed();
    let done = hearth.store().list_tasks(i64::MAX).await.unwrap();
    assert_eq!(done.iter().filter(|t| t.status == TaskStatus::Succeeded).count(), TASKS, "every task finished");
    TRANSITIONS as f64 / elapsed.as_secs_f64()
}

/// The same transitions straight through the store, one task at a time: what the SQL costs
/// without the worker's scheduling around it.
async fn store_rate(hearth: &Hearth) -> f64 {
    let store = hearth.store();
    let input = serde_json::json!({});
    let ending = RunEnding {
        status: TaskStatus::Succeeded,
        result: Some("ok".into()),
        error: None,
        question: None,
        next_run_at: None,
        action_id: None,
    };
    let started = Instant::now();
    for i in 0..TASKS {
        let key = format!("direct-{i}");
        store
            .create_task(NewTask { idempotency_key: &key, kind: TaskKind::Monitor, title: &key, input: &input, thread_id: None })
            .await
            .unwrap();
        let claim = store.claim_next("bench", 60_000).await.unwrap().unwrap();
        assert!(store.checkpoint(&claim.task.id, &claim.lease_id, &serde_json::json!({ "step": 1 })).await.unwrap());
        assert!(store.finish_run(&claim.task.id, &claim.lease_id, &ending).await.unwrap());
    }
    TRANSITIONS as f64 / started.elapsed().as_secs_f64()
}

/// Autocommit single-row UPDATEs on a one-row table in the same file, with Hearth's settings.
async fn raw_update_rate(dir: &Path) -> f64 {
    let mut conn = SqliteConnectOptions::new()
        .filename(dir.join("hearth.db"))
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .pragma("wal_autocheckpoint", hearth_core::store::WAL_AUTOCHECKPOINT_PAGES)
        .busy_timeout(Duration::from_secs(5))
        .connect()
        .await
        .unwrap();
    sqlx::query("CREATE TABLE bench_floor (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)").execute(&mut conn).await.unwrap();
    sqlx::query("INSERT INTO bench_floor (id, v) VALUES (1, 0)").execute(&mut conn).await.unwrap();
    let started = Instant::now();
    for i in 0..UPDATES {
        sqlx::query("UPDATE bench_floor SET v = ?1 WHERE id = 1").bind(i as i64).execute(&mut conn).await.unwrap();
    }
    let rate = UPDATES as f64 / started.elapsed().as_secs_f64();
    conn.close().await.unwrap();
    rate
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
