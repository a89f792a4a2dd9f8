//! Opening the database: create, configure, migrate, and explain failures.

use std::path::{Path, PathBuf};
use std::time::Duration;

use std::sync::Arc;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection, SqliteConnection, SqlitePool};
use tokio::sync::{Mutex, MutexGuard};

use super::error::{Result, StoreError};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// WAL pages between automatic checkpoints (also used by the throughput bench's floor).
pub const WAL_AUTOCHECKPOINT_PAGES: &str = "4000";

/// The handle to Hearth's database. Cheap to clone.
///
/// Writes go through one connection behind an async mutex, so writers in this process queue
/// in tokio (woken the moment the previous commit ends) instead of in SQLite's busy handler,
/// which sleeps in steps of milliseconds — and without a pool's per-use bookkeeping. Reads use
/// their own pool and see every committed write (WAL).
#[derive(Debug, Clone)]
pub struct Store {
    reader: SqlitePool,
    writer: Arc<Mutex<SqliteConnection>>,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) and migrates the database at `path`.
    ///
    /// Waits up to `busy_timeout` for another process's lock, then fails with
    /// [`StoreError::DatabaseLocked`] rather than retrying forever.
    ///
    /// The database file is readable only by its owner (0600 on Unix), and so are its `-wal` and
    /// `-shm` files, which SQLite creates with the database file's mode.
    ///
    /// An upgrade (migrations pending on a database that has some) copies the file first and
    /// puts it back if a migration fails ([`super::upgrade`]).
    pub async fn open(path: &Path, busy_timeout: Duration) -> Result<Self> {
        Self::open_with(path, busy_timeout, &MIGRATOR, None).await
    }

    /// Opens `path` with the migrations in the folder `migrations` instead of Hearth's own: the
    /// hook that lets a test run real migrations and one that fails halfway.
    pub async fn open_with_migrations(path: &Path, busy_timeout: Duration, migrations: &Path) -> Result<Self> {
        let migrator = sqlx::migrate::Migrator::new(migrations)
            .await
            .map_err(|err| StoreError::DatabaseOpen { path: path.to_owned(), detail: err.to_string() })?;
        Self::open_with(path, busy_timeout, &migrator, None).await
    }

    /// [`Self::open_with_migrations`], awaiting `paused` once an upgrade has taken its copy and
    /// before its migrations run: the test hook that lets another connection try to commit
    /// right then, deterministically.
    #[doc(hidden)]
    pub async fn open_with_migrations_paused(
        path: &Path,
        busy_timeout: Duration,
        migrations: &Path,
        paused: futures::future::BoxFuture<'_, ()>,
    ) -> Result<Self> {
        let migrator = sqlx::migrate::Migrator::new(migrations)
            .await
            .map_err(|err| StoreError::DatabaseOpen { path: path.to_owned(), detail: err.to_string() })?;
        Self::open_with(path, busy_timeout, &migrator, Some(paused)).await
    }

    /// The newest migration this build knows: a backup made by a newer Hearth has a newer one
    /// and is refused.
    pub fn newest_known_schema() -> i64 {
        MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0)
    }

    /// The newest migration applied to this database (what a backup records as its schema).
    pub async fn schema_version(&self) -> Result<i64> {
        let version: Option<i64> =
            sqlx::query_scalar("SELECT max(version) FROM _sqlx_migrations WHERE success = 1").fetch_one(&self.reader).await?;
        Ok(version.unwrap_or(0))
    }

    async fn open_with(
        path: &Path,
        busy_timeout: Duration,
        migrator: &sqlx::migrate::Migrator,
        upgrade_paused: Option<futures::future::BoxFuture<'_, ()>>,
    ) -> Result<Self> {
        #[cfg(unix)]
        private::database_files(path);
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            // A transition writes a handful of pages; checkpointing every 1,000 (the default)
            // fsyncs the database file every ~200 transitions. 4,000 pages (16 MiB of WAL).
            .pragma("wal_autocheckpoint", WAL_AUTOCHECKPOINT_PAGES)
            // A deleted chat's messages are overwritten with zeros where they lay, not left
            // readable in free pages of the file (the write-ahead log is emptied after a chat's
            // deletion too: `Store::delete_thread`). Deletes and updates pay a little for it.
            .pragma("secure_delete", "on")
            .busy_timeout(busy_timeout);
        // Long enough for a burst of writers queued behind each other.
        let acquire_timeout = busy_timeout + Duration::from_secs(30);
        let mut writer = options.connect().await.map_err(|err| classify(path, &err))?;
        // A quick read proves the header is SQLite before migrations touch anything.
        sqlx::query("SELECT count(*) FROM sqlite_master").execute(&mut writer).await.map_err(|err| classify(path, &err))?;
        super::upgrade::recover(&mut writer, path).await.map_err(|err| match err {
            StoreError::Query(inner) => classify(path, &inner),
            other => other,
        })?;
        let pre_upgrade = super::upgrade::prepare(&mut writer, path, migrator).await.map_err(|err| match err {
            StoreError::Query(inner) => classify(path, &inner),
            other => other,
        })?;
        if let (Some(_), Some(hook)) = (&pre_upgrade, upgrade_paused) {
            hook.await;
        }
        match (migrator.run(&mut writer).await, pre_upgrade) {
            (Ok(()), Some(pre_upgrade)) => pre_upgrade.succeeded(&mut writer).await?,
            (Ok(()), None) => {}
            (Err(err), pre_upgrade) => {
                let failure = match err {
                    sqlx::migrate::MigrateError::Execute(inner) => classify(path, &inner),
                    other => StoreError::DatabaseOpen { path: path.to_owned(), detail: other.to_string() },
                };
                let err = match pre_upgrade {
                    Some(pre_upgrade) => pre_upgrade.put_back(&mut writer, path, failure.to_string()).await,
                    None => failure,
                };
                if let Err(close) = writer.close().await {
                    tracing::debug!(error = %close, "closing the database after a failed upgrade");
                }
                return Err(err);
            }
        }
        let reader = pool_options(4).acquire_timeout(acquire_timeout).connect_with(options).await.map_err(|err| classify(path, &err))?;
        Ok(Self { reader, writer: Arc::new(Mutex::new(writer)), path: path.to_owned() })
    }

    /// The read pool, for the sibling modules that hold the SQL.
    pub(crate) fn reader(&self) -> &SqlitePool {
        &self.reader
    }

    /// The write connection: every statement that changes the database waits here for the
    /// previous one.
    pub(crate) async fn writer(&self) -> MutexGuard<'_, SqliteConnection> {
        self.writer.lock().await
    }

    /// Creates the new file `path` (never replacing one) readable only by its owner (0600 on
    /// Unix): every file Hearth writes in its data folder or a backup folder starts here.
    pub fn create_new_private(path: &Path) -> std::io::Result<std::fs::File> {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(path)
    }

    /// Creates the folder `dir` (and missing parents) readable only by its owner (0700 on Unix),
    /// and tightens it if it already exists with a looser mode (saying so in the log). Hearth
    /// makes the data folder and every folder it keeps there with this.
    pub(crate) fn create_private_dir(dir: &Path) -> Result<()> {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, private::DIR_MODE);
        builder.create(dir).map_err(|source| StoreError::DataDir { path: dir.to_owned(), source })?;
        #[cfg(unix)]
        private::tighten(dir, "folder");
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Closes the readers and ends the writer's transaction state (waits for running
    /// queries). The write connection itself closes when the last clone of the store drops.
    pub async fn close(&self) {
        self.reader.close().await;
        // Checkpoint the WAL so a reopened database (or another process) starts clean.
        let mut writer = self.writer.lock().await;
        if let Err(err) = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut *writer).await {
            tracing::debug!(error = %err, "WAL checkpoint at close failed");
        }
    }
}

/// The options of every SQLite pool Hearth opens (and its tests copy): no idle reaping, no
/// lifetime limit, no ping before each use.
///
/// With `idle_timeout` and `max_lifetime` both `None` (and `min_connections` 0), sqlx 0.8 starts
/// no maintenance task for the pool. That task is where sqlx 0.8's `num_idle` underflow
/// ([sqlx#3645], fixed by [sqlx#4289], which no release up to 0.9.0 carries) turns into a wedge:
/// `release` makes a connection acquirable before counting it idle, a concurrent acquire can
/// decrement the count below zero, and the task then loops `0..usize::MAX` without yielding —
/// a core at 100 % and acquires that never return. It hit a `max_connections(1)` pool in the
/// two-process claim test. Hearth's pools open local files, which gain nothing from reaping
/// idle connections or recycling old ones, and a ping is a wasted round trip for the same
/// reason. Tests that open their own pool on a Hearth file set the same two options and point
/// here.
///
/// [sqlx#3645]: https://github.com/launchbadge/sqlx/issues/3645
/// [sqlx#4289]: https://github.com/launchbadge/sqlx/pull/4289
fn pool_options(max_connections: u32) -> SqlitePoolOptions {
    SqlitePoolOptions::new()
        .max_connections(max_connections)
        .min_connections(0)
        .idle_timeout(None)
        .max_lifetime(None)
        .test_before_acquire(false)
}

/// Owner-only modes for the data folder and the database files (Unix).
#[cfg(unix)]
mod private {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    use std::path::Path;

    /// Folders: the owner's only.
    pub(super) const DIR_MODE: u32 = 0o700;

    /// The database file (and, through SQLite, its `-wal` and `-shm`).
    pub(super) const FILE_MODE: u32 = 0o600;

    /// Creates the database file 0600 if it is not there yet (SQLite opens an empty file as an
    /// empty database, and gives the `-wal` and `-shm` files it creates the database file's
    /// mode), and tightens it and existing `-wal`/`-shm` files that others can read. Best
    /// effort: if the file cannot be created here, opening it reports why.
    pub(super) fn database_files(path: &Path) {
        let created = std::fs::OpenOptions::new().write(true).create_new(true).mode(FILE_MODE).open(path);
        if let Err(err) = created
            && err.kind() != std::io::ErrorKind::AlreadyExists
        {
            tracing::debug!(path = %path.display(), error = %err, "could not create the database file ahead of SQLite");
        }
        for suffix in ["", "-wal", "-shm"] {
            let mut name = path.as_os_str().to_owned();
            name.push(suffix);
            tighten(Path::new(&name), "file");
        }
    }

    /// Takes the group's and others' permissions off `path` if it has any (a folder becomes
    /// 0700, a file 0600 at most). A missing path is left alone; a failure is logged, not fatal
    /// (some file systems have no Unix modes).
    pub(super) fn tighten(path: &Path, what: &str) {
        let Ok(meta) = std::fs::metadata(path) else { return };
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o077 == 0 {
            return;
        }
        let private = mode & 0o700;
        match std::fs::set_permissions(path, std::fs::Permissions::from_mode(private)) {
            Ok(()) => tracing::warn!(
                path = %path.display(),
                from = format_args!("{mode:o}"),
                to = format_args!("{private:o}"),
                "Hearth's data {what} could be read by other users of this machine; it is now private to you"
            ),
            Err(err) => tracing::warn!(
                path = %path.display(),
                mode = format_args!("{mode:o}"),
                error = %err,
                "other users of this machine can read Hearth's data {what} and Hearth could not change that; run chmod go-rwx on it"
            ),
        }
    }
}

/// Turns SQLite's result codes into errors that say what to do.
fn classify(path: &Path, err: &sqlx::Error) -> StoreError {
    let path = path.to_owned();
    if let sqlx::Error::Database(db) = err {
        // Primary result codes: 5 BUSY, 6 LOCKED, 11 CORRUPT, 26 NOTADB.
        let primary = db.code().and_then(|c| c.parse::<i32>().ok()).map(|c| c & 0xff);
        match primary {
            Some(5 | 6) => return StoreError::DatabaseLocked { path },
            Some(11 | 26) => return StoreError::DatabaseCorrupt { path, detail: db.message().to_owned() },
            _ => {}
        }
    }
    StoreError::DatabaseOpen { path, detail: err.to_string() }
}
