//! computer_status, start_computer, stop_computer and run_computer_command. Starting, stopping
//! and commands change the container, so they are effects: dispatch runs them inside the
//! journal. A command is keyed by the operation id the model gives it, so the same id asked
//! again returns the first receipt without running anything, and a changed command under it
//! is a conflict.

use hearth_protocol::ToolName;
use hearth_protocol::computer::CommandReceipt;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::computer::{CommandError, CommandRequest, ComputerError};
use crate::journal::EffectError;
use crate::tools::ToolOutput;
use crate::tools::context::{StepId, ToolContext};
use crate::tools::registry::{DirectTool, EffectTool, Tool};

/// The longest operation id.
pub const MAX_OPERATION_ID: usize = 120;

/// No arguments.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoArgs {}

/// `computer_status`.
pub(crate) struct ComputerStatus;

impl Tool for ComputerStatus {
    const NAME: ToolName = ToolName::ComputerStatus;
    const DESCRIPTION: &'static str =
        "Whether the Linux computer (an isolated container, no network) is available and running, with its image.";
    type Args = NoArgs;
}

impl DirectTool for ComputerStatus {
    async fn run(ctx: &ToolContext, _step: &StepId, _args: NoArgs) -> ToolOutput {
        match serde_json::to_value(ctx.computer.status().await) {
            Ok(view) => ToolOutput::ok(&view),
            Err(err) => ToolOutput::error(err.to_string()),
        }
    }
}

/// `start_computer`.
pub(crate) struct StartComputer;

impl Tool for StartComputer {
    const NAME: ToolName = ToolName::StartComputer;
    const DESCRIPTION: &'static str = "Start the Linux computer (creates it the first time). Commands start it too.";
    type Args = NoArgs;
}

impl EffectTool for StartComputer {
    fn action(_args: &NoArgs) -> Result<Value, ToolOutput> {
        Ok(json!({ "start": true }))
    }

    async fn perform(ctx: ToolContext, _args: NoArgs, _cancel: CancellationToken) -> Result<Value, EffectError> {
        let view = ctx.computer.start().await.map_err(not_done)?;
        serde_json::to_value(view).map_err(|e| EffectError::Uncertain(e.to_string()))
    }
}

/// `stop_computer`.
pub(crate) struct StopComputer;

impl Tool for StopComputer {
    const NAME: ToolName = ToolName::StopComputer;
    const DESCRIPTION: &'static str = "Stop the Linux computer. Files in /workspace stay.";
    type Args = NoArgs;
}

impl EffectTool for StopComputer {
    fn action(_args: &NoArgs) -> Result<Value, ToolOutput> {
        Ok(json!({ "stop": true }))
    }

    async fn perform(ctx: ToolContext, _args: NoArgs, _cancel: CancellationToken) -> Result<Value, EffectError> {
        let view = ctx.computer.stop().await.map_err(not_done)?;
        serde_json::to_value(view).map_err(|e| EffectError::Uncertain(e.to_string()))
    }
}

/// `run_computer_command`'s arguments.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RunArgs {
    /// The bash command line (1 to 16,000 characters). It runs as an unprivileged user with no
    /// network, for at most 30 seconds.
    pub command: String,
    /// The working directory, inside /workspace (default /workspace).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Your id for this operation (1 to 120 letters, digits, `-`, `_`, `.`, `:`). Asking again
    /// with the same id returns the first result without running the command again; use a
    /// new id for a new command.
    pub operation_id: String,
}

/// `run_computer_command`.
pub(crate) struct RunComputerCommand;

impl Tool for RunComputerCommand {
    const NAME: ToolName = ToolName::RunComputerCommand;
    const DESCRIPTION: &'static str = "Run a bash command in the Linux computer (Debian with python3 and git, no network; \
                                       files in /workspace persist). Returns exit code, stdout and stderr (128 KiB at most).";
    type Args = RunArgs;
}

impl EffectTool for RunComputerCommand {
    fn operation_id(args: &RunArgs) -> Option<&str> {
        Some(&args.operation_id)
    }

    fn action(args: &RunArgs) -> Result<Value, ToolOutput> {
        let id = &args.operation_id;
        let id_ok = (1..=MAX_OPERATION_ID).contains(&id.len())
            && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'));
        if !id_ok {
            return Err(ToolOutput::error(format!(
                "`operationId` must be 1 to {MAX_OPERATION_ID} letters, digits, `-`, `_`, `.` or `:`."
            )));
        }
        let request = CommandRequest::new(&args.command, args.cwd.as_deref()).map_err(ToolOutput::error)?;
        Ok(json!({ "command": request.command(), "cwd": request.cwd() }))
    }

    async fn perform(ctx: ToolContext, args: RunArgs, cancel: CancellationToken) -> Result<Value, EffectError> {
        let request = CommandRequest::new(&args.command, args.cwd.as_deref()).map_err(EffectError::Failed)?;
        match ctx.computer.run(&request, &cancel).await {
            Ok(receipt) => receipt_value(&receipt),
            Err(CommandError::NotRun(err)) => Err(not_done(err)),
            Err(CommandError::MayHaveRun { receipt }) => {
                let note = receipt.note.clone().unwrap_or_default();
                let seen = receipt.stdout.len() + receipt.stderr.len();
                Err(EffectError::Uncertain(format!("the command {note} ({seen} bytes of output were read)")))
            }
        }
    }
}

fn receipt_value(receipt: &CommandReceipt) -> Result<Value, EffectError> {
    serde_json::to_value(receipt).map_err(|e| EffectError::Uncertain(e.to_string()))
}

/// Refused or failed before anything changed in the container.
fn not_done(err: ComputerError) -> EffectError {
    EffectError::Failed(err.to_string())
}
