//! The Documents screen's operations: the owner's folders (add, remove, list with counts and
//! what was skipped), a search with the matched passages, a hit's preview, and a rescan.

use hearth_protocol::documents::{
    DEFAULT_HITS, DocFolderAddParams, DocFolderListResponse, DocFolderRemoveParams, DocPreview, DocPreviewParams, DocSearchParams,
    DocSearchResponse,
};

use super::Hearth;
use crate::doc_index::{DocIndex, PassReport};
use crate::error::Result;

impl Hearth {
    /// The document index (tests drive its passes directly).
    pub fn documents(&self) -> &DocIndex {
        &self.documents
    }

    /// Every folder with its counts and skipped notes.
    pub async fn document_folder_list(&self) -> Result<DocFolderListResponse> {
        Ok(DocFolderListResponse { folders: self.documents.folders().await? })
    }

    /// Adds a folder and indexes it, then lists the folders.
    pub async fn document_folder_add(&self, params: &DocFolderAddParams) -> Result<DocFolderListResponse> {
        params.validate()?;
        self.documents.add_folder(&params.path).await?;
        self.document_folder_list().await
    }

    /// Removes a folder and forgets its text, then lists the folders.
    pub async fn document_folder_remove(&self, params: &DocFolderRemoveParams) -> Result<DocFolderListResponse> {
        params.validate()?;
        self.documents.remove_folder(params.id).await?;
        self.document_folder_list().await
    }

    /// Reads every folder again (what changed, what is gone), then lists the folders.
    pub async fn document_rescan(&self) -> Result<DocFolderListResponse> {
        self.documents.rescan().await?;
        self.document_folder_list().await
    }

    /// The hits for a search, best first.
    pub async fn document_search(&self, params: &DocSearchParams) -> Result<DocSearchResponse> {
        params.validate()?;
        Ok(DocSearchResponse { hits: self.documents.search(&params.query, params.limit.unwrap_or(DEFAULT_HITS)).await? })
    }

    /// A hit's text around its first match.
    pub async fn document_preview(&self, params: &DocPreviewParams) -> Result<DocPreview> {
        params.validate()?;
        self.documents.preview(params.file_id, &params.query).await
    }

    /// At start: a pass over every folder (what changed while Hearth was closed), then the
    /// watcher, in the background.
    pub(super) fn start_document_index(&self) {
        let documents = self.documents.clone();
        tokio::spawn(async move {
            match documents.rescan().await {
                Ok(PassReport { indexed, removed, .. }) => tracing::debug!(indexed, removed, "document folders caught up"),
                Err(err) => tracing::warn!(error = %err, "the document folders could not be indexed at start; Rescan tries again"),
            }
            if let Err(err) = documents.start_watching().await {
                tracing::warn!(error = %err, "the document folders' watcher could not start; Rescan picks changes up");
            }
        });
    }
}
