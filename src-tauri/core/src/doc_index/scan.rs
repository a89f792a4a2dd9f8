//! One pass over a folder. The walk (walkdir, links not followed, hidden entries and Hearth's
//! data folder left out) lists each regular file's size and modification time; a file whose
//! size and time match the index is not opened; one that changed is read and hashed, and only
//! re-indexed when its bytes changed; a path the walk no longer finds is forgotten. A pass
//! stops at its time budget; the next pass finds what it indexed unchanged and goes on.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Instant, UNIX_EPOCH};

use hearth_protocol::documents::{DocFolderId, SkipReason};
use sha2::{Digest, Sha256};

use super::extract::{Extracted, extract};
use super::limits::IndexLimits;
use crate::error::{CoreError, Result};
use crate::files::FileStore;
use crate::pdf::PdfEngine;
use crate::store::Store;
use crate::store::documents::{IndexedFile, SkippedFile};

/// What a pass did, for the caller, the logs and the benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PassReport {
    /// Regular files the walk found.
    pub seen: u64,
    /// Files whose text was (re)indexed.
    pub indexed: u64,
    /// Files left as they were (same size and time, or same bytes).
    pub unchanged: u64,
    /// Files noted as skipped this pass.
    pub skipped: u64,
    /// Paths forgotten because they are gone.
    pub removed: u64,
    /// Bytes read from files this pass.
    pub bytes_read: u64,
    /// Every file was looked at (not cut short by the time budget or the file limit).
    pub complete: bool,
}

impl PassReport {
    /// Adds another folder's pass (complete only if both are).
    pub fn add(&mut self, other: &Self) {
        self.seen += other.seen;
        self.indexed += other.indexed;
        self.unchanged += other.unchanged;
        self.skipped += other.skipped;
        self.removed += other.removed;
        self.bytes_read += other.bytes_read;
        self.complete &= other.complete;
    }
}

/// A regular file as the walk saw it.
struct Seen {
    path: PathBuf,
    text: String,
    size: u64,
    mtime_ms: i64,
}

/// A pass over `folder` (row `id`), leaving `data_dir` out.
pub(super) async fn pass(
    store: &Store,
    files: &FileStore,
    limits: IndexLimits,
    data_dir: &Path,
    id: DocFolderId,
    folder: &Path,
) -> Result<PassReport> {
    let started = Instant::now();
    let mut report = PassReport { complete: true, ..PassReport::default() };
    if !folder.is_dir() {
        // An unplugged disk or a renamed folder: its index stays until the owner removes it.
        tracing::warn!(folder = %folder.display(), "a document folder cannot be opened; its index is kept as it was");
        report.complete = false;
        return Ok(report);
    }
    let (walked, cut) = {
        let folder = folder.to_path_buf();
        let data_dir = data_dir.to_path_buf();
        tokio::task::spawn_blocking(move || walk(&folder, &data_dir, limits.max_files))
            .await
            .map_err(|err| CoreError::Conflict(format!("indexing stopped unexpectedly ({err}); rescan the folder")))?
    };
    report.complete = !cut;
    report.seen = walked.len() as u64;
    let mut known = store.doc_known(id).await?;
    let present: HashSet<&str> = walked.iter().map(|s| s.text.as_str()).collect();
    let gone: Vec<String> = known.keys().filter(|p| !present.contains(p.as_str())).cloned().collect();
    store.doc_forget(&gone).await?;
    report.removed = gone.len() as u64;
    let mut engine: Option<std::result::Result<PdfEngine, String>> = None;
    for file in walked {
        if started.elapsed() > limits.pass_time {
            report.complete = false;
            break;
        }
        let before = known.remove(&file.text);
        if before.as_ref().is_some_and(|k| k.size == file.size && k.mtime_ms == file.mtime_ms) {
            report.unchanged += 1;
            continue;
        }
        if file.size > limits.max_file_bytes {
            let note = format!("not read: {} is larger than the {} limit", megabytes(file.size), megabytes(limits.max_file_bytes));
            skip(store, id, &file, SkipReason::TooLarge, &note).await?;
            report.skipped += 1;
            continue;
        }
        let pdf = if super::extract::FileKind::of(&file.path) == super::extract::FileKind::Pdf {
            let engine = engine.get_or_insert_with(|| files.engine().map_err(|err| err.to_string()));
            Some(engine.clone())
        } else {
            None
        };
        let path = file.path.clone();
        let read = tokio::task::spawn_blocking(move || read_one(&path, pdf, limits))
            .await
            .map_err(|err| CoreError::Conflict(format!("indexing stopped unexpectedly ({err}); rescan the folder")))?;
        match read {
            Read::Failed(detail) => {
                skip(store, id, &file, SkipReason::Unreadable, &format!("not read: {detail}")).await?;
                report.skipped += 1;
            }
            Read::Done { sha256, bytes, extracted } => {
                report.bytes_read += bytes;
                if before.as_ref().and_then(|k| k.sha256.as_deref()) == Some(sha256.as_str()) {
                    store.doc_file_touch(&file.text, file.size, file.mtime_ms).await?;
                    report.unchanged += 1;
                    continue;
                }
                match extracted {
                    Extracted::Text { title, body } => {
                        let row = IndexedFile {
                            folder: id,
                            path: &file.text,
                            title: &title,
                            size: file.size,
                            mtime_ms: file.mtime_ms,
                            sha256: &sha256,
                            body: &body,
                        };
                        store.doc_file_put(&row).await?;
                        report.indexed += 1;
                    }
                    Extracted::Skipped { reason, note } => {
                        skip(store, id, &file, reason, &note).await?;
                        report.skipped += 1;
                    }
                }
            }
        }
    }
    if report.complete {
        store.doc_folder_scanned(id).await?;
    }
    tracing::info!(
        seen = report.seen,
        indexed = report.indexed,
        skipped = report.skipped,
        removed = report.removed,
        complete = report.complete,
        "document folder indexed"
    );
    Ok(report)
}

async fn skip(store: &Store, folder: DocFolderId, file: &Seen, reason: SkipReason, note: &str) -> Result<()> {
    let row = SkippedFile { folder, path: &file.text, size: file.size, mtime_ms: file.mtime_ms, reason, note };
    Ok(store.doc_skip_put(&row).await?)
}

enum Read {
    Done { sha256: String, bytes: u64, extracted: Extracted },
    Failed(String),
}

fn read_one(path: &Path, pdf: Option<std::result::Result<PdfEngine, String>>, limits: IndexLimits) -> Read {
    let bytes = match read_regular(path, limits.max_file_bytes) {
        Ok(bytes) => bytes,
        Err(why) => return Read::Failed(why),
    };
    let sha256 = hex::encode(Sha256::digest(&bytes));
    let engine = match &pdf {
        Some(Ok(engine)) => Ok(engine),
        Some(Err(why)) => Err(why.as_str()),
        None => Err("not a PDF"),
    };
    let extracted = extract(path, &bytes, engine, limits);
    Read::Done { sha256, bytes: bytes.len() as u64, extracted }
}

/// The bytes of `path`, read only if it is still a regular file of at most `max` bytes when it
/// is opened: the walk looked at it a moment earlier, and in between it may have become a link
/// (to a key file, or `/dev/zero`), a FIFO (a read that never returns, holding up every pass)
/// or a file that grew past the limit. The link is not followed, the open does not wait, the
/// handle itself is checked, and no more than `max` bytes are read.
fn read_regular(path: &Path, max: u64) -> std::result::Result<Vec<u8>, String> {
    use std::io::Read as _;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let file: std::fs::File = {
        use rustix::fs::{Mode, OFlags};
        rustix::fs::open(path, OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC, Mode::empty())
            .map_err(|err| std::io::Error::from(err).kind().to_string())?
            .into()
    };
    // Elsewhere the link is followed; the handle's own check below still refuses anything but a
    // regular file within the limit.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let file = std::fs::File::open(path).map_err(|err| err.kind().to_string())?;
    let meta = file.metadata().map_err(|err| err.kind().to_string())?;
    if !meta.is_file() {
        return Err("it is no longer a regular file".to_owned());
    }
    if meta.len() > max {
        return Err(format!("it grew past the {max}-byte limit while it was being indexed"));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max.saturating_add(1)).read_to_end(&mut bytes).map_err(|err| err.kind().to_string())?;
    if bytes.len() as u64 > max {
        return Err(format!("it grew past the {max}-byte limit while it was being indexed"));
    }
    Ok(bytes)
}

/// The regular files under `folder`, sorted, at most `max`, and whether the walk was cut at `max`.
fn walk(folder: &Path, data_dir: &Path, max: usize) -> (Vec<Seen>, bool) {
    let data_dir = data_dir.canonicalize().unwrap_or_else(|_| data_dir.to_path_buf());
    let mut seen = Vec::new();
    let entries = walkdir::WalkDir::new(folder).follow_links(false).sort_by_file_name().into_iter().filter_entry(|entry| {
        entry.depth() == 0 || (!entry.file_name().to_string_lossy().starts_with('.') && !entry.path().starts_with(&data_dir))
    });
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            // A folder it may not read: the rest of the walk goes on.
            Err(err) => {
                tracing::debug!(error = %err, "a path in a document folder cannot be read");
                continue;
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        if seen.len() == max {
            return (seen, true);
        }
        let Ok(meta) = entry.metadata() else { continue };
        let mtime_ms = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let path = entry.into_path();
        let Some(text) = path.to_str().map(str::to_owned) else {
            // A name that is not UTF-8 cannot be stored or shown as typed; it is left out.
            continue;
        };
        seen.push(Seen { path, text, size: meta.len(), mtime_ms });
    }
    (seen, false)
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
}
