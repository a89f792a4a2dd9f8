//! The read side of the workspace: the only view of it a tool gets.
//!
//! A wrapper rather than a second trait so that the `Workspace` trait stays one contract for
//! every provider (local, Google) while the type a tool holds simply has no `execute`: only
//! the approval gate, on the owner's decision, holds the whole workspace.

use std::sync::Arc;

use hearth_protocol::mail::{AttachmentInfo, MailMatch, MailSearchResult, MailThread};

use super::{CalendarPage, Workspace};
use crate::error::Result;

/// Mail, calendar and attachments, read-only.
#[derive(Clone)]
pub struct WorkspaceReader {
    inner: Arc<dyn Workspace>,
}

impl std::fmt::Debug for WorkspaceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceReader").finish_non_exhaustive()
    }
}

impl WorkspaceReader {
    /// The read side of `workspace`.
    pub fn new(workspace: Arc<dyn Workspace>) -> Self {
        Self { inner: workspace }
    }

    /// Mail matching `query`.
    pub async fn search_mail(&self, query: &str) -> Result<MailSearchResult> {
        self.inner.search_mail(query).await
    }

    /// The newest inbox messages, newest first.
    pub async fn inbox(&self) -> Result<Vec<MailMatch>> {
        self.inner.inbox().await
    }

    /// The connection and account it reads as.
    pub async fn connection(&self) -> Result<hearth_protocol::approvals::Connection> {
        self.inner.connection().await
    }

    /// One thread.
    pub async fn read_thread(&self, thread_id: &str) -> Result<MailThread> {
        self.inner.read_thread(thread_id).await
    }

    /// Events in [from, to).
    pub async fn read_calendar(&self, from: i64, to: i64) -> Result<CalendarPage> {
        self.inner.read_calendar(from, to).await
    }

    /// One attachment's bytes.
    pub async fn fetch_attachment(&self, attachment_id: &str) -> Result<(AttachmentInfo, Vec<u8>)> {
        self.inner.fetch_attachment(attachment_id).await
    }
}
