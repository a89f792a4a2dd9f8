//! The owner's files: one row per stored PDF (the bytes live under `<data>/files/`).

use hearth_protocol::files::{FileSource, FileView};
use hearth_protocol::ids::FileId;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::error::{Result, StoreError};
use super::{Store, now_ms};

/// A stored file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRow {
    /// Id (also the file name on disk, `<id>.pdf`).
    pub id: String,
    /// Sanitized display name.
    pub name: String,
    /// Absolute path of the bytes.
    pub path: String,
    /// Bytes.
    pub size: i64,
    /// Pages.
    pub pages: u16,
    /// Form fields.
    pub fields: u16,
    /// Where it came from.
    pub source: FileSource,
    /// The attachment id it was imported from.
    pub source_ref: Option<String>,
    /// The file it was filled from.
    pub parent_id: Option<String>,
    /// sha256 hex of the bytes.
    pub sha256: String,
    /// Unix ms.
    pub created_at: i64,
    /// Set when the owner deleted the bytes (the row stays).
    pub deleted_at: Option<i64>,
}

impl FileRow {
    fn from_row(row: &SqliteRow) -> Result<Self> {
        let source: String = row.try_get("source")?;
        Ok(Self {
            id: row.try_get("id")?,
            name: row.try_get("name")?,
            path: row.try_get("path")?,
            size: row.try_get("size")?,
            pages: u16::try_from(row.try_get::<i64, _>("pages")?).unwrap_or(u16::MAX),
            fields: u16::try_from(row.try_get::<i64, _>("fields")?).unwrap_or(u16::MAX),
            source: source_from_column(&source)?,
            source_ref: row.try_get("source_ref")?,
            parent_id: row.try_get("parent_id")?,
            sha256: row.try_get("sha256")?,
            created_at: row.try_get("created_at")?,
            deleted_at: row.try_get("deleted_at")?,
        })
    }

    /// The wire view (`parent_name` filled in by the caller that knows it).
    pub fn view(&self, parent_name: Option<String>) -> FileView {
        FileView {
            id: FileId::trusted(self.id.as_str()),
            name: self.name.clone(),
            size: self.size,
            pages: self.pages,
            fields: self.fields,
            source: self.source,
            parent_id: self.parent_id.as_deref().map(FileId::trusted),
            parent_name,
            sha256: self.sha256.clone(),
            created_at: self.created_at,
        }
    }
}

const COLUMNS: &str = "id, name, path, size, pages, fields, source, source_ref, parent_id, sha256, created_at, deleted_at";

impl Store {
    /// Records a file whose bytes are already on disk. Same id twice: the first row stays.
    pub async fn insert_file(&self, file: &FileRow) -> Result<FileRow> {
        let mut writer = self.writer().await;
        sqlx::query(
            "INSERT INTO files (id, name, path, size, pages, fields, source, source_ref, parent_id, sha256, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&file.id)
        .bind(&file.name)
        .bind(&file.path)
        .bind(file.size)
        .bind(i64::from(file.pages))
        .bind(i64::from(file.fields))
        .bind(source_column(file.source))
        .bind(&file.source_ref)
        .bind(&file.parent_id)
        .bind(&file.sha256)
        .bind(file.created_at)
        .execute(&mut *writer)
        .await?;
        drop(writer);
        Ok(self.get_file(&file.id).await?.unwrap_or_else(|| file.clone()))
    }

    /// One file, deleted or not.
    pub async fn get_file(&self, id: &str) -> Result<Option<FileRow>> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM files WHERE id = ?1")).bind(id).fetch_optional(self.reader()).await?;
        row.as_ref().map(FileRow::from_row).transpose()
    }

    /// Files not deleted, newest first.
    pub async fn list_files(&self, limit: i64) -> Result<Vec<FileRow>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM files WHERE deleted_at IS NULL ORDER BY created_at DESC, id LIMIT ?1"))
            .bind(limit)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(FileRow::from_row).collect()
    }

    /// Marks a file deleted (its row and hash stay for receipts and proposals).
    pub async fn mark_file_deleted(&self, id: &str) -> Result<bool> {
        let mut writer = self.writer().await;
        let done = sqlx::query("UPDATE files SET deleted_at = ?2 WHERE id = ?1 AND deleted_at IS NULL")
            .bind(id)
            .bind(now_ms())
            .execute(&mut *writer)
            .await?;
        Ok(done.rows_affected() == 1)
    }
}

/// `files.source` as stored.
fn source_column(source: FileSource) -> &'static str {
    match source {
        FileSource::Filled => "filled",
        FileSource::MailAttachment => "mail_attachment",
        FileSource::Computer => "computer",
        FileSource::Web => "web",
        FileSource::Disk => "disk",
    }
}

/// `files.source` read back; a value this build does not know is an error, not a guess.
fn source_from_column(text: &str) -> Result<FileSource> {
    match text {
        "filled" => Ok(FileSource::Filled),
        "mail_attachment" => Ok(FileSource::MailAttachment),
        "computer" => Ok(FileSource::Computer),
        "web" => Ok(FileSource::Web),
        "disk" => Ok(FileSource::Disk),
        other => Err(StoreError::CorruptRow(format!("files.source holds {other:?}, which this build does not know"))),
    }
}
