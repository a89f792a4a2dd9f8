//! The computer: an isolated Linux container the agent runs commands in. What its tools return
//! and what the Computer screen and the terminal card show.

use serde::{Deserialize, Serialize};

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandStatus {
    /// It exited with code 0.
    Succeeded,
    /// It exited with another code.
    Failed,
    /// It ran past the time limit and was killed, with the container.
    TimedOut,
    /// Stop reached it while it ran: it may have changed files before it was killed.
    Interrupted,
}

/// What one run_computer_command did: the receipt the journal keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandReceipt {
    /// How it ended.
    pub status: CommandStatus,
    /// Its exit code, when it exited.
    pub exit_code: Option<i64>,
    /// Its standard output (UTF-8, invalid bytes replaced), up to the cap.
    pub stdout: String,
    /// Its standard error, likewise.
    pub stderr: String,
    /// Whether output past the cap (128 KiB for both together) was dropped.
    pub truncated: bool,
    /// From the exec's start to its end, in milliseconds.
    pub duration_ms: u64,
    /// What the owner should know (set for timed-out and interrupted commands).
    pub note: Option<String>,
}

/// Whether the computer is there and running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComputerState {
    /// Turned off in Settings, or no Docker engine answers.
    Unavailable,
    /// Its container does not exist yet (start_computer creates it).
    Absent,
    /// The container exists and is stopped.
    Stopped,
    /// The container is running and passed every isolation check.
    Running,
}

/// computer_status's answer, and the Computer screen's header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ComputerStatusView {
    /// Where it stands.
    pub state: ComputerState,
    /// The Docker engine's version, when one answers.
    pub engine_version: Option<String>,
    /// The image it runs (`hearth-computer:<recipe hash>`).
    pub image: String,
    /// The image's size in bytes, when the engine has it.
    pub image_bytes: Option<i64>,
    /// Why it is unavailable, or what to do.
    pub note: Option<String>,
}

/// What a workspace entry is (symlinks are listed, never followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A folder.
    Directory,
    /// A regular file.
    File,
    /// A symbolic link.
    Symlink,
    /// A device, socket or pipe.
    Other,
}

/// One entry of a workspace folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceEntry {
    /// Its name in the folder.
    pub name: String,
    /// What it is.
    pub kind: EntryKind,
    /// Its size in bytes (of the link itself, for a symlink).
    pub bytes: u64,
}

/// A workspace folder's entries: folders first, then by name; at most 1,000.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceListing {
    /// The folder, normalized.
    pub path: String,
    /// Its entries.
    pub entries: Vec<WorkspaceEntry>,
    /// Whether there were more than 1,000.
    pub truncated: bool,
}

/// A text file of the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceFile {
    /// The file, normalized.
    pub path: String,
    /// Its text (UTF-8).
    pub content: String,
}
