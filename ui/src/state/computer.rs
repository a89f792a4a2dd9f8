//! The Computer screen's and the terminal card's state, as plain data: the terminal's runs
//! with their live output, what a receipt says in words, and workspace paths.

use hearth_protocol::computer::{CommandOutput, CommandReceipt, CommandStatus, ComputerRunResponse, EntryKind, WorkspaceFile};
use serde_json::Value;

use crate::state::cards::tool_result;
use crate::state::chat::{ToolCallView, ToolStatus};

/// The workspace's root.
pub const WORKSPACE: &str = "/workspace";

/// One command of the terminal pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalRun {
    /// The operation id the screen gave it (its Stop names it).
    pub id: String,
    /// What was typed.
    pub command: String,
    /// Output as it arrived (stdout and stderr interleaved).
    pub live: String,
    /// Where it stands.
    pub state: RunState,
}

/// Where a terminal command stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunState {
    /// Sent; output may be arriving.
    Running,
    /// It ended by itself: the receipt.
    Finished(CommandReceipt),
    /// Stop, the time limit or a lost answer ended it: it may have done part of its work.
    InDoubt(String),
    /// It was refused before running (off, busy, isolation): nothing ran.
    Refused(String),
}

impl TerminalRun {
    /// A command just sent.
    pub fn started(id: String, command: String) -> Self {
        Self { id, command, live: String::new(), state: RunState::Running }
    }

    /// Whether Stop applies.
    pub fn is_running(&self) -> bool {
        matches!(self.state, RunState::Running)
    }
}

/// Appends a chunk of output to the run `id`, if it is still running (a late chunk after the
/// answer adds nothing: the receipt has it).
pub fn push_output(runs: &mut [TerminalRun], id: &str, chunk: &CommandOutput) {
    if let Some(run) = runs.iter_mut().find(|r| r.id == id && r.is_running()) {
        run.live.push_str(&chunk.text);
    }
}

/// Settles the run `id` with the backend's answer.
pub fn settle(runs: &mut [TerminalRun], id: &str, answer: Result<ComputerRunResponse, String>) {
    if let Some(run) = runs.iter_mut().find(|r| r.id == id) {
        run.state = match answer {
            Ok(ComputerRunResponse::Finished { receipt }) => RunState::Finished(receipt),
            Ok(ComputerRunResponse::InDoubt { message }) => RunState::InDoubt(message),
            Err(message) => RunState::Refused(message),
        };
    }
}

/// A receipt's status in words.
pub const fn status_label(status: CommandStatus) -> &'static str {
    match status {
        CommandStatus::Succeeded => "succeeded",
        CommandStatus::Failed => "failed",
        CommandStatus::TimedOut => "timed out",
        CommandStatus::Interrupted => "interrupted",
    }
}

/// `exit 0 · 12 ms`, or `no exit code · 30.0 s`.
pub fn summary(receipt: &CommandReceipt) -> String {
    let exit = receipt.exit_code.map_or_else(|| "no exit code".to_owned(), |code| format!("exit {code}"));
    format!("{exit} · {}", duration_label(receipt.duration_ms))
}

/// Milliseconds under a second, seconds with one decimal above.
pub fn duration_label(ms: u64) -> String {
    if ms < 1_000 { format!("{ms} ms") } else { format!("{}.{} s", ms / 1_000, (ms % 1_000) / 100) }
}

/// The receipt's output as the terminal shows it: stdout, then stderr, then a line when the
/// output was cut.
pub fn output_text(receipt: &CommandReceipt) -> String {
    let mut text = receipt.stdout.clone();
    if !receipt.stderr.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&receipt.stderr);
    }
    if receipt.truncated {
        text.push_str("\n[output past 128 KiB was not kept]");
    }
    text
}

/// run_computer_command's card model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandCard {
    /// The command line (from the call's arguments).
    pub command: String,
    /// The receipt, once it ran to its end.
    pub receipt: Option<CommandReceipt>,
    /// Why there is no receipt (refused, stopped, in doubt), once the call ended.
    pub problem: Option<String>,
    /// The problem is that it may have run in part (Stop, the time limit, a lost answer, a
    /// stored uncertain outcome), not a refusal.
    pub in_doubt: bool,
    /// The call is still running.
    pub running: bool,
}

/// The card for a run_computer_command call: its command from the arguments, and its
/// receipt or what went wrong.
pub fn command_card(call: &ToolCallView) -> Option<CommandCard> {
    let args: Value = serde_json::from_str(&call.args).ok()?;
    let command = args.get("command")?.as_str()?.to_owned();
    let receipt: Option<CommandReceipt> = tool_result(call);
    let problem = match (call.status, &receipt, call.result.as_deref()) {
        (ToolStatus::Running, _, _) | (_, Some(_), _) => None,
        (_, None, Some(result)) => Some(error_of(result)),
        (_, None, None) => None,
    };
    let in_doubt = problem.is_some()
        && call.result.as_deref().and_then(|r| serde_json::from_str::<Value>(r).ok()).is_some_and(|v| v["inDoubt"] == true);
    Some(CommandCard { command, receipt, problem, in_doubt, running: call.status == ToolStatus::Running })
}

fn error_of(result: &str) -> String {
    serde_json::from_str::<Value>(result)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| result.to_owned())
}

/// The folder above `path` (the root stays the root).
pub fn parent(path: &str) -> String {
    match path.trim_end_matches('/').rsplit_once('/') {
        Some((head, _)) if head.len() >= WORKSPACE.len() => head.to_owned(),
        _ => WORKSPACE.to_owned(),
    }
}

/// `name` inside `folder`.
pub fn child(folder: &str, name: &str) -> String {
    format!("{}/{name}", folder.trim_end_matches('/'))
}

/// A tree row's marker.
pub const fn kind_marker(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::Directory => "▸",
        EntryKind::File => "·",
        EntryKind::Symlink => "↪",
        EntryKind::Other => "?",
    }
}

/// What the editor holds: the file as read, and the text being edited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Editing {
    /// The file as last read or saved.
    pub file: WorkspaceFile,
    /// The text in the editor.
    pub text: String,
}

impl Editing {
    /// A file just opened.
    pub fn open(file: WorkspaceFile) -> Self {
        let text = file.content.clone();
        Self { file, text }
    }

    /// Whether Save has something to write.
    pub fn is_changed(&self) -> bool {
        self.text != self.file.content
    }

    /// After a save of `text`.
    pub fn saved(&mut self, text: String) {
        self.file.content = text;
    }
}

#[cfg(test)]
#[path = "computer_tests.rs"]
mod tests;
