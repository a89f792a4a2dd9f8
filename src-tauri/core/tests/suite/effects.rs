//! A counting test effector: each effect inserts one row into its own SQLite file, so tests
//! count real effects (rows), never status strings. Shared with `examples/task_worker.rs`.

use std::path::Path;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};

/// The effects database.
#[derive(Debug, Clone)]
pub struct Effects {
    pool: SqlitePool,
}

impl Effects {
    /// Opens (creating) `path`.
    pub async fn open(path: &Path) -> Effects {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(std::time::Duration::from_secs(10));
        // No idle reaping or lifetime limit, so no sqlx maintenance task (see `pool_options` in
        // core/src/store/open.rs: sqlx#3645).
        let pool = SqlitePoolOptions::new().max_connections(2).idle_timeout(None).max_lifetime(None).connect_with(options).await.unwrap();
        sqlx::query("CREATE TABLE IF NOT EXISTS effects (id INTEGER PRIMARY KEY, op TEXT NOT NULL, payload TEXT NOT NULL)")
            .execute(&pool)
            .await
            .unwrap();
        Effects { pool }
    }

    /// Performs one effect: one row.
    pub async fn record(&self, op: &str, payload: &str) {
        sqlx::query("INSERT INTO effects (op, payload) VALUES (?1, ?2)").bind(op).bind(payload).execute(&self.pool).await.unwrap();
    }

    /// How many effects happened.
    #[allow(
        dead_code,
        reason = "the worker example records effects and only the tests count them: dead in one of the two crates that include this file, so an allow, not an expect"
    )]
    pub async fn count(&self) -> i64 {
        sqlx::query_scalar("SELECT count(*) FROM effects").fetch_one(&self.pool).await.unwrap()
    }
}
