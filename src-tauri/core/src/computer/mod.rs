//! The computer: an isolated Linux container, driven in-process through the Docker Engine API
//! (bollard on the local socket), never a shell on the owner's machine.
//!
//! - [`image`] is what it is made of, built over a local base through the engine;
//! - [`spec`] is the one description of the container and its workspace volume;
//! - [`isolation`] checks the container the engine reports against it before every attach;
//! - [`engine`] creates, starts and stops it;
//! - [`command`] runs one command in it, with a time limit, an output cap, and Stop;
//! - [`files`] reads and writes /workspace through the helper inside the image.
//!
//! Tools reach it only through [`Computer`], and only from dispatch's effect path (commands
//! are journaled effects: see `tools::handlers::computer`).

pub mod command;
pub mod engine;
pub mod files;
pub mod image;
pub mod isolation;
pub mod paths;
pub mod recipe;
pub mod spec;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bollard::Docker;
use hearth_protocol::computer::{CommandReceipt, ComputerState, ComputerStatusView, WorkspaceListing};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

pub use command::{CommandError, CommandRequest};
pub use files::FileError;
pub use recipe::{base_image, default_image};

/// A command's output, chunk by chunk, as it arrives (only what its receipt keeps).
pub type OutputSink = tokio::sync::mpsc::UnboundedSender<hearth_protocol::computer::CommandOutput>;
pub use isolation::{Mismatch, Predicate};
pub use spec::ComputerSpec;

/// Why the computer did not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum ComputerError {
    /// Turned off in Settings.
    #[error("the computer is turned off; the owner can turn it on in Settings → Computer")]
    Off,
    /// This build has no computer (a phone's: see [`crate::parts`]).
    #[error("{}", crate::parts::Part::Computer.absent())]
    NotInThisBuild,
    /// No engine answers on the socket.
    #[error("no Docker engine answers ({0}); start one (the docker.io package's dockerd) and try again")]
    NoEngine(String),
    /// The image is not built.
    #[error("the computer's image {0} is not built; rebuild it in Settings → Computer")]
    NoImage(String),
    /// The base Hearth's image is built on is not there (it needs root and a Debian mirror).
    #[error(
        "the computer's base image {0} is not built; run scripts/computer-image.sh (it needs root and a Debian mirror), then try again"
    )]
    NoBase(String),
    /// The engine refused or failed a request.
    #[error("the Docker engine failed: {0}")]
    Engine(String),
    /// The container is not what Hearth created.
    #[error(transparent)]
    Isolation(#[from] Mismatch),
    /// Another operation holds the computer (in this Hearth, or in another on its data folder).
    #[error("the computer is busy with another command; wait for it to finish, then try again")]
    Busy,
    /// The file that holds the computer across processes could not be used.
    #[error("the computer's lock file {path} could not be used ({why}); check that Hearth's data folder is writable")]
    Lock {
        /// The lock file.
        path: String,
        /// What the system said.
        why: String,
    },
    /// Stop came before the operation started.
    #[error("the run was stopped before the operation started; nothing ran")]
    StoppedBefore,
    /// It had to be stopped and could not be.
    #[error(
        "the computer could not be stopped after an interrupted command ({0}), so Hearth runs nothing in it; \
         stop or reset it in Settings → Computer"
    )]
    Quarantined(String),
}

/// How a Start or Stop ended without its answer.
#[derive(Debug)]
pub enum ControlError {
    /// Nothing was asked of the engine (refused, or the run's Stop came first): the container
    /// is as it was.
    NotDone(ComputerError),
    /// The run's Stop came after the engine was asked: the container may or may not have
    /// changed. Says so, for the owner's review.
    InDoubt(String),
}

impl From<ControlError> for ComputerError {
    fn from(err: ControlError) -> Self {
        match err {
            ControlError::NotDone(err) => err,
            ControlError::InDoubt(why) => ComputerError::Engine(why),
        }
    }
}

/// Test hook: awaited at a named point of a Start or Stop (see [`Computer::set_control_hook`]).
pub type ControlHook = Arc<dyn Fn(&'static str) -> futures::future::BoxFuture<'static, ()> + Send + Sync>;

impl From<bollard::errors::Error> for ComputerError {
    fn from(err: bollard::errors::Error) -> Self {
        // bollard's words carry the engine's message (settings, ids), never command output.
        ComputerError::Engine(err.to_string())
    }
}

/// The handle tools and the shell share: one per Hearth. Cheap to clone.
#[derive(Clone)]
pub struct Computer {
    inner: Arc<Inner>,
}

struct Inner {
    spec: ComputerSpec,
    enabled: AtomicBool,
    /// A command's time limit ([`command::TIME_LIMIT`]; tests shorten it).
    time_limit: Duration,
    /// Connected lazily: the engine may start after Hearth.
    docker: Mutex<Option<Docker>>,
    /// One operation at a time; a stopped or timed-out command holds it until the container
    /// has stopped, so the next one never runs beside a command that may still be going — also
    /// one whose caller went away midway (see [`Admitted`]'s `Drop`).
    busy: Arc<Mutex<()>>,
    /// The same across processes: held (with `busy`, or by a read that starts the container)
    /// for as long as an operation of this process lasts, so a second Hearth on the data
    /// folder gets Busy instead of restarting the container under this one's command.
    machine: Arc<MachineLock>,
    /// Where a quarantine is written down, so every Hearth on the data folder sees it.
    quarantine_file: std::path::PathBuf,
    /// Held while the container is created, verified or started: operations and reads wait
    /// for each other here (a read that starts the container does not make a command "busy").
    starting: Mutex<()>,
    /// Set when a container that had to stop (after Stop, a time-out, a lost answer) could not
    /// be stopped, and the note (`quarantine_file`) could not be written: nothing runs in it
    /// until the owner stops or resets it.
    quarantine: std::sync::Mutex<Option<String>>,
    /// Whether this process has restarted the container once: a running container found by a
    /// new process may hold what a crashed Hearth left running in it.
    restarted: AtomicBool,
    /// Test hook at the named points of a Start or Stop.
    control_hook: std::sync::Mutex<Option<ControlHook>>,
}

/// An owner control's hold on the computer ([`Computer::hold_for_owner`]).
struct OwnerHold<'a> {
    _busy: Busy,
    _starting: tokio::sync::MutexGuard<'a, ()>,
}

/// The right to operate the computer: the engine, the busy lock, and the verified container.
struct Admitted {
    docker: Docker,
    container_id: String,
    busy: Option<Busy>,
    /// Set while a command or a write runs in the container. Dropped so — its caller's future
    /// dropped or unwound by a panic midway — the container is stopped before the locks are
    /// released, as after Stop: nothing runs beside what may still be going.
    in_flight: Option<Computer>,
}

/// The busy lock of this process and the machine lock across processes, held together.
struct Busy {
    _here: tokio::sync::OwnedMutexGuard<()>,
    _machine: MachineHold,
}

/// An exclusive advisory lock (`flock`, through fs4) on a file in the data folder, taken when
/// this process's first operation on the computer starts and released when its last ends (or
/// the process dies: the system drops it with the file). Another process finds it taken.
struct MachineLock {
    path: std::path::PathBuf,
    /// The lock file, opened once and kept open, and how many holds of this process there are.
    /// Kept open because a `flock` belongs to the open file description, which a child process
    /// forked meanwhile (Chromium, a test's shell) shares until its `exec`: closing our copy
    /// would not release the lock, and the next open here would find it taken. Unlocking
    /// (`LOCK_UN`) the description releases it whoever else holds a copy.
    held: std::sync::Mutex<(Option<std::fs::File>, usize)>,
}

/// One hold on [`MachineLock`].
struct MachineHold {
    lock: Arc<MachineLock>,
}

impl MachineLock {
    fn new(path: std::path::PathBuf) -> Self {
        Self { path, held: std::sync::Mutex::new((None, 0)) }
    }

    /// A hold, or Busy when another process has the file locked.
    fn take(self: &Arc<Self>) -> Result<MachineHold, ComputerError> {
        let mut held = self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if held.1 == 0 {
            let failed = |why: String| ComputerError::Lock { path: self.path.display().to_string(), why };
            if held.0.is_none() {
                let mut options = std::fs::OpenOptions::new();
                options.read(true).write(true).create(true).truncate(false);
                std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
                held.0 = Some(options.open(&self.path).map_err(|e| failed(e.to_string()))?);
            }
            let Some(file) = held.0.as_ref() else { return Err(failed("the lock file is not open".into())) };
            match fs4::FileExt::try_lock(file) {
                Ok(()) => {}
                Err(fs4::TryLockError::WouldBlock) => return Err(ComputerError::Busy),
                Err(fs4::TryLockError::Error(err)) => return Err(failed(err.to_string())),
            }
        }
        held.1 += 1;
        Ok(MachineHold { lock: Arc::clone(self) })
    }
}

impl Drop for MachineHold {
    fn drop(&mut self) {
        let mut held = self.lock.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        held.1 = held.1.saturating_sub(1);
        if held.1 == 0
            && let Some(file) = held.0.as_ref()
            && let Err(err) = fs4::FileExt::unlock(file)
        {
            // Closing the file is the last resort (it releases the lock once no child shares it).
            tracing::warn!(error = %err, "could not unlock the computer's lock file; closing it");
            held.0 = None;
        }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let (Some(computer), Some(busy)) = (self.in_flight.take(), self.busy.take()) else { return };
        tracing::warn!("an operation in the computer was cut off midway; the computer is stopped before the next one");
        let (docker, container_id) = (self.docker.clone(), std::mem::take(&mut self.container_id));
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    computer.end_everything(&docker, &container_id).await;
                    drop(busy);
                });
            }
            // No runtime to stop it from: nothing runs in it until the owner stops or resets it.
            Err(_) => computer.set_quarantine(Some("an operation was cut off while Hearth was closing".into())),
        }
    }
}

impl std::fmt::Debug for Computer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Computer").field("spec", &self.inner.spec).finish_non_exhaustive()
    }
}

impl Computer {
    /// A computer for `spec`, on or off.
    pub fn new(spec: ComputerSpec, enabled: bool) -> Self {
        Self::with_time_limit(spec, enabled, command::TIME_LIMIT)
    }

    /// [`Computer::new`] with another command time limit (tests of the time-out path). Its
    /// lock and quarantine files are in the system's temporary folder, named for the container.
    pub fn with_time_limit(spec: ComputerSpec, enabled: bool, time_limit: Duration) -> Self {
        let dir = std::env::temp_dir();
        let name = format!("hearth-computer-{}", spec.container_name());
        Self::with_files(spec, enabled, time_limit, dir.join(format!("{name}.lock")), dir.join(format!("{name}.quarantine")))
    }

    /// The computer of the Hearth whose data folder is `data_dir`: its lock (`computer.lock`) and
    /// quarantine (`computer.quarantine`) are there, shared by every Hearth on that folder.
    pub fn in_data_dir(spec: ComputerSpec, enabled: bool, time_limit: Duration, data_dir: &std::path::Path) -> Self {
        Self::with_files(spec, enabled, time_limit, data_dir.join("computer.lock"), data_dir.join("computer.quarantine"))
    }

    fn with_files(
        spec: ComputerSpec,
        enabled: bool,
        time_limit: Duration,
        lock: std::path::PathBuf,
        quarantine_file: std::path::PathBuf,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                machine: Arc::new(MachineLock::new(lock)),
                quarantine_file,
                spec,
                enabled: AtomicBool::new(enabled),
                time_limit,
                docker: Mutex::new(None),
                busy: Arc::new(Mutex::new(())),
                starting: Mutex::new(()),
                quarantine: std::sync::Mutex::new(None),
                restarted: AtomicBool::new(false),
                control_hook: std::sync::Mutex::new(None),
            }),
        }
    }

    /// What it is made from.
    pub fn spec(&self) -> &ComputerSpec {
        &self.inner.spec
    }

    /// Turns it on or off (Settings). Off stops nothing that runs; it refuses what comes next.
    pub fn set_enabled(&self, enabled: bool) {
        self.inner.enabled.store(enabled, Ordering::SeqCst);
    }

    /// Whether it is on.
    pub fn is_enabled(&self) -> bool {
        self.inner.enabled.load(Ordering::SeqCst)
    }

    /// Whether an engine answers (for Settings, before the computer is turned on).
    pub async fn engine_answers(&self) -> Result<(), ComputerError> {
        engine::connect().await.map(|_| ())
    }

    async fn docker(&self) -> Result<Docker, ComputerError> {
        // Before "turned off": on a build without the computer, Settings cannot turn it on.
        if !crate::parts::Part::Computer.is_built() {
            return Err(ComputerError::NotInThisBuild);
        }
        if !self.is_enabled() {
            return Err(ComputerError::Off);
        }
        let mut slot = self.inner.docker.lock().await;
        if let Some(docker) = slot.as_ref() {
            return Ok(docker.clone());
        }
        let docker = engine::connect().await?;
        *slot = Some(docker.clone());
        Ok(docker)
    }

    /// Why the computer is quarantined, by this process or another on the data folder: the
    /// note in the data folder, else what this process could not write there.
    fn quarantined(&self) -> Option<String> {
        match std::fs::read_to_string(&self.inner.quarantine_file) {
            Ok(why) => return Some(why),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            // There but unreadable: still quarantined, rather than run in doubt.
            Err(err) => {
                return Some(format!("the quarantine note {} cannot be read: {err}", self.inner.quarantine_file.display()));
            }
        }
        self.inner.quarantine.lock().ok().and_then(|q| q.clone())
    }

    fn set_quarantine(&self, why: Option<String>) {
        let path = &self.inner.quarantine_file;
        let (written, unwritten) = match why {
            Some(why) => match std::fs::write(path, &why) {
                Ok(()) => (Ok(()), None),
                // This process still knows; another Hearth on the folder may not.
                Err(err) => (Err(err), Some(why)),
            },
            None => match std::fs::remove_file(path) {
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => (Ok(()), None),
                other => (other, None),
            },
        };
        if let Ok(mut q) = self.inner.quarantine.lock() {
            *q = unwritten;
        }
        if let Err(err) = written {
            tracing::error!(path = %path.display(), error = %err, "the computer's quarantine note could not be written or removed");
        }
    }

    /// Test hook: quarantines the computer as a failed stop would.
    #[doc(hidden)]
    pub fn quarantine_for_test(&self, why: &str) {
        self.set_quarantine(Some(why.to_owned()));
    }

    /// This process's busy lock and the machine lock, or Busy.
    fn take_busy(&self) -> Result<Busy, ComputerError> {
        let here = Arc::clone(&self.inner.busy).try_lock_owned().map_err(|_| ComputerError::Busy)?;
        let machine = self.inner.machine.take()?;
        Ok(Busy { _here: here, _machine: machine })
    }

    /// Takes the busy lock (or refuses), then verifies and starts the container. The first
    /// operation of this process restarts a container it finds running.
    async fn admit(&self) -> Result<Admitted, ComputerError> {
        let docker = self.docker().await?;
        let busy = self.take_busy()?;
        if let Some(why) = self.quarantined() {
            return Err(ComputerError::Quarantined(why));
        }
        let container_id = self.started(&docker).await?;
        Ok(Admitted { docker, container_id, busy: Some(busy), in_flight: None })
    }

    /// [`Computer::admit`], given up when `cancel` fires first: a Stop pressed while the
    /// container is being started (or its image built, up to a minute) answers at once.
    /// Dropping the admission midway is safe: the engine ends a build whose client went away
    /// (or, at worst, finishes and tags it: the next start checks that image like any other),
    /// and a container left started runs nothing.
    async fn admit_unless_stopped(&self, cancel: &CancellationToken) -> Result<Admitted, ComputerError> {
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(ComputerError::StoppedBefore),
            admitted = self.admit() => admitted,
        }
    }

    /// [`engine::ensure_running`], one caller at a time; the first of this process restarts a
    /// running container.
    async fn started(&self, docker: &Docker) -> Result<String, ComputerError> {
        let _starting = self.inner.starting.lock().await;
        let restart = !self.inner.restarted.load(Ordering::SeqCst);
        // A missing image (a first start, or a new Hearth with a new recipe) is built here,
        // under the same lock, so two first operations do not build it twice.
        image::ensure(docker, &self.inner.spec.image).await?;
        let container_id = engine::ensure_running(docker, &self.inner.spec, restart).await?;
        self.inner.restarted.store(true, Ordering::SeqCst);
        Ok(container_id)
    }

    /// After an operation that may still be going (Stop, a time-out, a lost answer): stops the
    /// container, still holding the busy lock. If the engine cannot stop it, nothing runs in
    /// it again until the owner stops or resets it.
    async fn end_everything(&self, docker: &Docker, container_id: &str) {
        // The command's processes get SIGTERM first (the engine's stop signals PID 1 only);
        // whatever is left ends with the container.
        if let Err(err) = command::signal_all(docker, container_id, command::Signal::Term).await {
            tracing::warn!(error = %err, "could not signal the command's processes before stopping the computer");
        }
        if let Err(err) = engine::stop_or_kill(docker, container_id).await {
            tracing::error!(error = %err, "the computer could not be stopped after an interrupted operation; it is quarantined");
            self.set_quarantine(Some(err.to_string()));
        }
    }

    /// Where it stands (never creates or starts anything).
    pub async fn status(&self) -> ComputerStatusView {
        let image = self.inner.spec.image.clone();
        let unavailable = |note: String| ComputerStatusView {
            enabled: self.is_enabled(),
            state: ComputerState::Unavailable,
            engine_version: None,
            image: image.clone(),
            image_bytes: None,
            note: Some(note),
        };
        let docker = match self.docker().await {
            Ok(docker) => docker,
            Err(err) => return unavailable(err.to_string()),
        };
        match engine::status(&docker, &self.inner.spec).await {
            Ok(mut view) => {
                if let Some(why) = self.quarantined() {
                    view.note = Some(ComputerError::Quarantined(why).to_string());
                }
                view
            }
            Err(err) => unavailable(err.to_string()),
        }
    }

    /// Test hook: awaited at `start:admitted` (the computer held, the engine not yet asked),
    /// `start:engine-answered` (the engine started it, the answer not yet taken),
    /// `stop:held` and `stop:engine-answered`, so a test fires the run's Stop at an exact
    /// point. `None` removes it.
    #[doc(hidden)]
    pub fn set_control_hook(&self, hook: Option<ControlHook>) {
        if let Ok(mut slot) = self.inner.control_hook.lock() {
            *slot = hook;
        }
    }

    async fn control_point(&self, point: &'static str) {
        let hook = self.inner.control_hook.lock().ok().and_then(|h| h.clone());
        if let Some(hook) = hook {
            hook(point).await;
        }
    }

    /// Creates (when missing), verifies and starts the container.
    pub async fn start(&self) -> Result<ComputerStatusView, ComputerError> {
        Ok(self.start_unless_stopped(&CancellationToken::new()).await?)
    }

    /// [`Computer::start`] as the `start_computer` effect: the run's Stop (`cancel`) ends the
    /// wait at once — `NotDone` while nothing was asked of the engine (the computer held, its
    /// image built or checked), `InDoubt` once the engine was asked to create or start it.
    pub async fn start_unless_stopped(&self, cancel: &CancellationToken) -> Result<ComputerStatusView, ControlError> {
        let docker = before_engine(cancel, self.docker()).await?;
        let _busy = self.take_busy().map_err(ControlError::NotDone)?;
        if let Some(why) = self.quarantined() {
            return Err(ControlError::NotDone(ComputerError::Quarantined(why)));
        }
        let _starting = before_engine(cancel, async { Ok(self.inner.starting.lock().await) }).await?;
        // A build the Stop drops is ended by the engine (or finishes and tags the image, which
        // the next start checks like any other): the container is untouched either way.
        before_engine(cancel, image::ensure(&docker, &self.inner.spec.image)).await?;
        before_engine(cancel, async {
            self.control_point("start:admitted").await;
            Ok(())
        })
        .await?;
        let restart = !self.inner.restarted.load(Ordering::SeqCst);
        let starting = async {
            let id = engine::ensure_running(&docker, &self.inner.spec, restart).await?;
            self.control_point("start:engine-answered").await;
            Ok(id)
        };
        engine_asked(cancel, "start the computer", starting).await?;
        self.inner.restarted.store(true, Ordering::SeqCst);
        // It runs, verified: a Stop now only cuts the status read short.
        let known = ComputerStatusView {
            enabled: true,
            state: ComputerState::Running,
            engine_version: None,
            image: self.inner.spec.image.clone(),
            image_bytes: None,
            note: Some("started; Stop came before its status was read".into()),
        };
        Ok(tokio::select! {
            biased;
            () = cancel.cancelled() => known,
            status = engine::status(&docker, &self.inner.spec) => status.map_err(ControlError::NotDone)?,
        })
    }

    /// What the owner's controls (Stop, Recreate, Rebuild, Reset) hold while they act: the
    /// busy lock (a running operation makes them "busy") and the start lock — a read may be
    /// starting the container, and they wait for it, so theirs is the last word.
    async fn hold_for_owner(&self) -> Result<(Docker, OwnerHold<'_>), ComputerError> {
        let docker = self.docker().await?;
        let busy = self.take_busy()?;
        let starting = self.inner.starting.lock().await;
        Ok((docker, OwnerHold { _busy: busy, _starting: starting }))
    }

    /// Stops the container (2 s grace); the workspace volume stays. A successful stop lifts a
    /// quarantine.
    pub async fn stop(&self) -> Result<ComputerStatusView, ComputerError> {
        Ok(self.stop_unless_stopped(&CancellationToken::new()).await?)
    }

    /// [`Computer::stop`] as the `stop_computer` effect: the run's Stop (`cancel`) ends the
    /// wait at once — `NotDone` before the engine was asked to stop the container, `InDoubt`
    /// after (it may be stopping still; a quarantine stays until a stop is seen to succeed).
    pub async fn stop_unless_stopped(&self, cancel: &CancellationToken) -> Result<ComputerStatusView, ControlError> {
        let docker = before_engine(cancel, self.docker()).await?;
        let _busy = self.take_busy().map_err(ControlError::NotDone)?;
        let _starting = before_engine(cancel, async { Ok(self.inner.starting.lock().await) }).await?;
        before_engine(cancel, async {
            self.control_point("stop:held").await;
            Ok(())
        })
        .await?;
        let stopping = async {
            engine::stop_or_kill(&docker, &self.inner.spec.container_name()).await?;
            self.control_point("stop:engine-answered").await;
            Ok(())
        };
        engine_asked(cancel, "stop the computer", stopping).await?;
        self.set_quarantine(None);
        let known = ComputerStatusView {
            enabled: true,
            state: ComputerState::Stopped,
            engine_version: None,
            image: self.inner.spec.image.clone(),
            image_bytes: None,
            note: Some("stopped; Stop came before its status was read".into()),
        };
        Ok(tokio::select! {
            biased;
            () = cancel.cancelled() => known,
            status = engine::status(&docker, &self.inner.spec) => status.map_err(ControlError::NotDone)?,
        })
    }

    /// Removes the container but keeps the workspace volume (Settings → Recreate): the next start
    /// creates the container again from the spec — the way out of a failed isolation check, or
    /// of a container an older Hearth created, without losing files.
    pub async fn recreate(&self) -> Result<(), ComputerError> {
        let (docker, _held) = self.hold_for_owner().await?;
        engine::remove_container(&docker, &self.inner.spec).await?;
        self.set_quarantine(None);
        Ok(())
    }

    /// Builds the image again from its parts (Settings → Rebuild), every layer made anew, and
    /// removes the container so the next start makes one from the new image; the workspace
    /// volume stays. The image it replaced is removed when nothing else uses it.
    pub async fn rebuild_image(&self) -> Result<(), ComputerError> {
        let (docker, _held) = self.hold_for_owner().await?;
        let tag = &self.inner.spec.image;
        let replaced = engine::image_id(&docker, tag).await?;
        // Built first: a failed build (no base, an engine error) leaves the container as it
        // was, so the owner loses nothing by trying.
        let built = image::build(&docker, tag, image::Build::Fresh).await?;
        if replaced.as_deref() == Some(built.as_str()) {
            return Err(ComputerError::Engine("the engine rebuilt the same image; press Rebuild image again".into()));
        }
        engine::remove_container(&docker, &self.inner.spec).await.map_err(|err| {
            ComputerError::Engine(format!(
                "the image was rebuilt, but its old container could not be removed ({err}); press Recreate container"
            ))
        })?;
        self.set_quarantine(None);
        if let Some(old) = replaced {
            image::remove_unused(&docker, &old).await;
        }
        Ok(())
    }

    /// Removes the container and the workspace volume (Settings → Reset, after the owner
    /// confirmed). The next start creates both again from the spec.
    pub async fn reset(&self) -> Result<(), ComputerError> {
        let (docker, _held) = self.hold_for_owner().await?;
        engine::remove(&docker, &self.inner.spec).await?;
        self.set_quarantine(None);
        Ok(())
    }

    /// Runs `request` (after the isolation checks), one at a time: a second caller gets
    /// [`ComputerError::Busy`] and runs nothing. `cancel` is the run's Stop; `output`, when
    /// given, gets the output as it arrives.
    ///
    /// A command that ends by itself may still have left processes behind (`setsid cmd &`):
    /// they are killed before the next operation. One that Stop, the time limit or a lost
    /// answer ended — or whose caller went away midway — is ended with the whole container.
    pub async fn run(
        &self,
        request: &CommandRequest,
        cancel: &CancellationToken,
        output: Option<&OutputSink>,
    ) -> Result<CommandReceipt, CommandError> {
        let mut admitted = self.admit_unless_stopped(cancel).await.map_err(CommandError::NotRun)?;
        admitted.in_flight = Some(self.clone());
        let ran = command::run(&admitted.docker, &admitted.container_id, request, cancel, output, self.inner.time_limit).await;
        let done = match ran {
            Err(not_run) => Err(CommandError::NotRun(not_run)),
            Ok(command::Ran::Ended(receipt)) => {
                if let Err(err) = command::signal_all(&admitted.docker, &admitted.container_id, command::Signal::Kill).await {
                    tracing::warn!(error = %err, "processes a command left could not be ended; stopping the computer");
                    self.end_everything(&admitted.docker, &admitted.container_id).await;
                }
                Ok(receipt)
            }
            Ok(command::Ran::MayStillRun(receipt)) => {
                self.end_everything(&admitted.docker, &admitted.container_id).await;
                Err(CommandError::MayHaveRun { receipt })
            }
        };
        admitted.in_flight = None;
        done
    }

    /// Lists a workspace folder. Reads do not wait for a running command (they change
    /// nothing), but need the container running and verified.
    pub async fn list(&self, path: &str, cancel: &CancellationToken) -> Result<WorkspaceListing, FileError> {
        let (docker, container_id) = self.attached_for_reading().await?;
        files::list(&docker, &container_id, path, cancel).await
    }

    /// Reads a regular workspace file of at most `max` bytes.
    pub async fn read_file(&self, path: &str, max: usize, cancel: &CancellationToken) -> Result<Vec<u8>, FileError> {
        let (docker, container_id) = self.attached_for_reading().await?;
        files::read(&docker, &container_id, path, max, cancel).await
    }

    /// Writes a workspace file (one operation at a time, like commands). A write Stop or a
    /// lost answer cut short ends with the container, as a command does.
    pub async fn write_file(&self, path: &str, content: &[u8], max: usize, cancel: &CancellationToken) -> Result<u64, FileError> {
        let mut admitted = self.admit_unless_stopped(cancel).await.map_err(not_attached)?;
        admitted.in_flight = Some(self.clone());
        let written = files::write(&admitted.docker, &admitted.container_id, path, content, max, cancel).await;
        if matches!(written, Err(FileError::Stopped | FileError::Lost(_))) {
            self.end_everything(&admitted.docker, &admitted.container_id).await;
        }
        admitted.in_flight = None;
        written
    }

    /// Makes a workspace folder (one operation at a time).
    pub async fn mkdir(&self, path: &str, cancel: &CancellationToken) -> Result<bool, FileError> {
        let mut admitted = self.admit_unless_stopped(cancel).await.map_err(not_attached)?;
        admitted.in_flight = Some(self.clone());
        let made = files::mkdir(&admitted.docker, &admitted.container_id, path, cancel).await;
        if matches!(made, Err(FileError::Stopped | FileError::Lost(_))) {
            self.end_everything(&admitted.docker, &admitted.container_id).await;
        }
        admitted.in_flight = None;
        made
    }

    /// The engine and the verified container, for a read. A read never holds the busy lock, so
    /// it never makes a command "busy"; it starts the container only when no operation holds
    /// it (a stopped command's container is being stopped, and is not started again under it).
    async fn attached_for_reading(&self) -> Result<(Docker, String), FileError> {
        let docker = self.docker().await.map_err(not_attached)?;
        let idle = self.inner.busy.try_lock().is_ok();
        // Held while this read may start the container, so another Hearth on the data folder
        // does not operate (or restart it) meanwhile.
        let machine = if idle { self.inner.machine.take().ok() } else { None };
        let Some(_machine) = machine else {
            // An operation (here or in another Hearth) holds the computer; if it is starting
            // the container here, wait for that. Nothing is started under it.
            let _starting = self.inner.starting.lock().await;
            let id = engine::verify_running(&docker, &self.inner.spec).await.map_err(not_attached)?;
            return Ok((docker, id));
        };
        if let Some(why) = self.quarantined() {
            return Err(not_attached(ComputerError::Quarantined(why)));
        }
        let id = self.started(&docker).await.map_err(not_attached)?;
        Ok((docker, id))
    }
}

/// `work`, unless the run's Stop comes first: nothing has been asked of the engine yet.
async fn before_engine<T>(
    cancel: &CancellationToken,
    work: impl std::future::Future<Output = Result<T, ComputerError>>,
) -> Result<T, ControlError> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(ControlError::NotDone(ComputerError::StoppedBefore)),
        done = work => done.map_err(ControlError::NotDone),
    }
}

/// `work`, which asks the engine to change the container, unless the run's Stop comes first:
/// then what the engine did is not known.
async fn engine_asked<T>(
    cancel: &CancellationToken,
    what: &str,
    work: impl std::future::Future<Output = Result<T, ComputerError>>,
) -> Result<T, ControlError> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(ControlError::InDoubt(format!(
            "Stop came while the engine was asked to {what}, so it may or may not have happened; \
             the computer's status in Settings → Computer shows where it stands"
        ))),
        done = work => done.map_err(ControlError::NotDone),
    }
}

fn not_attached(err: ComputerError) -> FileError {
    match err {
        ComputerError::Engine(why) => FileError::Engine(why),
        other => FileError::Refused(other.to_string()),
    }
}
