//! Every page of one connection's main database written over another's, in one step, through
//! SQLite's online backup API: the snapshot a backup takes (`snapshot.rs`) and the pre-upgrade
//! copy an upgrade writes back (`upgrade.rs`) both use it. The calls into SQLite's C API are
//! here alone, small on purpose: the only `unsafe` in the store.
#![expect(unsafe_code, reason = "SQLite's online backup API is C; each call's SAFETY note says why it is sound")]

use std::ffi::CStr;
use std::ptr::NonNull;

use libsqlite3_sys as ffi;

/// How a busy or locked answer's message starts (the caller retries those).
pub(super) const BUSY: &str = "busy:";

/// Copies every page of `source`'s main database into `target`'s, in one step.
///
/// Both handles come from `LockedSqliteHandle::as_raw_handle`, whose guards the caller
/// holds for the whole call: no other thread uses either connection meanwhile.
pub(super) fn copy(source: NonNull<ffi::sqlite3>, target: NonNull<ffi::sqlite3>) -> Result<(), String> {
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
