//! The computer: an isolated Linux container, driven in-process through the Docker Engine API
//! (bollard on the local socket), never a shell on the owner's machine.
//!
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
pub mod paths;
pub mod isolation;
pub mod spec;

use std::sync::Arc;

use bollard::Docker;
use hearth_protocol::computer::{CommandReceipt, ComputerState, ComputerStatusView, WorkspaceListing};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

pub use command::{CommandError, CommandRequest};
pub use files::FileError;

/// A command's output, chunk by chunk, as it arrives (only what its receipt keeps).
pub type OutputSink = tokio::sync::mpsc::UnboundedSender<hearth_protocol::computer::CommandOutput>;
pub use isolation::{Mismatch, Predicate};
pub use spec::ComputerSpec;

/// The image's recipe and the file helper it installs; the image tag is derived from their
/// content, as the script derives it.
const IMAGE_RECIPE: &[u8] = include_bytes!("../../../../scripts/computer-image.sh");
const FILE_HELPER: &[u8] = include_bytes!("hearth_files.py");

/// `hearth-computer:<first 16 hex digits of the SHA-256 of the recipe then the helper>`, the
/// tag `scripts/computer-image.sh` builds.
pub fn default_image() -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::new().chain_update(IMAGE_RECIPE).chain_update(FILE_HELPER).finalize();
    format!("hearth-computer:{}", &hex::encode(digest)[..16])
}

/// Why the computer did not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum ComputerError {
    /// Turned off in Settings.
    #[error("the computer is turned off; the owner can turn it on in Settings → Computer")]
    Off,
    /// No engine answers on the socket.
    #[error("no Docker engine answers ({0}); start one (the docker.io package's dockerd) and try again")]
    NoEngine(String),
    /// The image is not built.
    #[error("the computer's image {0} is not built; run scripts/computer-image.sh or rebuild it in Settings → Computer")]
    NoImage(String),
    /// The engine refused or failed a request.
    #[error("the Docker engine failed: {0}")]
    Engine(String),
    /// The container is not what Hearth created.
    #[error(transparent)]
    Isolation(#[from] Mismatch),
    /// Another operation holds the computer.
    #[error("the computer is busy with another command; wait for it to finish, then try again")]
    Busy,
}

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
    enabled: std::sync::atomic::AtomicBool,
    /// Connected lazily: the engine may start after Hearth.
    docker: Mutex<Option<Docker>>,
    /// One operation at a time; a stopped or timed-out command holds it until the container
    /// has stopped, so the next one never runs beside a command that may still be going.
    busy: Mutex<()>,
}

impl std::fmt::Debug for Computer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Computer").field("spec", &self.inner.spec).finish_non_exhaustive()
    }
}

impl Computer {
    /// A computer for `spec`, on or off.
    pub fn new(spec: ComputerSpec, enabled: bool) -> Self {
        Self {
            inner: Arc::new(Inner {
                spec,
                enabled: std::sync::atomic::AtomicBool::new(enabled),
                docker: Mutex::new(None),
                busy: Mutex::new(()),
            }),
        }
    }

    /// What it is made from.
    pub fn spec(&self) -> &ComputerSpec {
        &self.inner.spec
    }

    /// Turns it on or off (Settings). Off stops nothing that runs; it refuses what comes next.
    pub fn set_enabled(&self, enabled: bool) {
        self.inner.enabled.store(enabled, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether it is on.
    pub fn is_enabled(&self) -> bool {
        self.inner.enabled.load(std::sync::atomic::Ordering::SeqCst)
    }

    async fn docker(&self) -> Result<Docker, ComputerError> {
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

    /// Where it stands (never creates or starts anything).
    pub async fn status(&self) -> ComputerStatusView {
        let image = self.inner.spec.image.clone();
        let unavailable = |note: String| ComputerStatusView {
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
            Ok(view) => view,
            Err(err) => unavailable(err.to_string()),
        }
    }

    /// Creates (when missing), verifies and starts the container.
    pub async fn start(&self) -> Result<ComputerStatusView, ComputerError> {
        let docker = self.docker().await?;
        let _busy = self.inner.busy.try_lock().map_err(|_| ComputerError::Busy)?;
        engine::ensure_running(&docker, &self.inner.spec).await?;
        engine::status(&docker, &self.inner.spec).await
    }

    /// Stops the container (2 s grace); the workspace volume stays.
    pub async fn stop(&self) -> Result<ComputerStatusView, ComputerError> {
        let docker = self.docker().await?;
        let _busy = self.inner.busy.try_lock().map_err(|_| ComputerError::Busy)?;
        engine::stop(&docker, &self.inner.spec).await?;
        engine::status(&docker, &self.inner.spec).await
    }

    /// Removes the container and the workspace volume (Settings → Reset, after the owner
    /// confirmed). The next start creates both again from the spec.
    pub async fn reset(&self) -> Result<(), ComputerError> {
        let docker = self.docker().await?;
        let _busy = self.inner.busy.try_lock().map_err(|_| ComputerError::Busy)?;
        engine::remove(&docker, &self.inner.spec).await
    }

    /// Runs `request` (after the isolation checks), one at a time: a second caller gets
    /// [`ComputerError::Busy`] and runs nothing. `cancel` is the run's Stop; `output`, when
    /// given, gets the output as it arrives.
    pub async fn run(
        &self,
        request: &CommandRequest,
        cancel: &CancellationToken,
        output: Option<&OutputSink>,
    ) -> Result<CommandReceipt, CommandError> {
        let docker = self.docker().await.map_err(CommandError::NotRun)?;
        let _busy = self.inner.busy.try_lock().map_err(|_| CommandError::NotRun(ComputerError::Busy))?;
        engine::ensure_running(&docker, &self.inner.spec).await.map_err(CommandError::NotRun)?;
        command::run(&docker, &self.inner.spec, request, cancel, output).await
    }

    /// Lists a workspace folder. Reads do not wait for a running command (they change
    /// nothing), but need the container running and verified.
    pub async fn list(&self, path: &str, cancel: &CancellationToken) -> Result<WorkspaceListing, FileError> {
        let docker = self.attached_for_reading().await?;
        files::list(&docker, &self.inner.spec, path, cancel).await
    }

    /// Reads a regular workspace file of at most `max` bytes.
    pub async fn read_file(&self, path: &str, max: usize, cancel: &CancellationToken) -> Result<Vec<u8>, FileError> {
        let docker = self.attached_for_reading().await?;
        files::read(&docker, &self.inner.spec, path, max, cancel).await
    }

    /// Writes a workspace file (one operation at a time, like commands).
    pub async fn write_file(&self, path: &str, content: &[u8], max: usize, cancel: &CancellationToken) -> Result<u64, FileError> {
        let docker = self.docker().await.map_err(not_attached)?;
        let _busy = self.inner.busy.try_lock().map_err(|_| not_attached(ComputerError::Busy))?;
        engine::ensure_running(&docker, &self.inner.spec).await.map_err(not_attached)?;
        files::write(&docker, &self.inner.spec, path, content, max, cancel).await
    }

    /// Makes a workspace folder (one operation at a time).
    pub async fn mkdir(&self, path: &str, cancel: &CancellationToken) -> Result<bool, FileError> {
        let docker = self.docker().await.map_err(not_attached)?;
        let _busy = self.inner.busy.try_lock().map_err(|_| not_attached(ComputerError::Busy))?;
        engine::ensure_running(&docker, &self.inner.spec).await.map_err(not_attached)?;
        files::mkdir(&docker, &self.inner.spec, path, cancel).await
    }

    /// The engine, with the container verified and running, for a read: it starts the
    /// container only when no operation holds it (a stopped command's container is being
    /// stopped, and is not started again under it).
    async fn attached_for_reading(&self) -> Result<Docker, FileError> {
        let docker = self.docker().await.map_err(not_attached)?;
        match self.inner.busy.try_lock() {
            Ok(_idle) => engine::ensure_running(&docker, &self.inner.spec).await.map_err(not_attached)?,
            Err(_) => engine::verify_running(&docker, &self.inner.spec).await.map_err(not_attached)?,
        }
        Ok(docker)
    }
}

fn not_attached(err: ComputerError) -> FileError {
    match err {
        ComputerError::Engine(why) => FileError::Engine(why),
        other => FileError::Refused(other.to_string()),
    }
}
