//! Opening the database: create, configure, migrate, and explain failures.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;

use crate::error::{CoreError, Result};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// The handle to Hearth's database. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    pool: SqlitePool,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) and migrates the database at `path`.
    ///
    /// Waits up to `busy_timeout` for another process's lock, then fails with
    /// [`CoreError::DatabaseLocked`] rather than retrying forever.
    pub async fn open(path: &Path, busy_timeout: Duration) -> Result<Self> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(busy_timeout);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .acquire_timeout(busy_timeout + Duration::from_secs(5))
            .connect_with(options)
            .await
            .map_err(|err| classify(path, &err))?;
        // A quick read proves the header is SQLite before migrations touch anything.
        sqlx::query("SELECT count(*) FROM sqlite_master")
            .execute(&pool)
            .await
            .map_err(|err| classify(path, &err))?;
        MIGRATOR.run(&pool).await.map_err(|err| match err {
            sqlx::migrate::MigrateError::Execute(inner) => classify(path, &inner),
            other => CoreError::DatabaseOpen { path: path.to_owned(), detail: other.to_string() },
        })?;
        Ok(Self { pool, path: path.to_owned() })
    }

    /// The pool, for the sibling modules that hold the SQL.
    pub(crate) fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Closes every connection (waits for running queries).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Turns SQLite's result codes into errors that say what to do.
fn classify(path: &Path, err: &sqlx::Error) -> CoreError {
    let path = path.to_owned();
    if let sqlx::Error::Database(db) = err {
        // Primary result codes: 5 BUSY, 6 LOCKED, 11 CORRUPT, 26 NOTADB.
        let primary = db.code().and_then(|c| c.parse::<i32>().ok()).map(|c| c & 0xff);
        match primary {
            Some(5 | 6) => return CoreError::DatabaseLocked { path },
            Some(11 | 26) => return CoreError::DatabaseCorrupt { path, detail: db.message().to_owned() },
            _ => {}
        }
    }
    CoreError::DatabaseOpen { path, detail: err.to_string() }
}
