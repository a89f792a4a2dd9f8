//! Who answers the chat, and who works on open-ended tasks: the sample agent, a model, or an
//! external AG-UI agent — swapped while Hearth runs, always through the same tools.

use std::sync::{Arc, PoisonError};

use hearth_protocol::tasks::TaskKind;
use tokio_util::sync::CancellationToken;

use super::Hearth;
use crate::agent::harness::{BearerToken, HarnessAgent, HarnessConfig};
use crate::agent::{Agent, ModelAgent, ModelTaskHandler, NoModelHandler, TaskToolsFactory, ToolContextFactory};
use crate::error::{CoreError, Result};
use crate::providers::ModelProvider;
use crate::tools::{ToolContext, tool_specs};

impl Hearth {
    /// The agent answering now.
    pub(crate) fn current_agent(&self) -> Arc<dyn Agent> {
        self.agent.read().unwrap_or_else(PoisonError::into_inner).1.clone()
    }

    /// `sample`, `model` or `harness`.
    pub fn agent_mode(&self) -> &'static str {
        self.agent.read().unwrap_or_else(PoisonError::into_inner).0
    }

    fn set_agent(&self, mode: &'static str, agent: Arc<dyn Agent>) {
        *self.agent.write().unwrap_or_else(PoisonError::into_inner) = (mode, agent);
    }

    /// This Hearth answering with `model` from `provider`. Tools run through the same
    /// registry, journal and approval gate; agent and plan tasks work with the model too.
    pub fn with_model(self, provider: Arc<dyn ModelProvider>, model: &str) -> Self {
        self.use_model(provider, model);
        self
    }

    /// Switches to `model` from `provider`.
    pub fn use_model(&self, provider: Arc<dyn ModelProvider>, model: &str) {
        self.set_agent("model", Arc::new(ModelAgent::new(provider.clone(), model, self.chat_tools())));
        let tools = self.clone();
        let task_tools: TaskToolsFactory = Arc::new(move |ctx| tools.tool_context(Some(ctx), None));
        let handler = ModelTaskHandler::new(provider, model, task_tools);
        self.tasks.register(TaskKind::Agent, handler.clone());
        self.tasks.register(TaskKind::Plan, handler);
    }

    /// Tool contexts for chat runs: this Hearth's tools, the run's thread and cancellation.
    fn chat_tools(&self) -> ToolContextFactory {
        let tools = self.clone();
        Arc::new(move |thread_id: &str, cancel: CancellationToken| ToolContext {
            cancel,
            ..tools.tool_context(None, Some(thread_id.to_owned()))
        })
    }

    /// Switches to the offline sample agent; open-ended tasks wait for a model.
    pub fn use_sample(&self) {
        self.set_agent("sample", self.sample.clone());
        self.tasks.register(TaskKind::Agent, NoModelHandler);
        self.tasks.register(TaskKind::Plan, NoModelHandler);
    }

    /// Switches to the external AG-UI agent at `url`. It gets Hearth's tools and can call
    /// them; it can never approve anything.
    pub fn use_harness(&self, url: &str, token: Option<String>) -> Result<()> {
        let mut config = HarnessConfig::new(url, tool_specs());
        config.bearer_token = token.map(BearerToken::new);
        let agent = HarnessAgent::new(config, self.chat_tools()).map_err(|err| CoreError::InvalidInput(err.to_string()))?;
        self.set_agent("harness", Arc::new(agent));
        self.tasks.register(TaskKind::Agent, NoModelHandler);
        self.tasks.register(TaskKind::Plan, NoModelHandler);
        Ok(())
    }
}
