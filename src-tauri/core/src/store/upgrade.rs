//! A database upgrade (pending migrations on a database that has some) takes a copy first and
//! puts it back if a migration fails.
//!
//! sqlx runs each migration in its own transaction, so a failing one undoes only itself: the
//! ones before it in the same start stay applied, and the owner is left with a database no
//! Hearth version knows (too new for the old app, not new enough for the new one). So before
//! the first pending migration runs, the database file is copied byte for byte, under a write
//! lock so no other connection commits during the copy; on failure the copy goes back in place
//! and the owner's data is exactly as it was. The copy stays beside the database afterwards
//! (`hearth.db.pre-upgrade`, replaced at the next upgrade): the backup the issue asks an upgrade
//! to take. A byte copy rather than the online backup API because only the bytes themselves
//! promise "as it was" (the backup API rewrites the header's schema cookie).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sqlx::SqliteConnection;
use sqlx::migrate::Migrator;

use super::error::{Result, StoreError};

/// The suffix of the copy an upgrade keeps beside the database.
pub const PRE_UPGRADE_SUFFIX: &str = ".pre-upgrade";

/// The copy taken before an upgrade: the database file and, if one was not empty, its log.
#[derive(Debug)]
pub(super) struct PreUpgrade {
    copy: PathBuf,
    wal_copy: Option<PathBuf>,
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

/// Copies the database at `path` aside if `migrator` is about to upgrade it; `None` when there
/// is nothing to protect (a new database, or nothing pending).
pub(super) async fn prepare(conn: &mut SqliteConnection, path: &Path, migrator: &Migrator) -> Result<Option<PreUpgrade>> {
    let (has_applied, pending) = pending(conn, migrator).await?;
    if !has_applied || pending == 0 {
        return Ok(None);
    }
    tracing::info!(pending, path = %path.display(), "upgrading the database; a copy is taken first");
    // Fold the log into the file first, so the copy is usually one file. Another process
    // reading can keep part of it in the log: then the log is copied too (below).
    if let Err(err) = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut *conn).await {
        tracing::debug!(error = %err, "checkpoint before the upgrade copy failed");
    }
    // The write lock: no connection (here or in another process) commits while the bytes are
    // copied, so the file and its log agree.
    sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
    let copied = copy_files(path);
    sqlx::query("ROLLBACK").execute(&mut *conn).await?;
    copied
}

fn copy_files(path: &Path) -> Result<Option<PreUpgrade>> {
    let copy = with_suffix(path, PRE_UPGRADE_SUFFIX);
    let wal = with_suffix(path, "-wal");
    let failed = |source: std::io::Error| StoreError::Snapshot {
        path: copy.clone(),
        detail: format!("the copy before the upgrade could not be written ({source}); free some disk space and start Hearth again"),
    };
    copy_atomically(path, &copy).map_err(failed)?;
    let wal_copy = match std::fs::metadata(&wal) {
        Ok(meta) if meta.len() > 0 => {
            let wal_copy = with_suffix(&copy, "-wal");
            copy_atomically(&wal, &wal_copy).map_err(failed)?;
            Some(wal_copy)
        }
        Ok(_) | Err(_) => None,
    };
    Ok(Some(PreUpgrade { copy, wal_copy }))
}

/// Copies `from` to `to` through a temporary name, so `to` is never half written.
fn copy_atomically(from: &Path, to: &Path) -> std::io::Result<()> {
    let partial = with_suffix(to, ".partial");
    std::fs::copy(from, &partial)?;
    std::fs::File::open(&partial)?.sync_all()?;
    std::fs::rename(&partial, to)
}

impl PreUpgrade {
    /// Puts the copy back over `path` (whose connections are all closed), as it was before the
    /// upgrade; the error after a failed upgrade says which file to copy by hand if this fails.
    pub(super) fn put_back(&self, path: &Path, detail: String) -> StoreError {
        match self.restore(path) {
            Ok(()) => {
                tracing::warn!(path = %path.display(), "a database upgrade failed; the database was put back as it was");
                StoreError::UpgradeFailed { path: path.to_owned(), detail, copy: self.copy.clone() }
            }
            Err(err) => StoreError::UpgradeRollbackFailed {
                path: path.to_owned(),
                detail: format!("{detail}; putting the copy back failed too: {err}"),
                copy: self.copy.clone(),
            },
        }
    }

    fn restore(&self, path: &Path) -> std::io::Result<()> {
        // The failed upgrade's log and index must not be replayed onto the old file.
        for suffix in ["-wal", "-shm"] {
            match std::fs::remove_file(with_suffix(path, suffix)) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => return Err(err),
            }
        }
        copy_atomically(&self.copy, path)?;
        if let Some(wal_copy) = &self.wal_copy {
            copy_atomically(wal_copy, &with_suffix(path, "-wal"))?;
        }
        Ok(())
    }
}
