//! The workspace the agent's mail and calendar tools use now: the account the owner picked in
//! Settings → Accounts (the local "Sample mailbox", or a connected Google account).
//!
//! Switching never carries a decision over: every proposal is bound to the connection it was
//! prepared for, the gate's claim checks it against [`Workspace::connection`] now, and
//! [`Workspace::execute`] and [`Workspace::reconcile`] here check it once more against the
//! workspace they are about to hand the proposal to — a switch between the claim and the
//! execution cannot send a proposal through another account.

use std::sync::{Arc, RwLock};

use futures::FutureExt;
use futures::future::BoxFuture;
use hearth_protocol::approvals::{Connection, ProposalDraft};
use hearth_protocol::mail::{AttachmentInfo, MailMatch, MailSearchResult, MailThread};
use tokio_util::sync::CancellationToken;

use super::{CalendarPage, ExecuteError, Executed, Reconciliation, Target, Workspace};
use crate::error::{CoreError, Result};
use crate::store::proposals::{ExecutionClaim, ProposalRow};

/// The owner's pick of workspace. Cheap to share (`Arc`).
pub struct ChosenWorkspace {
    current: RwLock<Arc<dyn Workspace>>,
}

impl std::fmt::Debug for ChosenWorkspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChosenWorkspace").finish_non_exhaustive()
    }
}

impl ChosenWorkspace {
    /// Starts on `initial`.
    pub fn new(initial: Arc<dyn Workspace>) -> Self {
        Self { current: RwLock::new(initial) }
    }

    /// From now on the tools read, and the gate acts, through `workspace`.
    pub fn choose(&self, workspace: Arc<dyn Workspace>) {
        *self.current.write().unwrap_or_else(std::sync::PoisonError::into_inner) = workspace;
    }

    fn now(&self) -> Arc<dyn Workspace> {
        self.current.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// The workspace now, if it still acts as `connection`.
    async fn acting_as(&self, connection: &Connection) -> Result<Arc<dyn Workspace>> {
        let workspace = self.now();
        let now = workspace.connection().await?;
        if now == *connection {
            Ok(workspace)
        } else {
            Err(CoreError::Conflict(format!("This was prepared for {} but the account in use is now {}.", connection.account, now.account)))
        }
    }
}

impl Workspace for ChosenWorkspace {
    fn connection(&self) -> BoxFuture<'_, Result<Connection>> {
        let workspace = self.now();
        async move { workspace.connection().await }.boxed()
    }

    fn search_mail<'a>(&'a self, query: &'a str) -> BoxFuture<'a, Result<MailSearchResult>> {
        let workspace = self.now();
        async move { workspace.search_mail(query).await }.boxed()
    }

    fn read_thread<'a>(&'a self, thread_id: &'a str) -> BoxFuture<'a, Result<MailThread>> {
        let workspace = self.now();
        async move { workspace.read_thread(thread_id).await }.boxed()
    }

    fn inbox(&self) -> BoxFuture<'_, Result<Vec<MailMatch>>> {
        let workspace = self.now();
        async move { workspace.inbox().await }.boxed()
    }

    fn read_calendar(&self, from: i64, to: i64) -> BoxFuture<'_, Result<CalendarPage>> {
        let workspace = self.now();
        async move { workspace.read_calendar(from, to).await }.boxed()
    }

    fn fetch_attachment<'a>(&'a self, attachment_id: &'a str) -> BoxFuture<'a, Result<(AttachmentInfo, Vec<u8>)>> {
        let workspace = self.now();
        async move { workspace.fetch_attachment(attachment_id).await }.boxed()
    }

    fn resolve(&self, draft: ProposalDraft) -> BoxFuture<'_, Result<(Connection, ProposalDraft, Target)>> {
        let workspace = self.now();
        async move { workspace.resolve(draft).await }.boxed()
    }

    fn reconcile<'a>(&'a self, proposal: &'a ProposalRow) -> BoxFuture<'a, Result<Reconciliation>> {
        async move { self.acting_as(&proposal.connection).await?.reconcile(proposal).await }.boxed()
    }

    fn execute<'a>(
        &'a self,
        proposal: &'a ProposalRow,
        claim: ExecutionClaim<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, std::result::Result<Executed, ExecuteError>> {
        async move {
            let workspace = self
                .acting_as(&proposal.connection)
                .await
                .map_err(|e| ExecuteError::Rejected(format!("{e} Nothing was sent or changed.")))?;
            workspace.execute(proposal, claim, cancel).await
        }
        .boxed()
    }
}
