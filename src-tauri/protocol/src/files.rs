//! The owner's files (PDFs imported from mail or filled by Hearth) and the Files screen's IPC.

use serde::{Deserialize, Serialize};

use crate::error::IpcError;
use crate::ids::{FileId, OperationId};
use crate::pdf::{FieldValues, PdfInfo};

/// Smallest and largest render scale (1.0 = 72 dpi).
pub const RENDER_SCALE_RANGE: (f32, f32) = (0.25, 4.0);

/// Where a file came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileSource {
    /// Imported from a mail attachment.
    MailAttachment,
    /// Filled by Hearth from another file (see `parent_id`).
    Filled,
    /// Exported from the computer's /workspace (see `source_ref`, the path it came from).
    Computer,
    /// Downloaded by the agent's browser (see `source_ref`, the address it came from).
    Web,
    /// Chosen by the owner from their own disk on the Files screen.
    Disk,
}

/// One file in the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileView {
    /// File id.
    pub id: FileId,
    /// Display name (sanitized, ≤ 180 characters).
    pub name: String,
    /// Bytes.
    pub size: i64,
    /// Pages.
    pub pages: u16,
    /// Form fields.
    pub fields: u16,
    /// Where it came from.
    pub source: FileSource,
    /// The file it was filled from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<FileId>,
    /// The parent's name, for the "filled from" line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_name: Option<String>,
    /// sha256 of the bytes (hex).
    pub sha256: String,
    /// Unix ms.
    pub created_at: i64,
}

/// Answer to `file_list`, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileListResponse {
    /// The files.
    pub files: Vec<FileView>,
}

/// The largest PDF the owner may import from disk: 25 MiB.
pub const MAX_IMPORT_BYTES: usize = 25 * 1024 * 1024;

/// `file_import`: the owner imports a PDF from their disk. Its operation id (one per file the
/// owner chose) becomes the file's id, so a repeated request keeps one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileImportParams {
    /// One per chosen file, made by the window.
    pub operation_id: OperationId,
    /// The file's name on disk.
    pub name: String,
    /// Its bytes, base64 (standard alphabet, padded).
    pub bytes_base64: String,
}

impl FileImportParams {
    /// A name, and no more than [`MAX_IMPORT_BYTES`] once decoded (the operation id checked
    /// itself when it was parsed).
    pub fn validate(&self) -> Result<(), IpcError> {
        if self.name.trim().is_empty() || self.name.len() > 1_000 {
            return Err(IpcError::invalid("The file needs a name of at most 1,000 bytes."));
        }
        if self.bytes_base64.len() / 4 * 3 > MAX_IMPORT_BYTES + 3 {
            return Err(IpcError::invalid(format!(
                "{} is larger than {} MiB; Hearth imports PDFs up to that size.",
                self.name,
                MAX_IMPORT_BYTES / (1024 * 1024)
            )));
        }
        Ok(())
    }
}

/// `file_delete`: the owner deletes a file's bytes (its record stays for receipts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDeleteParams {
    /// The file.
    pub file_id: FileId,
}

impl FileDeleteParams {
    /// Nothing left to check: the file id checked itself when it was parsed. Kept so every
    /// command reads alike (parse, validate, call the core).
    pub fn validate(&self) -> Result<(), IpcError> {
        Ok(())
    }
}

/// `file_get`: one file with its pages and fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileGetParams {
    /// The file.
    pub file_id: FileId,
}

impl FileGetParams {
    /// Nothing left to check: the file id checked itself when it was parsed. Kept so every
    /// command reads alike (parse, validate, call the core).
    pub fn validate(&self) -> Result<(), IpcError> {
        Ok(())
    }
}

/// Answer to `file_get`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDetail {
    /// The file.
    pub file: FileView,
    /// Its pages and fields with their current values.
    pub info: PdfInfo,
}

/// `file_render`: one page as a PNG.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileRenderParams {
    /// The file.
    pub file_id: FileId,
    /// The page (1-based).
    pub page: u16,
    /// 1.0 = 72 dpi; within [`RENDER_SCALE_RANGE`].
    pub scale: f32,
}

impl FileRenderParams {
    /// Checks the page and scale (the file id checked itself when it was parsed).
    pub fn validate(&self) -> Result<(), IpcError> {
        if self.page == 0 {
            return Err(IpcError::invalid("Pages are numbered from 1."));
        }
        let (lo, hi) = RENDER_SCALE_RANGE;
        if !self.scale.is_finite() || self.scale < lo || self.scale > hi {
            return Err(IpcError::invalid(format!("The zoom must be between {lo} and {hi}.")));
        }
        Ok(())
    }
}

/// Answer to `file_render`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileRenderResponse {
    /// `data:image/png;base64,…`, ready for an `<img src>`.
    pub data_url: String,
    /// Pixels.
    pub width: u32,
    /// Pixels.
    pub height: u32,
}

/// `file_fill`: the owner fills a copy by hand in the form editor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileFillParams {
    /// The file to fill from (never changed).
    pub file_id: FileId,
    /// Field name → value.
    pub values: FieldValues,
}

impl FileFillParams {
    /// Checks that there is something to fill (the file id checked itself when it was parsed).
    pub fn validate(&self) -> Result<(), IpcError> {
        if self.values.is_empty() {
            return Err(IpcError::invalid("Enter at least one field value."));
        }
        if self.values.len() > 500 {
            return Err(IpcError::invalid("A form can take at most 500 values at once."));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn render_params_are_bounded() {
        let ok = FileRenderParams { file_id: FileId::parse("f1").unwrap(), page: 1, scale: 1.5 };
        assert!(ok.validate().is_ok());
        assert!(FileRenderParams { page: 0, ..ok.clone() }.validate().is_err());
        assert!(FileRenderParams { scale: 9.0, ..ok.clone() }.validate().is_err());
        assert!(FileRenderParams { scale: f32::NAN, ..ok }.validate().is_err());
    }
}
