//! The container's life through the Engine API: connect, create from the spec, verify, start,
//! stop, remove. Every path that leads to a command verifies first ([`ensure_running`]).

use std::collections::HashMap;
use std::time::Duration;

use bollard::Docker;
use bollard::errors::Error as DockerError;
use bollard::models::{ContainerInspectResponse, ContainerStateStatusEnum, Volume, VolumeCreateRequest};
use bollard::query_parameters::{
    CreateContainerOptions, InspectContainerOptions, KillContainerOptions, RemoveContainerOptions, StartContainerOptions,
    StopContainerOptions,
};
use hearth_protocol::computer::{ComputerState, ComputerStatusView};

use super::ComputerError;
use super::isolation;
use super::spec::ComputerSpec;

/// How long a stopped container's processes get after SIGTERM before SIGKILL.
pub const STOP_GRACE_SECONDS: i32 = 2;

/// Connects to the engine at `DOCKER_HOST`, or the default socket, and agrees on an API version
/// (Debian's engine is older than bollard's newest API).
pub async fn connect() -> Result<Docker, ComputerError> {
    // The computer's one door: a build without it (a phone's) never reaches an engine.
    if !crate::parts::Part::Computer.is_built() {
        return Err(ComputerError::NotInThisBuild);
    }
    let docker = Docker::connect_with_local_defaults().map_err(|e| ComputerError::NoEngine(e.to_string()))?;
    match tokio::time::timeout(ENGINE_LIMIT, docker.negotiate_version()).await {
        Ok(Ok(docker)) => Ok(docker),
        Ok(Err(err)) => Err(ComputerError::NoEngine(err.to_string())),
        Err(_) => Err(ComputerError::NoEngine(format!("it did not answer within {} s", ENGINE_LIMIT.as_secs()))),
    }
}

/// How long one engine request may take (a hung engine must not hang Stop).
pub const ENGINE_LIMIT: Duration = Duration::from_secs(20);

/// `request`, or an error when the engine does not answer within [`ENGINE_LIMIT`].
pub(super) async fn bounded<T>(request: impl std::future::Future<Output = T>) -> Result<T, ComputerError> {
    tokio::time::timeout(ENGINE_LIMIT, request)
        .await
        .map_err(|_| ComputerError::Engine(format!("the Docker engine did not answer within {} s", ENGINE_LIMIT.as_secs())))
}

/// Where the computer stands, with the engine's version and the image's size.
pub async fn status(docker: &Docker, spec: &ComputerSpec) -> Result<ComputerStatusView, ComputerError> {
    let version = bounded(docker.version()).await??;
    let image = match bounded(docker.inspect_image(&spec.image)).await? {
        Ok(image) => Some(image),
        Err(err) if not_found(&err) => None,
        Err(err) => return Err(err.into()),
    };
    let container = inspect(docker, &spec.container_name()).await?;
    let state = match &container {
        None => ComputerState::Absent,
        Some(c) if running(c) => ComputerState::Running,
        Some(_) => ComputerState::Stopped,
    };
    // A missing image is built from the base on the next start; only a missing base (which
    // the app cannot build) makes the computer unavailable.
    let base_missing = image.is_none() && image_id(docker, &super::recipe::base_image()).await?.is_none();
    let note = match (&image, base_missing) {
        (Some(_), _) => None,
        (None, false) => Some(format!("the image {} is built from its base on the next start", spec.image)),
        (None, true) => Some(ComputerError::NoBase(super::recipe::base_image()).to_string()),
    };
    Ok(ComputerStatusView {
        enabled: true,
        state: if base_missing { ComputerState::Unavailable } else { state },
        engine_version: version.version,
        image: spec.image.clone(),
        image_bytes: image.and_then(|i| i.size),
        note,
    })
}

/// Creates what is missing (volume, container), verifies the container and its volume against
/// the spec, and starts it when it is not running (or, with `restart`, restarts it when it is:
/// the first operation of a new Hearth process ends whatever an earlier one left running).
/// Refuses on the first failed check. Returns the verified container's id: commands are
/// exec'd in that container, not in whatever holds the name by then.
pub async fn ensure_running(docker: &Docker, spec: &ComputerSpec, restart: bool) -> Result<String, ComputerError> {
    let (image_id, image_labels) = image_of(docker, spec).await?;
    let volume = ensure_volume(docker, spec).await?;
    let container = match inspect(docker, &spec.container_name()).await? {
        Some(container) => container,
        None => {
            let options = CreateContainerOptions { name: Some(spec.container_name()), ..Default::default() };
            bounded(docker.create_container(Some(options), spec.create_body())).await??;
            inspect(docker, &spec.container_name()).await?.ok_or_else(|| ComputerError::Engine("the new container vanished".into()))?
        }
    };
    isolation::verify(spec, &image_id, &image_labels, &container, &volume)?;
    let id = container.id.clone().ok_or_else(|| ComputerError::Engine("the engine gave the container no id".into()))?;
    if running(&container) && !restart {
        return Ok(id);
    }
    if running(&container) {
        stop_or_kill(docker, &id).await?;
    }
    bounded(docker.start_container(&id, None::<StartContainerOptions>)).await??;
    // Started from the same config; checked again, by id, as an attach will see it.
    let started = inspect(docker, &id).await?.ok_or_else(|| ComputerError::Engine("the container vanished".into()))?;
    isolation::verify(spec, &image_id, &image_labels, &started, &volume)?;
    if !running(&started) {
        return Err(ComputerError::Engine("the container did not stay running".into()));
    }
    Ok(id)
}

/// Verifies the container against the spec and that it runs, without creating or starting
/// anything (for reads while another operation holds the computer). Returns its id.
pub async fn verify_running(docker: &Docker, spec: &ComputerSpec) -> Result<String, ComputerError> {
    let (image_id, image_labels) = image_of(docker, spec).await?;
    let volume = bounded(docker.inspect_volume(&spec.volume_name())).await??;
    let container =
        inspect(docker, &spec.container_name()).await?.ok_or_else(|| ComputerError::Engine("the computer has not been started".into()))?;
    isolation::verify(spec, &image_id, &image_labels, &container, &volume)?;
    if !running(&container) {
        return Err(ComputerError::Engine("the computer is stopped".into()));
    }
    container.id.ok_or_else(|| ComputerError::Engine("the engine gave the container no id".into()))
}

/// Stops `container` (a name or id) when it runs — SIGTERM, SIGKILL after the grace — and
/// returns once the engine reports it stopped. If the stop call fails or hangs, the container
/// is killed; only if that fails too is it an error.
pub async fn stop_or_kill(docker: &Docker, container: &str) -> Result<(), ComputerError> {
    let options = StopContainerOptions { t: Some(STOP_GRACE_SECONDS), signal: None };
    let stop_limit = Duration::from_secs(u64::try_from(STOP_GRACE_SECONDS).unwrap_or(2) + 20);
    let stopped = match tokio::time::timeout(stop_limit, docker.stop_container(container, Some(options))).await {
        // 304: already stopped; 404: there is nothing to stop.
        Ok(Ok(()) | Err(DockerError::DockerResponseServerError { status_code: 304 | 404, .. })) => Ok(()),
        Ok(Err(err)) => Err(ComputerError::from(err)),
        Err(_) => Err(ComputerError::Engine("the engine did not stop the container in time".into())),
    };
    if stopped.is_ok() && !inspect(docker, container).await?.as_ref().is_some_and(running) {
        return Ok(());
    }
    let kill = bounded(docker.kill_container(container, None::<KillContainerOptions>)).await?;
    match kill {
        Ok(()) | Err(DockerError::DockerResponseServerError { status_code: 404 | 409, .. }) => {}
        Err(err) => return Err(err.into()),
    }
    match inspect(docker, container).await? {
        Some(c) if running(&c) => Err(ComputerError::Engine(format!(
            "the container is still running after stop and kill ({})",
            stopped.err().map_or_else(String::new, |e| e.to_string())
        ))),
        _ => Ok(()),
    }
}

/// Removes the container (forced); the workspace volume stays.
pub async fn remove_container(docker: &Docker, spec: &ComputerSpec) -> Result<(), ComputerError> {
    let options = RemoveContainerOptions { force: true, v: false, link: false };
    match bounded(docker.remove_container(&spec.container_name(), Some(options))).await? {
        Ok(()) => Ok(()),
        Err(err) if not_found(&err) => Ok(()),
        Err(err) => Err(err.into()),
    }
}

/// Removes the container (forced) and the workspace volume.
pub async fn remove(docker: &Docker, spec: &ComputerSpec) -> Result<(), ComputerError> {
    remove_container(docker, spec).await?;
    match bounded(docker.remove_volume(&spec.volume_name(), None::<bollard::query_parameters::RemoveVolumeOptions>)).await? {
        Ok(()) => Ok(()),
        Err(err) if not_found(&err) => Ok(()),
        Err(err) => Err(err.into()),
    }
}

/// The id of the image tagged `tag`, if the engine has it.
pub async fn image_id(docker: &Docker, tag: &str) -> Result<Option<String>, ComputerError> {
    match bounded(docker.inspect_image(tag)).await? {
        Ok(image) => Ok(image.id),
        Err(err) if not_found(&err) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

/// The spec's image: its id and labels (what the container must show), or that it is not built.
async fn image_of(docker: &Docker, spec: &ComputerSpec) -> Result<(String, HashMap<String, String>), ComputerError> {
    match bounded(docker.inspect_image(&spec.image)).await? {
        Ok(image) => Ok((image.id.unwrap_or_default(), image.config.and_then(|c| c.labels).unwrap_or_default())),
        Err(err) if not_found(&err) => Err(ComputerError::NoImage(spec.image.clone())),
        Err(err) => Err(err.into()),
    }
}

async fn inspect(docker: &Docker, container: &str) -> Result<Option<ContainerInspectResponse>, ComputerError> {
    match bounded(docker.inspect_container(container, None::<InspectContainerOptions>)).await? {
        Ok(container) => Ok(Some(container)),
        Err(err) if not_found(&err) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

async fn ensure_volume(docker: &Docker, spec: &ComputerSpec) -> Result<Volume, ComputerError> {
    match bounded(docker.inspect_volume(&spec.volume_name())).await? {
        Ok(volume) => return Ok(volume),
        Err(err) if not_found(&err) => {}
        Err(err) => return Err(err.into()),
    }
    let request = VolumeCreateRequest {
        name: Some(spec.volume_name()),
        driver: Some("local".to_owned()),
        driver_opts: Some(HashMap::new()),
        labels: Some(spec.labels()),
        ..Default::default()
    };
    bounded(docker.create_volume(request)).await??;
    Ok(bounded(docker.inspect_volume(&spec.volume_name())).await??)
}

fn running(container: &ContainerInspectResponse) -> bool {
    container.state.as_ref().is_some_and(|s| s.running == Some(true) && s.status == Some(ContainerStateStatusEnum::RUNNING))
}

pub(super) fn not_found(err: &DockerError) -> bool {
    matches!(err, DockerError::DockerResponseServerError { status_code: 404, .. })
}
