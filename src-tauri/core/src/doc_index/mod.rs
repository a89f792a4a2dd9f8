//! Search over the owner's documents: folders the owner adds, their files' text in SQLite's
//! FTS5 (bm25, with the matched passage), kept in step incrementally.
//!
//! - `folder.rs`: what may be a document folder (exists, a directory, canonical, not Hearth's
//!   own data folder nor inside it, nor holding it).
//! - `extract.rs`: a file's text by its kind (text, Markdown, HTML, PDF through `crate::pdf`),
//!   or why it was skipped (too large, binary, an old Office format, unreadable);
//!   `office.rs` reads Word, PowerPoint, Excel and OpenDocument files.
//! - `scan.rs`: one pass over a folder: walk, compare each file's size, time and hash with the
//!   index, read only what changed, forget what is gone, within a time budget.
//! - `watch.rs`: the OS's change notices (notify, debounced) trigger a pass over the folder
//!   they concern.
//!
//! The index is read by the `search_documents` tool (its results are outside content: a file
//! in the owner's folder was often written by someone else) and by the Documents screen.

mod extract;
mod folder;
mod limits;
mod office;
mod scan;
mod watch;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hearth_protocol::documents::{DocFileId, DocFolderId, DocFolderView, DocHit, DocPreview};

pub use extract::{Extracted, extract};
pub use folder::{FolderError, check_folder};
pub use limits::IndexLimits;
pub use scan::PassReport;
pub use watch::Watching;

use crate::error::{CoreError, Result};
use crate::files::FileStore;
use crate::store::Store;

/// Most characters of a preview.
pub const PREVIEW_CHARS: usize = 4_000;

/// The document index: the folders, a pass over them, the search. Cheap to clone.
#[derive(Clone)]
pub struct DocIndex {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    files: FileStore,
    data_dir: PathBuf,
    limits: IndexLimits,
    /// One pass at a time: a watcher's pass and the owner's wait for each other rather than
    /// reading the same files twice.
    pass: tokio::sync::Mutex<()>,
    /// The OS watcher, once started.
    watcher: std::sync::Mutex<Option<Watching>>,
    /// Passes the watcher has run (a test waits on a change of this, never on time).
    watch_passes: tokio::sync::watch::Sender<u64>,
}

impl DocIndex {
    /// An index over `store`, reading PDFs through `files`' engine; `data_dir` is Hearth's own
    /// folder, which is never indexed.
    pub fn new(store: Store, files: FileStore, data_dir: &Path, limits: IndexLimits) -> Self {
        // Canonical, as the folders and the watcher's paths are.
        let data_dir = data_dir.canonicalize().unwrap_or_else(|_| data_dir.to_path_buf());
        let inner = Inner {
            store,
            files,
            data_dir,
            limits,
            pass: tokio::sync::Mutex::new(()),
            watcher: std::sync::Mutex::new(None),
            watch_passes: tokio::sync::watch::Sender::new(0),
        };
        Self { inner: Arc::new(inner) }
    }

    /// The limits every pass keeps.
    pub fn limits(&self) -> IndexLimits {
        self.inner.limits
    }

    /// Adds a folder after checking it, then indexes it (one pass).
    pub async fn add_folder(&self, typed: &str) -> Result<(DocFolderId, PassReport)> {
        let path = check_folder(typed, &self.inner.data_dir).map_err(|err| CoreError::InvalidInput(err.to_string()))?;
        // A folder inside another (or holding one) would index its files twice, each pass
        // taking them from the other.
        for (_, existing) in self.inner.store.doc_folders().await? {
            let existing = Path::new(&existing);
            if existing != path && (path.starts_with(existing) || existing.starts_with(&path)) {
                return Err(CoreError::Conflict(format!(
                    "{} overlaps the folder {} already in Documents; remove that one first, or keep it",
                    path.display(),
                    existing.display()
                )));
            }
        }
        let text = path.to_string_lossy().into_owned();
        let id = self.inner.store.doc_folder_add(&text).await?;
        if let Some(watching) = self.watcher().as_mut() {
            watching.add(&path);
        }
        let report = self.rescan_folder(id, &path).await?;
        Ok((id, report))
    }

    /// Removes a folder and forgets its text (the files are not touched).
    pub async fn remove_folder(&self, id: DocFolderId) -> Result<()> {
        let _pass = self.inner.pass.lock().await;
        let path = self.inner.store.doc_folders().await?.into_iter().find(|(f, _)| *f == id).map(|(_, p)| PathBuf::from(p));
        self.inner.store.doc_folder_remove(id).await?;
        if let (Some(path), Some(watching)) = (path, self.watcher().as_mut()) {
            watching.remove(&path);
        }
        Ok(())
    }

    fn watcher(&self) -> std::sync::MutexGuard<'_, Option<Watching>> {
        self.inner.watcher.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The folders with their counts and skipped notes.
    pub async fn folders(&self) -> Result<Vec<DocFolderView>> {
        Ok(self.inner.store.doc_folder_views().await?)
    }

    /// A pass over every folder: what changed is read again, what is gone is forgotten.
    pub async fn rescan(&self) -> Result<PassReport> {
        let mut total = PassReport { complete: true, ..PassReport::default() };
        for (id, path) in self.inner.store.doc_folders().await? {
            // One folder that cannot be read does not hold back the others.
            match self.rescan_folder(id, Path::new(&path)).await {
                Ok(report) => total.add(&report),
                Err(err) => {
                    tracing::warn!(error = %err, "a document folder could not be indexed; the others were");
                    total.complete = false;
                }
            }
        }
        Ok(total)
    }

    /// A pass over one folder.
    pub async fn rescan_folder(&self, id: DocFolderId, path: &Path) -> Result<PassReport> {
        let _pass = self.inner.pass.lock().await;
        scan::pass(&self.inner.store, &self.inner.files, self.inner.limits, &self.inner.data_dir, id, path).await
    }

    /// Files matching `query` (words, never FTS syntax), best first, at most `limit`.
    pub async fn search(&self, query: &str, limit: u32) -> Result<Vec<DocHit>> {
        search(&self.inner.store, query, limit).await
    }

    /// A file's indexed text around the first word of `query` it holds.
    pub async fn preview(&self, file: DocFileId, query: &str) -> Result<DocPreview> {
        let stored = self.inner.store.doc_text(file).await?;
        let (text, cut_before, cut_after) = around(&stored.body, query, PREVIEW_CHARS);
        Ok(DocPreview { file_id: file, path: stored.path, title: stored.title, text, cut_before, cut_after })
    }

    /// Starts watching every folder (and each one added later); a change runs a pass over
    /// its folder. Returns whether the OS gave a watcher (without one, Rescan still works).
    /// Must be called within the Tokio runtime.
    pub async fn start_watching(&self) -> Result<bool> {
        let folders: Vec<PathBuf> = self.inner.store.doc_folders().await?.into_iter().map(|(_, p)| PathBuf::from(p)).collect();
        let started = watch::start(Arc::downgrade(&self.inner), &folders);
        let running = started.is_some();
        *self.watcher() = started;
        Ok(running)
    }

    /// How many passes the watcher has run: a test waits for this to change after touching a
    /// file, rather than sleeping.
    pub fn watch_passes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.watch_passes.subscribe()
    }
}

/// Files matching `query` (words, never FTS syntax: `crate::fts` builds the query), best
/// first, at most `limit`. The search_documents tool reads the index through this too.
pub async fn search(store: &Store, query: &str, limit: u32) -> Result<Vec<DocHit>> {
    let Some(fts) = crate::fts::words_query(query) else { return Ok(Vec::new()) };
    Ok(store.doc_search(&fts, limit).await?)
}

/// At most `max` characters of `body`, starting a little before the first word of `query`
/// found in it (case-insensitive), with whether text was cut before and after.
fn around(body: &str, query: &str, max: usize) -> (String, bool, bool) {
    let lower = body.to_lowercase();
    let first = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .filter_map(|w| lower.find(&w.to_lowercase()))
        .min()
        .unwrap_or(0);
    // `lower` may differ in length from `body` for a few scripts; count characters, not bytes.
    let first_char = lower.get(..first).map_or(0, |s| s.chars().count());
    let start = first_char.saturating_sub(max / 4);
    let total = body.chars().count();
    let text: String = body.chars().skip(start).take(max).collect();
    (text, start > 0, start + max < total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preview_starts_before_the_first_match_and_says_what_was_cut() {
        let body = format!("{}needle{}", "a".repeat(5_000), "b".repeat(5_000));
        let (text, before, after) = around(&body, "the needle", 100);
        assert!(text.contains("needle"));
        assert_eq!(text.chars().count(), 100);
        assert!(before && after);
        let (text, before, after) = around("short text", "absent", 100);
        assert_eq!((text.as_str(), before, after), ("short text", false, false));
    }
}
