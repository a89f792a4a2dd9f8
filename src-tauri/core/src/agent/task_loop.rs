//! The task loop for open-ended tasks (agent and plan kinds) over a model provider: at most
//! [`MAX_TASK_STEPS`] tool rounds and [`MAX_TASK_RUN`] per run, task tools included. The
//! outcome comes from the tools (ask_user, a prepare tool, finish_task) or from a final answer.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use hearth_protocol::tasks::TaskEventKind;
use serde_json::Value;

use super::model::SYSTEM_PROMPT;
use crate::providers::{Message, ModelEvent, ModelProvider, ModelRequest, ProviderError, ToolCall, ToolSpec};
use crate::tasks::{BoxTaskFuture, TaskContext, TaskHandler, TaskOutcome};
use crate::tools::{ALL_HANDLERS, RunOutcome, ToolContext, run_serially, tool_specs};

/// Tool rounds per run.
pub const MAX_TASK_STEPS: usize = 16;
/// Wall-clock limit per run.
pub const MAX_TASK_RUN: Duration = Duration::from_secs(5 * 60);

/// Builds the tool context for a task run.
pub type TaskToolsFactory = Arc<dyn Fn(TaskContext) -> ToolContext + Send + Sync>;

/// Runs agent and plan tasks with a model.
#[derive(Clone)]
pub struct ModelTaskHandler {
    provider: Arc<dyn ModelProvider>,
    model: String,
    tools: TaskToolsFactory,
}

impl ModelTaskHandler {
    /// Works with `model` from `provider`; tools run in contexts from `tools`.
    pub fn new(provider: Arc<dyn ModelProvider>, model: impl Into<String>, tools: TaskToolsFactory) -> Self {
        Self { provider, model: model.into(), tools }
    }
}

impl TaskHandler for ModelTaskHandler {
    fn run(&self, ctx: TaskContext) -> BoxTaskFuture {
        let this = self.clone();
        Box::pin(async move {
            match tokio::time::timeout(MAX_TASK_RUN, this.work(&ctx)).await {
                Ok(outcome) => outcome,
                Err(_) => TaskOutcome::WaitingInput(
                    "This run reached its 5-minute limit. Say continue to give it another run.".into(),
                ),
            }
        })
    }
}

impl ModelTaskHandler {
    async fn work(&self, ctx: &TaskContext) -> TaskOutcome {
        let task = ctx.task();
        let text = |key: &str| task.input.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let mut brief = format!("Task: {}\n\n{}", task.title, text("instructions"));
        if let Ok(Some(current)) = ctx.task_store().get_task(&task.id).await
            && let Some(answer) = current.state.get("answer").and_then(Value::as_str)
        {
            brief.push_str(&format!("\n\nThe owner answered your last question: {answer}"));
        }
        let mut request = ModelRequest {
            model: self.model.clone(),
            system: Some(format!("{SYSTEM_PROMPT}\nYou are working on a background task. End it with finish_task.")),
            messages: vec![Message::User { text: brief }],
            tools: tool_specs()
                .into_iter()
                .map(|t| ToolSpec { name: t.name, description: t.description, parameters: t.parameters })
                .collect(),
            max_tokens: None,
        };
        let tools = (self.tools)(ctx.clone());
        for _ in 0..MAX_TASK_STEPS {
            if ctx.guard().await.is_err() {
                return TaskOutcome::Stopped;
            }
            let (text, calls) = match self.turn(&request, ctx).await {
                Ok(answer) => answer,
                Err(ProviderError::Cancelled) => return TaskOutcome::Stopped,
                Err(err) => return TaskOutcome::Failed(err.to_string()),
            };
            if calls.is_empty() {
                return TaskOutcome::Succeeded(if text.trim().is_empty() { "Done.".into() } else { text });
            }
            let batch: Vec<crate::tools::ToolCall> = calls
                .iter()
                .map(|c| crate::tools::ToolCall { id: c.id.clone(), name: c.name.clone(), arguments: c.arguments.clone() })
                .collect();
            let outputs = run_serially(&tools, &batch, ALL_HANDLERS).await;
            let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
            if ctx.event(TaskEventKind::Observation, &format!("Ran {}", names.join(", "))).await.is_err() {
                return TaskOutcome::Stopped;
            }
            request.messages.push(Message::Assistant { text, tool_calls: calls });
            let mut outcome = None;
            for (call_id, output) in outputs {
                outcome = outcome.or(output.outcome.clone());
                request.messages.push(Message::ToolResult { call_id, content: output.content, is_error: output.is_error });
            }
            match outcome {
                Some(RunOutcome::WaitingInput(question)) => return TaskOutcome::WaitingInput(question),
                Some(RunOutcome::WaitingApproval(proposal)) => return TaskOutcome::WaitingApproval(proposal),
                Some(RunOutcome::Finished(result)) => return TaskOutcome::Succeeded(result),
                None => {}
            }
        }
        TaskOutcome::WaitingInput(format!(
            "I worked through {MAX_TASK_STEPS} steps in this run. Say continue and I'll go on."
        ))
    }

    /// One model answer: its text and the tool calls it made.
    async fn turn(&self, request: &ModelRequest, ctx: &TaskContext) -> Result<(String, Vec<ToolCall>), ProviderError> {
        let mut stream = self.provider.stream(request, ctx.cancel_token());
        let (mut text, mut calls) = (String::new(), Vec::<ToolCall>::new());
        while let Some(event) = stream.next().await {
            match event? {
                ModelEvent::TextDelta(delta) => text.push_str(&delta),
                ModelEvent::ToolCallStart { id, name } => calls.push(ToolCall { id, name, arguments: String::new() }),
                ModelEvent::ToolCallArgs { id, delta } => {
                    if let Some(call) = calls.iter_mut().find(|c| c.id == id) {
                        call.arguments.push_str(&delta);
                    }
                }
                ModelEvent::ReasoningDelta(_) | ModelEvent::ToolCallEnd { .. } | ModelEvent::Finished { .. } => {}
            }
        }
        Ok((text, calls))
    }
}
