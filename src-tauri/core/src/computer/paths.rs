//! The path guard on Hearth's side: every path a tool names must be inside /workspace before
//! it is sent to the container. (Inside, each component is opened again with `O_NOFOLLOW`, so a
//! symlink made in the workspace cannot lead out of it either.)

use super::spec::WORKSPACE;

pub use hearth_protocol::computer::MAX_PATH_CHARS;

/// `raw` normalized (no trailing `/`, no empty or `.` components), or why it is refused:
/// it must be absolute, inside /workspace, without `..`, without NUL, and at most
/// [`MAX_PATH_CHARS`] characters.
pub fn workspace_path(raw: &str) -> Result<String, String> {
    let chars = raw.chars().count();
    if chars == 0 || chars > MAX_PATH_CHARS {
        return Err(format!("must be a path of 1 to {MAX_PATH_CHARS} characters (it has {chars})"));
    }
    if raw.contains('\0') {
        return Err("contains a NUL character".into());
    }
    if !raw.starts_with('/') {
        return Err(format!("must be absolute, inside {WORKSPACE} (for example {WORKSPACE}/notes.txt)"));
    }
    let mut parts = Vec::new();
    for part in raw.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(format!("must not contain `..`; name the path inside {WORKSPACE} directly")),
            part => parts.push(part),
        }
    }
    if parts.first() != Some(&&WORKSPACE[1..]) {
        return Err(format!("must be inside {WORKSPACE}"));
    }
    Ok(format!("/{}", parts.join("/")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_paths_inside_the_workspace_pass() {
        assert_eq!(workspace_path("/workspace").unwrap(), "/workspace");
        assert_eq!(workspace_path("/workspace//a/./b/").unwrap(), "/workspace/a/b");
        for bad in ["", "workspace/a", "/workspace/../etc", "/etc/passwd", "/workspacex/a", "/workspace/a\0b", "../x"] {
            assert!(workspace_path(bad).is_err(), "{bad:?} passed");
        }
        assert!(workspace_path(&format!("/workspace/{}", "a".repeat(5000))).is_err());
    }
}
