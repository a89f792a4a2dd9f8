//! The owner's document folders, the text indexed from them and the files skipped with a note
//! (migration 0036). Ranking is FTS5's bm25 over `doc_files_fts`, a title match weighing more
//! than a body match; the passage is FTS5's `snippet()`.

use std::collections::HashMap;

use hearth_protocol::documents::{DocFileId, DocFolderId, DocFolderView, DocHit, SkipReason, SkippedFileView};
use sqlx::Row;

use super::error::{Result, StoreError};
use super::{Store, now_ms};

/// At most this many skipped files are listed per folder (all are counted).
const MAX_SKIPPED_LISTED: i64 = 200;
/// Tokens of context in a passage.
const PASSAGE_TOKENS: i64 = 24;

/// What the index holds about one path, to decide whether a pass must read it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownFile {
    /// Size when last read.
    pub size: u64,
    /// Modification time when last read, Unix ms.
    pub mtime_ms: i64,
    /// Content hash of an indexed file; `None` for a skipped one.
    pub sha256: Option<String>,
}

/// A file's text to index.
#[derive(Debug, Clone)]
pub struct IndexedFile<'a> {
    /// The folder it is in.
    pub folder: DocFolderId,
    /// Its path.
    pub path: &'a str,
    /// Its title.
    pub title: &'a str,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, Unix ms.
    pub mtime_ms: i64,
    /// Hex SHA-256 of its bytes.
    pub sha256: &'a str,
    /// Its text (already bounded).
    pub body: &'a str,
}

/// A file not indexed, with why.
#[derive(Debug, Clone)]
pub struct SkippedFile<'a> {
    /// The folder it is in.
    pub folder: DocFolderId,
    /// Its path.
    pub path: &'a str,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, Unix ms.
    pub mtime_ms: i64,
    /// Why.
    pub reason: SkipReason,
    /// What the owner is told.
    pub note: &'a str,
}

/// An indexed file's stored text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredText {
    /// Its path.
    pub path: String,
    /// Its title.
    pub title: String,
    /// Its text.
    pub body: String,
}

fn size_of(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

fn stored_size(size: u64) -> i64 {
    i64::try_from(size).unwrap_or(i64::MAX)
}

impl Store {
    /// Adds a folder (its canonical path). A folder already added is a conflict.
    pub async fn doc_folder_add(&self, path: &str) -> Result<DocFolderId> {
        let mut writer = self.writer().await;
        let row = sqlx::query("INSERT INTO doc_folders (path, added_at) VALUES (?1, ?2) ON CONFLICT (path) DO NOTHING RETURNING id")
            .bind(path)
            .bind(now_ms())
            .fetch_optional(&mut *writer)
            .await?;
        match row {
            Some(row) => Ok(DocFolderId(row.try_get("id")?)),
            None => Err(StoreError::Conflict(format!("The folder {path} is already in Documents."))),
        }
    }

    /// Removes a folder and everything indexed or noted from it (cascade; the FTS index follows
    /// through its trigger).
    pub async fn doc_folder_remove(&self, id: DocFolderId) -> Result<()> {
        let mut writer = self.writer().await;
        let done = sqlx::query("DELETE FROM doc_folders WHERE id = ?1").bind(id.0).execute(&mut *writer).await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("No document folder has id {}; the list may be out of date.", id.0)));
        }
        Ok(())
    }

    /// Every folder, in the order added.
    pub async fn doc_folders(&self) -> Result<Vec<(DocFolderId, String)>> {
        let rows = sqlx::query("SELECT id, path FROM doc_folders ORDER BY id").fetch_all(self.reader()).await?;
        rows.iter().map(|row| Ok((DocFolderId(row.try_get("id")?), row.try_get("path")?))).collect()
    }

    /// Every folder with its counts and its skipped files.
    pub async fn doc_folder_views(&self) -> Result<Vec<DocFolderView>> {
        let rows = sqlx::query(
            "SELECT d.id, d.path, d.added_at, d.scanned_at,
                    (SELECT COUNT(*) FROM doc_files f WHERE f.folder_id = d.id) AS files,
                    (SELECT COALESCE(SUM(LENGTH(CAST(f.body AS BLOB))), 0) FROM doc_files f WHERE f.folder_id = d.id) AS text_bytes,
                    (SELECT COUNT(*) FROM doc_skipped s WHERE s.folder_id = d.id) AS skipped_count
             FROM doc_folders d ORDER BY d.id",
        )
        .fetch_all(self.reader())
        .await?;
        let mut views = Vec::with_capacity(rows.len());
        for row in rows {
            let id = DocFolderId(row.try_get("id")?);
            views.push(DocFolderView {
                id,
                path: row.try_get("path")?,
                files: size_of(row.try_get("files")?),
                text_bytes: size_of(row.try_get("text_bytes")?),
                skipped: self.doc_skipped(id).await?,
                skipped_count: size_of(row.try_get("skipped_count")?),
                added_at: row.try_get("added_at")?,
                scanned_at: row.try_get("scanned_at")?,
            });
        }
        Ok(views)
    }

    /// A folder's skipped files, by path.
    pub async fn doc_skipped(&self, folder: DocFolderId) -> Result<Vec<SkippedFileView>> {
        let rows = sqlx::query("SELECT path, size, reason, note FROM doc_skipped WHERE folder_id = ?1 ORDER BY path LIMIT ?2")
            .bind(folder.0)
            .bind(MAX_SKIPPED_LISTED)
            .fetch_all(self.reader())
            .await?;
        rows.iter()
            .map(|row| {
                let reason: String = row.try_get("reason")?;
                Ok(SkippedFileView {
                    path: row.try_get("path")?,
                    size: size_of(row.try_get("size")?),
                    reason: SkipReason::parse(&reason).ok_or_else(|| StoreError::CorruptRow(format!("doc_skipped.reason {reason:?}")))?,
                    note: row.try_get("note")?,
                })
            })
            .collect()
    }

    /// What the index holds about each path of a folder, indexed or skipped.
    pub async fn doc_known(&self, folder: DocFolderId) -> Result<HashMap<String, KnownFile>> {
        let rows = sqlx::query(
            "SELECT path, size, mtime_ms, sha256 FROM doc_files WHERE folder_id = ?1
             UNION ALL SELECT path, size, mtime_ms, NULL FROM doc_skipped WHERE folder_id = ?1",
        )
        .bind(folder.0)
        .fetch_all(self.reader())
        .await?;
        let mut known = HashMap::with_capacity(rows.len());
        for row in rows {
            known.insert(
                row.try_get("path")?,
                KnownFile { size: size_of(row.try_get("size")?), mtime_ms: row.try_get("mtime_ms")?, sha256: row.try_get("sha256")? },
            );
        }
        Ok(known)
    }

    /// Indexes a file's text (new or changed), replacing a note that it was skipped.
    pub async fn doc_file_put(&self, file: &IndexedFile<'_>) -> Result<()> {
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin(&mut *writer).await?;
        sqlx::query("DELETE FROM doc_skipped WHERE path = ?1").bind(file.path).execute(&mut *tx).await?;
        sqlx::query(
            "INSERT INTO doc_files (folder_id, path, title, size, mtime_ms, sha256, body, indexed_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (path) DO UPDATE SET folder_id = excluded.folder_id, title = excluded.title, size = excluded.size,
                 mtime_ms = excluded.mtime_ms, sha256 = excluded.sha256, body = excluded.body, indexed_at = excluded.indexed_at",
        )
        .bind(file.folder.0)
        .bind(file.path)
        .bind(file.title)
        .bind(stored_size(file.size))
        .bind(file.mtime_ms)
        .bind(file.sha256)
        .bind(file.body)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// A file whose time changed but whose bytes did not: only its size and time are noted.
    pub async fn doc_file_touch(&self, path: &str, size: u64, mtime_ms: i64) -> Result<()> {
        let mut writer = self.writer().await;
        sqlx::query("UPDATE doc_files SET size = ?2, mtime_ms = ?3 WHERE path = ?1")
            .bind(path)
            .bind(stored_size(size))
            .bind(mtime_ms)
            .execute(&mut *writer)
            .await?;
        Ok(())
    }

    /// Notes a file that was not indexed, dropping any text indexed from it before.
    pub async fn doc_skip_put(&self, file: &SkippedFile<'_>) -> Result<()> {
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin(&mut *writer).await?;
        sqlx::query("DELETE FROM doc_files WHERE path = ?1").bind(file.path).execute(&mut *tx).await?;
        sqlx::query(
            "INSERT INTO doc_skipped (folder_id, path, size, mtime_ms, reason, note, seen_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (path) DO UPDATE SET folder_id = excluded.folder_id, size = excluded.size, mtime_ms = excluded.mtime_ms,
                 reason = excluded.reason, note = excluded.note, seen_at = excluded.seen_at",
        )
        .bind(file.folder.0)
        .bind(file.path)
        .bind(stored_size(file.size))
        .bind(file.mtime_ms)
        .bind(file.reason.as_str())
        .bind(file.note)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Forgets paths that are gone (indexed or skipped), in one transaction.
    pub async fn doc_forget(&self, paths: &[String]) -> Result<()> {
        if paths.is_empty() {
            return Ok(());
        }
        let mut writer = self.writer().await;
        let mut tx = sqlx::Connection::begin(&mut *writer).await?;
        for path in paths {
            sqlx::query("DELETE FROM doc_files WHERE path = ?1").bind(path).execute(&mut *tx).await?;
            sqlx::query("DELETE FROM doc_skipped WHERE path = ?1").bind(path).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Notes that a full pass over a folder ended.
    pub async fn doc_folder_scanned(&self, folder: DocFolderId) -> Result<()> {
        let mut writer = self.writer().await;
        sqlx::query("UPDATE doc_folders SET scanned_at = ?2 WHERE id = ?1").bind(folder.0).bind(now_ms()).execute(&mut *writer).await?;
        Ok(())
    }

    /// Files matching an FTS5 query (built by `crate::fts`), best first (bm25, a title match
    /// counting five times a body match), each with its best passage, at most `limit`.
    pub async fn doc_search(&self, fts_query: &str, limit: u32) -> Result<Vec<DocHit>> {
        // Ordered by FTS5's own `rank` (set to the weighted bm25 in the query), so the table
        // hands rows over already sorted and `snippet()` runs for the `limit` rows returned
        // only; ordered by a bm25() column instead, SQLite would build every match's passage
        // before sorting (a common word matches most files).
        let rows = sqlx::query(
            "SELECT f.id, f.path, f.title,
                    snippet(doc_files_fts, -1, '[', ']', '…', ?3) AS passage,
                    doc_files_fts.rank AS score
             FROM doc_files_fts JOIN doc_files f ON f.id = doc_files_fts.rowid
             WHERE doc_files_fts MATCH ?1 AND doc_files_fts.rank MATCH 'bm25(5.0, 1.0)'
             ORDER BY doc_files_fts.rank LIMIT ?2",
        )
        .bind(fts_query)
        .bind(i64::from(limit))
        .bind(PASSAGE_TOKENS)
        .fetch_all(self.reader())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(DocHit {
                    file_id: DocFileId(row.try_get("id")?),
                    path: row.try_get("path")?,
                    title: row.try_get("title")?,
                    passage: row.try_get("passage")?,
                    score: row.try_get("score")?,
                })
            })
            .collect()
    }

    /// An indexed file's text.
    pub async fn doc_text(&self, file: DocFileId) -> Result<StoredText> {
        let row = sqlx::query("SELECT path, title, body FROM doc_files WHERE id = ?1").bind(file.0).fetch_optional(self.reader()).await?;
        let Some(row) = row else {
            return Err(StoreError::NotFound(format!("No indexed document has id {}; search again.", file.0)));
        };
        Ok(StoredText { path: row.try_get("path")?, title: row.try_get("title")?, body: row.try_get("body")? })
    }

    /// The indexed text of the file at `path` (as the index holds it now), if it is indexed.
    pub async fn doc_text_at(&self, path: &str) -> Result<Option<StoredText>> {
        let row = sqlx::query("SELECT path, title, body FROM doc_files WHERE path = ?1").bind(path).fetch_optional(self.reader()).await?;
        row.map(|row| Ok(StoredText { path: row.try_get("path")?, title: row.try_get("title")?, body: row.try_get("body")? })).transpose()
    }

    /// How many files are indexed, in every folder.
    pub async fn doc_file_count(&self) -> Result<u64> {
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM doc_files").fetch_one(self.reader()).await?;
        Ok(size_of(count))
    }
}
