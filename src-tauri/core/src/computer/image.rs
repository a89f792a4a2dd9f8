//! The computer's image: building it through the engine, from the parts and under the tags
//! that [`super::recipe`] holds.
//!
//! Two layers, because they need different things:
//!
//! - the **base** (`hearth-computer-base:<hash of scripts/computer-image.sh>`) is a Debian
//!   rootfs from `debootstrap`, which needs root and a Debian mirror: the script builds it,
//!   once per recipe, and feeds it to `docker import`;
//! - **Hearth's layer** (`hearth-computer:<hash>`, [`default_image`]) is the file helper and the
//!   image's settings (user, working folder, environment, entry point, recipe label) over the
//!   base, described by `computer/Dockerfile`. Hearth builds it itself through the engine's
//!   build API from a context it makes in memory, with nothing pulled and no step that runs a
//!   command: on first use when it is missing, and again on the owner's Rebuild in Settings.
//!
//! The tag of Hearth's layer hashes the base's tag, the Dockerfile and the helper, so a change
//! to any of them names a new image (and a container made from an older one fails its check
//! until it is recreated).

use std::collections::HashMap;
use std::time::Duration;

use bollard::Docker;
use bollard::query_parameters::{BuildImageOptionsBuilder, BuilderVersion, RemoveImageOptions};
use futures::StreamExt;

use super::ComputerError;
use super::engine::{self, bounded, not_found};
use super::recipe::{DOCKERFILE, FILE_HELPER, recipe_hash};
pub use super::recipe::{base_image, default_image, image_for};

/// How long one build may take: it copies one small file over a local image (about a second
/// here), so this only bounds an engine that stopped answering. A command's Stop does not wait
/// for it (see `Computer::run`).
const BUILD_LIMIT: Duration = Duration::from_secs(60);

/// The label the script puts on the base: its recipe's hash, the tag's suffix.
const BASE_LABEL: &str = "dev.hearth.base-recipe";
/// The label Hearth's layer carries: the recipe's hash.
const IMAGE_LABEL: &str = "dev.hearth.image-recipe";
/// The label naming the tag an image was built for: two deployments' builds never share an
/// id, so removing a replaced image by id never takes another deployment's tag with it.
const TAG_LABEL: &str = "dev.hearth.image-tag";

/// Whether to reuse the engine's build cache (an image made earlier from the same parts) or
/// make every layer again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// Reuse what the cache holds: building a missing image.
    Cached,
    /// Make it again: the owner's Rebuild.
    Fresh,
}

/// Builds Hearth's layer over the base and tags it `tag`. Returns the new image's id.
///
/// Refuses, naming the script, when the base is not there: building the base needs root and a
/// Debian mirror, which the app does not have.
pub async fn build(docker: &Docker, tag: &str, how: Build) -> Result<String, ComputerError> {
    build_over(docker, &base_image(), tag, how).await
}

/// [`build`] over the base tagged `base` (tests name a missing one).
///
/// The base is checked first — there, made by the script of this recipe (its label), with no
/// `ONBUILD` trigger that would run a step — and then named by its **id** in `FROM`, so a base
/// removed or retagged after the check makes the build fail instead of making the engine pull
/// a `hearth-computer-base` from a registry.
pub async fn build_over(docker: &Docker, base: &str, tag: &str, how: Build) -> Result<String, ComputerError> {
    let found = match bounded(docker.inspect_image(base)).await? {
        Ok(found) => found,
        Err(err) if not_found(&err) => return Err(ComputerError::NoBase(base.to_owned())),
        Err(err) => return Err(err.into()),
    };
    let config = found.config.unwrap_or_default();
    let recipe = config.labels.as_ref().and_then(|l| l.get(BASE_LABEL)).map(String::as_str);
    let expected = base.rsplit_once(':').map(|(_, hash)| hash);
    if recipe != expected || recipe.is_none() {
        return Err(ComputerError::Engine(format!(
            "the image tagged {base} was not made by scripts/computer-image.sh (its {BASE_LABEL} label is {}); \
             remove it (docker image rm {base}) and run the script again",
            recipe.unwrap_or("missing")
        )));
    }
    // Hearth's own layer inherits the base's label: one retagged as the base is refused too.
    if config.labels.as_ref().is_some_and(|l| l.contains_key(IMAGE_LABEL)) {
        return Err(ComputerError::Engine(format!(
            "the image tagged {base} is a Hearth computer image, not its base; remove it (docker image rm {base}) and run scripts/computer-image.sh"
        )));
    }
    if config.on_build.as_ref().is_some_and(|steps| !steps.is_empty()) {
        return Err(ComputerError::Engine(format!(
            "the base image {base} has ONBUILD steps, which Hearth does not run; remove it (docker image rm {base}) and run scripts/computer-image.sh again"
        )));
    }
    let base_id = found.id.ok_or_else(|| ComputerError::Engine("the engine gave the base image no id".into()))?;
    let args = HashMap::from([("BASE".to_owned(), base_id.clone()), ("RECIPE".to_owned(), recipe_hash())]);
    let labels = HashMap::from([(TAG_LABEL.to_owned(), tag.to_owned())]);
    let options = BuildImageOptionsBuilder::new()
        .dockerfile("Dockerfile")
        .t(tag)
        .buildargs(&args)
        .labels(&labels)
        .nocache(how == Build::Fresh)
        .rm(true)
        .forcerm(true)
        .networkmode("none")
        .version(BuilderVersion::BuilderV1)
        .build();
    let context = context()?;
    // A container made (not started) from the base holds it while the build runs: an image in
    // use cannot be removed without force, so `FROM <id>` always finds it locally (a missing
    // one would make the engine look for `sha256:<id>` in a registry).
    let pin = format!("hearth-base-pin-{}", uuid::Uuid::new_v4().simple());
    let pin_body = bollard::models::ContainerCreateBody {
        image: Some(base_id),
        network_disabled: Some(true),
        entrypoint: Some(vec!["/bin/true".into()]),
        ..Default::default()
    };
    let pin_options = bollard::query_parameters::CreateContainerOptions { name: Some(pin.clone()), ..Default::default() };
    bounded(docker.create_container(Some(pin_options), pin_body)).await??;
    let built = build_pinned(docker, options, context, tag).await;
    let remove = bollard::query_parameters::RemoveContainerOptions { force: true, v: false, link: false };
    if let Err(err) = bounded(docker.remove_container(&pin, Some(remove))).await {
        tracing::warn!(error = %err, container = %pin, "could not remove the container that held the base during a build");
    }
    built
}

/// The build itself, its base held.
async fn build_pinned(
    docker: &Docker,
    options: bollard::query_parameters::BuildImageOptions,
    context: Vec<u8>,
    tag: &str,
) -> Result<String, ComputerError> {
    let mut stream = docker.build_image(options, None, Some(bollard::body_full(context.into())));
    // The engine names the image it made in an `aux` message; an error ends the stream.
    let built = tokio::time::timeout(BUILD_LIMIT, async {
        let mut built = None;
        while let Some(message) = stream.next().await {
            let message = message?;
            if let Some(detail) = message.error_detail {
                return Err(ComputerError::Engine(format!(
                    "building the image failed ({}); check the engine (docker info) and press Rebuild image again",
                    detail.message.unwrap_or_else(|| "no detail".into())
                )));
            }
            if let Some(id) = message.aux.and_then(|aux| aux.id) {
                built = Some(id);
            }
        }
        Ok(built)
    })
    .await
    .map_err(|_| {
        ComputerError::Engine(format!(
            "building the image took longer than {} s; check the engine (docker info) and press Rebuild image again",
            BUILD_LIMIT.as_secs()
        ))
    })??;
    let built =
        built.ok_or_else(|| ComputerError::Engine("the engine did not say which image it built; press Rebuild image again".into()))?;
    // The tag is what the container is checked against: it must name what was built (another
    // Hearth's Rebuild may remove a shared, untagged image between the build and its tag).
    if engine::image_id(docker, tag).await?.as_deref() == Some(built.as_str()) {
        return Ok(built);
    }
    Err(ComputerError::Engine(format!(
        "the image built for {tag} was replaced or removed before Hearth could use it; press Rebuild image again"
    )))
}

/// Builds `tag` unless the engine has it.
pub async fn ensure(docker: &Docker, tag: &str) -> Result<(), ComputerError> {
    if engine::image_id(docker, tag).await?.is_none() {
        build(docker, tag, Build::Cached).await?;
    }
    Ok(())
}

/// Removes the image `id` a Rebuild replaced, if it is dangling (no tag names it). The engine
/// would remove a tagged image by id too when one tag is left — another deployment's, whose
/// cached build shared this id — so an image any tag still names always stays. (Another
/// Hearth tagging it between the check and the removal would lose that tag; its next start
/// builds it again.)
pub async fn remove_unused(docker: &Docker, id: &str) {
    match bounded(docker.inspect_image(id)).await {
        Ok(Ok(image)) if image.repo_tags.as_ref().is_none_or(Vec::is_empty) => {}
        Ok(Ok(_)) => return,
        Ok(Err(_)) | Err(_) => return,
    }
    let options = RemoveImageOptions { force: false, noprune: false, ..Default::default() };
    match bounded(docker.remove_image(id, Some(options), None)).await {
        Ok(Ok(_)) => {}
        Ok(Err(err)) => tracing::info!(error = %err, "the image a rebuild replaced stays (still in use)"),
        Err(err) => tracing::warn!(error = %err, "could not remove the image a rebuild replaced"),
    }
}

/// The build context: the Dockerfile and the helper, as a tar archive in memory.
fn context() -> Result<Vec<u8>, ComputerError> {
    let mut archive = tar::Builder::new(Vec::new());
    for (name, mode, bytes) in [("Dockerfile", 0o644, DOCKERFILE), ("hearth-files", 0o755, FILE_HELPER)] {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(mode);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        header.set_cksum();
        archive
            .append_data(&mut header, name, bytes)
            .map_err(|err| ComputerError::Engine(format!("could not make the build context: {err}")))?;
    }
    archive.into_inner().map_err(|err| ComputerError::Engine(format!("could not make the build context: {err}")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_context_holds_the_dockerfile_and_an_executable_helper() {
        let bytes = context().unwrap();
        let mut archive = tar::Archive::new(bytes.as_slice());
        let entries: Vec<(String, u32, u64)> = archive
            .entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.path().unwrap().to_string_lossy().into_owned(), e.header().mode().unwrap(), e.header().size().unwrap())
            })
            .collect();
        assert_eq!(
            entries,
            vec![("Dockerfile".into(), 0o644, DOCKERFILE.len() as u64), ("hearth-files".into(), 0o755, FILE_HELPER.len() as u64)]
        );
    }
}
