//! Preparing proposals and deciding them.

use std::sync::Arc;
use std::time::Duration;

use hearth_protocol::approvals::{
    ApprovalDecideParams, Decision, ProposalDraft, ProposalStatus, ProposalView,
};
use tokio_util::sync::CancellationToken;

use super::hash::proposal_hash;
use crate::error::{CoreError, Result};
use crate::store::proposals::{InsertOutcome, ProposalRow};
use crate::store::{Store, now_ms};
use crate::tasks::TaskEngine;
use crate::workspace::{ExecuteError, Workspace};

/// What the owner is told when the displayed draft is not the stored one.
pub const CHANGED_MESSAGE: &str = "This proposal changed. Open its latest review.";

struct Inner {
    store: Store,
    workspace: Arc<dyn Workspace>,
    tasks: TaskEngine,
    ttl: Duration,
    stopping: CancellationToken,
}

/// The approval gate. Cheap to clone.
#[derive(Clone)]
pub struct ApprovalGate {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ApprovalGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalGate").field("ttl", &self.inner.ttl).finish_non_exhaustive()
    }
}

impl ApprovalGate {
    /// A gate over `store` acting through `workspace`; proposals live `ttl`.
    pub fn new(store: Store, workspace: Arc<dyn Workspace>, tasks: TaskEngine, ttl: Duration) -> Self {
        let gate = Self { inner: Arc::new(Inner { store, workspace, tasks, ttl, stopping: CancellationToken::new() }) };
        let on_cancel = gate.clone();
        gate.inner.tasks.on_cancel(Arc::new(move |task| {
            let gate = on_cancel.clone();
            Box::pin(async move {
                // The claim also requires a live task; this makes the card say so at once.
                if let Err(err) = gate.inner.store.deny_task_proposals(&task.id).await {
                    tracing::error!(task_id = task.id, error = %err, "could not deny the proposals of a cancelled task");
                }
            })
        }));
        gate
    }

    /// The workspace proposals act through.
    pub fn workspace(&self) -> &Arc<dyn Workspace> {
        &self.inner.workspace
    }

    /// Expires overdue proposals every `every` until [`ApprovalGate::shutdown`], so a task
    /// waiting on one moves on even when nobody opens Approvals.
    pub fn start(&self, every: Duration) -> tokio::task::JoinHandle<()> {
        let gate = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = gate.inner.stopping.cancelled() => return,
                    () = tokio::time::sleep(every) => {}
                }
                if let Err(err) = gate.expire_due().await {
                    tracing::error!(error = %err, "could not expire overdue proposals");
                }
            }
        })
    }

    /// Stops the expiry sweep.
    pub fn shutdown(&self) {
        self.inner.stopping.cancel();
    }

    /// At start-up: anything left executing may or may not have happened.
    pub async fn recover(&self) -> Result<u64> {
        self.inner.store.strand_executing_proposals().await
    }

    /// Stores `draft` for review under `key`. The same key with the same draft returns the
    /// existing proposal (and receipt); a changed draft is a conflict that needs a new review.
    pub async fn prepare(&self, key: &str, task_id: Option<&str>, draft: ProposalDraft) -> Result<ProposalRow> {
        let connection = self.inner.workspace.connection().await?;
        let target = self.inner.workspace.target(&draft).await?;
        let hash = proposal_hash(&draft, &connection, &target);
        let now = now_ms();
        let ttl = i64::try_from(self.inner.ttl.as_millis()).unwrap_or(i64::MAX);
        let row = ProposalRow {
            id: uuid::Uuid::new_v4().to_string(),
            key: key.to_owned(),
            task_id: task_id.map(str::to_owned),
            draft,
            connection,
            target: target.target,
            target_version: target.version,
            hash,
            status: ProposalStatus::AwaitingReview,
            created_at: now,
            expires_at: now.saturating_add(ttl),
            receipt: None,
            error: None,
        };
        match self.inner.store.insert_proposal(&row).await? {
            InsertOutcome::Created(stored) | InsertOutcome::Existing(stored) => Ok(stored),
            InsertOutcome::Changed(stored) => Err(CoreError::Conflict(format!(
                "A different draft was already prepared for this request (proposal {}). A changed draft needs a new \
                 review: prepare it as a new request.",
                stored.id
            ))),
        }
    }

    /// One proposal.
    pub async fn get(&self, proposal_id: &str) -> Result<ProposalView> {
        self.expire_due().await?;
        Ok(self.row(proposal_id).await?.view())
    }

    /// Awaiting review first, then the most recent others.
    pub async fn list(&self) -> Result<Vec<ProposalView>> {
        self.expire_due().await?;
        Ok(self.inner.store.list_proposals(200).await?.iter().map(ProposalRow::view).collect())
    }

    /// Expires what is past its time and lets the waiting tasks see it.
    pub async fn expire_due(&self) -> Result<()> {
        for (proposal_id, task_id) in self.inner.store.expire_due_proposals(now_ms()).await? {
            if let Some(task_id) = task_id {
                self.inner.tasks.release_approval(&task_id, &proposal_id).await?;
            }
        }
        Ok(())
    }

    /// The owner's decision, from the app window only. See the module docs of
    /// `hearth_protocol::approvals` for what the hash binds.
    pub async fn decide(&self, params: &ApprovalDecideParams) -> Result<ProposalView> {
        params.validate()?;
        let proposal = self.row(&params.proposal_id).await?;
        if proposal.hash != params.hash {
            return Err(CoreError::Conflict(CHANGED_MESSAGE.into()));
        }
        if proposal.status != ProposalStatus::AwaitingReview {
            return Ok(proposal.view());
        }
        match params.decision {
            Decision::Deny => self.deny(&proposal).await,
            Decision::Approve => self.approve(proposal).await,
        }
    }

    async fn deny(&self, proposal: &ProposalRow) -> Result<ProposalView> {
        self.inner
            .store
            .settle_proposal(&proposal.id, ProposalStatus::AwaitingReview, ProposalStatus::Denied, None, Some("Denied by you. Nothing was sent or changed."))
            .await?;
        self.release(proposal).await?;
        Ok(self.row(&proposal.id).await?.view())
    }

    async fn approve(&self, proposal: ProposalRow) -> Result<ProposalView> {
        if let Some(task_id) = &proposal.task_id {
            let task = self.inner.store.get_task(task_id).await?;
            let live = task.as_ref().is_some_and(|t| {
                matches!(t.status, hearth_protocol::tasks::TaskStatus::Running | hearth_protocol::tasks::TaskStatus::WaitingApproval)
            });
            if !live {
                // A racing approval may have just carried it out and released the task.
                let current = self.row(&proposal.id).await?;
                if current.status != ProposalStatus::AwaitingReview {
                    return Ok(current.view());
                }
                let status = task.map_or("gone".to_owned(), |t| t.status.as_str().replace('_', " "));
                return Err(CoreError::Conflict(format!(
                    "The task this belongs to is {status}, so it cannot be approved. Nothing was sent or changed."
                )));
            }
        }
        let now = now_ms();
        if proposal.expires_at <= now {
            self.expire_due().await?;
            return Err(CoreError::Expired(
                "This proposal expired before you approved it. Nothing was sent or changed; ask for it again.".into(),
            ));
        }
        let connection = self.inner.workspace.connection().await?;
        if connection != proposal.connection {
            return Err(CoreError::Conflict(format!(
                "This was prepared for {} but the account is now {}. Nothing was sent; prepare it again for this account.",
                proposal.connection.account, connection.account
            )));
        }
        if !self.inner.store.claim_proposal(&proposal.id, now).await? {
            // Someone else decided it, it expired, or its task stopped, in the meantime.
            self.expire_due().await?;
            return Ok(self.row(&proposal.id).await?.view());
        }
        let outcome = self.inner.workspace.execute(&proposal, &CancellationToken::new()).await;
        let (status, receipt, error) = match &outcome {
            Ok(receipt) => (ProposalStatus::Succeeded, Some(receipt.as_str()), None),
            Err(ExecuteError::Rejected(why)) => (ProposalStatus::Failed, None, Some(why.as_str())),
            Err(ExecuteError::Uncertain(why)) => (ProposalStatus::OutcomeUnknown, None, Some(why.as_str())),
        };
        let settled = self.inner.store.settle_proposal(&proposal.id, ProposalStatus::Executing, status, receipt, error).await;
        if let Err(err) = &settled {
            // Left `executing`: start-up makes it outcome_unknown for the owner to review.
            tracing::error!(proposal_id = proposal.id, error = %err, "could not record how an approved action ended");
        }
        self.release(&proposal).await?;
        settled?;
        Ok(self.row(&proposal.id).await?.view())
    }

    async fn release(&self, proposal: &ProposalRow) -> Result<()> {
        if let Some(task_id) = &proposal.task_id {
            self.inner.tasks.release_approval(task_id, &proposal.id).await?;
        }
        Ok(())
    }

    async fn row(&self, proposal_id: &str) -> Result<ProposalRow> {
        self.inner
            .store
            .get_proposal(proposal_id)
            .await?
            .ok_or_else(|| CoreError::NotFound(format!("There is no proposal {proposal_id}.")))
    }
}
