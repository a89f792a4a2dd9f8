//! The computer: an isolated Linux container the agent runs commands in. What its tools return
//! and what the Computer screen and the terminal card show.

use serde::{Deserialize, Serialize};

use crate::IpcError;
use crate::ids::OperationId;

/// The longest command the terminal (and run_computer_command) accepts.
pub const MAX_COMMAND_CHARS: usize = 16_000;
/// The longest operation id.
pub const MAX_OPERATION_ID: usize = 120;
/// The longest workspace path.
pub const MAX_PATH_CHARS: usize = 2_048;
/// The largest text file the editor writes.
pub const MAX_TEXT_BYTES: usize = 256 * 1024;

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
    /// Whether Settings has it on.
    pub enabled: bool,
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

/// Which stream a chunk of output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// A chunk of a running command's output (what its receipt keeps, as it arrives).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandOutput {
    /// Which stream.
    pub stream: OutputStream,
    /// The text (UTF-8, invalid bytes replaced; a character split between chunks shows as
    /// a replacement in the live view only — the receipt has it whole).
    pub text: String,
}

/// The AG-UI `CUSTOM` event name under which a chat run streams a running command's output
/// to its terminal card; the value is a [`CommandOutputEvent`].
pub const COMMAND_OUTPUT_EVENT: &str = "hearth.command_output";

/// The value of a [`COMMAND_OUTPUT_EVENT`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandOutputEvent {
    /// The run_computer_command call it belongs to.
    pub tool_call_id: String,
    /// Which stream.
    pub stream: OutputStream,
    /// The text.
    pub text: String,
}

/// `computer_enable`: Settings → Computer on or off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ComputerEnableParams {
    /// On or off.
    pub enabled: bool,
}

/// `computer_run`: a command from the Computer screen's terminal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ComputerRunParams {
    /// The bash command line.
    pub command: String,
    /// The working directory inside /workspace (default /workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The screen's id for this run: sent again (a retry), it returns the first receipt.
    pub operation_id: OperationId,
}

impl ComputerRunParams {
    /// Checks the sizes (the core checks the path).
    pub fn validate(&self) -> Result<(), IpcError> {
        let chars = self.command.chars().count();
        if self.command.trim().is_empty() || chars > MAX_COMMAND_CHARS {
            return Err(IpcError::invalid(format!("A command is 1 to {MAX_COMMAND_CHARS} characters.")));
        }
        validate_operation_id(&self.operation_id)
    }
}

/// `computer_run_stop`: Stop for a terminal command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ComputerRunStopParams {
    /// The run to stop.
    pub operation_id: OperationId,
}

impl ComputerRunStopParams {
    /// Checks the id.
    pub fn validate(&self) -> Result<(), IpcError> {
        validate_operation_id(&self.operation_id)
    }
}

/// `computer_list` and `computer_read`: a path inside /workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ComputerPathParams {
    /// The path.
    pub path: String,
}

impl ComputerPathParams {
    /// Checks the size (the core checks the rest).
    pub fn validate(&self) -> Result<(), IpcError> {
        validate_path(&self.path)
    }
}

/// `computer_write`: the editor's Save.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ComputerWriteParams {
    /// The file.
    pub path: String,
    /// Its whole new text.
    pub content: String,
    /// The screen's id for this save (a retry writes once).
    pub operation_id: OperationId,
}

impl ComputerWriteParams {
    /// Checks the sizes.
    pub fn validate(&self) -> Result<(), IpcError> {
        validate_path(&self.path)?;
        if self.content.len() > MAX_TEXT_BYTES {
            return Err(IpcError::invalid(format!("A file the editor saves is at most {MAX_TEXT_BYTES} bytes.")));
        }
        validate_operation_id(&self.operation_id)
    }
}

/// The answer to `computer_run`: the receipt, or why the command may have run in part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ComputerRunResponse {
    /// It ran to its end (exit code 0 or not).
    Finished {
        /// What it did.
        receipt: CommandReceipt,
    },
    /// Stop or the time limit reached it, or the answer was lost: it may have done part of its
    /// work, and the container was stopped.
    InDoubt {
        /// What the owner should know.
        message: String,
    },
}

/// The id's characters were checked when it was parsed ([`OperationId`]); the computer's
/// operation ids are held to [`MAX_OPERATION_ID`], shorter than other ids, as the tools' are.
fn validate_operation_id(id: &OperationId) -> Result<(), IpcError> {
    if id.len() <= MAX_OPERATION_ID {
        Ok(())
    } else {
        Err(IpcError::invalid(format!("An operation id is 1 to {MAX_OPERATION_ID} letters, digits, `-`, `_`, `.` or `:`.")))
    }
}

fn validate_path(path: &str) -> Result<(), IpcError> {
    let chars = path.chars().count();
    if chars == 0 || chars > MAX_PATH_CHARS || path.contains('\0') {
        return Err(IpcError::invalid(format!("A path is 1 to {MAX_PATH_CHARS} characters, without NUL.")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn params_are_checked_before_they_reach_the_core() {
        // As the shell gets them: parsed from the window's JSON, then validated.
        let run = |command: &str, id: &str| {
            serde_json::from_value::<ComputerRunParams>(serde_json::json!({ "command": command, "operationId": id }))
                .map_err(|e| IpcError::invalid(e.to_string()))
                .and_then(|p| p.validate())
        };
        assert!(run("ls", "op-1").is_ok());
        assert!(run("", "op-1").is_err());
        assert!(run(&"x".repeat(MAX_COMMAND_CHARS + 1), "op-1").is_err());
        assert!(run("ls", "").is_err());
        assert!(run("ls", "has space").is_err());
        assert!(run("ls", &"a".repeat(MAX_OPERATION_ID)).is_ok());
        assert!(run("ls", &"a".repeat(MAX_OPERATION_ID + 1)).is_err(), "the computer's ids are shorter than others");
        assert!(ComputerPathParams { path: "/workspace/a\0".into() }.validate().is_err());
        let write = ComputerWriteParams {
            path: "/workspace/a".into(),
            content: "x".repeat(MAX_TEXT_BYTES + 1),
            operation_id: OperationId::parse("w").unwrap(),
        };
        assert!(write.validate().is_err());
        let receipt = CommandReceipt {
            status: CommandStatus::Succeeded,
            exit_code: Some(0),
            stdout: "hi".into(),
            stderr: String::new(),
            truncated: false,
            duration_ms: 3,
            note: None,
        };
        let wire = serde_json::to_value(ComputerRunResponse::Finished { receipt }).unwrap();
        assert_eq!(wire["type"], "finished");
        assert_eq!(wire["receipt"]["exitCode"], 0);
    }
}
