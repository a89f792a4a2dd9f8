//! The agent's Chromium: one process driven over CDP (chromiumoxide, in-process, never its
//! fetcher), launched on demand against the system's binary, every request through the
//! egress proxy.
//!
//! Launched so that nothing leaves except through [`EgressProxy`]:
//! - `--proxy-server` points at the proxy and `--proxy-bypass-list=<-loopback>` removes the
//!   implicit loopback bypass, so even `http://127.0.0.1` goes through the policy;
//! - `--host-resolver-rules` maps every name to nothing except the proxy's own address, so
//!   Chromium's resolver is unused (the proxy resolves, checks and pins);
//! - QUIC off (it would not use the proxy), WebRTC limited to proxied TCP, no background
//!   networking, sync, component updates, default apps or first-run;
//! - the process's environment keeps only what a browser needs to draw and find fonts: no
//!   other variable of Hearth's reaches it, so no API key does;
//! - CDP goes over a pipe only Hearth holds, never a DevTools port another local account could
//!   open ([`super::pipe`]).
//!
//! A Chromium that exits or crashes is noticed on the next use (its CDP handler has ended) and
//! launched again, and the caller is told it was restarted.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chromiumoxide::browser::Browser;
use chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat;
use chromiumoxide::handler::viewport::Viewport;
use futures::StreamExt;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;
use url::Url;

pub use super::control::VIEWPORT;
use super::egress::{self, AllowList, Refusal};
pub use super::error::{ActError, BrowserError};
use super::proxy::EgressProxy;

/// How long one CDP request may take (chromiumoxide's per-request limit).
pub const NAVIGATION_LIMIT: Duration = Duration::from_secs(20);
/// How long Chromium has to start and take its CDP connection.
const LAUNCH_LIMIT: Duration = Duration::from_secs(20);
/// How long one whole look may take (navigation, reads and the picture).
pub const LOOK_LIMIT: Duration = Duration::from_secs(30);
/// The longest URL accepted.
pub const MAX_URL: usize = 4096;
/// How much visible text is read from a page (characters).
pub const MAX_TEXT_READ: usize = 100_000;
/// How long a title is kept (characters).
pub const MAX_TITLE: usize = 300;

/// `refusal` of `url`, named by its host only.
fn refused(url: &Url, refusal: Refusal) -> BrowserError {
    BrowserError::Refused { url_host: url.host_str().unwrap_or_default().to_owned(), refusal }
}

/// Whether `running`'s browser still answers CDP (within 2 s).
async fn answers(running: &Running) -> bool {
    let asked = async { running.browser.lock().await.version().await };
    tokio::time::timeout(Duration::from_secs(2), asked).await.is_ok_and(|version| version.is_ok())
}

/// Ends a browser that died or stopped answering: its process is gone before a new one takes
/// the profile's lock.
async fn end(gone: Option<Running>) {
    if let Some(gone) = gone {
        let Released { mut process, handler, bridge, downloads, .. } = release(gone).await;
        let _ = process.kill().await;
        handler.abort();
        bridge.abort();
        // Only now that nothing can write there any more.
        downloads.clear();
    }
}

/// What is left of a browser once its followers have ended.
struct Released {
    /// Its CDP client: this code's alone again (`None` would mean a handle kept elsewhere,
    /// which nothing does).
    browser: Option<Browser>,
    process: tokio::process::Child,
    handler: tokio::task::JoinHandle<()>,
    bridge: tokio::task::JoinHandle<()>,
    downloads: Arc<super::downloads::Downloads>,
}

/// Ends the download follower, so the browser is this code's alone again: the follower holds
/// the only other handle, and awaiting its end drops it.
async fn release(gone: Running) -> Released {
    let Running { browser, process, handler, bridge, downloads_follower, downloads, guard_follower, .. } = gone;
    if let Some(follower) = guard_follower {
        follower.abort();
    }
    downloads_follower.abort();
    let _ = downloads_follower.await;
    Released { browser: Arc::into_inner(browser).map(Mutex::into_inner), process, handler, bridge, downloads }
}

/// Ends a browser on purpose: asked to close (it writes its cookies and logins to the profile
/// as it exits), given 5 s to exit, then killed as a dead one would be.
async fn shut(gone: Option<Running>) {
    if let Some(current) = gone {
        let Released { browser, mut process, handler, bridge, downloads } = release(current).await;
        if let Some(mut browser) = browser
            && browser.close().await.is_ok()
        {
            let _ = tokio::time::timeout(Duration::from_secs(5), process.wait()).await;
        }
        // `kill` also reaps it, whether it had exited or not.
        let _ = process.kill().await;
        handler.abort();
        bridge.abort();
        downloads.clear();
    }
}

/// What one look reads, cut in the page so no more than the limits crosses CDP (code units:
/// twice the character limits covers any text; Rust then cuts by characters).
const READ_PAGE: &str = "[location.href.slice(0, 8192), document.title.slice(0, 600), \
    document.body ? document.body.innerText.slice(0, 200001) : '']";

/// What a look at a search page reads: its markup instead of its visible text, cut the same
/// way at twice [`MAX_MARKUP_READ`].
const READ_MARKUP: &str = "[location.href.slice(0, 8192), document.title.slice(0, 600), \
    document.documentElement ? document.documentElement.outerHTML.slice(0, 1000001) : '']";

/// How much of a page's markup a search reads (characters): a results page is a few hundred
/// kilobytes at most; the parser reads a cut page as far as it goes.
pub const MAX_MARKUP_READ: usize = 500_000;

/// What a look reads off the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Its visible text, with a picture or without.
    Text {
        /// Whether a picture is taken too.
        picture: bool,
    },
    /// Its markup (`outerHTML`), without a picture: for a search page, whose results are
    /// parsed (`browser::search`).
    Markup,
}

/// Environment variables the browser process keeps (display, fonts, locale, home for its
/// caches); it gets no other of Hearth's.
const KEPT_ENV: &[&str] = &["PATH", "HOME", "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "LANG", "LC_ALL", "TZ", "FONTCONFIG_PATH"];

/// What one look at a page found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// The URL the page ended on (after redirects), checked again.
    pub final_url: String,
    /// Its title, at most [`MAX_TITLE`] characters.
    pub title: String,
    /// Its visible text (`innerText`), at most [`MAX_TEXT_READ`] characters; for a
    /// [`Reading::Markup`] look, its markup, at most [`MAX_MARKUP_READ`] characters.
    pub text: String,
    /// Whether the text was cut at its limit.
    pub truncated: bool,
    /// A PNG of the viewport (empty when the look asked for no picture).
    pub screenshot_png: Vec<u8>,
    /// Chromium had ended since the last use and was started again for this one.
    pub restarted: bool,
    /// The address was a download: what became of it (text and picture are then empty).
    pub download: Option<hearth_protocol::browser::DownloadView>,
}

/// How the browser is launched.
#[derive(Debug, Clone)]
pub struct ChromiumConfig {
    /// The binary (Debian's `chromium` by default).
    pub executable: PathBuf,
    /// Where profiles live (one folder each).
    pub profiles_dir: PathBuf,
    /// Where downloads arrive (one folder per profile, emptied whenever its browser starts or
    /// closes).
    pub downloads_dir: PathBuf,
    /// Addresses past the egress policy (tests and development only; empty by default).
    pub allow: AllowList,
}

impl ChromiumConfig {
    /// The system's Chromium, profiles under `data_dir/browser`, nothing past the policy.
    pub fn for_data_dir(data_dir: &Path) -> Self {
        Self {
            executable: PathBuf::from("/usr/bin/chromium"),
            profiles_dir: data_dir.join("browser"),
            downloads_dir: data_dir.join("browser-downloads"),
            allow: AllowList::none(),
        }
    }
}

/// A running Chromium with its proxy and its one tab (the session's page stays open between
/// looks, as the owner's would: what a page does after it loaded still goes through the proxy).
struct Running {
    /// Shared with the task that follows its downloads ([`super::downloads::follow`]), which
    /// is ended before the browser is.
    browser: Arc<Mutex<Browser>>,
    /// Chromium's process, Hearth's own child (killed when dropped): chromiumoxide only
    /// connects to it ([`super::pipe`]).
    process: tokio::process::Child,
    handler: tokio::task::JoinHandle<()>,
    /// Carries CDP between chromiumoxide and the browser's pipe.
    bridge: tokio::task::JoinHandle<()>,
    downloads_follower: tokio::task::JoinHandle<()>,
    page: chromiumoxide::Page,
    proxy: EgressProxy,
    /// This session's downloads (the browser's own ledger, shared).
    downloads: Arc<super::downloads::Downloads>,
    /// Answers the browser's paused document requests while its sends are guarded
    /// ([`super::submit::hold_back`]); `None` while they are not.
    guard_follower: Option<tokio::task::JoinHandle<()>>,
}

/// One browser profile's Chromium: launched on first use, its tab kept between uses.
pub struct Chromium {
    config: ChromiumConfig,
    resolver: hickory_resolver::TokioResolver,
    /// The profile's folder name under `config.profiles_dir`.
    profile: String,
    running: Mutex<Option<Running>>,
    /// Whether a Chromium has run before in this process (so a missing one was restarted).
    launched_once: std::sync::atomic::AtomicBool,
    /// When a look or an action last started or ended here (for the idle close).
    last_used: std::sync::Mutex<Instant>,
    /// Tool calls holding this browser now ([`super::profiles::InUse`]): it is not closed
    /// under them.
    users: std::sync::atomic::AtomicUsize,
    /// Its profile was deleted: it never starts again.
    retired: std::sync::atomic::AtomicBool,
    /// What this browser session downloaded (emptied when a browser starts).
    downloads: Arc<super::downloads::Downloads>,
    /// The owner's control (Take control), while they hold it: the agent's calls are refused.
    /// Shared with its frame forwarder, which ends it when the page's stream ends (a crash).
    control: Arc<std::sync::Mutex<Option<ControlSession>>>,
    /// Numbers control sessions, so a Give back ends only the session it was for.
    control_generation: std::sync::atomic::AtomicU64,
    /// Holds back what a task-driven page would send by navigation ([`super::submit::SendGuard`]).
    send_guard: Arc<super::submit::SendGuard>,
    /// Keys a form's reviewed version ([`super::submit::Submission::version`]); never leaves
    /// this process.
    version_key: [u8; 32],
}

/// One Take control session.
struct ControlSession {
    generation: u64,
    forwarder: tokio::task::JoinHandle<()>,
}

/// Ends the control session in `control` (its forwarder with it), when it is `generation` or
/// any (`None`). Answers whether one ended.
fn end_control(control: &std::sync::Mutex<Option<ControlSession>>, generation: Option<u64>) -> bool {
    let mut control = control.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let matches = control.as_ref().is_some_and(|c| generation.is_none_or(|g| c.generation == g));
    if matches && let Some(ended) = control.take() {
        ended.forwarder.abort();
        return true;
    }
    false
}

/// What one action did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActDone {
    /// The page's address before.
    pub url_before: String,
    /// The page's address after.
    pub url_after: String,
    /// Its title after.
    pub title_after: String,
    /// The element's role, as listed.
    pub role: String,
    /// The element's name, as listed.
    pub name: String,
    /// A download that began while the action ran.
    pub download: Option<hearth_protocol::browser::DownloadView>,
}

/// A form submission on the open page, read for the owner's review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmissionRead {
    /// The page's address.
    pub url: String,
    /// Its title, at most [`MAX_TITLE`] characters.
    pub title: String,
    /// The element, as listed: its role and name.
    pub role: String,
    /// Its name.
    pub name: String,
    /// What the gesture would send (its destination checked against the egress policy).
    pub submission: super::submit::Submission,
    /// [`super::submit::Submission::version`] for the element's page state and this gesture.
    pub version: String,
}

/// A picture of the open page as it is now.
#[derive(Clone, PartialEq, Eq)]
pub struct Picture {
    /// Its address (checked against the policy again).
    pub url: String,
    /// Its title, at most [`MAX_TITLE`] characters.
    pub title: String,
    /// A PNG of the viewport.
    pub png: Vec<u8>,
}

impl std::fmt::Debug for Picture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Picture").field("url", &self.url).field("title", &self.title).field("png_bytes", &self.png.len()).finish()
    }
}

/// The page's interactive elements now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elements {
    /// Its address.
    pub url: String,
    /// Its title.
    pub title: String,
    /// The elements (at most [`hearth_protocol::browser::MAX_ELEMENTS`]).
    pub elements: Vec<hearth_protocol::browser::PageElement>,
    /// Whether it had more.
    pub truncated: bool,
}

/// What a reference from an earlier state of the page is told.
const STALE_REFERENCE: &str = "the page changed since page_elements listed it; call page_elements again and use a new ref";

/// How long one page script (a listing, finding an element) may take.
const SCRIPT_LIMIT: Duration = Duration::from_secs(10);

/// How long a reviewed form's send waits for the site's answer once the guard released it:
/// longer than the proxy takes to resolve and connect (10 s), so a destination that never
/// answers is seen failing; none by then, and the form is uncertain, never "sent".
const FORM_ANSWER_LIMIT: Duration = Duration::from_secs(30);

impl Chromium {
    /// A browser on the profile `default`, launched with `config`, its proxy resolving names
    /// with `resolver`.
    pub fn new(config: ChromiumConfig, resolver: hickory_resolver::TokioResolver) -> Self {
        Self::for_profile(config, resolver, "default")
    }

    /// A browser on the profile folder `profile` (a name checked by the caller:
    /// [`super::profiles::ProfileId`]).
    pub fn for_profile(config: ChromiumConfig, resolver: hickory_resolver::TokioResolver, profile: &str) -> Self {
        let downloads = Arc::new(super::downloads::Downloads::new(config.downloads_dir.join(profile)));
        Self {
            config,
            resolver,
            profile: profile.to_owned(),
            running: Mutex::new(None),
            launched_once: std::sync::atomic::AtomicBool::new(false),
            last_used: std::sync::Mutex::new(Instant::now()),
            users: std::sync::atomic::AtomicUsize::new(0),
            retired: std::sync::atomic::AtomicBool::new(false),
            downloads,
            control: Arc::default(),
            control_generation: std::sync::atomic::AtomicU64::new(0),
            send_guard: Arc::default(),
            version_key: super::submit::Submission::new_version_key(),
        }
    }

    /// The browser's lock for one of the agent's calls: taken unless Stop comes first, and
    /// refused while the owner holds control; the browser counts as used now and when the call
    /// ends (the second value, dropped with the call).
    async fn admit(
        &self,
        cancel: &CancellationToken,
    ) -> Result<(tokio::sync::MutexGuard<'_, Option<Running>>, TouchOnDrop<'_>), BrowserError> {
        let running = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(BrowserError::Stopped),
            running = self.running.lock() => running,
        };
        self.agent_may_use()?;
        self.touch();
        Ok((running, TouchOnDrop(self)))
    }

    /// What this browser's send guard held back (tests, notices).
    pub fn send_guard(&self) -> &super::submit::SendGuard {
        &self.send_guard
    }

    /// Arms or disarms the send guard on the whole browser: armed, Chromium pauses every
    /// document request of every tab, window and frame it has, and
    /// [`super::submit::hold_back`] answers each (listening before enabling, so none is
    /// missed); disarmed, Fetch is off again (which lets any paused request go on) before its
    /// follower ends.
    async fn guard_sends(&self, current: &mut Running, armed: bool) -> Result<(), BrowserError> {
        use chromiumoxide::cdp::browser_protocol::fetch::{DisableParams, EnableParams, EventRequestPaused, RequestPattern, RequestStage};
        use chromiumoxide::cdp::browser_protocol::network::ResourceType;
        // A follower whose stream ended (its page went) no longer guards anything.
        if current.guard_follower.as_ref().is_some_and(tokio::task::JoinHandle::is_finished) {
            current.guard_follower = None;
        }
        if armed == current.guard_follower.is_some() {
            return Ok(());
        }
        // On the browser's own session, not the tab's: its interception reaches every target the
        // browser has — a new tab or window a page script opens, a frame of another site.
        let browser = current.browser.lock().await;
        if armed {
            let paused = browser.event_listener::<EventRequestPaused>().await?;
            let control = self.control.clone();
            let owner_controls = move || control.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_some();
            let follower = tokio::spawn(super::submit::hold_back(current.browser.clone(), paused, self.send_guard.clone(), owner_controls));
            let pattern = RequestPattern {
                url_pattern: Some("*".to_owned()),
                resource_type: Some(ResourceType::Document),
                request_stage: Some(RequestStage::Request),
            };
            if let Err(err) = browser.execute(EnableParams { patterns: Some(vec![pattern]), handle_auth_requests: None }).await {
                // It may have taken effect all the same: off again, so no request waits on an
                // answer that will not come, before the follower goes.
                let _ = tokio::time::timeout(Duration::from_secs(1), browser.execute(DisableParams::default())).await;
                follower.abort();
                return Err(err.into());
            }
            current.guard_follower = Some(follower);
        } else {
            browser.execute(DisableParams::default()).await?;
            if let Some(follower) = current.guard_follower.take() {
                follower.abort();
            }
        }
        Ok(())
    }

    /// Refused while the owner holds control (checked under the browser's lock).
    fn agent_may_use(&self) -> Result<(), BrowserError> {
        let controlled = self.control.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_some();
        if controlled { Err(BrowserError::OwnerHasControl) } else { Ok(()) }
    }

    /// Take control: the owner's live view starts (frames go to `frames`) and the agent's
    /// calls on this browser are refused until [`Chromium::give_back`] with the generation this
    /// answers. Waits for a call in flight to end first. If the page's stream ends (a crash),
    /// the control ends with it and the agent's next call starts a new browser.
    pub async fn take_control(
        &self,
        frames: tokio::sync::mpsc::Sender<hearth_protocol::browser::ControlFrame>,
    ) -> Result<u64, BrowserError> {
        use chromiumoxide::cdp::browser_protocol::page::{EventScreencastFrame, StartScreencastFormat, StartScreencastParams};
        let mut running = self.running.lock().await;
        self.ensure_running(&mut running).await?;
        let Some(current) = running.as_ref() else { return Err(BrowserError::Launch("no browser".into())) };
        let listener = current.page.event_listener::<EventScreencastFrame>().await?;
        let start = StartScreencastParams {
            format: Some(StartScreencastFormat::Jpeg),
            quality: Some(70),
            max_width: Some(i64::from(VIEWPORT.0)),
            max_height: Some(i64::from(VIEWPORT.1)),
            every_nth_frame: Some(1),
        };
        current.page.execute(start).await?;
        // Set only once the screencast runs: a failed start leaves the agent free.
        let generation = self.control_generation.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let page = current.page.clone();
        let control = self.control.clone();
        // The slot is held while the forwarder starts: one that ends at once finds its session
        // stored and ends it, instead of finding nothing and leaving a dead session behind.
        let mut slot = self.control.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let forwarder = tokio::spawn(async move {
            super::control::forward_frames(page, listener, frames).await;
            // The stream ended by itself (not aborted by a Give back): the page is gone or the
            // viewer stopped listening, and the owner's control ends with it.
            end_control(&control, Some(generation));
        });
        if let Some(old) = slot.replace(ControlSession { generation, forwarder }) {
            old.forwarder.abort();
        }
        drop(slot);
        Ok(generation)
    }

    /// One input of the owner's, while they hold control.
    pub async fn control_input(&self, input: &hearth_protocol::browser::ControlInput) -> Result<(), BrowserError> {
        use super::control::Command;
        let command = super::control::command_for(input)?;
        let running = self.running.lock().await;
        if self.agent_may_use().is_ok() {
            return Err(BrowserError::NotControlled);
        }
        let Some(current) = running.as_ref() else { return Err(BrowserError::NotControlled) };
        self.touch();
        let page = &current.page;
        let sent = async {
            match command {
                Command::Mouse(event) => page.execute(event).await.map(|_| ()),
                Command::Key(event) => page.execute(event).await.map(|_| ()),
                Command::Text(event) => page.execute(event).await.map(|_| ()),
                Command::Script(script) => page.evaluate(script).await.map(|_| ()),
            }
        };
        tokio::time::timeout(SCRIPT_LIMIT, sent).await.map_err(|_| BrowserError::TimedOut)?.map_err(BrowserError::from)
    }

    /// Give back the control session `generation`: its screencast ends and the agent may use
    /// the browser again. A Give back for an older session changes nothing.
    pub async fn give_back(&self, generation: u64) {
        use chromiumoxide::cdp::browser_protocol::page::StopScreencastParams;
        let running = self.running.lock().await;
        if end_control(&self.control, Some(generation))
            && let Some(current) = running.as_ref()
        {
            let _ = tokio::time::timeout(Duration::from_secs(1), current.page.execute(StopScreencastParams::default())).await;
        }
    }

    /// A tool call starts or stops holding this browser.
    pub(super) fn hold(&self, held: bool) {
        use std::sync::atomic::Ordering;
        if held {
            self.users.fetch_add(1, Ordering::SeqCst);
        } else {
            self.users.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Whether a tool call holds it now.
    pub(super) fn in_use(&self) -> bool {
        self.users.load(std::sync::atomic::Ordering::SeqCst) > 0
    }

    /// Ends the browser for good and removes its profile folder, both under its lock, so no
    /// call waiting for it launches on a folder half deleted.
    pub(super) async fn retire(&self, folder: &Path) -> std::io::Result<()> {
        let mut running = self.running.lock().await;
        self.retired.store(true, std::sync::atomic::Ordering::SeqCst);
        end_control(&self.control, None);
        shut(running.take()).await;
        crate::files::remove_dir_if_present(folder)
    }

    /// When this browser was last used.
    pub fn last_used(&self) -> Instant {
        *self.last_used.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Instant::now();
    }

    /// Goes to `url`, waits for DOMContentLoaded, and reads the page: its final URL (checked
    /// against the policy again), title, visible text and a screenshot. `cancel` (the run's
    /// Stop) ends the navigation and the reads.
    pub async fn observe(&self, url: &str, cancel: &CancellationToken) -> Result<Observation, BrowserError> {
        self.look(url, cancel, true).await
    }

    /// [`Chromium::observe`], with the picture only when `picture` (a task's read needs none).
    pub async fn look(&self, url: &str, cancel: &CancellationToken, picture: bool) -> Result<Observation, BrowserError> {
        self.read(url, cancel, Reading::Text { picture }).await
    }

    /// Goes to `url` and reads what `reading` asks for, as [`Chromium::look`] does: the same
    /// policy, limits, Stop and retry.
    pub async fn read(&self, url: &str, cancel: &CancellationToken, reading: Reading) -> Result<Observation, BrowserError> {
        let url = self.checked(url)?;
        let (mut running, _touched) = self.admit(cancel).await?;
        // A browser that died since the last look may still look alive until a call fails: a
        // look that fails on a browser that no longer answers is made again, once, in a new one.
        // That sends its navigation (a GET) again, which is right for a look only: page actions
        // must not be retried here, they go through the journal.
        for attempt in 0..2 {
            // A launch is not cut off half-way (its process would be left holding the profile).
            let restarted = self.ensure_running(&mut running).await? || attempt > 0;
            if cancel.is_cancelled() {
                return Err(BrowserError::Stopped);
            }
            let Some(current) = running.as_ref() else { return Err(BrowserError::Launch("no browser".into())) };
            // One deadline for the whole look (navigation, reads, picture), and Stop through
            // all of it.
            let mark = current.proxy.refusal_mark();
            let look = tokio::time::timeout(LOOK_LIMIT, read_page(&current.page, &url, &self.config.allow, &self.downloads, reading));
            let outcome = tokio::select! {
                biased;
                () = cancel.cancelled() => Err(BrowserError::Stopped),
                looked = look => looked.unwrap_or(Err(BrowserError::TimedOut)),
            };
            if matches!(outcome, Err(BrowserError::Stopped | BrowserError::TimedOut)) {
                // Dropping the look does not stop the page: its tab is closed here, before the
                // lock is released, so nothing it would still load or run goes out after Stop.
                abandon(&mut running).await;
                return outcome;
            }
            if attempt == 0 && matches!(outcome, Err(BrowserError::Cdp(_))) && !answers(current).await {
                tracing::warn!("the browser stopped answering during a look; starting it again");
                end(running.take()).await;
                // Stop during that check: no browser is started again for a look already stopped.
                if cancel.is_cancelled() {
                    return Err(BrowserError::Stopped);
                }
                continue;
            }
            let observed = outcome?;
            // The proxy refused the page itself (its answer is a 403 page Chromium shows): a
            // refusal for the host the page ended on, during this look, is the page's.
            let host = Url::parse(&observed.final_url).ok().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_default();
            if current.proxy.refused_since(mark).iter().any(|r| r.host == host) {
                return Err(BrowserError::RefusedByProxy(host));
            }
            return Ok(Observation { restarted, ..observed });
        }
        Err(BrowserError::Launch("the browser stopped answering twice in a row".into()))
    }

    /// Whether a Chromium runs for this browser now, without waiting (one in use counts).
    pub fn is_running_now(&self) -> bool {
        match self.running.try_lock() {
            Ok(running) => running.is_some(),
            Err(_) => true,
        }
    }

    /// Whether a Chromium is running for this browser now.
    pub async fn is_running(&self) -> bool {
        self.running.lock().await.is_some()
    }

    /// Launches Chromium now if none runs (to have it ready before the first look).
    pub async fn start(&self) -> Result<(), BrowserError> {
        let mut running = self.running.lock().await;
        self.ensure_running(&mut running).await.map(|_| ())
    }

    /// Ends Chromium unless a look or an action holds it now; answers whether it ended (or
    /// none ran).
    pub async fn try_close(&self) -> bool {
        if self.in_use() {
            return false;
        }
        // The lock is held to the end: a look arriving meanwhile waits for the old process to be
        // gone before a new one takes the profile's folder.
        let Ok(mut running) = self.running.try_lock() else { return false };
        shut(running.take()).await;
        self.launched_once.store(false, std::sync::atomic::Ordering::SeqCst);
        true
    }

    /// Ends Chromium (at shutdown, or to close the session).
    pub async fn close(&self) {
        // Held to the end, as in `try_close`.
        let mut running = self.running.lock().await;
        shut(running.take()).await;
        // The owner's view of it ends with it.
        end_control(&self.control, None);
        // A browser closed on purpose and started again later is not a restart.
        self.launched_once.store(false, std::sync::atomic::Ordering::SeqCst);
    }

    /// The addresses past the policy this browser was launched with: what a search result's
    /// address is checked against (`browser::search`), as its requests would be.
    pub fn allow_list(&self) -> &AllowList {
        &self.config.allow
    }

    fn checked(&self, url: &str) -> Result<Url, BrowserError> {
        if url.len() > MAX_URL {
            return Err(BrowserError::UrlTooLong(url.len()));
        }
        let parsed = Url::parse(url.trim()).map_err(|_| BrowserError::BadUrl(url.chars().take(80).collect()))?;
        egress::check_url(&parsed, &self.config.allow).map_err(|refusal| refused(&parsed, refusal))?;
        Ok(parsed)
    }

    /// A picture of the open page as it is now, with its address and title: nothing is
    /// loaded, clicked or scrolled. No browser running (or only a blank tab) is
    /// [`BrowserError::NoPage`]: a browser is never started just to picture nothing. A page
    /// whose address the policy now refuses is not pictured.
    pub async fn picture(&self, cancel: &CancellationToken) -> Result<Picture, BrowserError> {
        let (running, _touched) = self.admit(cancel).await?;
        let Some(current) = running.as_ref() else { return Err(BrowserError::NoPage) };
        let read = async {
            // Cut in the page, as every read is: a title of 100 MB never crosses CDP. The read
            // and its address check come before the picture (see [`screenshot`]), so a page
            // the policy refuses is never pictured.
            let (url, title) =
                evaluate_value::<(String, String)>(&current.page, "[location.href.slice(0, 8192), document.title.slice(0, 600)]").await?;
            let parsed = Url::parse(&url).map_err(|_| BrowserError::NoPage)?;
            match parsed.scheme() {
                "http" | "https" => {}
                // Chromium's own page for a load that failed.
                "chrome-error" => return Err(BrowserError::Cdp("the last page did not load; open it again with browse_web".into())),
                _ => return Err(BrowserError::NoPage),
            }
            egress::check_url(&parsed, &self.config.allow).map_err(|refusal| refused(&parsed, refusal))?;
            let png = screenshot(&current.page, PngEncoding::Compact).await?;
            Ok::<_, BrowserError>((url, title, png))
        };
        let (url, title, png) = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(BrowserError::Stopped),
            read = tokio::time::timeout(SCRIPT_LIMIT, read) => read.map_err(|_| BrowserError::TimedOut)??,
        };
        if png.len() > MAX_PICTURE_BYTES {
            return Err(BrowserError::PictureTooLarge(png.len()));
        }
        Ok(Picture { url, title: title.chars().take(MAX_TITLE).collect(), png })
    }

    /// The open page's interactive elements, each with a reference for [`Chromium::act`].
    pub async fn elements(&self, cancel: &CancellationToken) -> Result<Elements, BrowserError> {
        let (mut running, _touched) = self.admit(cancel).await?;
        self.ensure_running(&mut running).await?;
        if cancel.is_cancelled() {
            return Err(BrowserError::Stopped);
        }
        let Some(current) = running.as_ref() else { return Err(BrowserError::Launch("no browser".into())) };
        let listed = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(BrowserError::Stopped),
            listed = tokio::time::timeout(SCRIPT_LIMIT, current.page.evaluate(super::page::list_script())) => listed,
        };
        let listed = listed.map_err(|_| BrowserError::TimedOut)??;
        let (url, title, described, total): (String, String, Vec<super::page::Described>, usize) =
            listed.into_value().map_err(|e| BrowserError::Cdp(e.to_string()))?;
        let state = super::page::state_of(&url, &described);
        let truncated = total > described.len();
        Ok(Elements {
            url,
            title: title.chars().take(MAX_TITLE).collect(),
            elements: super::page::elements_of(&state, described),
            truncated,
        })
    }

    /// What `gesture` on the element `reference` would send, read for a review: nothing on the
    /// page is focused or pressed (the element is scrolled into view, as the action would, so a
    /// click is judged where it would land). A reference from another page state is refused, as
    /// is an element that sends no form that way and a destination the egress policy refuses.
    pub async fn submission(
        &self,
        reference: &str,
        gesture: hearth_protocol::approvals::SubmitGesture,
        cancel: &CancellationToken,
    ) -> Result<SubmissionRead, BrowserError> {
        let (state, index) = super::page::parse_reference(reference).map_err(BrowserError::BadElement)?;
        let (running, _touched) = self.admit(cancel).await?;
        // No browser, no page: one is never started just to find nothing there.
        let Some(current) = running.as_ref() else { return Err(BrowserError::NoPage) };
        let (action, value) = super::submit::action_of(gesture);
        let spelled = super::submit::gesture_of(action, value).unwrap_or("click");
        let script = super::page::submission_script(index, spelled).map_err(|e| BrowserError::Cdp(e.to_string()))?;
        let read = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(BrowserError::Stopped),
            read = tokio::time::timeout(SCRIPT_LIMIT, evaluate_value::<(String, String, Vec<super::page::Described>, Option<super::submit::Sends>)>(&current.page, &script)) => read,
        };
        let (url, title, described, sends) = read.map_err(|_| BrowserError::TimedOut)??;
        if super::page::state_of(&url, &described) != state {
            return Err(BrowserError::StaleElement(STALE_REFERENCE.into()));
        }
        let Some((role, name, _)) = described.get(index).cloned() else {
            return Err(BrowserError::StaleElement(format!("there is no element {reference} on this page")));
        };
        let sends = match sends {
            Some(super::submit::Sends::Form(sends)) => sends,
            Some(super::submit::Sends::Unknown(_)) => return Err(BrowserError::UnknownSubmission),
            None => return Err(BrowserError::NotASubmission(format!("{reference} ({role} \"{name}\")"))),
        };
        let submission = super::submit::Submission::from_page(sends)?;
        self.checked(&submission.destination)?;
        let version = submission.version(&self.version_key, state, gesture);
        Ok(SubmissionRead { url, title: title.chars().take(MAX_TITLE).collect(), role, name, submission, version })
    }

    /// Acts on the element `reference` of the open page, as a person would: a real mouse click
    /// at its centre, typed text, a chosen option, a key, a scroll. A reference from another
    /// page state is refused before anything is sent, and so is, under `policy`, a gesture that
    /// would send a form the owner has not reviewed (or that no longer hashes to the reviewed
    /// version). The caller (the journal, or the gate for a reviewed form) makes sure the same
    /// action is never sent twice: nothing here retries.
    pub async fn act(
        &self,
        reference: &str,
        action: hearth_protocol::browser::PageAction,
        value: Option<&str>,
        policy: super::submit::SubmitPolicy<'_>,
        cancel: &CancellationToken,
    ) -> Result<ActDone, ActError> {
        use super::submit::SubmitPolicy;
        use hearth_protocol::browser::PageAction;
        let not_done = ActError::NotDone;
        let (state, index) = super::page::parse_reference(reference).map_err(|e| not_done(BrowserError::BadElement(e)))?;
        let (mut running, _touched) = self.admit(cancel).await.map_err(not_done)?;
        // No allowance outlives the act that opened it (each act closes its own; this is the
        // belt to those braces).
        self.send_guard.finish();
        // A launch is not cut off half-way (its process would be left holding the profile).
        let restarted = self.ensure_running(&mut running).await.map_err(not_done)?;
        if cancel.is_cancelled() {
            return Err(not_done(BrowserError::Stopped));
        }
        if restarted {
            return Err(not_done(BrowserError::StaleElement(
                "the browser had ended and was started again, so the page is gone; open it again with browse_web".into(),
            )));
        }
        // A task's page stays guarded from its first action until the owner's own chat acts on
        // it: what its scripts would post later (a timer, a change handler) is held back too.
        if let Some(guarded) = running.as_mut() {
            self.guard_sends(guarded, !matches!(policy, SubmitPolicy::Free)).await.map_err(not_done)?;
        }
        let Some(current) = running.as_ref() else { return Err(not_done(BrowserError::Launch("no browser".into()))) };
        let script = |script: String| {
            let page = current.page.clone();
            async move {
                let evaluated = tokio::select! {
                    biased;
                    () = cancel.cancelled() => return Err(BrowserError::Stopped),
                    evaluated = tokio::time::timeout(SCRIPT_LIMIT, page.evaluate(script)) => evaluated,
                };
                evaluated.map_err(|_| BrowserError::TimedOut)?.map_err(BrowserError::from)
            }
        };
        // First the listing alone, with no effect on the page: a stale reference is refused
        // before anything is scrolled or focused.
        let listed = script(super::page::list_script()).await.map_err(not_done)?;
        let (url_listed, _, described, _): (String, String, Vec<super::page::Described>, usize) =
            listed.into_value().map_err(|e| not_done(BrowserError::Cdp(e.to_string())))?;
        let stale = || not_done(BrowserError::StaleElement(STALE_REFERENCE.into()));
        if super::page::state_of(&url_listed, &described) != state {
            return Err(stale());
        }
        let Some((role, name, _)) = described.get(index).cloned() else {
            return Err(not_done(BrowserError::StaleElement(format!("there is no element {reference} on this page"))));
        };
        let focus = matches!(action, PageAction::Type | PageAction::Press);
        let gesture = super::submit::gesture_of(action, value);
        let locate = super::page::locate_script(index, focus, gesture).map_err(|e| not_done(BrowserError::Cdp(e.to_string())))?;
        let located = script(locate).await.map_err(not_done)?;
        let (url_before, described, x, y, hit, focused, sends): (
            String,
            Vec<super::page::Described>,
            f64,
            f64,
            bool,
            bool,
            Option<super::submit::Sends>,
        ) = located.into_value().map_err(|e| not_done(BrowserError::Cdp(e.to_string())))?;
        if super::page::state_of(&url_before, &described) != state {
            return Err(stale());
        }
        // Whether this gesture sends a form, decided before any input: a task's needs the
        // owner's review, and a reviewed one goes only while the form is what was reviewed.
        use super::submit::Sends;
        let submission = match (policy, sends) {
            (SubmitPolicy::Free, _) | (SubmitPolicy::NeedsReview, None) => None,
            (SubmitPolicy::NeedsReview, Some(Sends::Form(sends))) => {
                let sends = super::submit::Submission::from_page(sends).map_err(not_done)?;
                return Err(not_done(BrowserError::NeedsReview { method: sends.method, destination: sends.destination }));
            }
            (SubmitPolicy::NeedsReview, Some(Sends::Unknown(_))) => return Err(not_done(BrowserError::UnknownSubmission)),
            (SubmitPolicy::Reviewed { .. }, None | Some(Sends::Unknown(_))) => return Err(not_done(BrowserError::FormChanged)),
            (SubmitPolicy::Reviewed { version }, Some(Sends::Form(sends))) => {
                let sends = super::submit::Submission::from_page(sends).map_err(not_done)?;
                let reviewed = gesture.and_then(super::submit::reviewed_gesture).map(|g| sends.version(&self.version_key, state, g));
                if reviewed.as_deref() != Some(version) {
                    return Err(not_done(BrowserError::FormChanged));
                }
                Some(sends)
            }
        };
        if let Some(sends) = &submission {
            // The destination is checked again as it is now, not as it was reviewed (the policy
            // may have been tightened since).
            self.checked(&sends.destination).map_err(not_done)?;
        }
        let reviewed = submission.as_ref();
        if x < 0.0 || y < 0.0 {
            return Err(not_done(BrowserError::StaleElement(format!("there is no element {reference} on this page"))));
        }
        if !hit && matches!(action, PageAction::Click) {
            return Err(not_done(BrowserError::StaleElement(format!(
                "something else covers {reference} ({role} \"{name}\") where it would be clicked; close what covers it first"
            ))));
        }
        if !focused && focus {
            return Err(not_done(BrowserError::StaleElement(format!("{reference} ({role} \"{name}\") cannot take the keyboard"))));
        }
        // From here the page may act on what is sent: every failure is "may have happened".
        // The reviewed form's own request is the one the guard lets through, once, and only
        // carrying the reviewed fields; seeing it released is what makes the approval's receipt.
        if let Some(sends) = reviewed {
            self.send_guard.allow_once(&sends.method, &sends.destination, sends.expected());
        }
        let download_mark = self.downloads.mark();
        let refusal_mark = current.proxy.refusal_mark();
        let sent = send_input(&current.page, action, index, value, x, y);
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(ActError::MayHaveDone("stopped while acting on the page".into())),
            sent = tokio::time::timeout(SCRIPT_LIMIT, sent) => sent.unwrap_or_else(|_| Err(ActError::MayHaveDone("the page did not take the input within 10 s".into()))),
        };
        let done = |url_after: String, title_after: String| ActDone {
            url_before: url_before.clone(),
            url_after,
            title_after,
            role: role.clone(),
            name: name.clone(),
            download: self.downloads.since(download_mark).into_iter().next(),
        };
        if reviewed.is_some() {
            // Sent means the guard released the reviewed request and the site answered it: wait
            // for both (Stop and a limit bound each wait), then close the allowance and read,
            // once, where it ended. One not released cannot leave later as a page load; but a
            // page that stopped its own submission may have sent the fields another way (a
            // script's fetch), so that is uncertain, never "nothing was sent" — unless nothing
            // reached the page at all.
            if outcome.is_ok() && !cancel.is_cancelled() {
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => {}
                    _ = tokio::time::timeout(SCRIPT_LIMIT, self.send_guard.until_settled()) => {}
                }
                // Released is not arrived: only the site's answer makes it sent.
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => {}
                    _ = tokio::time::timeout(FORM_ANSWER_LIMIT, self.send_guard.until_answered()) => {}
                }
            }
            let ended = self.send_guard.finish();
            if matches!(ended, super::submit::Allowance::Went | super::submit::Allowance::Answered(_)) {
                let refused = reviewed
                    .and_then(|sends| Url::parse(&sends.destination).ok())
                    .and_then(|url| url.host_str().map(str::to_owned))
                    .and_then(|host| current.proxy.refused_since(refusal_mark).into_iter().find(|r| r.host == host));
                if let Some(why) = uncertain_after_release(&ended, refused.as_ref(), cancel.is_cancelled()) {
                    // Whatever the page set going ends with its tab.
                    abandon(&mut running).await;
                    return Err(ActError::MayHaveDone(why));
                }
            } else {
                // Whatever the page set going ends with its tab.
                abandon(&mut running).await;
                return Err(match (ended, outcome) {
                    (_, Err(ActError::NotDone(err))) => ActError::NotDone(err),
                    (super::submit::Allowance::Differed, _) => ActError::MayHaveDone(BrowserError::FormDiffered.to_string()),
                    (_, _) if cancel.is_cancelled() => ActError::MayHaveDone(
                        "stopped after the button was pressed and before the form's request left; the page may have sent it another way"
                            .into(),
                    ),
                    (_, _) => ActError::MayHaveDone(BrowserError::FormNotSent.to_string()),
                });
            }
        }
        // A reviewed form the site answered is done, however the input itself ended.
        let outcome = if reviewed.is_some() { Ok(()) } else { outcome };
        if cancel.is_cancelled() {
            // Stop, however the input ended: whatever it set going on the page ends with its tab.
            abandon(&mut running).await;
            return outcome.map(|()| done(String::new(), String::new()));
        }
        outcome?;
        // What the page shows now; a navigation the action started may still be committing
        // (then the address is the one before, and the title may be empty).
        let read = tokio::time::timeout(
            Duration::from_secs(5),
            current.page.evaluate("[location.href.slice(0, 8192), document.title.slice(0, 600)]"),
        );
        let after = tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            after = read => Some(after),
        };
        let Some(after) = after else {
            // Stop while reading: what the action set going ends with its tab, as above.
            abandon(&mut running).await;
            return Ok(done(String::new(), String::new()));
        };
        let (url_after, title_after): (String, String) = match after {
            Ok(Ok(value)) => value.into_value().unwrap_or_default(),
            Ok(Err(_)) | Err(_) => (String::new(), String::new()),
        };
        Ok(done(url_after, title_after.chars().take(MAX_TITLE).collect()))
    }

    /// Every download of this browser session, oldest first.
    pub fn downloads(&self) -> Vec<hearth_protocol::browser::DownloadView> {
        self.downloads.all()
    }

    /// The kept download `id`, once it finished arriving (Stop ends the wait; at most 60 s).
    pub async fn kept_download(
        &self,
        id: &str,
        cancel: &CancellationToken,
    ) -> Result<super::downloads::KeptDownload, super::downloads::DownloadError> {
        use super::downloads::DownloadError;
        let waited = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                self.stop_downloads().await;
                return Err(DownloadError::Stopped);
            }
            waited = tokio::time::timeout(Duration::from_secs(60), self.downloads.settled(id)) => waited,
        };
        if waited.is_err() {
            return Err(DownloadError::Unfinished(id.chars().take(64).collect()));
        }
        self.downloads.read_kept(id).await
    }

    /// Cancels every download still arriving (a Stop while waiting for one); waits at most a few
    /// seconds for a call in flight to let go of the browser.
    pub async fn stop_downloads(&self) {
        let Ok(mut running) = tokio::time::timeout(Duration::from_secs(5), self.running.lock()).await else {
            tracing::warn!("a call held the browser through Stop; its downloads were not cancelled");
            return;
        };
        // As any Stop: no download may start, those arriving are cancelled, and the page that
        // started them goes with its tab.
        abandon(&mut running).await;
    }

    /// Waits until a download of this session matches `wanted` (Stop-free: the caller bounds
    /// it), without polling: the ledger wakes its watchers on every change.
    pub async fn until_download(
        &self,
        wanted: impl Fn(&hearth_protocol::browser::DownloadView) -> bool,
    ) -> hearth_protocol::browser::DownloadView {
        let mut watch = self.downloads.watch();
        loop {
            if let Some(found) = self.downloads.all().into_iter().find(|d| wanted(d)) {
                return found;
            }
            if watch.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    /// Notes that save_download put `id` into Files.
    pub fn download_saved(&self, id: &str) {
        self.downloads.saved(id);
    }

    /// What the proxy refused for this browser so far (the newest 100), for notices.
    pub async fn refused(&self) -> Vec<super::proxy::Refused> {
        self.running.lock().await.as_ref().map(|r| r.proxy.refused()).unwrap_or_default()
    }

    /// Launches Chromium when none runs (or the last one ended). Returns whether this was a
    /// restart after an earlier one ended.
    async fn ensure_running(&self, running: &mut Option<Running>) -> Result<bool, BrowserError> {
        if self.retired.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(BrowserError::Deleted);
        }
        if let Some(current) = running.as_mut() {
            let exited = current.process.try_wait().ok().flatten().is_some();
            if !exited && !current.handler.is_finished() {
                return Ok(false);
            }
            tracing::warn!("the browser had ended; starting it again");
            end(running.take()).await;
        }
        let launched = self.launch().await?;
        *running = Some(launched);
        // Set only once a launch succeeded, so the first look after a failed one is not called
        // a restart.
        Ok(self.launched_once.swap(true, std::sync::atomic::Ordering::SeqCst))
    }

    async fn launch(&self) -> Result<Running, BrowserError> {
        // The browser's one door: a build without it (a phone's) never starts its proxy or a
        // Chromium.
        if !crate::parts::Part::Browser.is_built() {
            return Err(BrowserError::NotInThisBuild);
        }
        let proxy =
            EgressProxy::start(self.config.allow.clone(), self.resolver.clone()).await.map_err(|e| BrowserError::Launch(e.to_string()))?;
        let profile = self.config.profiles_dir.join(&self.profile);
        crate::store::Store::create_private_dir(&profile).map_err(|e| BrowserError::Launch(e.to_string()))?;
        if let Err(err) = prefer_pdf_downloads(&profile) {
            // Then a PDF opens in Chromium's viewer, and the look reads an empty page.
            tracing::warn!(error = %err, "could not set the profile to download PDFs");
        }
        let proxy_address = proxy.address();
        let executable = launcher(&self.config.profiles_dir, &self.config.executable).map_err(|e| {
            BrowserError::Launch(format!("its launcher script could not be written in {} ({e})", self.config.profiles_dir.display()))
        })?;
        let args = chromium_args(&profile, proxy_address, running_as_root());
        let env = kept_env();
        // A launcher just written can be "busy" for a moment: a process this one forked on
        // another thread (a container command, another profile's browser) holds the write
        // descriptor it inherited until its own exec, and the kernel refuses to exec a file open
        // for writing (ETXTBSY; seen in the test suite, where many Hearths start at once). The
        // window is one fork's; a few tries a few milliseconds apart outlast it.
        let mut busy_tries = 0u64;
        let (mut process, ends, stderr) = loop {
            match super::pipe::spawn(&executable, &args, &env) {
                Ok(spawned) => break spawned,
                Err(err) if err.kind() == std::io::ErrorKind::ExecutableFileBusy && busy_tries < LAUNCH_BUSY_TRIES => {
                    busy_tries += 1;
                    tokio::time::sleep(Duration::from_millis(10 * busy_tries)).await;
                }
                Err(err) => return Err(BrowserError::Launch(format!("{} could not be run: {err}", executable.display()))),
            }
        };
        let connected = async {
            let (url, bridge) =
                super::pipe::bridge(ends).await.map_err(|e| BrowserError::Launch(format!("its CDP bridge could not start: {e}")))?;
            let handler_config = chromiumoxide::handler::HandlerConfig {
                // chromiumoxide ignores certificate errors unless told otherwise: a forged answer
                // for an https site must fail, not be shown with the profile's cookies.
                ignore_https_errors: false,
                viewport: Some(Viewport { width: VIEWPORT.0, height: VIEWPORT.1, device_scale_factor: Some(1.0), ..Viewport::default() }),
                request_timeout: NAVIGATION_LIMIT,
                ..chromiumoxide::handler::HandlerConfig::default()
            };
            match tokio::time::timeout(LAUNCH_LIMIT, Browser::connect_with_config(url, handler_config)).await {
                Ok(Ok((browser, handler))) => Ok((browser, handler, bridge)),
                Ok(Err(err)) => {
                    bridge.abort();
                    Err(BrowserError::Launch(format!("its CDP bridge did not connect: {err}")))
                }
                Err(_) => {
                    bridge.abort();
                    Err(BrowserError::Launch("its CDP bridge did not connect within 20 s".into()))
                }
            }
        };
        let (browser, mut handler, bridge) = match connected.await {
            Ok(connected) => connected,
            Err(err) => {
                let _ = process.kill().await;
                return Err(err);
            }
        };
        // chromiumoxide's handler reports a dead connection once and then stays pending: end the
        // loop on it, so `is_finished` means the browser is gone.
        let mut handler = tokio::spawn(async move {
            while let Some(event) = handler.next().await {
                if let Err(chromiumoxide::error::CdpError::Ws(_)) = event {
                    break;
                }
            }
        });
        let ready = async {
            let page = first_tab(&browser).await?;
            // What Chromium would download goes to this session's folder, under its own ids.
            self.downloads.reset().map_err(|e| BrowserError::Launch(e.to_string()))?;
            let events = super::downloads::listen(&browser).await?;
            super::downloads::allow_into(&browser, &self.downloads).await?;
            Ok::<_, BrowserError>((page, events))
        };
        match ready.await {
            Ok((page, events)) => {
                let browser = Arc::new(Mutex::new(browser));
                let downloads_follower = tokio::spawn(super::downloads::follow(browser.clone(), self.downloads.clone(), events));
                Ok(Running {
                    browser,
                    process,
                    handler,
                    bridge,
                    downloads_follower,
                    page,
                    proxy,
                    downloads: self.downloads.clone(),
                    guard_follower: None,
                })
            }
            Err(err) => {
                // A browser whose tab could not be set up is not kept half-started; one that
                // exited says why in its last words.
                // The connection died with the browser: its status and last words follow at once.
                let died = tokio::time::timeout(Duration::from_secs(2), &mut handler).await.is_ok();
                let exited =
                    if died { tokio::time::timeout(Duration::from_secs(2), process.wait()).await.ok().and_then(Result::ok) } else { None };
                let _ = process.kill().await;
                handler.abort();
                bridge.abort();
                drop(browser);
                match exited {
                    Some(status) => Err(BrowserError::Launch(format!("it exited at start ({status}): {}", stderr.last_words().await))),
                    None => Err(err),
                }
            }
        }
    }
}

/// Marks the browser used when a look or an action ends (however it ends).
struct TouchOnDrop<'a>(&'a Chromium);

impl Drop for TouchOnDrop<'_> {
    fn drop(&mut self) {
        self.0.touch();
    }
}

/// Sends one action's input to the page (the element is already in view, and focused when
/// the action types).
async fn send_input(
    page: &chromiumoxide::Page,
    action: hearth_protocol::browser::PageAction,
    index: usize,
    value: Option<&str>,
    x: f64,
    y: f64,
) -> Result<(), ActError> {
    use chromiumoxide::cdp::browser_protocol::input::{
        DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType, InsertTextParams, MouseButton,
    };
    use hearth_protocol::browser::PageAction;
    let may_have = |err: chromiumoxide::error::CdpError| ActError::MayHaveDone(format!("the browser failed while acting: {err}"));
    let value = value.unwrap_or_default();
    match action {
        PageAction::Scroll => Ok(()),
        PageAction::Click => {
            let mut moved = DispatchMouseEventParams::new(DispatchMouseEventType::MouseMoved, x, y);
            moved.button = Some(MouseButton::None);
            // A failed move sends nothing a page acts on; a press may already fire mousedown.
            page.execute(moved).await.map_err(|e| ActError::NotDone(e.into()))?;
            let mut press = DispatchMouseEventParams::new(DispatchMouseEventType::MousePressed, x, y);
            press.button = Some(MouseButton::Left);
            press.buttons = Some(1);
            press.click_count = Some(1);
            page.execute(press).await.map_err(may_have)?;
            let mut release = DispatchMouseEventParams::new(DispatchMouseEventType::MouseReleased, x, y);
            release.button = Some(MouseButton::Left);
            release.click_count = Some(1);
            page.execute(release).await.map_err(may_have)?;
            Ok(())
        }
        PageAction::Type => {
            page.execute(InsertTextParams::new(value)).await.map_err(may_have)?;
            Ok(())
        }
        PageAction::Select => {
            let script = super::page::select_script(index, value).map_err(|e| ActError::NotDone(BrowserError::Cdp(e.to_string())))?;
            let picked: bool = page.evaluate(script).await.map_err(may_have)?.into_value().unwrap_or(false);
            if picked { Ok(()) } else { Err(ActError::NotDone(BrowserError::StaleElement(format!("the element has no option {value:?}")))) }
        }
        PageAction::Press => {
            let Some(key) = super::page::key(value) else {
                return Err(ActError::NotDone(BrowserError::BadElement(format!(
                    "page_act cannot press {value:?}; it presses {}",
                    super::page::KEYS.join(", ")
                ))));
            };
            let mut down = DispatchKeyEventParams::new(DispatchKeyEventType::KeyDown);
            down.key = Some(key.key.to_owned());
            down.code = Some(key.code.to_owned());
            down.windows_virtual_key_code = Some(key.key_code);
            down.text = key.text.map(str::to_owned);
            page.execute(down).await.map_err(may_have)?;
            let mut up = DispatchKeyEventParams::new(DispatchKeyEventType::KeyUp);
            up.key = Some(key.key.to_owned());
            up.code = Some(key.code.to_owned());
            up.windows_virtual_key_code = Some(key.key_code);
            page.execute(up).await.map_err(may_have)?;
            Ok(())
        }
    }
}

/// The session's one tab. Service workers off: their requests would still meet the proxy, but
/// they outlive the look that installed them. The API is removed from every document, and
/// requests skip any worker an older profile holds.
async fn first_tab(browser: &Browser) -> Result<chromiumoxide::Page, BrowserError> {
    let page = browser.new_page("about:blank").await?;
    page.evaluate_on_new_document("delete Object.getPrototypeOf(navigator).serviceWorker;").await?;
    page.execute(chromiumoxide::cdp::browser_protocol::network::SetBypassServiceWorkerParams::new(true)).await?;
    Ok(page)
}

async fn read_page(
    page: &chromiumoxide::Page,
    url: &Url,
    allow: &AllowList,
    downloads: &super::downloads::Downloads,
    reading: Reading,
) -> Result<Observation, BrowserError> {
    if let Some(guid) = navigate(page, url, downloads).await? {
        // The address was a file to download, not a page: the tab still shows the page before,
        // and the look ends when the download does (Stop and the look's limit reach it).
        let download = downloads.settled(&guid).await;
        return Ok(Observation {
            final_url: url.to_string(),
            title: String::new(),
            text: String::new(),
            truncated: false,
            screenshot_png: Vec::new(),
            restarted: false,
            download,
        });
    }
    // What the page says about itself (URL, title, text), its address checked, then the
    // picture: one after the other, see [`screenshot`]. A page whose address is refused is
    // never pictured. The address checked is the one read just before the picture; a document
    // a client redirect brought in after the read got through the egress proxy like every
    // request, so a picture of it shows nothing the policy refused.
    let (expression, limit, picture) = match reading {
        Reading::Text { picture } => (READ_PAGE, MAX_TEXT_READ, picture),
        Reading::Markup => (READ_MARKUP, MAX_MARKUP_READ, false),
    };
    let (final_url, title, text) = evaluate_value::<(String, String, String)>(page, expression).await?;
    let parsed = Url::parse(&final_url).map_err(|_| BrowserError::Cdp("the page ended on an address that does not parse".into()))?;
    egress::check_url(&parsed, allow).map_err(|refusal| refused(&parsed, refusal))?;
    let shot = if picture { Some(screenshot(page, PngEncoding::Fast).await) } else { None };
    let title: String = title.chars().take(MAX_TITLE).collect();
    // More than the limit arrived (the page's slice is longer in characters than the limit
    // whenever its text was).
    let truncated = text.chars().count() > limit;
    let text = if truncated { text.chars().take(limit).collect() } else { text };
    let screenshot_png = match shot {
        Some(shot) => shot?,
        None => Vec::new(),
    };
    Ok(Observation { final_url, title, text, truncated, screenshot_png, restarted: false, download: None })
}

/// `expression`'s value in the page's main world, in one Runtime.evaluate (no context lookup
/// first); an exception in the page is an error.
async fn evaluate_value<T: serde::de::DeserializeOwned>(page: &chromiumoxide::Page, expression: &str) -> Result<T, BrowserError> {
    let params = chromiumoxide::cdp::js_protocol::runtime::EvaluateParams::builder()
        .expression(expression)
        .return_by_value(true)
        .await_promise(false)
        .build()
        .map_err(BrowserError::Cdp)?;
    let answer = page.execute(params).await?;
    if let Some(thrown) = &answer.result.exception_details {
        return Err(BrowserError::Cdp(format!("the page's script failed: {}", thrown.text.chars().take(200).collect::<String>())));
    }
    let value = answer.result.result.value.unwrap_or(serde_json::Value::Null);
    serde_json::from_value(value).map_err(|e| BrowserError::Cdp(format!("the page answered in an unexpected shape: {e}")))
}

/// How a picture's PNG is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PngEncoding {
    /// Chromium's fast encoder: the same pixels in a larger file, encoded in a fraction of the
    /// time — a look's picture, shown once on its card.
    Fast,
    /// The usual encoder: a smaller file for what is sent to a model (look_page), where the
    /// bytes go over the network and count against the provider's image limit.
    Compact,
}

/// The largest picture look_page sends: Anthropic refuses an image over 5 MB of base64, which
/// this many PNG bytes stay under. A larger one (a page of big photographs) is refused with a
/// message rather than failing the whole reply.
pub const MAX_PICTURE_BYTES: usize = 3_500_000;

/// How many times in all a picture is asked for before its refusal is the answer.
const PICTURE_TRIES: usize = 3;

/// What Chromium answers when a frame for the picture was not drawn: DevTools' generic
/// server-error code with a message beginning this way (`Page.captureScreenshot`; matched as a
/// prefix, should a later Chromium add its reason). Only this refusal is asked again; any other
/// error (a closed or crashed target) is the answer at once.
const NOT_CAPTURED: (i64, &str) = (-32000, "Unable to capture screenshot");

/// A PNG of the viewport, asked for directly (chromiumoxide's helper first activates the tab,
/// one more round trip for a headless browser with one tab).
///
/// Taken after a script has run in the page, never alongside one: with the new-surface capture
/// (`CDPScreenshotNewSurface`, see the launch) Chromium refuses a picture asked for in the same
/// instant as a navigation's DOMContentLoaded or a script about one in three times ("Unable to
/// capture screenshot", measured on this machine), and none in 165 asked after the read. A
/// refusal ([`NOT_CAPTURED`]) is asked again, [`PICTURE_TRIES`] times in all: it is a draw that
/// did not happen, and asking again sends no input, navigation or request to the page (it makes
/// the page draw a frame, running its animation-frame callbacks, as any picture does).
async fn screenshot(page: &chromiumoxide::Page, encoding: PngEncoding) -> Result<Vec<u8>, BrowserError> {
    use base64::Engine;
    use chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotParams;
    let params = CaptureScreenshotParams {
        format: Some(CaptureScreenshotFormat::Png),
        optimize_for_speed: Some(encoding == PngEncoding::Fast),
        capture_beyond_viewport: Some(false),
        ..Default::default()
    };
    let mut tries = 0;
    let shot = loop {
        tries += 1;
        match page.execute(params.clone()).await {
            Err(chromiumoxide::error::CdpError::Chrome(refused))
                if tries < PICTURE_TRIES && refused.code == NOT_CAPTURED.0 && refused.message.starts_with(NOT_CAPTURED.1) =>
            {
                tracing::info!(try_number = tries, "the browser did not draw the picture's frame; asking again");
            }
            answer => break answer?,
        }
    };
    let data: &str = shot.result.data.as_ref();
    base64::engine::general_purpose::STANDARD.decode(data).map_err(|e| BrowserError::Cdp(format!("the screenshot was not base64: {e}")))
}

/// Navigates `page` to `url` and waits for this navigation's DOMContentLoaded: images and
/// frames still loading do not hold the look up. A navigation that becomes a download ends
/// with that download's id.
///
/// The navigation is started from the page (`location.assign`), not with `Page.navigate`:
/// chromiumoxide answers a `Page.navigate` only once the page fired `load`, and sends the next
/// one only after that, so one image that never comes would hold every look up for 20 s (the
/// test with such a page failed that way). A navigation the page starts is one chromiumoxide
/// does not wait on; the frame's own events say when it committed, to which document, and
/// whether it failed.
async fn navigate(page: &chromiumoxide::Page, url: &Url, downloads: &super::downloads::Downloads) -> Result<Option<String>, BrowserError> {
    use chromiumoxide::cdp::browser_protocol::network::{EventLoadingFailed, ResourceType};
    use chromiumoxide::cdp::browser_protocol::page::{EventFrameNavigated, EventLifecycleEvent, EventNavigatedWithinDocument};
    // A tab's main frame has the tab's own id (no round trip to ask for it).
    let main = chromiumoxide::cdp::browser_protocol::page::FrameId::new(page.target_id().inner().clone());
    // Listening before navigating: no event can be missed.
    let mut navigated = page.event_listener::<EventFrameNavigated>().await?;
    let mut within = page.event_listener::<EventNavigatedWithinDocument>().await?;
    let mut lifecycle = page.event_listener::<EventLifecycleEvent>().await?;
    let mut failed = page.event_listener::<EventLoadingFailed>().await?;
    let mut downloaded = downloads.watch();
    let download_mark = downloads.mark();
    let target = serde_json::to_string(url.as_str()).map_err(|e| BrowserError::Cdp(e.to_string()))?;
    // The old document may be gone before the answer comes back: only the frame's events count.
    // Sent as a bare Runtime.evaluate: chromiumoxide's `evaluate` first asks its handler for the
    // page's context, one more hop per look.
    let assign = chromiumoxide::cdp::js_protocol::runtime::EvaluateParams::builder()
        .expression(format!("location.assign({target}); true"))
        .return_by_value(false)
        .build()
        .map_err(BrowserError::Cdp)?;
    let _ = page.execute(assign).await;
    let mut committed = None;
    let mut unreachable = false;
    let mut error_text: Option<String> = None;
    let mut loaded = std::collections::HashSet::new();
    let did_not_load = |text: Option<String>| {
        BrowserError::Cdp(format!(
            "the page did not load ({}); a refused https address ends this way too",
            text.unwrap_or_else(|| "no answer".into())
        ))
    };
    loop {
        tokio::select! {
            // The commit comes before its document's events; biased keeps that order here.
            biased;
            event = navigated.next() => {
                // The page's streams end with its connection (the download watch never does).
                let Some(event) = event else { return Err(BrowserError::Cdp("the browser closed the page".into())) };
                if event.frame.id == main && event.frame.parent_id.is_none() {
                    unreachable = event.frame.unreachable_url.is_some();
                    if unreachable && error_text.is_some() {
                        return Err(did_not_load(error_text));
                    }
                    if !unreachable && loaded.contains(&event.frame.loader_id) {
                        return Ok(None);
                    }
                    committed = Some(event.frame.loader_id.clone());
                }
            }
            Some(event) = failed.next() => {
                if event.r#type == ResourceType::Document && !event.canceled.unwrap_or(false) {
                    error_text = Some(event.error_text.clone());
                    if unreachable {
                        return Err(did_not_load(error_text));
                    }
                }
            }
            Some(event) = within.next() => {
                if event.frame_id == main && event.url == url.as_str() {
                    return Ok(None);
                }
            }
            Some(event) = lifecycle.next() => {
                if event.frame_id == main && event.name == "DOMContentLoaded" {
                    if committed.as_ref() == Some(&event.loader_id) {
                        if unreachable {
                            return Err(did_not_load(error_text));
                        }
                        return Ok(None);
                    }
                    loaded.insert(event.loader_id.clone());
                }
            }
            Ok(()) = downloaded.changed() => {
                if let Some(guid) = downloads.begun_in(main.inner(), download_mark) {
                    return Ok(Some(guid));
                }
            }
            else => return Err(BrowserError::Cdp("the browser closed the page".into())),
        }
    }
}

/// After Stop or a time-out: the page stops loading and its tab is closed, with everything
/// its scripts would still do, and a fresh tab takes its place. (A blank navigation would not
/// do: chromiumoxide queues `Page.navigate` behind the last navigation's `load`, and a
/// stopped page may never fire it.) A browser that does not answer within a few seconds is
/// ended, and the next use starts a new one.
async fn abandon(running: &mut Option<Running>) {
    use chromiumoxide::cdp::browser_protocol::page::StopLoadingParams;
    let Some(current) = running.as_mut() else { return };
    let limit = Duration::from_secs(1);
    // Downloads are the browser's, not the tab's: they would outlive its closing. None may
    // start from here on, and those arriving are cancelled, before the tab goes.
    let cancelled = async {
        let browser = current.browser.lock().await;
        super::downloads::deny(&browser, &current.downloads).await?;
        super::downloads::cancel_arriving(&browser, &current.downloads).await;
        Ok::<(), chromiumoxide::error::CdpError>(())
    };
    if !matches!(tokio::time::timeout(Duration::from_secs(5), cancelled).await, Ok(Ok(()))) {
        tracing::warn!("the browser did not stop its downloads in time; it is ended");
        end(running.take()).await;
        return;
    }
    let _ = tokio::time::timeout(limit, current.page.execute(StopLoadingParams::default())).await;
    let closed = tokio::time::timeout(limit, current.page.clone().close()).await;
    let fresh = match closed {
        Ok(Ok(())) => {
            let browser = current.browser.lock().await;
            let fresh = async {
                let page = first_tab(&browser).await?;
                // A window the stopped page opened (a link into a new tab, `window.open`) would go
                // on loading and running after Stop: every page but the fresh tab is closed.
                close_other_pages(&browser, page.target_id()).await?;
                // The stopped page is gone: downloads are allowed again for the next one.
                super::downloads::allow_into(&browser, &current.downloads).await?;
                Ok::<_, BrowserError>(page)
            };
            tokio::time::timeout(Duration::from_secs(5), fresh).await.ok().and_then(Result::ok)
        }
        Ok(Err(_)) | Err(_) => None,
    };
    match fresh {
        // The send guard is the browser's, not the tab's: it stays armed for the fresh tab.
        Some(page) => current.page = page,
        None => {
            tracing::warn!("the browser did not close a stopped page in time; it is ended");
            end(running.take()).await;
        }
    }
}

/// Why a reviewed form the guard released cannot be called sent, if it cannot: its answer was
/// a failure, none came (Stop, or the limit), and then the proxy's own record of refusing its
/// destination's host says why, when it holds one (written before the proxy answers; only the
/// host is recorded, so it is named as a likely reason, never as proof). A form the site
/// answered is sent, whatever else the page's requests met.
fn uncertain_after_release(ended: &super::submit::Allowance, refused: Option<&super::proxy::Refused>, stopped: bool) -> Option<String> {
    use super::submit::{Allowance, Answer};
    let what = match ended {
        Allowance::Answered(Answer::Site) | Allowance::Open { .. } | Allowance::Closed | Allowance::Differed => return None,
        Allowance::Answered(Answer::NetworkError) => "the form's request ended in a network error, without the site's answer",
        Allowance::Answered(Answer::Proxy) => "Hearth's egress proxy answered the form's request itself, not the site",
        Allowance::Answered(Answer::SentElsewhere) => {
            "the site answered by sending the form on to another address (a 307 or 308 redirect), where Hearth held it back as unreviewed"
        }
        Allowance::Went if stopped => "stopped after the form left and before the site answered",
        Allowance::Went => "no answer from the site came in time",
    };
    Some(match refused {
        Some(refused) => format!(
            "{what}; Hearth's egress policy refused a request to {} meanwhile ({}), so the form most likely did not reach it",
            refused.host, refused.refusal
        ),
        None => format!("{what}; it may or may not have arrived"),
    })
}

/// Closes every page `browser` has but `keep` — the tabs and windows a stopped page opened —
/// and waits until Chromium reports each one gone. A page that opened yet another meanwhile is
/// an error, and so is one that does not close (a caller's deadline bounds the wait): the
/// caller then ends the whole browser.
async fn close_other_pages(browser: &Browser, keep: &chromiumoxide::cdp::browser_protocol::target::TargetId) -> Result<(), BrowserError> {
    use chromiumoxide::cdp::browser_protocol::target::{CloseTargetParams, EventTargetDestroyed, GetTargetsParams, TargetId};
    // Listening before closing: no page's end is missed.
    let mut destroyed = browser.event_listener::<EventTargetDestroyed>().await?;
    let others = || async {
        let listed = browser.execute(GetTargetsParams::default()).await?;
        Ok::<Vec<TargetId>, BrowserError>(
            listed.result.target_infos.iter().filter(|t| t.r#type == "page" && &t.target_id != keep).map(|t| t.target_id.clone()).collect(),
        )
    };
    let open = others().await?;
    if open.is_empty() {
        return Ok(());
    }
    tracing::info!(pages = open.len(), "closing the windows a stopped page opened");
    // One gone already (the stopped tab, whose own close had not ended yet; a window that
    // closed itself) cannot be closed again: the last listing below is what counts.
    let mut closing = Vec::with_capacity(open.len());
    for id in open {
        if browser.execute(CloseTargetParams::new(id.clone())).await.is_ok() {
            closing.push(id);
        }
    }
    let mut open = closing;
    while !open.is_empty() {
        let Some(gone) = destroyed.next().await else { return Err(BrowserError::Cdp("the browser closed".into())) };
        open.retain(|id| *id != gone.target_id);
    }
    if others().await?.is_empty() {
        Ok(())
    } else {
        Err(BrowserError::Cdp("a stopped page opened another window while its windows were closed".into()))
    }
}

/// Sets the profile's preference that a PDF is downloaded rather than shown in Chromium's viewer
/// (whose page has no text to read): a look at a PDF then ends with its download, judged by
/// [`super::downloads`]. Chromium keeps its preferences in `Default/Preferences` (JSON it owns);
/// the one key is merged in before each launch, the rest left as Chromium wrote it. The file is
/// written whole and moved into place, 0600 (`write_private`).
fn prefer_pdf_downloads(profile: &Path) -> std::io::Result<()> {
    let folder = profile.join("Default");
    crate::store::Store::create_private_dir(&folder).map_err(std::io::Error::other)?;
    let path = folder.join("Preferences");
    let mut prefs: serde_json::Value = match std::fs::read(&path) {
        // A file Chromium wrote that does not parse is left as it is (the owner's site settings
        // are in it); PDFs then open in the viewer.
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(std::io::Error::other)?,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => serde_json::json!({}),
        Err(err) => return Err(err),
    };
    if !prefs.is_object() {
        prefs = serde_json::json!({});
    }
    let set = |prefs: &mut serde_json::Value, section: &str, key: &str, value: serde_json::Value| {
        if !prefs[section].is_object() {
            prefs[section] = serde_json::json!({});
        }
        prefs[section][key] = value;
    };
    if prefs["plugins"]["always_open_pdf_externally"] == serde_json::Value::Bool(true) {
        return Ok(());
    }
    set(&mut prefs, "plugins", "always_open_pdf_externally", serde_json::Value::Bool(true));
    let bytes = serde_json::to_vec(&prefs).map_err(std::io::Error::other)?;
    crate::files::write_private(&path, &bytes)
}

/// Where util-linux keeps `setpriv` (Essential on Debian).
const SETPRIV: &str = "/usr/bin/setpriv";

/// How often a launch refused with ETXTBSY is tried again (10, 20, … 50 ms apart).
const LAUNCH_BUSY_TRIES: u64 = 5;

/// The program Chromium is started through: a script in the profiles folder that moves the CDP
/// pipe Hearth gives it as stdin and stdout to fds 3 and 4 (where `--remote-debugging-pipe`
/// looks for it; see [`super::pipe`]) and `exec`s `setpriv --pdeathsig KILL` on the browser, so
/// the kernel ends Chromium when the thread that started it ends (Hearth's runtime threads live
/// as long as Hearth; a crash or a kill ends them), instead of leaving it running. The rule this
/// sets: a browser is launched only from a runtime worker (`ensure_running` in async code), never
/// from `spawn_blocking` or a short-lived thread, whose end would end the browser. Without
/// `setpriv` the script `exec`s the browser directly (and a later Hearth ends a left-over one
/// before its first launch). A script that cannot be written is an error: without it Chromium
/// would have no pipe.
fn launcher(profiles_dir: &Path, executable: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let quoted = format!("'{}'", executable.to_string_lossy().replace('\'', r"'\''"));
    let run = if Path::new(SETPRIV).exists() { format!("{SETPRIV} --pdeathsig KILL -- {quoted}") } else { quoted };
    let script = format!(
        "#!/bin/sh\n# Written by Hearth: CDP on fds 3 and 4 (given as stdin and stdout); Chromium ends when the Hearth thread that started it ends.\n\
         exec 3<&0 4>&1 </dev/null >/dev/null\nexec {run} \"$@\"\n"
    );
    let path = profiles_dir.join(".launch-chromium");
    let current = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file() && m.permissions().mode() & 0o777 == 0o700)
        && std::fs::read_to_string(&path).is_ok_and(|old| old == script);
    if current {
        return Ok(path);
    }
    // Written whole under a name of this process's, then moved into place: a browser starting
    // meanwhile never runs half a script.
    let partial = profiles_dir.join(format!(".launch-chromium.{}", std::process::id()));
    let written = std::fs::write(&partial, &script)
        .and_then(|()| std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o700)))
        .and_then(|()| std::fs::rename(&partial, &path));
    if let Err(err) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(err);
    }
    Ok(path)
}

/// Chromium's command line (after the program): chromiumoxide's own defaults, kept as they were
/// when it launched the browser, then Hearth's. `--remote-debugging-pipe` replaces the
/// `--remote-debugging-port=0` chromiumoxide added.
fn chromium_args(profile: &Path, proxy_address: std::net::SocketAddr, as_root: bool) -> Vec<String> {
    let mut args: Vec<String> = [
        // chromiumoxide 0.9's defaults (`DEFAULT_ARGS`, `disable-extensions` and the new
        // headless mode's three).
        "--disable-background-networking",
        // A picture is taken from a new surface the renderer draws for it, not from the next
        // frame of the one it shows: the first picture after a navigation came 66 ms after
        // DOMContentLoaded without it and 34 ms with it (p50, this machine; Playwright
        // enables the same feature). In chromiumoxide's own `enable-features`: a second switch
        // of that name would replace the first.
        "--enable-features=NetworkService,NetworkServiceInProcess,CDPScreenshotNewSurface",
        "--disable-background-timer-throttling",
        "--disable-backgrounding-occluded-windows",
        "--disable-breakpad",
        "--disable-client-side-phishing-detection",
        "--disable-component-extensions-with-background-pages",
        "--disable-default-apps",
        "--disable-dev-shm-usage",
        "--disable-features=TranslateUI",
        "--disable-hang-monitor",
        "--disable-ipc-flooding-protection",
        "--disable-popup-blocking",
        "--disable-prompt-on-repost",
        "--disable-renderer-backgrounding",
        "--disable-sync",
        "--force-color-profile=srgb",
        "--metrics-recording-only",
        "--no-first-run",
        "--enable-automation",
        "--password-store=basic",
        "--use-mock-keychain",
        "--enable-blink-features=IdleDetection",
        "--lang=en_US",
        "--disable-extensions",
        "--headless=new",
        "--hide-scrollbars",
        "--mute-audio",
        // Hearth's.
        "--remote-debugging-pipe",
        "--proxy-bypass-list=<-loopback>",
        "--disable-quic",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--disable-component-update",
        "--disable-gpu",
        "--no-default-browser-check",
    ]
    .map(str::to_owned)
    .into();
    // Measured on this machine and not set (session 16, a look's steps p50): turning
    // `RenderDocument` off saves 5–10 ms of each navigation, but it is Chromium's own
    // defence against one document's state reaching the next; `disable-frame-rate-limit`
    // lets an animated page draw 1,420 frames a second on 1.4 cores; `disable-gpu-vsync`
    // and turning `PaintHolding` off change nothing measurable.
    args.extend([
        format!("--proxy-server=http://{proxy_address}"),
        format!("--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE {}", proxy_address.ip()),
        format!("--user-data-dir={}", profile.display()),
        format!("--window-size={},{}", VIEWPORT.0, VIEWPORT.1),
    ]);
    // The setuid sandbox cannot start as root (CI and containers); everyone else keeps it.
    if as_root {
        args.extend(["--no-sandbox".to_owned(), "--disable-setuid-sandbox".to_owned()]);
    }
    args
}

/// The variables of Hearth's that the browser gets: those in [`KEPT_ENV`] that are set (in
/// UTF-8), and no other (its environment is cleared first).
fn kept_env() -> Vec<(String, String)> {
    KEPT_ENV.iter().filter_map(|key| Some(((*key).to_owned(), std::env::var(key).ok()?))).collect()
}

fn running_as_root() -> bool {
    // The effective uid, from /proc (no libc call needed).
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(2) == Some("0")))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::super::proxy::Refused;
    use super::super::submit::{Allowance, Answer};
    use super::*;

    /// A reviewed form the guard released is sent only once the site answered it; a failed
    /// answer, none within the limit, or Stop before it leave it uncertain, and the proxy's
    /// record of refusing its host is named then as the likely reason — never over the site's
    /// own answer (another request to that host may be what was refused).
    #[test]
    fn a_released_form_is_sent_only_when_the_site_answered_it() {
        let refused = Refused { host: "shop.test".into(), refusal: Refusal::Port(8080) };
        let answered = Allowance::Answered(Answer::Site);
        assert_eq!(uncertain_after_release(&answered, None, false), None);
        assert_eq!(uncertain_after_release(&answered, Some(&refused), false), None, "the site's answer wins");
        assert_eq!(uncertain_after_release(&answered, None, true), None, "Stop after the answer: sent");
        for (ended, stopped, says) in [
            (Allowance::Answered(Answer::NetworkError), false, "network error"),
            (Allowance::Answered(Answer::Proxy), false, "egress proxy answered"),
            (Allowance::Answered(Answer::SentElsewhere), false, "307 or 308"),
            (Allowance::Went, false, "no answer from the site came in time"),
            (Allowance::Went, true, "stopped after the form left"),
        ] {
            let why = uncertain_after_release(&ended, None, stopped).unwrap_or_default();
            assert!(why.contains(says) && why.contains("may or may not"), "{why}");
            let why = uncertain_after_release(&ended, Some(&refused), stopped).unwrap_or_default();
            assert!(why.contains("refused a request to shop.test") && why.contains("8080"), "{why}");
        }
    }
}
