//! Browser profiles by id: one per chat thread and one per task, each a Chromium of its own
//! with its own cookies and logins, at most [`MAX_RUNNING`] running and [`MAX_SAVED`] kept.
//!
//! A profile is a folder under the profiles directory. Running browsers past the limit are
//! closed least recently used first, never one that is in use; a browser idle for
//! [`IDLE_CLOSE`] is closed (its profile stays). Past [`MAX_SAVED`] profiles, the least recently
//! used throwaway one (a chat's or a task's, never the owner's, never one in use) is removed to
//! make room, so the limit never stops browsing; a task's profile also goes when the task ends,
//! and a chat's when the owner deletes the chat (`Hearth` deletes them, unless kept).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use hearth_protocol::approvals::WebSubmitDraft;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::chromium::{Chromium, ChromiumConfig};
use super::error::{ActError, BrowserError};
use super::shots::Shots;
use super::submit::{SubmitPolicy, action_of};
use crate::approvals::FormSender;
use crate::workspace::ExecuteError;

/// How many browsers run at once.
pub const MAX_RUNNING: usize = 3;
/// How many profiles are kept.
pub const MAX_SAVED: usize = hearth_protocol::browser::MAX_SAVED_PROFILES;
/// How long a browser may sit unused before it is closed.
pub const IDLE_CLOSE: Duration = Duration::from_secs(30 * 60);

/// A profile's id: `thread-…`, `task-…` or `owner`, made only of letters, digits and `-`, at
/// most 80 characters (it names a folder).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProfileId(String);

impl ProfileId {
    /// The profile of a chat thread.
    pub fn for_thread(thread_id: &str) -> Self {
        Self::from_parts("thread", thread_id)
    }

    /// The profile of a task.
    pub fn for_task(task_id: &str) -> Self {
        Self::from_parts("task", task_id)
    }

    /// The owner's own profile (the app's screens).
    pub fn owner() -> Self {
        Self("owner".into())
    }

    /// A profile id as the Browser screen sends it back, checked.
    pub fn parse(id: &str) -> Result<Self, String> {
        let ok = (1..=80).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if ok { Ok(Self(id.to_owned())) } else { Err(format!("{:?} is not a browser profile id", id.chars().take(80).collect::<String>())) }
    }

    /// Ids are Hearth's own (UUIDs); anything else is hashed so it still names one folder.
    fn from_parts(kind: &str, id: &str) -> Self {
        let clean = (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if clean {
            Self(format!("{kind}-{id}"))
        } else {
            use sha2::Digest;
            Self(format!("{kind}-{}", &hex::encode(sha2::Sha256::digest(id.as_bytes()))[..32]))
        }
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A saved profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Its id.
    pub id: ProfileId,
    /// Whether a Chromium runs on it now.
    pub running: bool,
    /// When it was last used in this process.
    pub last_used: Option<Instant>,
}

/// The agent's browsers, by profile. Cheap to clone.
#[derive(Clone)]
pub struct Browsers {
    inner: Arc<Inner>,
}

struct Inner {
    config: ChromiumConfig,
    resolver: hickory_resolver::TokioResolver,
    /// Profiles used in this process (a browser runs on some of them).
    sessions: Mutex<BTreeMap<ProfileId, Arc<Chromium>>>,
    /// Take control sessions by profile: a ticket from the moment it was asked for, and once
    /// started the browser held (never closed under the owner) with its session's generation.
    controls: Mutex<BTreeMap<ProfileId, Controlled>>,
    /// Numbers the tickets.
    tickets: std::sync::atomic::AtomicU64,
    /// Profiles the owner picked for a chat or a task (their logins are why): never removed to
    /// make room, nor with the task that used them.
    kept: std::sync::Mutex<std::collections::BTreeSet<ProfileId>>,
    /// This Hearth's hold on the profiles folder (`.lock`), for as long as it runs.
    _lock: Option<std::fs::File>,
    shots: Shots,
}

/// A profile's browser, held by one tool call: while any call holds it, it counts against
/// [`MAX_RUNNING`] and is never closed to make room or for idleness.
pub struct InUse {
    browser: Arc<Chromium>,
    /// The unused profile removed to make room for this one, when one was.
    made_room: Option<ProfileId>,
}

impl InUse {
    /// The unused profile that was removed to make room for this one (at [`MAX_SAVED`]).
    pub fn made_room(&self) -> Option<&ProfileId> {
        self.made_room.as_ref()
    }
}

impl std::ops::Deref for InUse {
    type Target = Chromium;
    fn deref(&self) -> &Chromium {
        &self.browser
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        self.browser.hold(false);
    }
}

/// One profile's Take control.
struct Controlled {
    ticket: u64,
    /// The browser and its control session's generation, once started.
    held: Option<(InUse, u64)>,
}

/// Whether `browser` counts against [`MAX_RUNNING`]: it runs, or a call holds it (and may be
/// about to launch it).
fn counts(browser: &Chromium) -> bool {
    browser.in_use() || browser.is_running_now()
}

impl std::fmt::Debug for Browsers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browsers").field("profiles_dir", &self.inner.config.profiles_dir).finish_non_exhaustive()
    }
}

impl Browsers {
    /// Browsers launched with `config`, names resolved with `resolver`, pictures kept in
    /// `shots_dir`.
    pub fn new(config: ChromiumConfig, resolver: hickory_resolver::TokioResolver, shots_dir: PathBuf) -> Self {
        // A Hearth that crashed or was killed leaves its browsers running (no destructor runs
        // at such an exit): they hold the profiles' locks, so they are ended before any launch —
        // but only when no other Hearth holds this folder (its browsers are in use).
        let lock = lock_profiles(&config.profiles_dir);
        if lock.is_some() {
            let ended = end_orphans(&config.profiles_dir);
            if ended > 0 {
                tracing::warn!(ended, "ended browsers an earlier Hearth left running");
            }
            // What an earlier Hearth's browsers downloaded and never saved (it was killed before
            // they closed) goes too: downloads last a browser session, never longer.
            if let Err(err) = crate::files::remove_dir_if_present(&config.downloads_dir) {
                tracing::warn!(error = %err, "could not empty the browser's downloads folder");
            }
        } else {
            tracing::warn!("another Hearth uses this data folder's browser profiles; left-over browsers are not ended");
        }
        Self {
            inner: Arc::new(Inner {
                config,
                resolver,
                sessions: Mutex::default(),
                controls: Mutex::default(),
                tickets: std::sync::atomic::AtomicU64::new(0),
                kept: std::sync::Mutex::default(),
                shots: Shots::new(shots_dir),
                _lock: lock,
            }),
        }
    }

    /// Marks `profiles` as the owner's picks: never removed to make room or with a task.
    pub fn keep(&self, profiles: impl IntoIterator<Item = ProfileId>) {
        self.inner.kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner).extend(profiles);
    }

    fn is_kept(&self, profile: &ProfileId) -> bool {
        self.inner.kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(profile)
    }

    /// Deletes `profile` (closing its idle browser first) unless it is in use — a call holds
    /// it, or the owner has (or asked for) control of it — or the owner picked it; answers
    /// whether it went. For a task that has ended for good: its throwaway profile goes, its
    /// logins with it.
    ///
    /// The check and the removal happen under the sessions' lock, as in [`Browsers::make_room`]:
    /// a call (an approved card, a task's look) cannot take the profile between them and have
    /// its browser ended under it.
    pub async fn delete_if_unused(&self, profile: &ProfileId) -> std::io::Result<bool> {
        if self.is_kept(profile) {
            return Ok(false);
        }
        let mut sessions = self.inner.sessions.lock().await;
        // Lock order: sessions, then controls (nothing holds controls while it waits for sessions).
        if self.inner.controls.lock().await.contains_key(profile) || sessions.get(profile).is_some_and(|b| b.in_use()) {
            return Ok(false);
        }
        let folder = self.folder(profile);
        let removed = match sessions.remove(profile) {
            Some(browser) => browser.retire(&folder).await,
            None => crate::files::remove_dir_if_present(&folder),
        };
        drop(sessions);
        // Once its browser has ended (nothing writes there any more), what it downloaded goes.
        let downloads = crate::files::remove_dir_if_present(&self.inner.config.downloads_dir.join(profile.as_str()));
        removed.and(downloads).map(|()| true)
    }

    /// Where pictures of pages are kept.
    pub fn shots(&self) -> &Shots {
        &self.inner.shots
    }

    /// Whether `profile` has a folder (it was used and not deleted).
    pub fn is_saved(&self, profile: &ProfileId) -> bool {
        self.folder(profile).is_dir()
    }

    /// The browser this process has for `profile`, without starting one or closing another
    /// (what it downloaded is read without touching its page).
    pub async fn existing(&self, profile: &ProfileId) -> Option<Arc<Chromium>> {
        self.inner.sessions.lock().await.get(profile).cloned()
    }

    /// The browser of `profile`, held for one call: a new profile past [`MAX_SAVED`] (folders
    /// and profiles not launched yet together) first makes room ([`Browsers::make_room`]), and when
    /// [`MAX_RUNNING`] others count, the least recently used idle one is closed to make room
    /// (none idle: [`BrowserError::AllBusy`]). All of it under one lock, so two calls cannot
    /// both take the last place.
    pub async fn session(&self, profile: &ProfileId) -> Result<InUse, BrowserError> {
        let mut made_room = None;
        let mut sessions = self.inner.sessions.lock().await;
        if !sessions.contains_key(profile) {
            let mut saved: std::collections::BTreeSet<String> = self.saved_folders().into_iter().collect();
            saved.extend(sessions.keys().map(|id| id.as_str().to_owned()));
            if !saved.contains(profile.as_str()) && saved.len() >= MAX_SAVED {
                made_room = Some(self.make_room(&mut sessions, &saved, profile).await?);
            }
            let browser = Arc::new(Chromium::for_profile(self.inner.config.clone(), self.inner.resolver.clone(), profile.as_str()));
            sessions.insert(profile.clone(), browser);
        }
        let Some(browser) = sessions.get(profile).cloned() else { return Err(BrowserError::Launch("no session".into())) };
        if !counts(&browser) {
            // Least recently used first; one in use is skipped.
            let mut others: Vec<(Instant, Arc<Chromium>)> =
                sessions.iter().filter(|(id, b)| *id != profile && counts(b)).map(|(_, b)| (b.last_used(), b.clone())).collect();
            others.sort_by_key(|(at, _)| *at);
            let mut to_close = others.len().saturating_sub(MAX_RUNNING - 1);
            for (_, other) in &others {
                if to_close == 0 {
                    break;
                }
                if other.try_close().await {
                    to_close -= 1;
                }
            }
            if to_close > 0 {
                return Err(BrowserError::AllBusy);
            }
        }
        browser.hold(true);
        Ok(InUse { browser, made_room })
    }

    /// Makes room for one more profile when [`MAX_SAVED`] are kept: deletes the least recently
    /// used throwaway one — a chat's or a task's; never the owner's own, one the owner picked for
    /// a chat or a task, or one under (or asked for) Take control — that no call holds and whose
    /// browser is not running, with its cookies and downloads. Answers which went;
    /// [`BrowserError::TooManyProfiles`] when every kept profile is the owner's or in use.
    /// Called under the sessions lock, so two new profiles cannot both take the freed place.
    async fn make_room(
        &self,
        sessions: &mut BTreeMap<ProfileId, Arc<Chromium>>,
        saved: &std::collections::BTreeSet<String>,
        asking: &ProfileId,
    ) -> Result<ProfileId, BrowserError> {
        let owner = ProfileId::owner();
        // Lock order: sessions, then controls (nothing holds controls while it waits for sessions).
        let controlled: std::collections::BTreeSet<ProfileId> = self.inner.controls.lock().await.keys().cloned().collect();
        let last_touched =
            |id: &ProfileId| std::fs::metadata(self.folder(id)).and_then(|m| m.modified()).unwrap_or(std::time::SystemTime::UNIX_EPOCH);
        let oldest = saved
            .iter()
            .filter_map(|name| ProfileId::parse(name).ok())
            .filter(|id| {
                *id != owner && id != asking && !controlled.contains(id) && !self.is_kept(id) && sessions.get(id).is_none_or(|b| !counts(b))
            })
            .min_by_key(|id| (last_touched(id), id.clone()))
            .ok_or(BrowserError::TooManyProfiles)?;
        let folder = self.folder(&oldest);
        let removed = match sessions.remove(&oldest) {
            Some(browser) => browser.retire(&folder).await,
            None => crate::files::remove_dir_if_present(&folder),
        };
        removed.map_err(|err| BrowserError::Launch(format!("could not remove the unused profile {}: {err}", oldest.as_str())))?;
        if let Err(err) = crate::files::remove_dir_if_present(&self.inner.config.downloads_dir.join(oldest.as_str())) {
            tracing::warn!(profile = oldest.as_str(), error = %err, "an unused profile's downloads could not be removed");
        }
        tracing::info!(profile = oldest.as_str(), "removed the least recently used browser profile to make room for a new one");
        Ok(oldest)
    }

    /// Take control of `profile`'s browser: frames go to `frames` until [`Browsers::give_back`]
    /// with the ticket this answers; the agent's calls on it are refused meanwhile. A Give back
    /// that arrives while this is still starting (the owner closed the view) wins: the control
    /// this start then gets is given back at once.
    pub async fn take_control(
        &self,
        profile: &ProfileId,
        frames: tokio::sync::mpsc::Sender<hearth_protocol::browser::ControlFrame>,
    ) -> Result<u64, BrowserError> {
        let ticket = self.inner.tickets.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let replaced = self.inner.controls.lock().await.insert(profile.clone(), Controlled { ticket, held: None });
        if let Some(Controlled { held: Some((old, generation)), .. }) = replaced {
            old.give_back(generation).await;
        }
        let started = match self.session(profile).await {
            Ok(held) => held.take_control(frames).await.map(|generation| (held, generation)),
            Err(err) => Err(err),
        };
        let (held, generation) = match started {
            Ok(started) => started,
            Err(err) => {
                // Nothing to give back; the pending entry goes, if it is still this start's.
                let mut controls = self.inner.controls.lock().await;
                if controls.get(profile).is_some_and(|c| c.ticket == ticket) {
                    controls.remove(profile);
                }
                return Err(err);
            }
        };
        let mut controls = self.inner.controls.lock().await;
        match controls.get_mut(profile) {
            Some(entry) if entry.ticket == ticket => {
                entry.held = Some((held, generation));
                Ok(ticket)
            }
            Some(_) | None => {
                drop(controls);
                held.give_back(generation).await;
                Err(BrowserError::NotControlled)
            }
        }
    }

    /// One input of the owner's to the browser under control.
    pub async fn control_input(&self, profile: &ProfileId, input: &hearth_protocol::browser::ControlInput) -> Result<(), BrowserError> {
        let browser = self.inner.controls.lock().await.get(profile).and_then(|c| c.held.as_ref().map(|(held, _)| held.browser.clone()));
        match browser {
            Some(browser) => browser.control_input(input).await,
            None => Err(BrowserError::NotControlled),
        }
    }

    /// Give back `profile`'s browser to the agent: the session `ticket` (any, when `None`).
    pub async fn give_back(&self, profile: &ProfileId, ticket: Option<u64>) {
        let ended = {
            let mut controls = self.inner.controls.lock().await;
            let matches = controls.get(profile).is_some_and(|c| ticket.is_none_or(|t| c.ticket == t));
            if matches { controls.remove(profile) } else { None }
        };
        if let Some(Controlled { held: Some((held, generation)), .. }) = ended {
            held.give_back(generation).await;
        }
    }

    /// Gives every browser under control back to the agent.
    pub async fn give_back_all(&self) {
        let ended: Vec<Controlled> = std::mem::take(&mut *self.inner.controls.lock().await).into_values().collect();
        for control in ended {
            if let Some((held, generation)) = control.held {
                held.give_back(generation).await;
            }
        }
    }

    /// Closes every browser unused since `now - IDLE_CLOSE` (the idle timer calls this; tests
    /// pass a later `now`). Answers how many closed.
    pub async fn close_idle(&self, now: Instant) -> usize {
        let sessions = self.inner.sessions.lock().await;
        let mut closed = 0;
        for browser in sessions.values() {
            let idle = now.saturating_duration_since(browser.last_used()) >= IDLE_CLOSE;
            if idle && browser.is_running_now() && browser.try_close().await {
                closed += 1;
            }
        }
        closed
    }

    /// Runs [`Browsers::close_idle`] every minute until the last clone is dropped.
    pub fn start_idle_close(&self) {
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(60));
            loop {
                tick.tick().await;
                let Some(inner) = weak.upgrade() else { break };
                let closed = Browsers { inner }.close_idle(Instant::now()).await;
                if closed > 0 {
                    tracing::info!(closed, "closed browsers idle for 30 minutes");
                }
            }
        });
    }

    /// Saved profiles (running ones first, then by id).
    pub async fn profiles(&self) -> Vec<Profile> {
        let sessions = self.inner.sessions.lock().await;
        let mut out = Vec::new();
        for name in self.saved_folders() {
            let Ok(id) = ProfileId::parse(&name) else { continue };
            let browser = sessions.get(&id);
            let running = browser.is_some_and(|b| b.is_running_now());
            out.push(Profile { running, last_used: browser.map(|b| b.last_used()), id });
        }
        out.sort_by(|a, b| b.running.cmp(&a.running).then_with(|| a.id.cmp(&b.id)));
        out
    }

    /// How many browsers run now, by Hearth's own account (the tests count processes).
    pub async fn running(&self) -> usize {
        let sessions = self.inner.sessions.lock().await;
        sessions.values().filter(|b| b.is_running_now()).count()
    }

    /// Closes the browser of `profile` (waiting for a look or an action in it to end). Its
    /// profile stays.
    pub async fn close(&self, profile: &ProfileId) {
        // The owner's control of it ends with it (its hold released).
        self.inner.controls.lock().await.remove(profile);
        let browser = self.inner.sessions.lock().await.get(profile).cloned();
        if let Some(browser) = browser {
            browser.close().await;
        }
    }

    /// Closes the browser of `profile` and deletes its folder, with its cookies and logins. A
    /// call waiting for that browser gets [`BrowserError::Deleted`]; the next call starts on a
    /// new, empty profile.
    pub async fn delete(&self, profile: &ProfileId) -> std::io::Result<()> {
        self.inner.controls.lock().await.remove(profile);
        let removed = self.delete_folders(profile).await;
        // Once its browser has ended (nothing writes there any more), what it downloaded goes.
        let downloads = crate::files::remove_dir_if_present(&self.inner.config.downloads_dir.join(profile.as_str()));
        removed.and(downloads)
    }

    async fn delete_folders(&self, profile: &ProfileId) -> std::io::Result<()> {
        let sessions = self.inner.sessions.lock().await;
        let folder = self.folder(profile);
        match sessions.get(profile).cloned() {
            Some(browser) => {
                // Not under the map's lock: other profiles go on while this one ends. It stays
                // in the map until its folder is gone, so a call meanwhile gets `Deleted`
                // instead of launching a new browser on the folder being removed.
                drop(sessions);
                let removed = browser.retire(&folder).await;
                let mut sessions = self.inner.sessions.lock().await;
                if sessions.get(profile).is_some_and(|b| Arc::ptr_eq(b, &browser)) {
                    sessions.remove(profile);
                }
                removed
            }
            None => crate::files::remove_dir_if_present(&folder),
        }
    }

    /// Closes every browser (at shutdown).
    pub async fn close_all(&self) {
        self.inner.controls.lock().await.clear();
        let sessions = self.inner.sessions.lock().await;
        for browser in sessions.values() {
            browser.close().await;
        }
    }

    fn folder(&self, profile: &ProfileId) -> PathBuf {
        self.inner.config.profiles_dir.join(profile.as_str())
    }

    fn saved_folders(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.inner.config.profiles_dir) else { return Vec::new() };
        entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().into_string().ok())
            .collect()
    }
}

/// The gate sends a reviewed form through the profile's browser that showed it, pressing the
/// reviewed element as reviewed (see [`super::submit`]).
impl FormSender for Browsers {
    fn send<'a>(&'a self, draft: &'a WebSubmitDraft, cancel: &'a CancellationToken) -> BoxFuture<'a, Result<String, ExecuteError>> {
        Box::pin(async move {
            let nothing_sent = |why: String| ExecuteError::Rejected(format!("Nothing was sent: {why}."));
            let profile = ProfileId::parse(&draft.profile).map_err(nothing_sent)?;
            // A browser that is not running has no page open: the reviewed page is gone.
            if self.existing(&profile).await.is_none_or(|b| !b.is_running_now()) {
                return Err(nothing_sent(BrowserError::FormChanged.to_string()));
            }
            let browser = self.session(&profile).await.map_err(|e| nothing_sent(e.to_string()))?;
            let (action, value) = action_of(draft.gesture);
            let policy = SubmitPolicy::Reviewed { version: &draft.form_version };
            match browser.act(&draft.reference, action, value, policy, cancel).await {
                Ok(done) => {
                    let now = if done.url_after.is_empty() { String::new() } else { format!(" The page is now {}", done.url_after) };
                    Ok(format!("Sent the form to {} ({}) from {}.{now}", draft.destination, draft.method, draft.page_url))
                }
                Err(ActError::NotDone(err)) => Err(nothing_sent(err.to_string())),
                Err(ActError::MayHaveDone(why)) => Err(ExecuteError::Uncertain(format!(
                    "The form may or may not have reached {} ({why}). Check the site before sending it again.",
                    draft.destination
                ))),
            }
        })
    }
}

/// An exclusive hold on `profiles_dir/.lock`, or `None` when another Hearth holds it (or the
/// folder cannot be made).
fn lock_profiles(profiles_dir: &std::path::Path) -> Option<std::fs::File> {
    crate::store::Store::create_private_dir(profiles_dir).ok()?;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).mode(0o600).open(profiles_dir.join(".lock")).ok()?;
    fs4::FileExt::try_lock(&file).ok()?;
    Some(file)
}

/// Ends every Chromium browser process (not its helpers, which end with it) running on a
/// profile under `profiles_dir` that is not this process's own child, and answers how many.
/// Called when this Hearth took the profiles folder, before it launches any browser there, so
/// each one found is a leftover of a Hearth that is gone.
pub fn end_orphans(profiles_dir: &std::path::Path) -> usize {
    let marker = format!("--user-data-dir={}/", profiles_dir.display());
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    let mut ended = 0;
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let ours = args.iter().any(|a| a.starts_with(marker.as_bytes()));
        let helper = args.iter().any(|a| a.starts_with(b"--type="));
        // The parent is field 4 of /proc/<pid>/stat, after the command name in parentheses.
        let parent = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|stat| stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok()));
        let mine = parent == Some(std::process::id());
        if ours && !helper && !mine && pid != std::process::id() {
            let killed = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            if killed.is_ok_and(|s| s.success()) {
                ended += 1;
            }
        }
    }
    ended
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn profile_ids_name_one_plain_folder() {
        assert_eq!(ProfileId::for_thread("3f0c-aa").as_str(), "thread-3f0c-aa");
        assert_eq!(ProfileId::for_task("t1").as_str(), "task-t1");
        let odd = ProfileId::for_thread("../../etc");
        assert!(odd.as_str().starts_with("thread-") && !odd.as_str().contains('/'));
        assert_eq!(ProfileId::parse(odd.as_str()).unwrap(), odd);
        for bad in ["", "a/b", "..", "a b", &"x".repeat(81)] {
            assert!(ProfileId::parse(bad).is_err(), "{bad}");
        }
    }
}
