//! Who answers the chat, and who works on open-ended tasks: the sample agent, a model, or an
//! external AG-UI agent — swapped while Hearth runs, always through the same tools.

use std::sync::{Arc, PoisonError};

use hearth_protocol::settings::AgentMode;
use hearth_protocol::tasks::TaskKind;
use tokio_util::sync::CancellationToken;

use super::Hearth;
use crate::agent::harness::{HarnessAgent, HarnessConfig};
use crate::secret::{BearerToken, SecretString};
use hearth_protocol::approvals::ProposalOrigin;

use crate::agent::{Agent, ModelAgent, ModelTaskHandler, NoModelHandler, ToolContextFactory};
use crate::error::{CoreError, Result};
use crate::providers::ModelProvider;
use crate::runs::RunRegistry;
use crate::store::threads::RunOrigin;
use crate::tools::{ToolContext, Toolbox, Vision, tool_specs};

/// Whose agent decides the tool calls of a chat run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Driver {
    /// Hearth's own (sample or model): the run's origin says who is asking.
    Hearth,
    /// An external AG-UI agent.
    External,
}

impl Hearth {
    /// The agent answering now.
    pub(crate) fn current_agent(&self) -> Arc<dyn Agent> {
        self.agent.read().unwrap_or_else(PoisonError::into_inner).1.clone()
    }

    /// Who answers the chat now.
    pub fn agent_mode(&self) -> AgentMode {
        self.agent.read().unwrap_or_else(PoisonError::into_inner).0
    }

    fn set_agent(&self, mode: AgentMode, agent: Arc<dyn Agent>) {
        *self.agent.write().unwrap_or_else(PoisonError::into_inner) = (mode, agent);
    }

    /// This Hearth answering with `model` from `provider`. Tools run through the same
    /// registry, journal and approval gate; agent and plan tasks work with the model too.
    pub fn with_model(self, provider: Arc<dyn ModelProvider>, model: &str) -> Self {
        self.use_model(provider, model, Vision::TextOnly);
        self
    }

    /// [`Hearth::with_model`] for a model that sees as `vision`.
    pub fn with_model_seeing(self, provider: Arc<dyn ModelProvider>, model: &str, vision: Vision) -> Self {
        self.use_model(provider, model, vision);
        self
    }

    /// Switches to `model` from `provider`, which sees as `vision` in chat (tasks stay text:
    /// their conversations are checkpointed, and a picture there would be stored).
    pub fn use_model(&self, provider: Arc<dyn ModelProvider>, model: &str, vision: Vision) {
        self.use_model_offering(provider, model, vision, None);
    }

    /// [`Self::use_model`], offering the model only the tools `offer` allows (a local model's
    /// tested families).
    pub fn use_model_offering(
        &self,
        provider: Arc<dyn ModelProvider>,
        model: &str,
        vision: Vision,
        offer: Option<crate::agent::ToolOffer>,
    ) {
        let agent = ModelAgent::new(provider.clone(), model, self.chat_tools(Driver::Hearth)).with_vision(vision).with_offer(offer.clone());
        self.set_agent(AgentMode::Model, Arc::new(agent));
        let handler =
            ModelTaskHandler::new(provider, model, self.toolbox.clone()).with_run_limit(self.config.task_run_limit).with_offer(offer);
        self.tasks.register(TaskKind::Agent, handler.clone());
        self.tasks.register(TaskKind::Plan, handler);
    }

    /// Tool contexts for chat runs: this Hearth's tools, the run's thread, id and
    /// cancellation, and who is asking — the owner in the window, a client of Hearth's AG-UI
    /// endpoint, or the external agent — which every proposal records.
    pub(crate) fn chat_tools(&self, driver: Driver) -> ToolContextFactory {
        chat_tool_factory(self.toolbox.clone(), self.runs.clone(), driver)
    }

    /// Switches to the offline sample agent; open-ended tasks wait for a model.
    pub fn use_sample(&self) {
        self.set_agent(AgentMode::Sample, self.sample.clone());
        self.tasks.register(TaskKind::Agent, NoModelHandler);
        self.tasks.register(TaskKind::Plan, NoModelHandler);
    }

    /// Switches to the external AG-UI agent at `url`. It gets Hearth's tools and can call
    /// them; it can never approve anything.
    pub fn use_harness(&self, url: &str, token: Option<SecretString>) -> Result<()> {
        let mut config = HarnessConfig::new(url, tool_specs(Vision::TextOnly));
        config.bearer_token = token.map(BearerToken::from);
        let agent = HarnessAgent::new(config, self.chat_tools(Driver::External)).map_err(|err| CoreError::InvalidInput(err.to_string()))?;
        self.set_agent(AgentMode::Harness, Arc::new(agent));
        self.tasks.register(TaskKind::Agent, NoModelHandler);
        self.tasks.register(TaskKind::Plan, NoModelHandler);
        Ok(())
    }
}

/// Tool contexts for the chat runs of `runs`, driven by `driver`.
pub(crate) fn chat_tool_factory(toolbox: Toolbox, runs: RunRegistry, driver: Driver) -> ToolContextFactory {
    Arc::new(move |thread_id: &str, run_id: &str, cancel: CancellationToken| -> ToolContext {
        // Who started the run comes first: an endpoint client's run stays the endpoint's in
        // harness mode too (its form policy and its cards' origin), whoever then answers it.
        let origin = match (runs.origin(run_id), driver) {
            (Some(RunOrigin::AguiEndpoint), Driver::External | Driver::Hearth) => ProposalOrigin::AguiEndpoint,
            (Some(RunOrigin::PairedDevice), Driver::External | Driver::Hearth) => ProposalOrigin::PairedDevice,
            (Some(RunOrigin::Window) | None, Driver::External) => ProposalOrigin::ExternalAgent,
            (Some(RunOrigin::Window) | None, Driver::Hearth) => ProposalOrigin::OwnerChat,
        };
        toolbox.for_chat(thread_id, run_id, origin, cancel)
    })
}
