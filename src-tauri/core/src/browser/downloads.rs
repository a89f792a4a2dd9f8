//! What the agent's browser downloads, and what of it may stay.
//!
//! Chromium saves every download under its own id (`allowAndName`) in a folder of Hearth's,
//! one per profile, emptied whenever the browser starts or closes. Each download is judged as
//! it arrives, by the bytes and not by the name or the type the site claims: at most
//! [`MAX_DOWNLOADS`] per browser session and three arriving at once (the next is cancelled at
//! once), at most [`MAX_DOWNLOAD_BYTES`] (cancelled as soon as more arrives or the site
//! announces more), and a finished file must start with `%PDF-`; anything else is deleted,
//! with the reason kept for the tool that reports it. A Stop refuses new starts, then cancels
//! what is arriving. The download's request itself went through the egress proxy
//! like every other request of the page.
//!
//! A kept PDF goes into Files only through save_download, an effect in the journal: nothing
//! here writes to Files.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chromiumoxide::Browser;
use chromiumoxide::cdp::browser_protocol::browser::{
    CancelDownloadParams, DownloadProgressState, EventDownloadProgress, EventDownloadWillBegin, SetDownloadBehaviorBehavior,
    SetDownloadBehaviorParams,
};
use futures::{FutureExt, StreamExt};
use hearth_protocol::browser::{DownloadRefusal, DownloadStatus, DownloadView, MAX_DOWNLOAD_BYTES, MAX_DOWNLOADS};

/// The longest file name kept from a site's suggestion (characters).
const MAX_NAME: usize = 200;
/// How many downloads the ledger remembers: past [`MAX_DOWNLOADS`] the refused ones are kept
/// to report them, up to this many, so a page that starts downloads without end cannot grow it.
const MAX_REMEMBERED: usize = MAX_DOWNLOADS + 100;
/// How many downloads may arrive at once: Chromium reports progress a few times a second, so
/// each may pass the byte limit by what arrives between two reports before it is cancelled;
/// few at once keeps that bounded.
const MAX_ARRIVING: usize = 3;
/// How long one cancel may take before the follower goes on.
const CANCEL_LIMIT: std::time::Duration = std::time::Duration::from_secs(1);

/// One download of this session.
#[derive(Debug, Clone)]
struct Entry {
    guid: String,
    name: String,
    url: String,
    /// The frame that started it (a tab's main frame has the tab's id).
    frame: String,
    received: u64,
    status: DownloadStatus,
}

impl Entry {
    fn view(&self) -> DownloadView {
        DownloadView { id: self.guid.clone(), name: self.name.clone(), bytes: self.received, status: self.status }
    }
}

/// A kept download, read for save_download.
#[derive(Debug)]
pub struct KeptDownload {
    /// The name the site suggested.
    pub name: String,
    /// The address it came from.
    pub url: String,
    /// Its bytes (a PDF, at most [`MAX_DOWNLOAD_BYTES`]).
    pub bytes: Vec<u8>,
}

/// Why save_download cannot have a download.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    /// No download of this session has that id.
    #[error(
        "this browser session has no download {0} (a browser's downloads go when it closes); open the file's address again with browse_web"
    )]
    Unknown(String),
    /// It was refused or cancelled.
    #[error("download {id} was {status}; nothing was kept")]
    NotKept {
        /// Its id.
        id: String,
        /// What became of it.
        status: String,
    },
    /// It is still arriving.
    #[error("download {0} has not finished within 60 s; ask again later")]
    Unfinished(String),
    /// Stop.
    #[error("stopped")]
    Stopped,
    /// Its file could not be read.
    #[error("the downloaded file could not be read: {0}")]
    Io(#[from] std::io::Error),
}

/// The downloads of one browser session: shared by the browser's lock holder and the task
/// that follows Chromium's download events.
pub(super) struct Downloads {
    dir: PathBuf,
    entries: std::sync::Mutex<Vec<Entry>>,
    /// Bumped on every change, so a look can wait for its download without polling.
    changed: tokio::sync::watch::Sender<u64>,
    /// Cleared while a Stop ends the page: a start the follower admits then (Chromium sent it
    /// before it was told to deny) is refused like any other.
    accepting: std::sync::atomic::AtomicBool,
}

impl Downloads {
    /// An empty ledger whose files go to `dir` (made when a browser starts).
    pub(super) fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            entries: std::sync::Mutex::default(),
            changed: tokio::sync::watch::channel(0).0,
            accepting: std::sync::atomic::AtomicBool::new(true),
        }
    }

    /// A new browser session starts: the folder is made (0700, with its parent) when missing,
    /// and it and the ledger are emptied.
    pub(super) fn reset(&self) -> std::io::Result<()> {
        crate::store::Store::create_private_dir(&self.dir).map_err(std::io::Error::other)?;
        self.entries().clear();
        self.bump();
        empty_dir(&self.dir)
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    /// How many downloads began so far (a mark for [`Downloads::since`]).
    pub(super) fn mark(&self) -> usize {
        self.entries().len()
    }

    /// The downloads that began after `mark`.
    pub(super) fn since(&self, mark: usize) -> Vec<DownloadView> {
        self.entries().iter().skip(mark).map(Entry::view).collect()
    }

    /// A download begun after `mark` by the frame `frame` (a navigation that became one).
    pub(super) fn begun_in(&self, frame: &str, mark: usize) -> Option<String> {
        self.entries().iter().skip(mark).find(|e| e.frame == frame).map(|e| e.guid.clone())
    }

    /// Every download of the session, oldest first.
    pub(super) fn all(&self) -> Vec<DownloadView> {
        self.entries().iter().map(Entry::view).collect()
    }

    /// A receiver that wakes on every change.
    pub(super) fn watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// `guid`'s view, once it stopped arriving (Ready, Refused, Cancelled), waiting for that.
    pub(super) async fn settled(&self, guid: &str) -> Option<DownloadView> {
        let mut watch = self.watch();
        loop {
            let view = self.entries().iter().find(|e| e.guid == guid).map(Entry::view);
            match view {
                Some(view) if view.status != DownloadStatus::Downloading => return Some(view),
                None => return None,
                Some(_) => {}
            }
            if watch.changed().await.is_err() {
                return None;
            }
        }
    }

    /// Reads a kept download for save_download (it stays kept: a save is keyed in the
    /// journal, not here).
    pub(super) async fn read_kept(&self, guid: &str) -> Result<KeptDownload, DownloadError> {
        let entry = self.entries().iter().find(|e| e.guid == guid).cloned();
        let Some(entry) = entry else { return Err(DownloadError::Unknown(guid.chars().take(64).collect())) };
        match entry.status {
            DownloadStatus::Ready | DownloadStatus::Saved => {}
            DownloadStatus::Downloading => return Err(DownloadError::Unfinished(entry.guid)),
            DownloadStatus::Refused(reason) => {
                return Err(DownloadError::NotKept { id: entry.guid, status: reason.explain().to_owned() });
            }
            DownloadStatus::Cancelled => return Err(DownloadError::NotKept { id: entry.guid, status: "cancelled".into() }),
        }
        let bytes = read_capped(&self.dir.join(&entry.guid)).await?;
        Ok(KeptDownload { name: entry.name, url: entry.url, bytes })
    }

    /// Marks `guid` saved (after save_download put it into Files).
    pub(super) fn saved(&self, guid: &str) {
        if let Some(entry) = self.entries().iter_mut().find(|e| e.guid == guid && e.status == DownloadStatus::Ready) {
            entry.status = DownloadStatus::Saved;
        }
        self.bump();
    }

    /// The downloads still arriving (to cancel them on Stop).
    pub(super) fn arriving(&self) -> Vec<String> {
        self.entries().iter().filter(|e| e.status == DownloadStatus::Downloading).map(|e| e.guid.clone()).collect()
    }

    /// Ends `guid`'s arrival as `status`; a download already ended keeps its first ending (a
    /// Stop's cancel is not overwritten by a judgement that was under way).
    fn settle(&self, guid: &str, status: DownloadStatus) -> bool {
        let settled = match self.entries().iter_mut().find(|e| e.guid == guid) {
            Some(entry) if entry.status == DownloadStatus::Downloading => {
                entry.status = status;
                true
            }
            Some(_) | None => false,
        };
        self.bump();
        settled
    }

    /// A download began: kept in the ledger; answers whether the session may have it.
    fn begin(&self, event: &EventDownloadWillBegin) -> bool {
        let mut entries = self.entries();
        let arriving = entries.iter().filter(|e| e.status == DownloadStatus::Downloading).count();
        let stopping = !self.accepting.load(std::sync::atomic::Ordering::SeqCst);
        let refusal = if stopping {
            Some(DownloadRefusal::Stopped)
        } else if entries.len() >= MAX_DOWNLOADS {
            Some(DownloadRefusal::TooMany)
        } else if arriving >= MAX_ARRIVING {
            Some(DownloadRefusal::TooManyAtOnce)
        } else {
            None
        };
        if entries.len() >= MAX_REMEMBERED {
            return false;
        }
        let name: String = event.suggested_filename.chars().filter(|c| !c.is_control()).take(MAX_NAME).collect();
        entries.push(Entry {
            guid: event.guid.clone(),
            name: if name.is_empty() { "download".into() } else { name },
            url: event.url.clone(),
            frame: event.frame_id.inner().clone(),
            received: 0,
            status: refusal.map_or(DownloadStatus::Downloading, DownloadStatus::Refused),
        });
        drop(entries);
        self.bump();
        refusal.is_none()
    }

    fn status_of(&self, guid: &str) -> Option<DownloadStatus> {
        self.entries().iter().find(|e| e.guid == guid).map(|e| e.status)
    }

    fn received(&self, guid: &str, bytes: u64) {
        if let Some(entry) = self.entries().iter_mut().find(|e| e.guid == guid) {
            entry.received = bytes;
        }
        self.bump();
    }

    /// Deletes `guid`'s file (and Chromium's partial file) after a refusal or a cancel.
    fn delete_file(&self, guid: &str) {
        for name in [guid.to_owned(), format!("{guid}.crdownload")] {
            let path = self.dir.join(name);
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => tracing::warn!(error = %err, "could not delete a refused download"),
            }
        }
    }

    /// Empties the ledger and the folder (the browser closed: nothing it downloaded outlives
    /// it).
    pub(super) fn clear(&self) {
        self.entries().clear();
        self.bump();
        if let Err(err) = empty_dir(&self.dir) {
            tracing::warn!(error = %err, "could not empty the browser's downloads folder");
        }
    }
}

/// Reads at most [`MAX_DOWNLOAD_BYTES`] of `path`, refusing a longer file.
async fn read_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let file = tokio::fs::File::open(path).await?;
    let mut bytes = Vec::new();
    file.take(MAX_DOWNLOAD_BYTES + 1).read_to_end(&mut bytes).await?;
    if bytes.len() as u64 > MAX_DOWNLOAD_BYTES {
        return Err(std::io::Error::other("the file grew past 10 MiB"));
    }
    Ok(bytes)
}

/// Whether `path` holds a PDF: its first bytes are `%PDF-` and it is within the limit.
async fn is_pdf(path: &Path) -> std::io::Result<bool> {
    use tokio::io::AsyncReadExt;
    let length = tokio::fs::metadata(path).await?.len();
    if length > MAX_DOWNLOAD_BYTES {
        return Ok(false);
    }
    let mut head = [0_u8; 5];
    let mut file = tokio::fs::File::open(path).await?;
    match file.read_exact(&mut head).await {
        Ok(_) => Ok(&head == b"%PDF-"),
        Err(err) if err.kind() == std::io::ErrorKind::UnexpectedEof => Ok(false),
        Err(err) => Err(err),
    }
}

fn empty_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            for entry in entries {
                let path = entry?.path();
                if path.is_dir() { std::fs::remove_dir_all(&path)? } else { std::fs::remove_file(&path)? }
            }
            Ok(())
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(err),
    }
}

/// Tells Chromium to save downloads into the ledger's folder under their ids, with events.
pub(super) async fn allow_into(browser: &Browser, downloads: &Downloads) -> Result<(), chromiumoxide::error::CdpError> {
    downloads.accepting.store(true, std::sync::atomic::Ordering::SeqCst);
    let params = SetDownloadBehaviorParams::builder()
        .behavior(SetDownloadBehaviorBehavior::AllowAndName)
        .download_path(downloads.dir.to_string_lossy().into_owned())
        .events_enabled(true)
        .build()
        .map_err(chromiumoxide::error::CdpError::msg)?;
    browser.execute(params).await.map(|_| ())
}

/// The browser, shared between its lock holder and this follower.
pub(super) type Shared = Arc<tokio::sync::Mutex<Browser>>;

/// Tells Chromium to refuse every download from now on (until [`allow_into`] again); the
/// ledger refuses any start still on its way.
pub(super) async fn deny(browser: &Browser, downloads: &Downloads) -> Result<(), chromiumoxide::error::CdpError> {
    downloads.accepting.store(false, std::sync::atomic::Ordering::SeqCst);
    let params = SetDownloadBehaviorParams::builder()
        .behavior(SetDownloadBehaviorBehavior::Deny)
        .events_enabled(true)
        .build()
        .map_err(chromiumoxide::error::CdpError::msg)?;
    tokio::time::timeout(CANCEL_LIMIT, browser.execute(params))
        .await
        .map_err(|_| chromiumoxide::error::CdpError::msg("the browser did not answer"))?
        .map(|_| ())
}

/// Cancels `guid` in Chromium (errors are of a download already ended).
async fn cancel(browser: &Browser, guid: &str) {
    let _ = tokio::time::timeout(CANCEL_LIMIT, browser.execute(CancelDownloadParams::new(guid.to_owned()))).await;
}

/// [`cancel`] through the shared browser, waiting for its lock no longer than one cancel takes.
async fn cancel_shared(browser: &Shared, guid: &str) {
    if let Ok(browser) = tokio::time::timeout(CANCEL_LIMIT, browser.lock()).await {
        cancel(&browser, guid).await;
    }
}

/// Cancels every download still arriving (Stop, a time-out): nothing the page set going keeps
/// coming in.
pub(super) async fn cancel_arriving(browser: &Browser, downloads: &Downloads) {
    for guid in downloads.arriving() {
        // Settled first: one that was judged Ready meanwhile keeps its file.
        if downloads.settle(&guid, DownloadStatus::Cancelled) {
            cancel(browser, &guid).await;
            downloads.delete_file(&guid);
        }
    }
}

/// Chromium's download events, listened to from the browser's start.
pub(super) struct Events {
    begun: chromiumoxide::listeners::EventStream<EventDownloadWillBegin>,
    progress: chromiumoxide::listeners::EventStream<EventDownloadProgress>,
}

/// Starts listening (before anything can download).
pub(super) async fn listen(browser: &Browser) -> Result<Events, chromiumoxide::error::CdpError> {
    Ok(Events { begun: browser.event_listener().await?, progress: browser.event_listener().await? })
}

/// Follows Chromium's download events for the browser's life, judging each download.
pub(super) async fn follow(browser: Shared, downloads: Arc<Downloads>, events: Events) {
    let Events { mut begun, mut progress } = events;
    loop {
        tokio::select! {
            // A download's start is dispatched before its progress: polled first, it is in the
            // ledger before any progress of it is judged.
            biased;
            Some(event) = begun.next() => admit(&browser, &downloads, &event).await,
            Some(event) = progress.next() => {
                // Chromium's handler hands a download's start to its stream before any of its
                // progress: whatever start is there now is admitted before this progress is
                // judged, so no download is taken for a stranger.
                while let Some(Some(begun_now)) = begun.next().now_or_never() {
                    admit(&browser, &downloads, &begun_now).await;
                }
                judge(&browser, &downloads, &event).await;
            }
            else => return,
        }
    }
}

async fn admit(browser: &Shared, downloads: &Downloads, event: &EventDownloadWillBegin) {
    if !downloads.begin(event) {
        tracing::info!("a download was refused: 20 this session, or 3 arriving at once");
        cancel_shared(browser, &event.guid).await;
        downloads.delete_file(&event.guid);
    }
}

async fn judge(browser: &Shared, downloads: &Downloads, event: &EventDownloadProgress) {
    let guid = event.guid.as_str();
    match downloads.status_of(guid) {
        Some(DownloadStatus::Downloading) => {}
        Some(_) => {
            // Refused already: this is its cancel's own event, or a cancel that did not reach
            // Chromium in time (then it is asked again while it still arrives).
            if event.state == DownloadProgressState::InProgress {
                cancel_shared(browser, guid).await;
            }
            downloads.delete_file(guid);
            return;
        }
        None => {
            // Past what the ledger remembers: refused like the rest past the limit.
            cancel_shared(browser, guid).await;
            downloads.delete_file(guid);
            return;
        }
    }
    // Byte counts arrive as doubles; anything not a finite count is taken as too large.
    let count = |n: f64| if n.is_finite() && n >= 0.0 { n as u64 } else { u64::MAX };
    let received = count(event.received_bytes);
    downloads.received(guid, received.min(MAX_DOWNLOAD_BYTES + 1));
    match event.state {
        DownloadProgressState::InProgress => {
            if received > MAX_DOWNLOAD_BYTES || count(event.total_bytes) > MAX_DOWNLOAD_BYTES {
                tracing::info!("a download was refused: larger than 10 MiB");
                downloads.settle(guid, DownloadStatus::Refused(DownloadRefusal::TooLarge));
                cancel_shared(browser, guid).await;
                downloads.delete_file(guid);
            }
        }
        DownloadProgressState::Completed => {
            let path = downloads.dir.join(guid);
            match is_pdf(&path).await {
                Ok(true) => {
                    // Chromium writes with the umask's mode; a kept download is private like
                    // every file Hearth keeps.
                    use std::os::unix::fs::PermissionsExt;
                    if let Err(err) = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)) {
                        tracing::warn!(error = %err, "could not make a download private");
                    }
                    if !downloads.settle(guid, DownloadStatus::Ready) {
                        // Cancelled while it was judged (Stop): nothing of it stays.
                        downloads.delete_file(guid);
                    }
                }
                Ok(false) => {
                    let large = std::fs::metadata(&path).is_ok_and(|m| m.len() > MAX_DOWNLOAD_BYTES);
                    let refusal = if large { DownloadRefusal::TooLarge } else { DownloadRefusal::NotPdf };
                    tracing::info!(reason = refusal.explain(), "a download was refused");
                    downloads.delete_file(guid);
                    downloads.settle(guid, DownloadStatus::Refused(refusal));
                }
                Err(err) => {
                    tracing::warn!(error = %err, "a finished download could not be read; it is dropped");
                    downloads.delete_file(guid);
                    downloads.settle(guid, DownloadStatus::Cancelled);
                }
            }
        }
        DownloadProgressState::Canceled => {
            downloads.delete_file(guid);
            downloads.settle(guid, DownloadStatus::Cancelled);
        }
    }
}
