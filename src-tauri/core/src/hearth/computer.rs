//! The Computer screen and Settings → Computer: the owner's own commands and edits, through the
//! same typed effect path as a model's calls (`tools::dispatch` under the owner's scope), so a
//! retried Run or Save performs once and Stop reaches the command.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hearth_protocol::computer::{
    CommandReceipt, ComputerRunParams, ComputerRunResponse, ComputerStatusView, ComputerWriteParams, WorkspaceFile, WorkspaceListing,
};
use tokio_util::sync::CancellationToken;

use super::Hearth;
use crate::computer::OutputSink;
use crate::computer::files::MAX_TEXT_BYTES;
use crate::error::{CoreError, Result};
use crate::tools::{StepId, ToolOutput, call, typed};

/// The screen's name in operation keys (`owner:computer`).
const SCREEN: &str = "computer";
/// How many Stops for commands not registered yet are kept.
const EARLY_STOPS: usize = 64;

/// Removes a run's Stop when the run ends, however it ends.
struct Registered<'a> {
    runs: &'a ScreenRuns,
    operation_id: &'a str,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.runs.end(self.operation_id);
    }
}

/// Stop tokens of the terminal's commands in flight, by operation id.
#[derive(Default, Clone)]
pub(crate) struct ScreenRuns(Arc<Mutex<HashMap<String, CancellationToken>>>);

impl ScreenRuns {
    /// The Stop of a new run of `operation_id`, or `None` when that id is running already (a
    /// double click): the second call must not take the first one's Stop away. A Stop that came
    /// first is kept: the token is handed over already cancelled.
    fn begin(&self, operation_id: &str) -> Option<CancellationToken> {
        let mut runs = self.0.lock().ok()?;
        if let Some(token) = runs.get(operation_id) {
            return token.is_cancelled().then(|| token.clone());
        }
        let token = CancellationToken::new();
        runs.insert(operation_id.to_owned(), token.clone());
        Some(token)
    }

    /// How many of the terminal's commands are running (an early Stop kept for one that has
    /// not registered yet is not one).
    pub(super) fn running(&self) -> usize {
        self.0.lock().map_or(0, |runs| runs.values().filter(|token| !token.is_cancelled()).count())
    }

    fn end(&self, operation_id: &str) {
        if let Ok(mut runs) = self.0.lock() {
            runs.remove(operation_id);
        }
    }

    /// Stop for `operation_id`. One the window asked for before its run registered (a Stop
    /// pressed the moment Run was) is registered cancelled, so that run starts stopped and runs
    /// nothing; it answers `false` then. At most [`EARLY_STOPS`] such stops are kept.
    fn stop(&self, operation_id: &str) -> bool {
        let Ok(mut runs) = self.0.lock() else { return false };
        if let Some(token) = runs.get(operation_id) {
            token.cancel();
            return true;
        }
        if runs.len() < EARLY_STOPS {
            let token = CancellationToken::new();
            token.cancel();
            runs.insert(operation_id.to_owned(), token);
        }
        false
    }

    /// Ends every command in flight (the app is closing).
    pub(crate) fn cancel_all(&self) {
        if let Ok(runs) = self.0.lock() {
            for token in runs.values() {
                token.cancel();
            }
        }
    }
}

impl Hearth {
    /// Where the computer stands.
    pub async fn computer_status(&self) -> ComputerStatusView {
        self.computer.status().await
    }

    /// Settings → Computer on or off. Turning it on needs an engine that answers; the choice is
    /// kept across restarts.
    pub async fn computer_enable(&self, enabled: bool) -> Result<ComputerStatusView> {
        // Checked, then kept, then in force: no tool can use a computer whose switch is not saved.
        if enabled {
            self.computer.engine_answers().await.map_err(unavailable)?;
        }
        let edit = self.settings.edit().await;
        let mut stored = edit.load().await?;
        stored.computer_enabled = enabled;
        edit.save(&stored).await?;
        drop(edit);
        self.computer.set_enabled(enabled);
        Ok(self.computer.status().await)
    }

    /// Creates (when missing), verifies and starts the container.
    pub async fn computer_start(&self) -> Result<ComputerStatusView> {
        self.computer.start().await.map_err(unavailable)
    }

    /// Stops the container.
    pub async fn computer_stop(&self) -> Result<ComputerStatusView> {
        self.computer.stop().await.map_err(unavailable)
    }

    /// Settings → Recreate: a new container from the spec; the workspace's files stay.
    pub async fn computer_recreate(&self) -> Result<ComputerStatusView> {
        self.computer.recreate().await.map_err(unavailable)?;
        Ok(self.computer.status().await)
    }

    /// Settings → Rebuild image: Hearth's layer made again over the base, and the container
    /// recreated from it on the next start; the workspace's files stay.
    pub async fn computer_rebuild(&self) -> Result<ComputerStatusView> {
        self.computer.rebuild_image().await.map_err(unavailable)?;
        Ok(self.computer.status().await)
    }

    /// Settings → Reset workspace (confirmed by the owner in the window): removes the container
    /// and the workspace volume; the next start creates both again.
    pub async fn computer_reset(&self) -> Result<ComputerStatusView> {
        self.computer.reset().await.map_err(unavailable)?;
        Ok(self.computer.status().await)
    }

    /// Runs a terminal command, its output sent to `output` as it arrives. The same operation
    /// id again returns the first receipt; Stop is [`Hearth::computer_run_stop`].
    pub async fn computer_run(&self, params: &ComputerRunParams, output: OutputSink) -> Result<ComputerRunResponse> {
        let cancel = self
            .screen_runs
            .begin(&params.operation_id)
            .ok_or_else(|| CoreError::Conflict(format!("{} is running already; wait for it, or press Stop.", params.operation_id)))?;
        let _registered = Registered { runs: &self.screen_runs, operation_id: &params.operation_id };
        let ctx = self.toolbox.for_owner(SCREEN, cancel).with_output(output);
        let args =
            typed::RunArgs { command: params.command.clone(), cwd: params.cwd.clone(), operation_id: params.operation_id.to_string() };
        let out = call::<typed::RunComputerCommand>(&ctx, args, StepId::Operation(params.operation_id.to_string())).await;
        answer_of(out)
    }

    /// Stop for a terminal command; `false` when it is not running.
    pub fn computer_run_stop(&self, operation_id: &str) -> bool {
        self.screen_runs.stop(operation_id)
    }

    /// A workspace folder.
    pub async fn computer_list(&self, path: &str) -> Result<WorkspaceListing> {
        self.computer.list(path, &CancellationToken::new()).await.map_err(unavailable)
    }

    /// A workspace text file, for the editor.
    pub async fn computer_read(&self, path: &str) -> Result<WorkspaceFile> {
        let path = crate::computer::paths::workspace_path(path).map_err(|why| CoreError::InvalidInput(format!("The path {why}.")))?;
        let bytes = self.computer.read_file(&path, MAX_TEXT_BYTES, &CancellationToken::new()).await.map_err(unavailable)?;
        let content = String::from_utf8(bytes)
            .map_err(|_| CoreError::InvalidInput(format!("{path} is not UTF-8 text; the editor opens text files only.")))?;
        Ok(WorkspaceFile { path, content })
    }

    /// The editor's Save, through the journal (a retried Save writes once).
    pub async fn computer_write(&self, params: &ComputerWriteParams) -> Result<()> {
        let ctx = self.toolbox.for_owner(SCREEN, CancellationToken::new());
        let args = typed::WriteArgs { path: params.path.clone(), content: params.content.clone() };
        let out = call::<typed::WriteComputerFile>(&ctx, args, StepId::Named(format!("save:{}", params.operation_id))).await;
        if out.is_error { Err(CoreError::Unavailable(error_text(&out))) } else { Ok(()) }
    }
}

/// The computer's refusals and failures, in the words they came with.
fn unavailable(err: impl std::fmt::Display) -> CoreError {
    CoreError::Unavailable(err.to_string())
}

/// The terminal's answer from the tool's output: a receipt, or why it may have run in part.
fn answer_of(out: ToolOutput) -> Result<ComputerRunResponse> {
    if out.outcome.is_some() {
        return Ok(ComputerRunResponse::InDoubt { message: error_text(&out) });
    }
    if out.is_error {
        return Err(CoreError::Unavailable(error_text(&out)));
    }
    let receipt: CommandReceipt = serde_json::from_str(&out.content)?;
    Ok(ComputerRunResponse::Finished { receipt })
}

fn error_text(out: &ToolOutput) -> String {
    serde_json::from_str::<serde_json::Value>(&out.content)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
        .unwrap_or_else(|| out.content.clone())
}
