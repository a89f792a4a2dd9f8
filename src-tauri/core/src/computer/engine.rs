//! The container's life through the Engine API: connect, create from the spec, verify, start,
//! stop, remove. Every path that leads to a command verifies first ([`ensure_running`]).

use std::collections::HashMap;

use bollard::Docker;
use bollard::errors::Error as DockerError;
use bollard::models::{ContainerInspectResponse, ContainerStateStatusEnum, Volume, VolumeCreateRequest};
use bollard::query_parameters::{
    CreateContainerOptions, InspectContainerOptions, RemoveContainerOptions, StartContainerOptions, StopContainerOptions,
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
    let docker = Docker::connect_with_local_defaults().map_err(|e| ComputerError::NoEngine(e.to_string()))?;
    docker.negotiate_version().await.map_err(|e| ComputerError::NoEngine(e.to_string()))
}

/// Where the computer stands, with the engine's version and the image's size.
pub async fn status(docker: &Docker, spec: &ComputerSpec) -> Result<ComputerStatusView, ComputerError> {
    let version = docker.version().await?;
    let image = match docker.inspect_image(&spec.image).await {
        Ok(image) => Some(image),
        Err(err) if not_found(&err) => None,
        Err(err) => return Err(err.into()),
    };
    let container = inspect(docker, spec).await?;
    let state = match &container {
        None => ComputerState::Absent,
        Some(c) if running(c) => ComputerState::Running,
        Some(_) => ComputerState::Stopped,
    };
    let note = image.is_none().then(|| ComputerError::NoImage(spec.image.clone()).to_string());
    Ok(ComputerStatusView {
        state: if image.is_none() { ComputerState::Unavailable } else { state },
        engine_version: version.version,
        image: spec.image.clone(),
        image_bytes: image.and_then(|i| i.size),
        note,
    })
}

/// Creates what is missing (volume, container), verifies the container and its volume against
/// the spec, and starts it when it is not running. Refuses on the first failed check.
pub async fn ensure_running(docker: &Docker, spec: &ComputerSpec) -> Result<(), ComputerError> {
    let image = match docker.inspect_image(&spec.image).await {
        Ok(image) => image,
        Err(err) if not_found(&err) => return Err(ComputerError::NoImage(spec.image.clone())),
        Err(err) => return Err(err.into()),
    };
    let image_id = image.id.unwrap_or_default();
    let image_labels = image.config.and_then(|c| c.labels).unwrap_or_default();
    let volume = ensure_volume(docker, spec).await?;
    let container = match inspect(docker, spec).await? {
        Some(container) => container,
        None => {
            let options = CreateContainerOptions { name: Some(spec.container_name()), ..Default::default() };
            docker.create_container(Some(options), spec.create_body()).await?;
            inspect(docker, spec).await?.ok_or_else(|| ComputerError::Engine("the new container vanished".into()))?
        }
    };
    isolation::verify(spec, &image_id, &image_labels, &container, &volume)?;
    if !running(&container) {
        docker.start_container(&spec.container_name(), None::<StartContainerOptions>).await?;
        // Started from the same config; checked again, as an attach would see it.
        let container = inspect(docker, spec).await?.ok_or_else(|| ComputerError::Engine("the container vanished".into()))?;
        isolation::verify(spec, &image_id, &image_labels, &container, &volume)?;
        if !running(&container) {
            return Err(ComputerError::Engine("the container did not stay running".into()));
        }
    }
    Ok(())
}

/// Verifies the container against the spec and that it runs, without creating or starting
/// anything (for reads while another operation holds the computer).
pub async fn verify_running(docker: &Docker, spec: &ComputerSpec) -> Result<(), ComputerError> {
    let image = match docker.inspect_image(&spec.image).await {
        Ok(image) => image,
        Err(err) if not_found(&err) => return Err(ComputerError::NoImage(spec.image.clone())),
        Err(err) => return Err(err.into()),
    };
    let volume = docker.inspect_volume(&spec.volume_name()).await?;
    let container = inspect(docker, spec).await?.ok_or_else(|| ComputerError::Engine("the computer has not been started".into()))?;
    let image_labels = image.config.and_then(|c| c.labels).unwrap_or_default();
    isolation::verify(spec, image.id.as_deref().unwrap_or_default(), &image_labels, &container, &volume)?;
    if running(&container) { Ok(()) } else { Err(ComputerError::Engine("the computer is stopped".into())) }
}

/// Stops the container when it runs (SIGTERM, then SIGKILL after the grace), and returns once
/// the engine reports it stopped.
pub async fn stop(docker: &Docker, spec: &ComputerSpec) -> Result<(), ComputerError> {
    let options = StopContainerOptions { t: Some(STOP_GRACE_SECONDS), signal: None };
    match docker.stop_container(&spec.container_name(), Some(options)).await {
        Ok(()) => Ok(()),
        // 304: already stopped; 404: there is nothing to stop.
        Err(DockerError::DockerResponseServerError { status_code: 304 | 404, .. }) => Ok(()),
        Err(err) => Err(err.into()),
    }
}

/// Removes the container (forced) and the workspace volume.
pub async fn remove(docker: &Docker, spec: &ComputerSpec) -> Result<(), ComputerError> {
    let options = RemoveContainerOptions { force: true, v: false, link: false };
    match docker.remove_container(&spec.container_name(), Some(options)).await {
        Ok(()) => {}
        Err(err) if not_found(&err) => {}
        Err(err) => return Err(err.into()),
    }
    match docker.remove_volume(&spec.volume_name(), None::<bollard::query_parameters::RemoveVolumeOptions>).await {
        Ok(()) => Ok(()),
        Err(err) if not_found(&err) => Ok(()),
        Err(err) => Err(err.into()),
    }
}

async fn inspect(docker: &Docker, spec: &ComputerSpec) -> Result<Option<ContainerInspectResponse>, ComputerError> {
    match docker.inspect_container(&spec.container_name(), None::<InspectContainerOptions>).await {
        Ok(container) => Ok(Some(container)),
        Err(err) if not_found(&err) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

async fn ensure_volume(docker: &Docker, spec: &ComputerSpec) -> Result<Volume, ComputerError> {
    match docker.inspect_volume(&spec.volume_name()).await {
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
    docker.create_volume(request).await?;
    Ok(docker.inspect_volume(&spec.volume_name()).await?)
}

fn running(container: &ContainerInspectResponse) -> bool {
    container.state.as_ref().is_some_and(|s| s.running == Some(true) && s.status == Some(ContainerStateStatusEnum::RUNNING))
}

fn not_found(err: &DockerError) -> bool {
    matches!(err, DockerError::DockerResponseServerError { status_code: 404, .. })
}
