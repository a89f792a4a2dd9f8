//! Proposals the agent's browser carries out: a task's form submission (`web.submit`).
//!
//! The gate reaches the browser only through [`FormSender`], as it reaches mail and calendar
//! only through the workspace: a tool never holds it. What a submission binds is the page the
//! owner saw and every value the form carries (`formVersion`, passwords included); the sender
//! refuses to act when the open page no longer hashes to it.

use futures::future::BoxFuture;
use hearth_protocol::approvals::{Connection, WebSubmitDraft};
use tokio_util::sync::CancellationToken;

use crate::workspace::{ExecuteError, Target};

/// The connection id of proposals the browser carries out; the account is the profile.
pub const BROWSER_CONNECTION: &str = "browser";

/// Sends a form the owner approved, from the browser profile it was prepared in.
pub trait FormSender: Send + Sync + 'static {
    /// Sends `draft`'s form only while the open page still lists the same elements and the form
    /// hashes to `draft.form_version`; returns the receipt the owner sees. Refused before any
    /// input is [`ExecuteError::Rejected`]; a failure after the input reached the page is
    /// [`ExecuteError::Uncertain`] (the site may have received it).
    fn send<'a>(&'a self, draft: &'a WebSubmitDraft, cancel: &'a CancellationToken) -> BoxFuture<'a, Result<String, ExecuteError>>;
}

/// Who a submission acts as: the browser profile whose logins the site sees.
pub fn connection(draft: &WebSubmitDraft) -> Connection {
    Connection { id: BROWSER_CONNECTION.to_owned(), account: draft.profile.clone() }
}

/// What a submission acts on, and the version the owner reviewed: the form as it was read.
pub fn target(draft: &WebSubmitDraft) -> Target {
    Target { target: format!("web:{}", draft.destination), version: draft.form_version.clone() }
}
