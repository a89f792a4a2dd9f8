//! A database upgrade (pending migrations on a database that has some) takes a copy first and
//! puts it back if a migration fails — or if Hearth stopped before the upgrade ended.
//!
//! sqlx runs each migration in its own transaction, so a failing one undoes only itself: the
//! ones before it in the same start stay applied, and the owner is left with a database no
//! Hearth version knows (too new for the old app, not new enough for the new one). So:
//!
//! 1. The upgrading connection takes SQLite's exclusive lock (`locking_mode = EXCLUSIVE` and a
//!    write) and holds it until the upgrade has ended one way or the other. No other connection,
//!    in this process or another one already open on the folder, commits meanwhile — so nothing
//!    committed after the copy can be lost when the copy goes back.
//! 2. With the log folded into the file, the file is copied byte for byte to
//!    `hearth.db.pre-upgrade` (fsynced, renamed into place), and only then the marker
//!    `hearth.db.upgrading` is written (fsynced with its folder).
//! 3. The migrations run. On success the marker goes; on failure the copy is written back
//!    *through SQLite's online backup API on the same locked connection*: every page replaced
//!    in one transaction, so the content is exactly the copy's (the tables, their rows, the list
//!    of applied migrations), other open connections see it as an ordinary commit (the schema
//!    cookie changes, so they re-read the schema), and no file is swapped under a connection
//!    that still has the old one open. The log is folded into the file (synced) before the
//!    marker goes, then the lock.
//! 4. A start that finds the marker knows the last upgrade did not end — a crash in a migration
//!    or in the write-back — and writes the copy back first, the same way, before anything
//!    else reads the database. The copy is never taken again over a half-upgraded file.
//!
//! The copy stays beside the database afterwards (replaced at the next upgrade): the backup the
//! issue asks an upgrade to take. The file's bytes after a write-back differ from the copy's in
//! SQLite's bookkeeping (the header's change counters), never in content.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sqlx::migrate::Migrator;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, SqliteConnection};

use super::error::{Result, StoreError};

/// The suffix of the copy an upgrade keeps beside the database.
pub const PRE_UPGRADE_SUFFIX: &str = ".pre-upgrade";

/// The suffix of the marker that says an upgrade has begun and not ended.
pub const UPGRADING_SUFFIX: &str = ".upgrading";

/// An upgrade under way: the copy taken before it, on a connection holding the exclusive lock.
#[derive(Debug)]
pub(super) struct PreUpgrade {
    copy: PathBuf,
    marker: PathBuf,
}

/// `path` with `suffix` appended to its file name.
pub(super) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The migrations `migrator` would apply that `conn`'s database lacks, and whether it has any
/// applied already (a new, empty database needs no copy).
async fn pending(conn: &mut SqliteConnection, migrator: &Migrator) -> Result<(bool, usize)> {
    let has_table: i64 = sqlx::query_scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'")
        .fetch_one(&mut *conn)
        .await?;
    let applied: BTreeSet<i64> = if has_table > 0 {
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success = 1").fetch_all(&mut *conn).await?.into_iter().collect()
    } else {
        BTreeSet::new()
    };
    let pending = migrator.iter().filter(|m| !m.migration_type.is_down_migration() && !applied.contains(&m.version)).count();
    Ok((!applied.is_empty(), pending))
}

/// Takes SQLite's exclusive lock on `conn` and keeps it until [`release`]: no other connection
/// reads or writes meanwhile (they wait for their busy timeout, then say the database is busy).
async fn hold_exclusive(conn: &mut SqliteConnection) -> Result<()> {
    sqlx::query("PRAGMA locking_mode = EXCLUSIVE").execute(&mut *conn).await?;
    // In exclusive locking mode the lock a write takes is kept past its commit.
    sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
    sqlx::query("COMMIT").execute(&mut *conn).await?;
    Ok(())
}

/// Gives the exclusive lock back: the next access under normal locking lets it go.
async fn release(conn: &mut SqliteConnection) -> Result<()> {
    sqlx::query("PRAGMA locking_mode = NORMAL").execute(&mut *conn).await?;
    sqlx::query("SELECT count(*) FROM sqlite_master").execute(&mut *conn).await?;
    Ok(())
}

/// Folds the log into the database file, synced, before the marker goes: with `synchronous =
/// NORMAL` a WAL commit is durable only at the next checkpoint, so a marker removed (durably)
/// after a commit that was not could, after a power cut, leave a half-upgraded file with no
/// marker — the one state the marker exists to rule out. Under the exclusive lock nothing else
/// holds the log, so the whole of it folds in.
async fn fold_log(conn: &mut SqliteConnection) -> std::result::Result<(), String> {
    let (busy, _, _): (i64, i64, i64) =
        sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)").fetch_one(&mut *conn).await.map_err(|err| err.to_string())?;
    if busy != 0 {
        return Err("the write-ahead log could not be folded into the database".into());
    }
    Ok(())
}

/// Gives the lock back after `outcome`. A failure to release it does not hide an earlier error
/// (which may name the copy to put back by hand).
async fn release_then<T>(conn: &mut SqliteConnection, outcome: Result<T>) -> Result<T> {
    match (release(conn).await, outcome) {
        (Ok(()), outcome) => outcome,
        (Err(err), Ok(_)) => Err(err),
        (Err(err), Err(first)) => {
            tracing::warn!(error = %err, "the database's lock could not be released after a failed upgrade step");
            Err(first)
        }
    }
}

/// Before anything reads the database: if an upgrade began and did not end (its marker is
/// still there), the copy taken before it goes back. See the module's step 4.
pub(super) async fn recover(conn: &mut SqliteConnection, path: &Path) -> Result<()> {
    let marker = with_suffix(path, UPGRADING_SUFFIX);
    if !marker.exists() {
        return Ok(());
    }
    hold_exclusive(conn).await?;
    // Another process may have finished the write-back while this one waited for the lock.
    let outcome = if marker.exists() {
        let copy = with_suffix(path, PRE_UPGRADE_SUFFIX);
        tracing::warn!(path = %path.display(), "the last database upgrade did not end; the copy taken before it goes back first");
        match async {
            write_back(conn, &copy).await?;
            fold_log(conn).await
        }
        .await
        {
            Ok(()) => remove_durably(&marker),
            Err(detail) => Err(StoreError::UpgradeRollbackFailed {
                path: path.to_owned(),
                detail: format!("the last upgrade did not end, and putting its copy back did not finish ({detail})"),
                copy,
            }),
        }
    } else {
        Ok(())
    };
    release_then(conn, outcome).await
}

/// Copies the database at `path` aside if `migrator` is about to upgrade it, and keeps `conn`
/// holding the exclusive lock until [`PreUpgrade::succeeded`] or [`PreUpgrade::put_back`];
/// `None` (and no lock) when there is nothing to protect (a new database, or nothing pending).
pub(super) async fn prepare(conn: &mut SqliteConnection, path: &Path, migrator: &Migrator) -> Result<Option<PreUpgrade>> {
    let (has_applied, pending_count) = pending(conn, migrator).await?;
    if !has_applied || pending_count == 0 {
        return Ok(None);
    }
    tracing::info!(pending = pending_count, path = %path.display(), "upgrading the database; a copy is taken first");
    hold_exclusive(conn).await?;
    match take_copy(conn, path, migrator).await {
        Ok(Some(pre)) => Ok(Some(pre)),
        // Another process upgraded it while this one waited for the lock.
        Ok(None) => release(conn).await.map(|()| None),
        Err(err) => release_then(conn, Err(err)).await,
    }
}

/// Under the lock: folds the log into the file, copies the file, then writes the marker.
async fn take_copy(conn: &mut SqliteConnection, path: &Path, migrator: &Migrator) -> Result<Option<PreUpgrade>> {
    if pending(conn, migrator).await?.1 == 0 {
        return Ok(None);
    }
    let copy = with_suffix(path, PRE_UPGRADE_SUFFIX);
    let failed = |detail: String| StoreError::Snapshot {
        path: copy.clone(),
        detail: format!("the copy before the upgrade could not be written ({detail}); free some disk space and start Hearth again"),
    };
    // Nothing else holds the database now, so the whole log folds in and the file alone is the
    // database (busy = 0); anything else and the copy would miss commits.
    let (busy, _, _): (i64, i64, i64) = sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)").fetch_one(&mut *conn).await?;
    if busy != 0 {
        return Err(failed("the write-ahead log could not be folded into the database".into()));
    }
    copy_atomically(path, &copy).map_err(|err| failed(err.to_string()))?;
    let marker = with_suffix(path, UPGRADING_SUFFIX);
    write_durably(&marker).map_err(|err| failed(err.to_string()))?;
    Ok(Some(PreUpgrade { copy, marker }))
}

/// Copies `from` to `to` through a temporary name, so `to` is never half written.
fn copy_atomically(from: &Path, to: &Path) -> std::io::Result<()> {
    let partial = with_suffix(to, ".partial");
    std::fs::copy(from, &partial)?;
    std::fs::File::open(&partial)?.sync_all()?;
    std::fs::rename(&partial, to)?;
    sync_folder(to)
}

/// Creates the (empty) marker `path`, durably: the file and its folder's entry.
fn write_durably(path: &Path) -> std::io::Result<()> {
    std::fs::File::create(path)?.sync_all()?;
    sync_folder(path)
}

fn remove_durably(path: &Path) -> Result<()> {
    let failed = |err: std::io::Error| StoreError::Snapshot {
        path: path.to_owned(),
        detail: format!("the upgrade marker could not be removed ({err}); remove it by hand once Hearth has stopped"),
    };
    match std::fs::remove_file(path) {
        Ok(()) => sync_folder(path).map_err(failed),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(failed(err)),
    }
}

/// Makes a rename or a new entry in `path`'s folder survive a power cut.
fn sync_folder(path: &Path) -> std::io::Result<()> {
    match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => std::fs::File::open(folder)?.sync_all(),
        Some(_) | None => Ok(()),
    }
}

/// Writes `copy`'s content over the database `conn` has open (holding the exclusive lock), as
/// one transaction through the online backup API. The copy is opened read-only and immutable:
/// it is a plain file the upgrade wrote, with no log of its own.
async fn write_back(conn: &mut SqliteConnection, copy: &Path) -> std::result::Result<(), String> {
    // A failed migration's transaction is rolled back by sqlx on the connection's next use:
    // this is that use, so no transaction is open when the pages are written.
    sqlx::query("SELECT 1").execute(&mut *conn).await.map_err(|err| err.to_string())?;
    let mut source = SqliteConnectOptions::new()
        .filename(copy)
        .read_only(true)
        .immutable(true)
        .connect()
        .await
        .map_err(|err| format!("the copy {} could not be opened: {err}", copy.display()))?;
    let copied = {
        let mut source_handle = source.lock_handle().await.map_err(|err| err.to_string())?;
        let mut target_handle = conn.lock_handle().await.map_err(|err| err.to_string())?;
        super::page_copy::copy(source_handle.as_raw_handle(), target_handle.as_raw_handle())
    };
    if let Err(err) = source.close().await {
        tracing::debug!(error = %err, "closing the pre-upgrade copy");
    }
    copied
}

impl PreUpgrade {
    /// The migrations all ran: the marker goes, then the lock.
    pub(super) async fn succeeded(self, conn: &mut SqliteConnection) -> Result<()> {
        let folded = fold_log(conn).await.map_err(|detail| StoreError::Snapshot {
            path: self.marker.clone(),
            detail: format!("the upgraded database could not be synced ({detail}); start Hearth again"),
        });
        // Not folded: the marker stays, and the next start puts the copy back and upgrades again.
        let outcome = folded.and_then(|()| remove_durably(&self.marker));
        release_then(conn, outcome).await
    }

    /// A migration failed: the copy goes back over the database `conn` has open (still under
    /// the lock), then the marker, then the lock. The error says what happened, and which file
    /// to copy by hand if the write-back failed too.
    pub(super) async fn put_back(self, conn: &mut SqliteConnection, path: &Path, detail: String) -> StoreError {
        let outcome = match async {
            write_back(conn, &self.copy).await?;
            fold_log(conn).await
        }
        .await
        {
            Ok(()) => match remove_durably(&self.marker) {
                Ok(()) => {
                    tracing::warn!(path = %path.display(), "a database upgrade failed; the database was put back as it was");
                    StoreError::UpgradeFailed { path: path.to_owned(), detail, copy: self.copy.clone() }
                }
                Err(err) => StoreError::UpgradeRollbackFailed {
                    path: path.to_owned(),
                    detail: format!("{detail}; the copy went back but {err}"),
                    copy: self.copy.clone(),
                },
            },
            // The marker stays: the next start tries the write-back again before anything else.
            Err(err) => StoreError::UpgradeRollbackFailed {
                path: path.to_owned(),
                detail: format!("{detail}; putting the copy back failed too: {err}"),
                copy: self.copy.clone(),
            },
        };
        if let Err(err) = release(conn).await {
            tracing::debug!(error = %err, "releasing the database after a failed upgrade");
        }
        outcome
    }
}
