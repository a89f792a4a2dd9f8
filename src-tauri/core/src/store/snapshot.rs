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
                outcome = super::page_copy::copy(source_handle.as_raw_handle(), target_handle.as_raw_handle());
                match &outcome {
                    // A checkpoint holds its lock for milliseconds: wait a little before the next try
                    // (50 × 20 ms), rather than spending every try at once.
                    Err(why) if why.starts_with(super::page_copy::BUSY) => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
                    _ => break,
                }
            }
            outcome
        };
        target.close().await.map_err(|err| StoreError::Snapshot { path: dest.to_owned(), detail: err.to_string() })?;
        copied.map_err(|detail| StoreError::Snapshot { path: dest.to_owned(), detail })
    }
}
