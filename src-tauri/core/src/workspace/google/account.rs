//! One connected Google account as a [`Workspace`]: Gmail and Google Calendar behind the same
//! contract as the local sample workspace, so the tools and the approval gate do not change.
//!
//! Writes happen only in [`Workspace::execute`], which only the approval gate calls, and each
//! is built so that a second attempt cannot make a second effect, or is looked for first:
//! - a send carries a Message-ID made from the proposal ([`mime::message_id_for`]); Gmail's send
//!   has no idempotency key, so an uncertain send is looked for in Sent
//!   ([`Workspace::reconcile`]) before the owner can send it again;
//! - a created event gets an id made from the proposal ([`calendar::event_id_for`]), which
//!   Calendar refuses to create twice (409), and a private property naming the proposal;
//! - an update or delete carries the version the owner reviewed (`If-Match` of its ETag), so
//!   it fails once anyone changed the event — a repeat of an applied change included.
//!
//! The connection (its id and account address) is fixed when the workspace opens: a reconnect
//! opens a new workspace with a new connection id, and the gate refuses to carry out what was
//! prepared for the old one.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use futures::FutureExt;
use futures::future::BoxFuture;
use hearth_protocol::approvals::{Connection, EmailDraft, EventDraft, ProposalDraft, ReplyContext};
use hearth_protocol::mail::{AttachmentInfo, MailMatch, MailSearchResult, MailThread};
use tokio_util::sync::CancellationToken;

use super::calendar::{self, Calendar, Written};
use super::gmail::{Gmail, Reconciled, SendError};
use super::mime;
use super::oauth::{GoogleAuth, WRITE_SCOPES};
use crate::error::{CoreError, Result};
use crate::store::Store;
use crate::store::proposals::{ExecutionClaim, ProposalRow};
use crate::workspace::event::resolve_event;
use crate::workspace::{CalendarPage, ExecuteError, Executed, Reconciliation, Target, Workspace};

/// The largest attachment imported from Gmail into Files.
pub const MAX_IMPORT_BYTES: usize = 10 * 1024 * 1024;

/// The calendar read_calendar shows.
const PRIMARY: &str = "primary";

/// Where Google's APIs are (tests give the fixture's address for both).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoogleApis {
    /// Gmail's base address ([`super::gmail::GMAIL_BASE_URL`]).
    pub gmail: String,
    /// Calendar's base address ([`super::calendar::CALENDAR_BASE_URL`]).
    pub calendar: String,
}

impl Default for GoogleApis {
    fn default() -> Self {
        Self { gmail: super::gmail::GMAIL_BASE_URL.into(), calendar: super::calendar::CALENDAR_BASE_URL.into() }
    }
}

/// One connected Google account.
#[derive(Clone)]
pub struct GoogleWorkspace {
    store: Store,
    auth: GoogleAuth,
    gmail: Gmail,
    calendar: Calendar,
    connection: Connection,
    /// When a read last succeeded (Unix ms; 0: not in this session).
    last_sync: Arc<AtomicI64>,
}

impl std::fmt::Debug for GoogleWorkspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoogleWorkspace").field("connection", &self.connection).finish_non_exhaustive()
    }
}

impl GoogleWorkspace {
    /// Opens `connection_id` (a completed sign-in of `auth`): asks Gmail which account it is.
    /// `store` holds the Files an email attaches.
    pub async fn open(store: Store, auth: GoogleAuth, connection_id: &str, apis: &GoogleApis) -> Result<Self> {
        let gmail = Gmail::new(auth.clone(), connection_id, &apis.gmail)?;
        let account = gmail.profile().await?;
        let workspace = Self::restore(store, auth, connection_id, &account, apis)?;
        workspace.synced();
        Ok(workspace)
    }

    /// `connection_id` as it was opened before (its account known), without asking Google:
    /// at start-up, offline included.
    pub fn restore(store: Store, auth: GoogleAuth, connection_id: &str, account: &str, apis: &GoogleApis) -> Result<Self> {
        let gmail = Gmail::new(auth.clone(), connection_id, &apis.gmail)?;
        let calendar = Calendar::new(auth.clone(), connection_id, &apis.calendar)?;
        let connection = Connection { id: connection_id.to_owned(), account: account.to_owned() };
        Ok(Self { store, auth, gmail, calendar, connection, last_sync: Arc::default() })
    }

    /// The sign-in flow its tokens come from.
    pub fn auth(&self) -> &GoogleAuth {
        &self.auth
    }

    /// The connection and account it acts as.
    pub fn connection_now(&self) -> &Connection {
        &self.connection
    }

    /// When a read from Google last succeeded in this session (Unix ms).
    pub fn last_sync(&self) -> Option<i64> {
        Some(self.last_sync.load(Ordering::Relaxed)).filter(|at| *at > 0)
    }

    fn synced(&self) {
        self.last_sync.store(crate::store::now_ms(), Ordering::Relaxed);
    }

    /// Notes a successful read.
    fn read<T>(&self, result: Result<T>) -> Result<T> {
        if result.is_ok() {
            self.synced();
        }
        result
    }

    /// Refused before anything is sent unless the connection holds `scope` (granted when the
    /// owner gave write access).
    async fn require_scope(&self, scope: &str) -> std::result::Result<(), ExecuteError> {
        let scopes =
            self.auth.scopes(&self.connection.id).await.map_err(|e| ExecuteError::Rejected(format!("{e} Nothing was sent or changed.")))?;
        if scopes.iter().any(|s| s == scope) {
            Ok(())
        } else {
            Err(ExecuteError::Rejected(
                "This account was connected for reading only, so nothing was sent or changed; grant write access in Settings → Accounts."
                    .into(),
            ))
        }
    }

    fn message_id(&self, proposal: &ProposalRow) -> String {
        mime::message_id_for(&proposal.id, &proposal.connection.account)
    }

    async fn send(
        &self,
        proposal: &ProposalRow,
        draft: &EmailDraft,
        cancel: &CancellationToken,
    ) -> std::result::Result<Executed, ExecuteError> {
        self.require_scope(WRITE_SCOPES[0]).await?;
        let mut attachments = Vec::with_capacity(draft.attachments.len());
        for attachment in &draft.attachments {
            let bytes = crate::workspace::reviewed_bytes(&self.store, attachment).await?;
            attachments.push(mime::Attachment { name: attachment.name.clone(), content_type: "application/pdf".into(), bytes });
        }
        // Threading headers come from the message answered as Gmail holds it.
        let (in_reply_to, references) = match &draft.in_reply_to {
            Some(parent) => {
                let headers = self.gmail.reply_headers(parent).await.map_err(|e| {
                    ExecuteError::Rejected(format!("The message this replies to could not be read ({e}), so nothing was sent."))
                })?;
                match headers.message_id {
                    Some(id) => {
                        let mut references = headers.references;
                        references.push(id.clone());
                        (Some(id), references)
                    }
                    None => (None, Vec::new()),
                }
            }
            None => (None, Vec::new()),
        };
        let outgoing = mime::Outgoing {
            from: proposal.connection.account.clone(),
            to: draft.to.clone(),
            cc: draft.cc.clone(),
            bcc: draft.bcc.clone(),
            subject: draft.subject.clone(),
            body: draft.body.clone(),
            attachments,
            in_reply_to,
            references,
            message_id: self.message_id(proposal),
        };
        let raw = mime::build(&outgoing)
            .map_err(|e| ExecuteError::Rejected(format!("The email could not be written ({e}), so nothing was sent.")))?;
        // The last moment Stop can still keep it from leaving; once handed over it is not cut
        // off (that would only turn a send into an uncertain one).
        if cancel.is_cancelled() {
            return Err(ExecuteError::Rejected("Stopped before sending; nothing was sent.".into()));
        }
        match self.gmail.send(&raw, draft.thread_id.as_deref()).await {
            Ok(sent) => {
                let mut receipt = format!("Sent from {} · Gmail id {}", proposal.connection.account, sent.id);
                if !sent.mark_kept {
                    receipt.push_str(" (Gmail kept neither Hearth's Message-ID nor its mark, so an uncertain send from this account cannot be checked automatically)");
                }
                Ok(Executed { receipt, settled: false })
            }
            Err(SendError::Refused(why)) => Err(ExecuteError::Rejected(why)),
            Err(SendError::Uncertain(why)) => Err(ExecuteError::Uncertain(why)),
        }
    }

    async fn write_event(&self, proposal: &ProposalRow, cancel: &CancellationToken) -> std::result::Result<Executed, ExecuteError> {
        self.require_scope(WRITE_SCOPES[1]).await?;
        if cancel.is_cancelled() {
            return Err(ExecuteError::Rejected("Stopped before changing the calendar; nothing was changed.".into()));
        }
        let event_of = |draft: &EventDraft| draft.event_id.clone().unwrap_or_default();
        let (written, done, id) = match &proposal.draft {
            ProposalDraft::CalendarCreate(draft) => {
                let id = calendar::event_id_for(&proposal.id);
                (self.calendar.insert(draft, &id, &proposal.id).await?, "Added to Google Calendar", id)
            }
            ProposalDraft::CalendarUpdate(draft) => {
                let id = event_of(draft);
                let before = draft.before.as_ref().ok_or_else(|| {
                    ExecuteError::Rejected("This change lost the event it was made from; prepare it again. Nothing was changed.".into())
                })?;
                (self.calendar.update(draft, before, &id, &proposal.target_version).await?, "Changed in Google Calendar", id)
            }
            ProposalDraft::CalendarDelete(draft) => {
                let id = event_of(draft);
                (self.calendar.delete(&draft.calendar_id, &id, &proposal.target_version).await?, "Deleted from Google Calendar", id)
            }
            ProposalDraft::EmailSend(_) | ProposalDraft::WebSubmit(_) | ProposalDraft::HeldCall(_) => {
                return Err(ExecuteError::Rejected("This is not a calendar change.".into()));
            }
        };
        let receipt = match written {
            Written::Done => format!("{done} · {id}"),
            Written::AlreadyThere => format!("Already in Google Calendar (an earlier attempt added it) · {id}"),
        };
        Ok(Executed { receipt, settled: false })
    }

    /// An update or delete's draft from the event as Calendar holds it now, at its version.
    async fn current_event(&self, update: bool, request: &EventDraft) -> Result<(EventDraft, Target)> {
        let id = request
            .event_id
            .as_deref()
            .ok_or_else(|| CoreError::InvalidInput("`eventId` is required to change or delete an event; read_calendar gives it.".into()))?;
        // An update or delete names the event; its calendar is the owner's own unless given.
        let calendar_id = if request.calendar_id.is_empty() { PRIMARY } else { request.calendar_id.as_str() };
        let event = self.calendar.event(calendar_id, id).await?;
        if event.cancelled {
            return Err(CoreError::NotFound(format!("The event {id} was deleted. Use read_calendar to find the current events.")));
        }
        if event.etag.is_empty() {
            return Err(CoreError::Unavailable(
                "Google Calendar gave no version for this event, so Hearth cannot change it safely; try again.".into(),
            ));
        }
        if event.recurring {
            return Err(CoreError::InvalidInput(
                "This is a repeating event: Hearth does not change or delete repeating events (one change could move every \
                 occurrence). Change it in Google Calendar."
                    .into(),
            ));
        }
        let draft = resolve_event(update, request, id, event.snapshot)?;
        if draft.calendar_id != calendar_id {
            return Err(CoreError::InvalidInput(
                "Hearth does not move events between calendars; change the event in its own calendar, or move it in Google Calendar."
                    .into(),
            ));
        }
        Ok((draft, Target { target: format!("event:{id}"), version: event.etag }))
    }

    async fn reconcile_event(&self, proposal: &ProposalRow) -> Result<Reconciliation> {
        let found = match &proposal.draft {
            ProposalDraft::CalendarCreate(draft) => {
                let id = calendar::event_id_for(&proposal.id);
                match self.calendar.event(&draft.calendar_id, &id).await {
                    Ok(event) if event.proposal.as_deref() == Some(proposal.id.as_str()) => {
                        Some(format!("Found in Google Calendar: it was added · {id}"))
                    }
                    Ok(_) | Err(CoreError::NotFound(_)) => None,
                    Err(err) => return Err(err),
                }
            }
            ProposalDraft::CalendarUpdate(draft) => {
                let id = draft.event_id.clone().unwrap_or_default();
                match self.calendar.event(&draft.calendar_id, &id).await {
                    Ok(event) if !event.cancelled && same_event(&event.snapshot, &draft.snapshot()) => {
                        Some(format!("Found in Google Calendar: the event already has the approved values · {id}"))
                    }
                    Ok(_) | Err(CoreError::NotFound(_)) => None,
                    Err(err) => return Err(err),
                }
            }
            ProposalDraft::CalendarDelete(draft) => {
                let id = draft.event_id.clone().unwrap_or_default();
                match self.calendar.event(&draft.calendar_id, &id).await {
                    Ok(event) if event.cancelled => Some(format!("Google Calendar shows the event deleted · {id}")),
                    Err(CoreError::NotFound(_)) => Some(format!("The event is no longer in Google Calendar · {id}")),
                    Ok(_) => None,
                    Err(err) => return Err(err),
                }
            }
            ProposalDraft::EmailSend(_) | ProposalDraft::WebSubmit(_) | ProposalDraft::HeldCall(_) => None,
        };
        Ok(found.map_or(Reconciliation::NotFound, Reconciliation::Happened))
    }
}

impl Workspace for GoogleWorkspace {
    fn connection(&self) -> BoxFuture<'_, Result<Connection>> {
        async move { Ok(self.connection.clone()) }.boxed()
    }

    fn search_mail<'a>(&'a self, query: &'a str) -> BoxFuture<'a, Result<MailSearchResult>> {
        async move { self.read(self.gmail.search(query).await) }.boxed()
    }

    fn read_thread<'a>(&'a self, thread_id: &'a str) -> BoxFuture<'a, Result<MailThread>> {
        async move { self.read(self.gmail.thread(thread_id).await) }.boxed()
    }

    fn inbox(&self) -> BoxFuture<'_, Result<Vec<MailMatch>>> {
        // Gmail's own label, so a message the owner archived is not offered as an idea.
        async move { self.read(self.gmail.inbox().await) }.boxed()
    }

    fn read_calendar(&self, from: i64, to: i64) -> BoxFuture<'_, Result<CalendarPage>> {
        async move { self.read(self.calendar.events(PRIMARY, from, to).await) }.boxed()
    }

    fn fetch_attachment<'a>(&'a self, attachment_id: &'a str) -> BoxFuture<'a, Result<(AttachmentInfo, Vec<u8>)>> {
        self.gmail.attachment(attachment_id, MAX_IMPORT_BYTES).boxed()
    }

    fn resolve(&self, draft: ProposalDraft) -> BoxFuture<'_, Result<(Connection, ProposalDraft, Target)>> {
        async move {
            let unversioned = |target: String| Target { target, version: "-".into() };
            let (draft, target) = match draft {
                ProposalDraft::EmailSend(mut email) => {
                    // Re-read even when the caller filled it: the card names the message as
                    // Gmail holds it, and the reply goes into that message's conversation.
                    if let Some(parent) = email.in_reply_to.clone() {
                        let headers = self.gmail.reply_headers(&parent).await.map_err(|err| match err {
                            CoreError::NotFound(_) => CoreError::InvalidInput(format!(
                                "There is no message {parent} in Gmail to reply to. Use the `messageId` that search_mail or \
                                 read_mail_thread gives, or leave `replyToMessageId` out to send a new email."
                            )),
                            other => other,
                        })?;
                        if email.thread_id.as_ref().is_some_and(|t| *t != headers.thread_id) {
                            return Err(CoreError::InvalidInput(format!(
                                "The message {parent} is in conversation {}, not {}; reply in its own conversation.",
                                headers.thread_id,
                                email.thread_id.unwrap_or_default()
                            )));
                        }
                        email.thread_id = Some(headers.thread_id);
                        email.reply_to = Some(ReplyContext { message_id: parent, subject: headers.subject, from: headers.from });
                    } else {
                        email.reply_to = None;
                    }
                    (ProposalDraft::EmailSend(email), unversioned("mail:send".into()))
                }
                ProposalDraft::CalendarCreate(event) => crate::workspace::new_event(event)?,
                ProposalDraft::CalendarUpdate(request) => {
                    let (event, target) = self.current_event(true, &request).await?;
                    (ProposalDraft::CalendarUpdate(event), target)
                }
                ProposalDraft::CalendarDelete(request) => {
                    let (event, target) = self.current_event(false, &request).await?;
                    (ProposalDraft::CalendarDelete(event), target)
                }
                ProposalDraft::WebSubmit(_) | ProposalDraft::HeldCall(_) => {
                    return Err(CoreError::InvalidInput("A web form is not sent through Gmail or Google Calendar.".into()));
                }
            };
            Ok((self.connection.clone(), draft, target))
        }
        .boxed()
    }

    fn reconcile<'a>(&'a self, proposal: &'a ProposalRow) -> BoxFuture<'a, Result<Reconciliation>> {
        async move {
            if proposal.connection.account != self.connection.account {
                return Err(CoreError::Conflict(format!(
                    "This was approved for {}, not {}; it can only be looked for in that account.",
                    proposal.connection.account, self.connection.account
                )));
            }
            match &proposal.draft {
                ProposalDraft::EmailSend(_) => Ok(match self.gmail.find_sent(&self.message_id(proposal), proposal.created_at).await? {
                    Reconciled::Found { id, copies: 1 } => Reconciliation::Happened(format!("Found in Gmail's Sent: it was sent once · Gmail id {id}")),
                    Reconciled::Found { id, copies } => {
                        Reconciliation::Happened(format!("Found in Gmail's Sent: it went {copies} times · Gmail id {id}"))
                    }
                    Reconciled::NotFound { complete: true } => Reconciliation::NotFound,
                    Reconciled::NotFound { complete: false } => Reconciliation::Unsure(format!(
                        "Hearth could not be sure: more than {} messages were sent from {} since this was prepared, and it read only the newest {}. \
                         Look in Sent in Gmail yourself; if it is not there, ask for it anew",
                        super::gmail::MAX_SENT_CHECKED,
                        proposal.connection.account,
                        super::gmail::MAX_SENT_CHECKED
                    )),
                }),
                ProposalDraft::CalendarCreate(_) | ProposalDraft::CalendarUpdate(_) | ProposalDraft::CalendarDelete(_) => {
                    self.reconcile_event(proposal).await
                }
                ProposalDraft::WebSubmit(_) | ProposalDraft::HeldCall(_) => Ok(Reconciliation::NotFound),
            }
        }
        .boxed()
    }

    fn execute<'a>(
        &'a self,
        proposal: &'a ProposalRow,
        _claim: ExecutionClaim<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, std::result::Result<Executed, ExecuteError>> {
        async move {
            // Only what was approved for this very connection (a reconnect is a new one).
            if proposal.connection != self.connection {
                return Err(ExecuteError::Rejected(format!(
                    "This was approved through an earlier sign-in of {}, so nothing was sent or changed; ask for it again to review it for the current one.",
                    proposal.connection.account
                )));
            }
            match &proposal.draft {
                ProposalDraft::EmailSend(draft) => self.send(proposal, draft, cancel).await,
                ProposalDraft::CalendarCreate(_) | ProposalDraft::CalendarUpdate(_) | ProposalDraft::CalendarDelete(_) => {
                    self.write_event(proposal, cancel).await
                }
                ProposalDraft::WebSubmit(_) | ProposalDraft::HeldCall(_) => Err(ExecuteError::Rejected("A web form is not sent through Gmail.".into())),
            }
        }
        .boxed()
    }
}

/// Whether Calendar holds the approved values (invitees in any order).
fn same_event(held: &hearth_protocol::approvals::EventSnapshot, approved: &hearth_protocol::approvals::EventSnapshot) -> bool {
    let sorted = |list: &[String]| {
        let mut list = list.to_vec();
        list.sort();
        list
    };
    held.title == approved.title
        && held.timing == approved.timing
        && held.time_zone == approved.time_zone
        && held.location == approved.location
        && held.description == approved.description
        && sorted(&held.attendees) == sorted(&approved.attendees)
}
