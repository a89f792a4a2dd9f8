//! Writes the model provider's tries to the run's history as the agent reads its stream: one
//! row per try (never per token), so the timeline can list every retry and its status.

use tokio::sync::mpsc::UnboundedReceiver;

use crate::providers::ProviderTry;
use crate::store::Store;
use crate::store::failures::StoredTry;

/// Records every try reported so far. Called after each item of the stream: a try is reported
/// before the item it led to, so the tries of a failed request are stored before its error is
/// shown. A write that fails is logged and skipped — the reply matters more than its history.
pub(crate) async fn record_tries(store: &Store, run_id: &str, tries: &mut UnboundedReceiver<ProviderTry>) {
    while let Ok(tried) = tries.try_recv() {
        let stored = StoredTry {
            provider: tried.provider,
            try_number: tried.retry.saturating_add(1),
            retry: tried.retry,
            outcome: tried.outcome,
            at: tried.at,
        };
        if let Err(err) = store.record_provider_try(run_id, &stored).await {
            tracing::warn!(run_id, error = %err, "could not record a model provider's try");
        }
    }
}
