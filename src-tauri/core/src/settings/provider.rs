//! From stored settings to a provider, and the "Test connection" button.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use hearth_protocol::settings::{ConnectionTestResponse, LocalModelInfo, ProviderKind};
use tokio_util::sync::CancellationToken;

use super::StoredModel;
use crate::error::{CoreError, Result};
use crate::local_model::{FileStamp, LocalModel, LocalModelConfig, WorkerCommand};
use crate::providers::{Anthropic, Message, ModelEvent, ModelProvider, ModelRequest, OpenAiChat, OpenAiResponses, ProviderConfig};
use crate::secret::SecretString;

/// How long "Test connection" waits for the first sign of an answer.
const TEST_TIMEOUT: Duration = Duration::from_secs(20);

/// The provider the stored settings describe, and the model on this computer when it is one
/// (for what it is doing). A local model's file is checked (and read by a worker) here, so a
/// file that cannot run is refused before it is stored. `permitted_file`: a local model's file
/// as its permissions to act were given to it (`LocalModelConfig::permitted_file`).
pub async fn build_provider(
    model: &StoredModel,
    api_key: Option<SecretString>,
    local_worker: Option<&WorkerCommand>,
    permitted_file: Option<FileStamp>,
) -> Result<(Arc<dyn ModelProvider>, Option<LocalModel>)> {
    let config = ProviderConfig::new(model.kind.label(), model.base_url.trim(), api_key);
    let unavailable = |err: crate::providers::ProviderError| CoreError::InvalidInput(err.to_string());
    match model.kind {
        ProviderKind::OpenaiChat => Ok((Arc::new(OpenAiChat::new(&config).map_err(unavailable)?), None)),
        ProviderKind::OpenaiResponses => Ok((Arc::new(OpenAiResponses::new(&config).map_err(unavailable)?), None)),
        ProviderKind::Anthropic => Ok((Arc::new(Anthropic::new(&config).map_err(unavailable)?), None)),
        ProviderKind::Local => {
            let worker = local_worker.ok_or_else(no_engine)?;
            let mut config = LocalModelConfig::new(worker.clone(), model.base_url.trim().into());
            config.idle_unload = unload_after(model.unload_after_minutes);
            config.permitted_file = permitted_file;
            let local = LocalModel::open(config).await.map_err(unavailable)?;
            Ok((Arc::new(local.clone()), Some(local)))
        }
    }
}

/// The owner's idle minutes as the engine's unload time: 0 keeps the model loaded.
fn unload_after(minutes: u32) -> Option<Duration> {
    (minutes > 0).then(|| Duration::from_secs(u64::from(minutes) * 60))
}

fn no_engine() -> CoreError {
    CoreError::InvalidInput("This build of Hearth has no built-in model engine; choose a model server or a provider instead.".into())
}

/// What Settings shows of a model file the owner is choosing.
pub async fn inspect_local_model(path: &str, local_worker: Option<&WorkerCommand>) -> Result<LocalModelInfo> {
    let worker = local_worker.ok_or_else(no_engine)?;
    let config = LocalModelConfig::new(worker.clone(), path.trim().into());
    let info = crate::local_model::inspect(&config).await.map_err(|err| CoreError::InvalidInput(err.to_string()))?;
    let source = info.chat_template.as_deref().unwrap_or_default();
    Ok(LocalModelInfo {
        chat_template: source.lines().find(|l| !l.trim().is_empty()).unwrap_or_default().chars().take(200).collect(),
        name: info.name,
        architecture: info.architecture,
        file_bytes: info.file_bytes,
        parameters: info.parameters,
        trained_context: info.trained_context,
        context: config.context,
        memory_bytes: info.memory_bytes,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_minutes_keeps_the_model_loaded_and_others_are_minutes() {
        assert_eq!(unload_after(0), None);
        assert_eq!(unload_after(1), Some(Duration::from_secs(60)));
        assert_eq!(unload_after(hearth_protocol::settings::MAX_UNLOAD_MINUTES), Some(Duration::from_secs(86_400)));
    }
}
