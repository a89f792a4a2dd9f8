//! What the computer's image is made of — the base's recipe, the Dockerfile and the file
//! helper — and the tags that name it, derived from their content. Building it is
//! [`super::image`]'s; the engine reads the base's tag here to say whether it is missing.

/// The base's recipe and the layer's parts; the tags derive from their content.
const BASE_RECIPE: &[u8] = include_bytes!("../../../../scripts/computer-image.sh");
pub(super) const DOCKERFILE: &[u8] = include_bytes!("Dockerfile");
pub(super) const FILE_HELPER: &[u8] = include_bytes!("hearth_files.py");

/// `hearth-computer-base:<first 16 hex digits of the SHA-256 of scripts/computer-image.sh>`,
/// the tag the script builds (it hashes itself the same way).
pub fn base_image() -> String {
    format!("hearth-computer-base:{}", short_hash(&[BASE_RECIPE]))
}

/// `hearth-computer:<first 16 hex digits of the SHA-256 of the base's tag, the Dockerfile and
/// the helper>`: the image Hearth builds over the base and runs.
pub fn default_image() -> String {
    format!("hearth-computer:{}", recipe_hash())
}

/// The tag one deployment's computer runs: [`default_image`] with the deployment after it, so
/// a Rebuild in one Hearth data folder moves no other folder's tag (their containers keep
/// passing their image check).
pub fn image_for(deployment: &str) -> String {
    format!("{}-{deployment}", default_image())
}

/// The hash the image's `dev.hearth.image-recipe` label carries.
pub(super) fn recipe_hash() -> String {
    short_hash(&[base_image().as_bytes(), DOCKERFILE, FILE_HELPER])
}

fn short_hash(parts: &[&[u8]]) -> String {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    hex::encode(hasher.finalize())[..16].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tags are SHA-256 prefixes as `sha256sum | cut -c1-16` prints them (the script's
    /// side is checked against the engine in the suite).
    #[test]
    fn the_tags_are_sha256_prefixes_of_their_parts() {
        assert_eq!(short_hash(&[b"abc"]), "ba7816bf8f01cfea");
        assert_eq!(short_hash(&[b"a", b"bc"]), "ba7816bf8f01cfea");
        use sha2::Digest;
        let script = hex::encode(sha2::Sha256::digest(BASE_RECIPE));
        assert_eq!(base_image(), format!("hearth-computer-base:{}", &script[..16]));
        assert_eq!(image_for("d1"), format!("{}-d1", default_image()));
    }
}
