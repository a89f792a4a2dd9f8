//! Failures the owner can follow: the newest failures, and one failure's (or run's) timeline
//! with its redacted report.

use hearth_protocol::failures::{
    FailureKind, FailureListResponse, FailureTimeline, FailureTimelineParams, MAX_LISTED_FAILURES, TimelineKey,
};

use super::Hearth;
use crate::error::{CoreError, Result};
use crate::secret::SecretString;

impl Hearth {
    /// The newest failures, newest first.
    pub async fn failure_list(&self) -> Result<FailureListResponse> {
        Ok(FailureListResponse { failures: self.store.failures(MAX_LISTED_FAILURES).await? })
    }

    /// The timeline of the run a failure id (or a run id) names, with the report "Copy details"
    /// gives: every secret the vault holds is taken out of it, beside what looks like one.
    pub async fn failure_timeline(&self, params: &FailureTimelineParams) -> Result<FailureTimeline> {
        let secrets = self.known_secrets().await?;
        let (run_id, failure) = match params.key()? {
            TimelineKey::Failure(id) => match self.store.failure(&id).await? {
                Some(failure) => match (failure.kind, failure.run_id.clone()) {
                    (FailureKind::Chat | FailureKind::Task, Some(run_id)) | (FailureKind::Effect, Some(run_id)) => {
                        (run_id.into_string(), Some(failure))
                    }
                    // An approved action, or an effect whose run is not kept: its own timeline.
                    (FailureKind::Chat | FailureKind::Task | FailureKind::Effect, None) | (FailureKind::Approval, _) => {
                        let Some(subject) = self.store.effect_subject(&id).await? else {
                            return Err(CoreError::NotFound(format!("No run or effect is kept for failure {id}.")));
                        };
                        return crate::failures::effect_timeline(&self.store, failure, &subject, &secrets).await;
                    }
                },
                None => {
                    return Err(CoreError::NotFound(format!(
                        "No failure {id} is kept (the newest 500 are). Check the letters, or open Activity → Failures."
                    )));
                }
            },
            TimelineKey::Run(run_id) => {
                let failure = self.store.failure_of_run(&run_id).await?;
                (run_id.into_string(), failure)
            }
        };
        crate::failures::run_timeline(&self.store, &run_id, failure, &secrets).await
    }

    /// Every value the vault holds: the report must contain none of them.
    async fn known_secrets(&self) -> Result<Vec<SecretString>> {
        let vault = self.settings.vault();
        let mut secrets = Vec::new();
        for name in vault.names().await? {
            if let Some(secret) = vault.get(&name).await? {
                secrets.push(secret);
            }
        }
        Ok(secrets)
    }
}
