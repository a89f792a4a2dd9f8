//! The owner's workspace — mail, calendar, attachments — behind one trait, so the local
//! sample workspace and Google are interchangeable to the tools and the approval gate.
//!
//! Reads return data for the model and the cards; `execute` is the only write, and only the
//! approval gate calls it, with a proposal the owner approved.

mod chosen;
pub mod event;
pub mod google;
mod local;
mod reader;
pub mod seed;

pub use google::GoogleWorkspace;

use futures::future::BoxFuture;
use hearth_protocol::approvals::{Connection, DraftAttachment, ProposalDraft};
use hearth_protocol::mail::{AttachmentInfo, MailMatch, MailSearchResult, MailThread};
use tokio_util::sync::CancellationToken;

pub use chosen::ChosenWorkspace;
pub use local::{LOCAL_CONNECTION_ID, LocalWorkspace};
pub use reader::WorkspaceReader;

use crate::error::Result;
use crate::store::proposals::{ExecutionClaim, ProposalRow};
use crate::store::workspace::CalendarEvent;

/// Longest search query, in characters.
pub const MAX_QUERY_CHARS: usize = 500;
/// Most search hits returned.
pub const MAX_SEARCH_RESULTS: usize = 20;
/// Snippet length, in characters.
pub const SNIPPET_CHARS: usize = 240;
/// Messages returned from a thread (the newest).
pub const MAX_THREAD_MESSAGES: usize = 20;
/// Body length returned per message, in characters.
pub const MAX_BODY_CHARS: usize = 12_000;
/// Events returned from a range.
pub const MAX_CALENDAR_EVENTS: usize = 20;
/// Longest calendar range, in days.
pub const MAX_CALENDAR_DAYS: i64 = 366;

/// Events in a range.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CalendarPage {
    /// At most 20, by start.
    pub events: Vec<CalendarEvent>,
    /// More were in the range.
    pub truncated: bool,
}

/// Where an approved proposal acts, and the version the owner reviewed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `mail:send`, `calendar:<calendar id>` or `event:<event id>`.
    pub target: String,
    /// The target's version (`-` when it has none).
    pub version: String,
}

/// Why an approved proposal was not carried out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecuteError {
    /// Refused before anything happened; nothing changed.
    #[error("{0}")]
    Rejected(String),
    /// It may have reached the provider; the owner must check. Never retried automatically.
    #[error("{0}")]
    Uncertain(String),
}

/// Mail, calendar and attachments of one account.
pub trait Workspace: Send + Sync + 'static {
    /// The connection and account everything acts as.
    fn connection(&self) -> BoxFuture<'_, Result<Connection>>;

    /// Messages matching every word of `query`, newest first.
    fn search_mail<'a>(&'a self, query: &'a str) -> BoxFuture<'a, Result<MailSearchResult>>;

    /// The newest messages in the inbox (at most 50; Gmail lists 20), newest first: what the ideas' mail rules
    /// read, from whichever account the owner chose.
    fn inbox(&self) -> BoxFuture<'_, Result<Vec<MailMatch>>>;

    /// The newest messages of a conversation.
    fn read_thread<'a>(&'a self, thread_id: &'a str) -> BoxFuture<'a, Result<MailThread>>;

    /// Events overlapping `[from, to)` (Unix ms).
    fn read_calendar(&self, from: i64, to: i64) -> BoxFuture<'_, Result<CalendarPage>>;

    /// An attachment's summary and bytes.
    fn fetch_attachment<'a>(&'a self, attachment_id: &'a str) -> BoxFuture<'a, Result<(AttachmentInfo, Vec<u8>)>>;

    /// `draft` as the owner will review it, with what it acts on and that target's current
    /// version, read together so the draft and the version agree.
    ///
    /// The draft shows what is real, never what the model wrote about it: a calendar update
    /// or delete is built from the target event as it is now (delete: that event; update:
    /// that event with the requested changes applied, and `before`), and a reply names the
    /// stored message it answers. The gate stores and hashes exactly this draft, so an
    /// approval binds what the card showed. Refused when the event or message does not exist.
    /// Answers the connection it was resolved against too, read with it: a proposal is bound to
    /// the account whose data it shows.
    fn resolve(&self, draft: ProposalDraft) -> BoxFuture<'_, Result<(Connection, ProposalDraft, Target)>>;

    /// Looks for the effect of `proposal` (approved, its outcome unknown) where the provider
    /// keeps it: a sent message by the Message-ID Hearth gave it, a created event by the id
    /// and the property Hearth gave it, an update or delete by the event as it is now.
    fn reconcile<'a>(&'a self, proposal: &'a ProposalRow) -> BoxFuture<'a, Result<Reconciliation>>;

    /// Carries out an approved proposal under `claim`; returns the receipt the owner sees.
    /// A workspace whose effect lands in Hearth's own database (the local one) settles the
    /// claim in the same transaction as the effect and says so ([`Executed::settled`]);
    /// a remote one leaves the settle to the gate.
    fn execute<'a>(
        &'a self,
        proposal: &'a ProposalRow,
        claim: ExecutionClaim<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, std::result::Result<Executed, ExecuteError>>;
}

/// What a look at the provider found about an approved action whose outcome was unknown
/// (the connection broke after the request left, or Hearth stopped mid-way).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reconciliation {
    /// It happened; the receipt says where it is.
    Happened(String),
    /// It is not there. Not proof that it did not happen (a search index may lag a fresh
    /// send; the owner may have deleted it since): doing it again needs the owner's word.
    NotFound,
    /// Not found, but the look could not cover everywhere it could be (why, in words, for the
    /// owner): not enough to do it again on, even at the owner's word.
    Unsure(String),
}

/// An approved proposal, carried out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Executed {
    /// What the owner is told happened.
    pub receipt: String,
    /// The receipt was already recorded with the effect, in one transaction.
    pub settled: bool,
}

/// The bytes of a file attached to an approved email, refused unless they are exactly the
/// reviewed ones (the file kept, its sha256 the draft's).
pub(crate) async fn reviewed_bytes(
    store: &crate::store::Store,
    attachment: &DraftAttachment,
) -> std::result::Result<Vec<u8>, ExecuteError> {
    let name = &attachment.name;
    let gone = || ExecuteError::Rejected(format!("The attachment {name} was deleted after you reviewed it. Nothing was sent."));
    let file = store.get_file(&attachment.file_id).await.map_err(|e| ExecuteError::Rejected(e.to_string()))?.ok_or_else(gone)?;
    if file.deleted_at.is_some() {
        return Err(gone());
    }
    let bytes = tokio::fs::read(&file.path).await.map_err(|_| gone())?;
    if crate::files::sha256_hex(&bytes) != attachment.sha256 {
        return Err(ExecuteError::Rejected(format!(
            "The attachment {name} changed after you reviewed it. Nothing was sent; prepare the email again."
        )));
    }
    Ok(bytes)
}

/// A new event as the owner will review it, and its target (a calendar has no version): the
/// same for every workspace.
pub(crate) fn new_event(event: hearth_protocol::approvals::EventDraft) -> Result<(ProposalDraft, Target)> {
    if event.before.is_some() || event.changes.is_some() {
        return Err(crate::error::CoreError::InvalidInput(
            "A new event has no earlier version and nothing to change; to change an event use action update.".into(),
        ));
    }
    let target = Target { target: format!("calendar:{}", event.calendar_id), version: "-".into() };
    Ok((ProposalDraft::CalendarCreate(event), target))
}

/// Cuts `text` to `max` characters; says whether it cut.
pub fn truncate_chars(text: &str, max: usize) -> (String, bool) {
    match text.char_indices().nth(max) {
        Some((at, _)) => (text[..at].to_owned(), true),
        None => (text.to_owned(), false),
    }
}
