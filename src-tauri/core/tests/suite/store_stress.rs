//! The store under load: many writers and readers at once on one SQLite file, through Hearth's
//! `Store` and through a one-connection pool opened with the same options (`pool_options` in
//! core/src/store/open.rs). Every row is counted. A bound on the whole run turns a wedged pool
//! (sqlx#3645: the pool's maintenance task spinning a core while acquires hang) into a failure
//! that says so, instead of a test binary that never returns.

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use hearth_core::store::Store;
use hearth_protocol::agui::{Event, TextMessageContentEvent};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};
use tokio::task::JoinSet;

const WRITERS: usize = 8;
const WRITES: usize = 200;
const READERS: usize = 16;
const READS: usize = 200;

/// A hang detector, not a speed assertion: each test finishes in seconds on 2 cores.
const HANG_BOUND: Duration = Duration::from_secs(120);

/// Runs the future `work` builds on a runtime of its own, in a thread of its own, and returns
/// its result — or fails the test when that has not finished, runtime shut down included, within
/// [`HANG_BOUND`].
///
/// Neither `#[tokio::test]` nor `tokio::time::timeout` can be the detector: sqlx's spinning
/// maintenance task never yields, so with one such task per wedged pool every worker can end up
/// spinning, nothing drives tokio's timer, and a runtime with a spinning task never finishes
/// dropping. The test thread waits on a plain channel instead, and a wedged runtime is left
/// behind (its threads end with the test binary).
fn bounded<T, Work, Fut>(what: &str, work: Work) -> T
where
    T: Send + 'static,
    Work: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T>,
{
    let (done, finished) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
        let result = runtime.block_on(work());
        // Dropped before reporting, so a task left spinning after the work counts as a hang too.
        drop(runtime);
        let _ = done.send(result);
    });
    match finished.recv_timeout(HANG_BOUND) {
        Ok(result) => result,
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the worker sends its result before it ends"),
        },
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!(
            "{what} did not finish within {} s: a SQLite pool is wedged. sqlx 0.8's maintenance \
             task spins on an underflowed idle count (sqlx#3645); every pool must set \
             idle_timeout(None) and max_lifetime(None) (see pool_options in core/src/store/open.rs)",
            HANG_BOUND.as_secs()
        ),
    }
}

fn thread_id(writer: usize) -> String {
    format!("stress-thread-{writer}")
}

fn run_id(writer: usize) -> String {
    format!("stress-run-{writer}")
}

fn event(writer: usize, i: usize) -> Event {
    Event::TextMessageContent(TextMessageContentEvent { message_id: format!("m{writer}"), delta: i.to_string(), ..Default::default() })
}

/// Opens Hearth's store on `path` with one thread and one run per writer.
async fn store_with_threads(path: &Path, writers: usize) -> Store {
    let store = Store::open(path, Duration::from_secs(30)).await.unwrap();
    for w in 0..writers {
        store.ensure_thread(&thread_id(w), "stress").await.unwrap();
        store.begin_run(&thread_id(w), &run_id(w), "stress", hearth_core::store::threads::RunOrigin::Window).await.unwrap();
    }
    store
}

/// Each writer's events, as the deltas stored in its thread, in log order.
async fn deltas(store: &Store, writers: usize) -> Vec<Vec<String>> {
    let mut all = Vec::new();
    for w in 0..writers {
        let events = store.thread_events(&thread_id(w)).await.unwrap();
        all.push(
            events
                .into_iter()
                .map(|e| match e {
                    Event::TextMessageContent(c) => c.delta,
                    other => panic!("an event the test did not write: {other:?}"),
                })
                .collect(),
        );
    }
    all
}

fn in_order(writes: usize) -> Vec<String> {
    (0..writes).map(|i| i.to_string()).collect()
}

/// A store writer: `WRITES` events into its own thread, one statement each.
fn spawn_store_writer(tasks: &mut JoinSet<usize>, store: &Store, w: usize) {
    let store = store.clone();
    tasks.spawn(async move {
        for i in 0..WRITES {
            store.append_event(&thread_id(w), &run_id(w), &event(w, i)).await.unwrap();
        }
        0
    });
}

/// A store reader: `READS` reads of one writer's thread through the read pool; the log only
/// grows. Returns how many reads it completed.
fn spawn_store_reader(tasks: &mut JoinSet<usize>, store: &Store, thread: String) {
    let store = store.clone();
    tasks.spawn(async move {
        let mut seen = 0;
        for _ in 0..READS {
            let now = store.thread_events(&thread).await.unwrap().len();
            assert!(now >= seen, "{thread} shrank from {seen} to {now} events");
            seen = now;
        }
        READS
    });
}

#[test]
fn eight_writers_and_sixteen_readers_through_the_store_keep_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hearth.db");
    let (deltas, reads) = bounded("8 writers × 200 writes and 16 readers × 200 reads on one Store", move || async move {
        let store = store_with_threads(&path, WRITERS).await;
        let mut tasks = JoinSet::new();
        for w in 0..WRITERS {
            spawn_store_writer(&mut tasks, &store, w);
        }
        for r in 0..READERS {
            spawn_store_reader(&mut tasks, &store, thread_id(r % WRITERS));
        }
        let mut reads = 0;
        while let Some(done) = tasks.join_next().await {
            reads += done.unwrap();
        }
        let deltas = deltas(&store, WRITERS).await;
        store.close().await;
        (deltas, reads)
    });
    assert_eq!(reads, READERS * READS, "every read completed");
    let rows: usize = deltas.iter().map(Vec::len).sum();
    assert_eq!(rows, WRITERS * WRITES, "rows written");
    for (w, got) in deltas.iter().enumerate() {
        assert_eq!(got, &in_order(WRITES), "writer {w}'s events, each once and in order");
    }
}

/// A test pool on Hearth's file, opened the way `pool_options` in core/src/store/open.rs opens
/// Hearth's own: one connection (the shape sqlx#3645 wedged), no idle reaping, no lifetime limit.
async fn one_connection_pool(path: &Path) -> SqlitePool {
    let options = SqliteConnectOptions::new().filename(path).busy_timeout(Duration::from_secs(30));
    SqlitePoolOptions::new().max_connections(1).idle_timeout(None).max_lifetime(None).connect_with(options).await.unwrap()
}

#[test]
fn a_one_connection_pool_beside_the_store_keeps_every_row() {
    // Half the writers and readers go through Hearth's store, half through one connection that
    // every pool task hands to the next, all on one file at once.
    const HALF_W: usize = WRITERS / 2;
    const HALF_R: usize = READERS / 2;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hearth.db");
    let (deltas, pool_rows, reads) = bounded("a one-connection pool beside the Store (8 writers, 16 readers)", move || async move {
        let store = store_with_threads(&path, HALF_W).await;
        let pool = one_connection_pool(&path).await;
        sqlx::query("CREATE TABLE stress (writer INTEGER NOT NULL, i INTEGER NOT NULL, UNIQUE (writer, i)) STRICT")
            .execute(&pool)
            .await
            .unwrap();
        let mut tasks = JoinSet::new();
        for w in 0..HALF_W {
            spawn_store_writer(&mut tasks, &store, w);
            let pool = pool.clone();
            tasks.spawn(async move {
                for i in 0..WRITES {
                    sqlx::query("INSERT INTO stress (writer, i) VALUES (?1, ?2)")
                        .bind(w as i64)
                        .bind(i as i64)
                        .execute(&pool)
                        .await
                        .unwrap();
                }
                0
            });
        }
        for r in 0..HALF_R {
            spawn_store_reader(&mut tasks, &store, thread_id(r % HALF_W));
            let pool = pool.clone();
            tasks.spawn(async move {
                let mut seen = 0;
                for _ in 0..READS {
                    let now: i64 = sqlx::query_scalar("SELECT count(*) FROM stress").fetch_one(&pool).await.unwrap();
                    assert!(now >= seen, "the stress table shrank from {seen} to {now} rows");
                    seen = now;
                }
                READS
            });
        }
        let mut reads = 0;
        while let Some(done) = tasks.join_next().await {
            reads += done.unwrap();
        }
        let pool_rows: Vec<(i64, i64)> =
            sqlx::query_as("SELECT writer, count(*) FROM stress GROUP BY writer ORDER BY writer").fetch_all(&pool).await.unwrap();
        pool.close().await;
        let deltas = deltas(&store, HALF_W).await;
        store.close().await;
        (deltas, pool_rows, reads)
    });
    assert_eq!(reads, READERS * READS, "every read completed");
    let expected: Vec<(i64, i64)> = (0..HALF_W as i64).map(|w| (w, WRITES as i64)).collect();
    assert_eq!(pool_rows, expected, "rows written through the one-connection pool, per writer");
    let rows: usize = deltas.iter().map(Vec::len).sum();
    assert_eq!(rows, HALF_W * WRITES, "rows written through the store");
    for (w, got) in deltas.iter().enumerate() {
        assert_eq!(got, &in_order(WRITES), "writer {w}'s events, each once and in order");
    }
}
