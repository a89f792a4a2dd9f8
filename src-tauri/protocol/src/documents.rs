//! Search over the owner's documents: the folders Hearth indexes, what it could not read in
//! them and why, and the hits of a search with their matched passages.

use serde::{Deserialize, Serialize};

use crate::error::IpcError;

/// Longest folder path the owner may type.
pub const MAX_FOLDER_PATH: usize = 4_096;
/// Longest search query.
pub const MAX_QUERY_CHARS: usize = 500;
/// Most hits one search returns.
pub const MAX_HITS: u32 = 50;
/// Hits when the caller does not say.
pub const DEFAULT_HITS: u32 = 10;

/// A document folder, by its row id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DocFolderId(pub i64);

/// An indexed file, by its row id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DocFileId(pub i64);

/// Why a file in a document folder was not indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum SkipReason {
    /// Larger than the size limit.
    TooLarge,
    /// Its bytes are not text (NUL bytes, or mostly invalid UTF-8).
    Binary,
    /// A kind of file Hearth does not read yet (Office files, images).
    Unsupported,
    /// Reading it failed (permissions, a damaged or encrypted PDF, the time limit).
    Unreadable,
}

impl SkipReason {
    /// Every variant, in declaration order.
    pub const ALL: &'static [Self] = <Self as strum::VariantArray>::VARIANTS;

    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}

/// A file Hearth did not index, with the note the owner sees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedFileView {
    /// Its path.
    pub path: String,
    /// Size in bytes when it was looked at.
    pub size: u64,
    /// Why.
    pub reason: SkipReason,
    /// What the owner is told ("not read: larger than 20 MB").
    pub note: String,
}

/// A folder and what is indexed in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocFolderView {
    /// Id.
    pub id: DocFolderId,
    /// Its canonical path.
    pub path: String,
    /// Files indexed.
    pub files: u64,
    /// Bytes of text indexed.
    pub text_bytes: u64,
    /// Files not indexed, with why (at most 200 listed; `skipped_count` has them all).
    pub skipped: Vec<SkippedFileView>,
    /// How many files were not indexed.
    pub skipped_count: u64,
    /// Added, Unix ms.
    pub added_at: i64,
    /// The last full pass ended, Unix ms; none before the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scanned_at: Option<i64>,
}

/// `document_folder_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocFolderListResponse {
    /// The folders, in the order they were added.
    pub folders: Vec<DocFolderView>,
}

/// `document_folder_add`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocFolderAddParams {
    /// A folder on this computer (absolute, or starting with `~/`).
    pub path: String,
}

impl DocFolderAddParams {
    /// A path of 1 to 4,096 characters without NUL.
    pub fn validate(&self) -> Result<(), IpcError> {
        let path = self.path.trim();
        if path.is_empty() {
            return Err(IpcError::invalid("Type the folder's path, such as ~/Documents."));
        }
        if path.len() > MAX_FOLDER_PATH || path.contains('\0') {
            return Err(IpcError::invalid(format!("A folder's path is at most {MAX_FOLDER_PATH} characters, without NUL.")));
        }
        Ok(())
    }
}

/// `document_folder_remove`: stop indexing a folder and forget its text (the files stay).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocFolderRemoveParams {
    /// The folder.
    pub id: DocFolderId,
}

impl DocFolderRemoveParams {
    /// Ids are positive.
    pub fn validate(&self) -> Result<(), IpcError> {
        if self.id.0 <= 0 {
            return Err(IpcError::invalid("The folder's id is not valid."));
        }
        Ok(())
    }
}

/// `document_search`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocSearchParams {
    /// Words to look for.
    pub query: String,
    /// At most this many hits (1 to 50; 10 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

impl DocSearchParams {
    /// A query of 1 to 500 characters; a limit of 1 to 50.
    pub fn validate(&self) -> Result<(), IpcError> {
        check_query(&self.query)?;
        if let Some(limit) = self.limit
            && !(1..=MAX_HITS).contains(&limit)
        {
            return Err(IpcError::invalid(format!("Ask for 1 to {MAX_HITS} hits.")));
        }
        Ok(())
    }
}

/// A search query is 1 to [`MAX_QUERY_CHARS`] characters.
pub fn check_query(query: &str) -> Result<(), IpcError> {
    if query.trim().is_empty() {
        return Err(IpcError::invalid("Type some words to look for."));
    }
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(IpcError::invalid(format!("A search is at most {MAX_QUERY_CHARS} characters.")));
    }
    Ok(())
}

/// One file that matched, with its best passage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocHit {
    /// The file.
    pub file_id: DocFileId,
    /// Its path.
    pub path: String,
    /// Its title (the first heading or line, else its name).
    pub title: String,
    /// The matched passage, the matched words between `[` and `]`.
    pub passage: String,
    /// bm25 (lower is better, as SQLite ranks).
    pub score: f64,
}

/// `document_search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocSearchResponse {
    /// Best first.
    pub hits: Vec<DocHit>,
}

/// `document_preview`: a hit's text around the passage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocPreviewParams {
    /// The file.
    pub file_id: DocFileId,
    /// The search it was found by (the preview starts near its first match).
    #[serde(default)]
    pub query: String,
}

impl DocPreviewParams {
    /// Ids are positive; the query as in a search, or empty.
    pub fn validate(&self) -> Result<(), IpcError> {
        if self.file_id.0 <= 0 {
            return Err(IpcError::invalid("The file's id is not valid."));
        }
        if self.query.chars().count() > MAX_QUERY_CHARS {
            return Err(IpcError::invalid(format!("A search is at most {MAX_QUERY_CHARS} characters.")));
        }
        Ok(())
    }
}

/// `document_preview`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocPreview {
    /// The file.
    pub file_id: DocFileId,
    /// Its path.
    pub path: String,
    /// Its title.
    pub title: String,
    /// Its indexed text around the first match (at most 4,000 characters).
    pub text: String,
    /// Text was left out before `text`.
    pub cut_before: bool,
    /// Text was left out after `text`.
    pub cut_after: bool,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn search_params_are_bounded() {
        assert!(DocSearchParams { query: "tax".into(), limit: None }.validate().is_ok());
        assert!(DocSearchParams { query: "  ".into(), limit: None }.validate().is_err());
        assert!(DocSearchParams { query: "tax".into(), limit: Some(0) }.validate().is_err());
        assert!(DocSearchParams { query: "tax".into(), limit: Some(51) }.validate().is_err());
        assert!(DocSearchParams { query: "x".repeat(501), limit: None }.validate().is_err());
    }

    #[test]
    fn skip_reasons_round_trip_their_stored_spelling() {
        for &reason in SkipReason::ALL {
            assert_eq!(SkipReason::parse(reason.as_str()), Some(reason));
            assert_eq!(serde_json::to_value(reason).unwrap(), serde_json::json!(reason.as_str()));
        }
    }
}
