//! Serial execution of a batch of tool calls.

use hearth_protocol::{ToolName, ToolRef};

use super::{ToolCall, ToolContext, ToolHandlerFn, ToolOutput};

/// What calls after an outcome-setting call return.
pub const PAUSED_RESULT: &str = "paused — the task is waiting or finished; this call was not run";

/// Runs `calls` one at a time, in order, each after the previous finished. After a call that
/// settles the run's outcome, or after Stop, the rest return [`PAUSED_RESULT`] and do nothing.
pub async fn run_serially(ctx: &ToolContext, calls: &[ToolCall], handlers: &[ToolHandlerFn]) -> Vec<(String, ToolOutput)> {
    let mut outputs = Vec::with_capacity(calls.len());
    let mut settled = false;
    for call in calls {
        if settled || ctx.cancel.is_cancelled() {
            outputs.push((call.id.clone(), ToolOutput::error(PAUSED_RESULT)));
            continue;
        }
        let output = run_one(ctx, call, handlers).await;
        settled = output.outcome.is_some();
        outputs.push((call.id.clone(), output));
    }
    outputs
}

async fn run_one(ctx: &ToolContext, call: &ToolCall, handlers: &[ToolHandlerFn]) -> ToolOutput {
    let ToolRef::Known(tool) = ToolRef::parse(&call.name) else {
        return ToolOutput::error(format!("There is no tool named {:?}. Use one of the tools you were given.", call.name));
    };
    let args = match parse_arguments(tool, &call.arguments) {
        Ok(args) => args,
        Err(message) => return ToolOutput::error(message),
    };
    if let Err(refused) = super::specs::check_shape(tool, &args) {
        return refused;
    }
    for handler in handlers {
        if let Some(running) = handler(tool, ctx.clone(), call.clone(), args.clone()) {
            return running.await;
        }
    }
    ToolOutput::error(format!("{tool} is not available here yet."))
}

/// Arguments must be a JSON object; an empty string means `{}`.
fn parse_arguments(tool: ToolName, text: &str) -> Result<serde_json::Value, String> {
    if text.trim().is_empty() {
        return Ok(serde_json::json!({}));
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(value @ serde_json::Value::Object(_)) => Ok(value),
        Ok(_) => Err(format!("The arguments for {tool} must be a JSON object.")),
        Err(err) => Err(format!("The arguments for {tool} are not valid JSON ({err}). Send them again as a JSON object.")),
    }
}
