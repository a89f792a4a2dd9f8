//! Task engine throughput on one SQLite file: 10,000 no-op tasks through
//! create → claim → checkpoint → finish, against the floor of raw single-row UPDATEs on the
//! same file with the same settings. Prints figures; asserts nothing about time.
//!
//! `cargo bench -p hearth-core --bench task_throughput`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::{Duration, Instant};

use hearth_core::store::tasks::NewTask;
use hearth_core::tasks::{TaskContext, TaskOutcome};
use hearth_core::{Config, Hearth};
use hearth_protocol::tasks::TaskKind;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection};

const TASKS: usize = 10_000;
const BATCH: usize = 100; // the cap on unfinished tasks
const UPDATES: usize = 20_000;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(dir.path());
    config.start_workers = false;
    let hearth = Hearth::open(config).await.unwrap();
    let engine = hearth.tasks().clone();
    engine.register(TaskKind::Monitor, |ctx: TaskContext| async move {
        match ctx.checkpoint(&serde_json::json!({ "step": 1 })).await {
            Ok(()) => TaskOutcome::Succeeded("ok".into()),
            Err(e) => TaskOutcome::Failed(e.to_string()),
        }
    });

    let input = serde_json::json!({});
    let mut changes = engine.subscribe();
    let started = Instant::now();
    let mut creating = Duration::ZERO;
    for batch in 0..TASKS / BATCH {
        let batch_started = Instant::now();
        for i in 0..BATCH {
            let key = format!("bench-{batch}-{i}");
            engine
                .create(NewTask { idempotency_key: &key, kind: TaskKind::Monitor, title: &key, input: &input, thread_id: None })
                .await
                .unwrap();
        }
        creating += batch_started.elapsed();
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
    let transitions = TASKS * 4;
    let done: i64 = sqlx::query_scalar("SELECT count(*) FROM tasks WHERE status = 'succeeded'")
        .fetch_one(&mut connect(dir.path()).await)
        .await
        .unwrap();
    assert_eq!(done as usize, TASKS, "every task finished");
    let rate = transitions as f64 / elapsed.as_secs_f64();
    println!("task engine: {TASKS} tasks, {transitions} transitions in {elapsed:.2?} = {rate:.0} transitions/s ({:.0} tasks/s)", TASKS as f64 / elapsed.as_secs_f64());
    println!("  of which create: {creating:.2?} ({:.0} µs/task); claim → checkpoint → finish: {:.2?} ({:.0} µs/task)",
        creating.as_secs_f64() * 1e6 / TASKS as f64, elapsed - creating, (elapsed - creating).as_secs_f64() * 1e6 / TASKS as f64);

    // The same transitions straight through the store, one task at a time: what the SQL
    // costs without the worker's scheduling around it.
    let store = hearth.store().clone();
    let started = Instant::now();
    let ending = hearth_core::store::tasks::RunEnding {
        status: hearth_protocol::tasks::TaskStatus::Succeeded,
        result: Some("ok".into()),
        error: None,
        question: None,
        next_run_at: None,
        action_id: None,
    };
    let mut per_step = [Duration::ZERO; 4];
    for i in 0..TASKS {
        let key = format!("direct-{i}");
        let t = Instant::now();
        store.create_task(NewTask { idempotency_key: &key, kind: TaskKind::Monitor, title: &key, input: &input, thread_id: None }).await.unwrap();
        per_step[0] += t.elapsed();
        let t = Instant::now();
        let claim = store.claim_next("bench", 60_000).await.unwrap().unwrap();
        per_step[1] += t.elapsed();
        let t = Instant::now();
        assert!(store.checkpoint(&claim.task.id, &claim.lease_id, &serde_json::json!({ "step": 1 })).await.unwrap());
        per_step[2] += t.elapsed();
        let t = Instant::now();
        assert!(store.finish_run(&claim.task.id, &claim.lease_id, &ending).await.unwrap());
        per_step[3] += t.elapsed();
    }
    let direct = started.elapsed();
    let us = |d: Duration| d.as_secs_f64() * 1e6 / TASKS as f64;
    println!(
        "  per transition: create {:.0} µs, claim {:.0} µs, checkpoint {:.0} µs, finish {:.0} µs",
        us(per_step[0]), us(per_step[1]), us(per_step[2]), us(per_step[3])
    );
    let direct_rate = transitions as f64 / direct.as_secs_f64();
    println!("store path (no worker): {transitions} transitions in {direct:.2?} = {direct_rate:.0} transitions/s");

    let floor = raw_update_rate(dir.path()).await;
    let task_floor = task_row_update_rate(dir.path()).await;
    println!("floor: raw single-row UPDATE on the same file (same settings: WAL, synchronous=NORMAL, autocheckpoint; autocommit): {floor:.0} updates/s");
    println!("floor on a task row: raw single-row UPDATE of one tasks row (its indexes, same file): {task_floor:.0} updates/s");
    println!(
        "engine / floor = {:.0}% (tiny table), {:.0}% (task row); store path / floor = {:.0}%, {:.0}%",
        rate / floor * 100.0,
        rate / task_floor * 100.0,
        direct_rate / floor * 100.0,
        direct_rate / task_floor * 100.0
    );
}

async fn connect(dir: &std::path::Path) -> sqlx::SqliteConnection {
    SqliteConnectOptions::new()
        .filename(dir.join("hearth.db"))
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .pragma("wal_autocheckpoint", hearth_core::store::WAL_AUTOCHECKPOINT_PAGES)
        .busy_timeout(Duration::from_secs(5))
        .connect()
        .await
        .unwrap()
}

async fn raw_update_rate(dir: &std::path::Path) -> f64 {
    let mut conn = connect(dir).await;
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

/// A single-row UPDATE of one `tasks` row (its `updated_at`; no status change, so no history
/// trigger fires), autocommit: the row and page shape the engine writes, with nothing around it.
async fn task_row_update_rate(dir: &std::path::Path) -> f64 {
    let mut conn = connect(dir).await;
    let id: String = sqlx::query_scalar("SELECT id FROM tasks LIMIT 1").fetch_one(&mut conn).await.unwrap();
    let started = Instant::now();
    for i in 0..UPDATES {
        sqlx::query("UPDATE tasks SET updated_at = ?1 WHERE id = ?2")
            .bind(i as i64)
            .bind(&id)
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let rate = UPDATES as f64 / started.elapsed().as_secs_f64();
    conn.close().await.unwrap();
    rate
}
