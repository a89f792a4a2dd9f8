//! The OS's change notices for the document folders (notify), each batch turned into a pass
//! over the folder it concerns. Passes are what keep the index right; the watcher only says
//! when to run one, so a missed notice costs freshness, never correctness (the owner's Rescan,
//! and the pass at start, catch up).
//!
//! Notices of reading (an open, a close without writing) are dropped here: a pass opens every
//! folder and every changed file, and Linux's watcher reports those opens, so counting them
//! would make each pass start the next for as long as Hearth runs. notify's debouncer-mini
//! cannot tell reads from writes (its events carry no kind), so the batching is done here: the
//! notices that arrive within [`DEBOUNCE`] of each other are one pass.

use std::path::{Path, PathBuf};
use std::sync::Weak;
use std::time::Duration;

use notify_debouncer_mini::notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use super::Inner;

/// Notices within this long of each other are one.
const DEBOUNCE: Duration = Duration::from_millis(500);

/// The running watcher: dropping it stops the notices and ends its task.
pub struct Watching {
    watcher: RecommendedWatcher,
}

impl Watching {
    /// Watches one more folder.
    pub(super) fn add(&mut self, folder: &Path) {
        if let Err(err) = self.watcher.watch(folder, RecursiveMode::Recursive) {
            tracing::warn!(error = %err, folder = %folder.display(), "changes in a document folder will not be noticed; Rescan picks them up");
        }
    }

    /// Stops watching a folder.
    pub(super) fn remove(&mut self, folder: &Path) {
        // A folder already gone has no watch left to remove.
        let _ = self.watcher.unwatch(folder);
    }
}

/// Starts the watcher over `folders`; each batch of notices runs a pass over the folders it
/// touches and then counts one on `inner.watch_passes`. `None` when the OS gives no watcher.
pub(super) fn start(inner: Weak<Inner>, folders: &[PathBuf]) -> Option<Watching> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<PathBuf>>();
    let watcher = notify_debouncer_mini::notify::recommended_watcher(move |event: notify_debouncer_mini::notify::Result<Event>| {
        match event {
            // Reading changes nothing to index (and a pass's own reads would start the next).
            Ok(event) if matches!(event.kind, EventKind::Access(_)) => {}
            Ok(event) => {
                // The receiver is gone only when the index is: nothing is left to tell.
                let _ = tx.send(event.paths);
            }
            Err(err) => tracing::warn!(error = %err, "the document folders' watcher failed; Rescan picks changes up"),
        }
    });
    let watcher = match watcher {
        Ok(watcher) => watcher,
        Err(err) => {
            tracing::warn!(error = %err, "this system gives no file watcher; document folders are indexed on Rescan only");
            return None;
        }
    };
    let mut watching = Watching { watcher };
    for folder in folders {
        watching.add(folder);
    }
    tokio::spawn(async move {
        while let Some(mut paths) = rx.recv().await {
            // A save that writes a file in several steps is one pass: what comes within
            // DEBOUNCE of the last notice joins this batch.
            loop {
                tokio::select! {
                    more = rx.recv() => match more {
                        Some(more) => paths.extend(more),
                        None => return,
                    },
                    () = tokio::time::sleep(DEBOUNCE) => break,
                }
            }
            let Some(inner) = inner.upgrade() else { return };
            // Hearth's own writes (a folder may hold its data folder) are no change to index:
            // counting them would make every pass's own write start the next.
            let paths: Vec<PathBuf> = paths.into_iter().filter(|p| !p.starts_with(&inner.data_dir)).collect();
            if paths.is_empty() {
                continue;
            }
            let index = super::DocIndex { inner };
            let folders = match index.inner.store.doc_folders().await {
                Ok(folders) => folders,
                Err(err) => {
                    tracing::warn!(error = %err, "the document folders could not be read after a change");
                    continue;
                }
            };
            for (id, folder) in folders {
                let folder = PathBuf::from(folder);
                if paths.iter().any(|p| p.starts_with(&folder))
                    && let Err(err) = index.rescan_folder(id, &folder).await
                {
                    tracing::warn!(error = %err, "a document folder could not be indexed after a change");
                }
            }
            index.inner.watch_passes.send_modify(|n| *n += 1);
        }
    });
    Some(watching)
}
