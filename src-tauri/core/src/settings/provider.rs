//! From stored settings to a provider, and the "Test connection" button.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use hearth_protocol::settings::{ConnectionTestResponse, ProviderKind};
use tokio_util::sync::CancellationToken;

use super::StoredModel;
use crate::error::{CoreError, Result};
use crate::providers::{Anthropic, Message, ModelEvent, ModelProvider, ModelRequest, OpenAiChat, OpenAiResponses, ProviderConfig};
use crate::secret::SecretString;

/// How long "Test connection" waits for the first sign of an answer.
const TEST_TIMEOUT: Duration = Duration::from_secs(20);

/// The provider the stored settings describe.
pub fn build_provider(model: &StoredModel, api_key: Option<SecretString>) -> Result<Arc<dyn ModelProvider>> {
    let config = ProviderConfig::new(model.kind.label(), model.base_url.trim(), api_key);
    let unavailable = |err: crate::providers::ProviderError| CoreError::InvalidInput(err.to_string());
    match model.kind {
        ProviderKind::OpenaiChat => Ok(Arc::new(OpenAiChat::new(&config).map_err(unavailable)?)),
        ProviderKind::OpenaiResponses => Ok(Arc::new(OpenAiResponses::new(&config).map_err(unavailable)?)),
        ProviderKind::Anthropic => Ok(Arc::new(Anthropic::new(&config).map_err(unavailable)?)),
    }
}

/// Asks the model for a one-word answer and reports the first sign of life, or the error.
pub async fn test_provider(provider: &dyn ModelProvider, model: &str) -> ConnectionTestResponse {
    let request = ModelRequest {
        model: model.to_owned(),
        system: None,
        messages: vec![Message::User { text: "Reply with the single word OK.".into() }],
        tools: vec![],
        max_tokens: Some(16),
    };
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let first = tokio::time::timeout(TEST_TIMEOUT, async {
        let mut stream = provider.stream(&request, &cancel);
        stream.next().await
    })
    .await;
    cancel.cancel();
    match first {
        Ok(Some(Ok(ModelEvent::TextDelta(_) | ModelEvent::ReasoningDelta(_) | ModelEvent::Finished { .. }))) | Ok(Some(Ok(_))) => {
            ConnectionTestResponse { ok: true, message: format!("Connected: {model} answered in {} ms.", started.elapsed().as_millis()) }
        }
        Ok(Some(Err(err))) => ConnectionTestResponse { ok: false, message: err.to_string() },
        Ok(None) => ConnectionTestResponse { ok: false, message: "The provider closed the stream without answering.".into() },
        Err(_) => ConnectionTestResponse {
            ok: false,
            message: format!("No answer within {} s. Check the base URL and that the server is running.", TEST_TIMEOUT.as_secs()),
        },
    }
}
