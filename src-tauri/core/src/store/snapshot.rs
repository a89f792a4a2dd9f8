//! A consistent copy of the live database in one file, through SQLite's online backup API.
//!
//! Why the backup API and not a file copy or `VACUUM INTO`: the app keeps writing while the
//! owner backs up (a task runs, a schedule fires), and a copy of `hearth.db` taken then misses
//! what is still in the write-ahead log or tears a page mid-write. `sqlite3_backup_step(-1)` copies
//! every page inside one read transaction of the source, so the copy is the database exactly
//! as one commit left it, and writers are not blocked meanwhile (WAL readers never block
//! writers). `VACUUM INTO` gives the same consistency but rebuilds every table and index (a
//! full rewrite, slower on a large file); the backup API copies pages as they are.

use std::path::Path;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection};

use super::error::{Result, StoreError};
use super::open::Store;

/// How many times a snapshot is tried when SQLite answers busy or locked (another connection
/// holding a lock for a moment, e.g. a checkpoint) before it gives up and says so.
const BUSY_ATTEMPTS: u32 = 50;

impl Store {
    /// Writes a consistent copy of the whole database to the new file `dest` (which must not
    /// exist yet), while other connections go on writing. See the module's notes for why.
    pub async fn snapshot_to(&self, dest: &Path) -> Result<()> {
        if dest.exists() {
            return Err(StoreError::Snapshot {
                path: dest.to_owned(),
                detail: "the file already exists; Hearth writes a snapshot only to a new file".to_owned(),
            });
        }
        let mut source = self.reader().acquire().await?;
        let mut target = SqliteConnectOptions::new()
            .filename(dest)
            .create_if_missing(true)
            .connect()
            .await
            .map_err(|err| StoreError::Snapshot { path: dest.to_owned(), detail: err.to_string() })?;
        let copied = {
            let mut source_handle = source.lock_handle().await?;
            let mut target_handle = target.lock_handle().await?;
            let mut outcome = Err(String::new());
            for _ in 0..BUSY_ATTEMPTS {
                outcome = online::copy(source_handle.as_raw_handle(), target_handle.as_raw_handle());
                match &outcome {
                    Err(why) if why.starts_with(online::BUSY) => tokio::task::yield_now().await,
                    _ => break,
                }
            }
            outcome
        };
        target.close().await.map_err(|err| StoreError::Snapshot { path: dest.to_owned(), detail: err.to_string() })?;
        copied.map_err(|detail| StoreError::Snapshot { path: dest.to_owned(), detail })
    }
}

/// Every page of one connection's main database written over another's, in one step (the
/// upgrade's write-back uses it too: `super::upgrade`).
pub(super) use online::copy as copy_pages;

/// The calls into SQLite's C API. Small on purpose: the only `unsafe` in the store.
#[expect(unsafe_code, reason = "SQLite's online backup API is C; each call's SAFETY note says why it is sound")]
mod online {
    use std::ffi::CStr;
    use std::ptr::NonNull;

    use libsqlite3_sys as ffi;

    /// How a busy or locked answer's message starts (the caller retries those).
    pub(super) const BUSY: &str = "busy:";

    /// Copies every page of `source`'s main database into `target`'s, in one step.
    ///
    /// Both handles come from `LockedSqliteHandle::as_raw_handle`, whose guards the caller
    /// holds for the whole call: no other thread uses either connection meanwhile.
    pub(in crate::store) fn copy(source: NonNull<ffi::sqlite3>, target: NonNull<ffi::sqlite3>) -> Result<(), String> {
        let main = c"main";
        // SAFETY: both pointers are open connections held exclusively by the caller (above);
        // the schema names are NUL-terminated literals. `backup_init` returns null on failure
        // and then leaves the error on the target connection.
        let backup = unsafe { ffi::sqlite3_backup_init(target.as_ptr(), main.as_ptr(), source.as_ptr(), main.as_ptr()) };
        let Some(backup) = NonNull::new(backup) else {
            return Err(message(target, "the snapshot could not start"));
        };
        // SAFETY: `backup` is the live object `backup_init` returned; -1 copies every page.
        let step = unsafe { ffi::sqlite3_backup_step(backup.as_ptr(), -1) };
        // SAFETY: `backup` is live and is finished exactly once, here; it is not used after.
        let finish = unsafe { ffi::sqlite3_backup_finish(backup.as_ptr()) };
        match step {
            ffi::SQLITE_DONE if finish == ffi::SQLITE_OK => Ok(()),
            ffi::SQLITE_BUSY | ffi::SQLITE_LOCKED => Err(format!("{BUSY} the database was locked by another connection")),
            ffi::SQLITE_DONE => Err(message(target, "the snapshot could not be finished")),
            _ => Err(message(target, "copying the pages failed")),
        }
    }

    /// SQLite's last message on `db`, after `what`.
    fn message(db: NonNull<ffi::sqlite3>, what: &str) -> String {
        // SAFETY: `db` is an open connection held by the caller; `sqlite3_errmsg` returns a
        // NUL-terminated string owned by SQLite, valid until the next call on `db`, and it is
        // copied before anything else is called.
        let text = unsafe { CStr::from_ptr(ffi::sqlite3_errmsg(db.as_ptr())) };
        format!("{what}: {}", text.to_string_lossy())
    }
}
