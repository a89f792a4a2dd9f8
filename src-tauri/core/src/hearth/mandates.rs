//! Standing orders: the owner grants, lists and revokes a task's or a schedule's mandate.
//!
//! A revoke stops what the mandate allowed that is still running: each running task it covers
//! is paused through the task engine's own control, which fires the run's Stop before the
//! pause commits (and withdraws what the run had awaiting review).

use hearth_protocol::ids::TaskId;
use hearth_protocol::mandates::{
    Mandate, MandateGrant, MandateGrantParams, MandateHolder, MandateListParams, MandateListResponse, MandateRevokeParams,
};
use hearth_protocol::tasks::{TaskControl, TaskControlParams, TaskStatus};

use super::Hearth;
use crate::error::{CoreError, Result};
use crate::store::now_ms;

/// How many times a revoke tries to pause a task whose run changed under it.
const PAUSE_TRIES: usize = 3;

impl Hearth {
    /// Every standing order, or one task's or schedule's.
    pub async fn mandate_list(&self, params: &MandateListParams) -> Result<MandateListResponse> {
        params.validate()?;
        Ok(MandateListResponse { mandates: self.store.mandates(params.holder.as_ref()).await? })
    }

    /// Grants a standing order to a task or a schedule that exists. A mail grant's recipients
    /// are normalized as a draft's are (so the check at the gate compares like with like).
    pub async fn mandate_grant(&self, params: &MandateGrantParams) -> Result<Mandate> {
        let mut params = params.clone();
        if let MandateGrant::SendMail { recipients } = &mut params.grant {
            for address in recipients.iter_mut() {
                *address = crate::approvals::normalize_address(address).map_err(CoreError::InvalidInput)?;
            }
        }
        let params = &params;
        params.validate()?;
        if let Some(recipients) = params.grant.recipients() {
            hearth_protocol::mandates::check_recipients(recipients)?;
        }
        let exists = match &params.holder {
            MandateHolder::Task { task_id } => self.store.get_task(task_id).await?.is_some(),
            MandateHolder::Schedule { schedule_id } => self.store.get_schedule(schedule_id).await?.is_some(),
        };
        if !exists {
            return Err(CoreError::NotFound(format!(
                "There is no {} {}; it may have been deleted. Grant the standing order from its page.",
                params.holder.kind_str(),
                params.holder.id()
            )));
        }
        self.store.grant_mandate(params, now_ms()).await.map_err(Into::into)
    }

    /// Revokes a standing order at once, and stops the runs it covers that are running.
    pub async fn mandate_revoke(&self, params: &MandateRevokeParams) -> Result<Mandate> {
        params.validate()?;
        let mandate =
            self.store.revoke_mandate(&params.mandate_id, now_ms()).await?.ok_or_else(|| {
                CoreError::NotFound(format!("There is no standing order {}; it may have been removed.", params.mandate_id))
            })?;
        // Revoked first: from here no call counts a use of it. Then every run it covered that
        // is still running stops.
        for _ in 0..PAUSE_TRIES {
            let running = self.store.running_tasks_of(&mandate.holder).await?;
            if running.is_empty() {
                break;
            }
            for (task_id, attempts) in running {
                let pause = TaskControlParams {
                    task_id: TaskId::trusted(task_id.as_str()),
                    expected_status: TaskStatus::Running,
                    expected_attempts: attempts,
                    control: TaskControl::Pause,
                };
                if let Err(err) = self.tasks.control(&pause).await {
                    // It changed meanwhile (its run ended, or a new one began): looked at again.
                    tracing::info!(task_id, error = %err, "a task covered by a revoked standing order changed while it was stopped");
                }
            }
        }
        Ok(mandate)
    }
}
