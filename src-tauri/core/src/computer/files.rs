//! Files in /workspace, through the helper baked into the image (`hearth_files.py`, run with an
//! argv as uid 1000): list, read, write, mkdir. Paths are checked here first
//! ([`super::paths::workspace_path`]) and again by the helper, which opens every component
//! with `O_NOFOLLOW`.

use base64::Engine as _;
use bollard::Docker;
use bollard::container::LogOutput;
use bollard::exec::StartExecResults;
use futures::StreamExt;
use hearth_protocol::computer::{WorkspaceEntry, WorkspaceListing};
use serde::Deserialize;
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use super::spec;

/// A text file read or written through the tools and the editor.
pub use hearth_protocol::computer::MAX_TEXT_BYTES;
/// A PDF moved between Files and the workspace.
pub const MAX_PDF_BYTES: usize = 10 * 1024 * 1024;
/// The helper's answer: JSON with the file in base64 (4/3 of 10 MB, and room).
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
const HELPER: &str = "/usr/local/bin/hearth-files";
const PYTHON: &str = "/usr/bin/python3";

/// Why a file operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The path or content was refused (by Hearth or by the helper); nothing was touched.
    #[error("{0}")]
    Refused(String),
    /// The engine failed before the helper ran.
    #[error("the Docker engine failed: {0}")]
    Engine(String),
    /// The helper ran but its answer was lost or unreadable: a write may have happened.
    #[error("the file helper's answer was lost ({0}); list the folder to see whether it changed")]
    Lost(String),
    /// Stop arrived while the helper ran.
    #[error("stopped while the file operation ran; list the folder to see whether it changed")]
    Stopped,
}

#[derive(Deserialize)]
struct Answer {
    ok: bool,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    entries: Option<Vec<WorkspaceEntry>>,
    #[serde(default)]
    truncated: Option<bool>,
    #[serde(default)]
    base64: Option<String>,
    #[serde(default)]
    bytes: Option<u64>,
    #[serde(default)]
    created: Option<bool>,
}

/// Lists a folder: at most 1,000 entries, folders first.
pub async fn list(docker: &Docker, container_id: &str, path: &str, cancel: &CancellationToken) -> Result<WorkspaceListing, FileError> {
    let path = checked(path)?;
    let answer = helper(docker, container_id, &["list", &path], None, cancel).await?;
    Ok(WorkspaceListing { path, entries: answer.entries.unwrap_or_default(), truncated: answer.truncated.unwrap_or(false) })
}

/// Reads a regular file of at most `max` bytes.
pub async fn read(docker: &Docker, container_id: &str, path: &str, max: usize, cancel: &CancellationToken) -> Result<Vec<u8>, FileError> {
    let path = checked(path)?;
    let answer = helper(docker, container_id, &["read", &path, &max.to_string()], None, cancel).await?;
    let encoded = answer.base64.ok_or_else(|| FileError::Lost("no content in the answer".into()))?;
    base64::engine::general_purpose::STANDARD.decode(encoded).map_err(|e| FileError::Lost(e.to_string()))
}

/// Writes `content` (at most `max` bytes) to a regular file: a temp file, fsync, rename; never
/// over something that is not a regular file. Returns the bytes written.
pub async fn write(
    docker: &Docker,
    container_id: &str,
    path: &str,
    content: &[u8],
    max: usize,
    cancel: &CancellationToken,
) -> Result<u64, FileError> {
    let path = checked(path)?;
    if content.len() > max {
        return Err(FileError::Refused(format!("the content has {} bytes; at most {max} can be written", content.len())));
    }
    // The helper replaces the file only if it received exactly these bytes: a stream cut by
    // Stop or a lost connection ends its input early, and that must not become the file.
    use sha2::Digest;
    let digest = hex::encode(sha2::Sha256::digest(content));
    let args = ["write", &path, &max.to_string(), &content.len().to_string(), &digest];
    let answer = helper(docker, container_id, &args, Some(content), cancel).await?;
    answer.bytes.ok_or_else(|| FileError::Lost("no size in the answer".into()))
}

/// Makes a folder (0700). Returns whether it was created (`false`: it was there already).
pub async fn mkdir(docker: &Docker, container_id: &str, path: &str, cancel: &CancellationToken) -> Result<bool, FileError> {
    let path = checked(path)?;
    let answer = helper(docker, container_id, &["mkdir", &path], None, cancel).await?;
    Ok(answer.created.unwrap_or(false))
}

fn checked(path: &str) -> Result<String, FileError> {
    super::paths::workspace_path(path).map_err(|why| FileError::Refused(format!("the path {why}")))
}

/// Runs the helper with `args`, `stdin` written to it, and reads its one JSON answer.
async fn helper(
    docker: &Docker,
    container_id: &str,
    args: &[&str],
    stdin: Option<&[u8]>,
    cancel: &CancellationToken,
) -> Result<Answer, FileError> {
    let engine = |e: bollard::errors::Error| FileError::Engine(e.to_string());
    // `-I`: isolated mode, so nothing in the workspace (a `.pth` file under HOME, a
    // `usercustomize.py`, PYTHON* variables) runs inside the helper.
    let mut cmd = vec![PYTHON.to_owned(), "-I".to_owned(), HELPER.to_owned()];
    cmd.extend(args.iter().map(|&a| a.to_owned()));
    let options = super::command::exec_options(cmd, spec::WORKSPACE, stdin.is_some());
    if cancel.is_cancelled() {
        return Err(FileError::Refused("the run was stopped before the file operation started".into()));
    }
    let exec = docker.create_exec(container_id, options).await.map_err(engine)?;
    if cancel.is_cancelled() {
        return Err(FileError::Refused("the run was stopped before the file operation started".into()));
    }
    let StartExecResults::Attached { mut output, mut input } =
        docker.start_exec(&exec.id, None).await.map_err(|e| FileError::Lost(e.to_string()))?
    else {
        return Err(FileError::Lost("the helper was started detached".into()));
    };
    let feed = async {
        if let Some(bytes) = stdin {
            input.write_all(bytes).await?;
        }
        input.shutdown().await
    };
    let read = async {
        let mut stdout = Vec::new();
        while let Some(item) = output.next().await {
            match item {
                Ok(LogOutput::StdOut { message }) => {
                    if stdout.len() + message.len() > MAX_ANSWER_BYTES {
                        return Err(FileError::Lost("the answer was too long".into()));
                    }
                    stdout.extend_from_slice(&message);
                }
                Ok(_) => {}
                Err(e) => return Err(FileError::Lost(e.to_string())),
            }
        }
        Ok(stdout)
    };
    let both = async { tokio::join!(feed, read) };
    let (fed, read) = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(FileError::Stopped),
        both = both => both,
    };
    // A helper that refuses before reading its input closes it early: its answer still counts.
    let parsed = read.and_then(|stdout| serde_json::from_slice::<Answer>(&stdout).map_err(|e| FileError::Lost(e.to_string())));
    let answer = match (parsed, fed) {
        (Ok(answer), _) => answer,
        (Err(err), Ok(())) => return Err(err),
        (Err(_), Err(fed)) => return Err(FileError::Lost(fed.to_string())),
    };
    if answer.ok { Ok(answer) } else { Err(FileError::Refused(answer.error.unwrap_or_else(|| "the file helper refused".into()))) }
}
