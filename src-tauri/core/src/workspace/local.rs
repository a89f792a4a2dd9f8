//! The local sample workspace: the seeded mailbox and calendar in Hearth's own database.
//! "Sending" writes the local Sent folder; calendar changes write the local calendar.

use std::path::PathBuf;

use futures::FutureExt;
use futures::future::BoxFuture;
use hearth_protocol::approvals::{Connection, EmailDraft, EventDraft, EventSnapshot, ProposalDraft};
use hearth_protocol::mail::{AttachmentInfo, MailMatch, MailSearchResult, MailThread, ThreadMessage};
use tokio_util::sync::CancellationToken;

use super::event::{reply_context, resolve_event, timing_bounds, timing_from_bounds};
use super::{
    CalendarPage, ExecuteError, Executed, MAX_BODY_CHARS, MAX_CALENDAR_EVENTS, MAX_SEARCH_RESULTS, MAX_THREAD_MESSAGES, Reconciliation,
    SNIPPET_CHARS, Target, Workspace, truncate_chars,
};
use crate::error::{CoreError, Result};
use crate::store::calendar::{CalendarChange, StoredEvent};
use crate::store::mail::{OutgoingMessage, StoredMessage};
use crate::store::proposals::{ExecutionClaim, ProposalRow};
use crate::store::workspace::MailAttachment;
use crate::store::{Store, now_ms};

/// The connection id of the local workspace.
pub const LOCAL_CONNECTION_ID: &str = "local";

/// The seeded local workspace.
#[derive(Debug, Clone)]
pub struct LocalWorkspace {
    store: Store,
    attachments_dir: PathBuf,
}

impl LocalWorkspace {
    /// A workspace over `store`, keeping sent attachments in `attachments_dir`.
    pub fn new(store: Store, attachments_dir: PathBuf) -> Self {
        Self { store, attachments_dir }
    }

    async fn send(
        &self,
        proposal: &ProposalRow,
        draft: &EmailDraft,
        claim: ExecutionClaim<'_>,
        cancel: &CancellationToken,
    ) -> Result<Executed, ExecuteError> {
        let message_id = format!("sent-{}", proposal.id);
        let mut attachments = Vec::with_capacity(draft.attachments.len());
        for (index, attachment) in draft.attachments.iter().enumerate() {
            let bytes = super::reviewed_bytes(&self.store, attachment).await?;
            let path = self.attachments_dir.join(format!("{message_id}-{index}.pdf"));
            crate::files::write_private(&path, &bytes).map_err(|err| {
                ExecuteError::Rejected(format!("Hearth could not store the sent copy of {}: {err}. Nothing was sent.", attachment.name))
            })?;
            attachments.push(MailAttachment {
                id: format!("{message_id}-{index}"),
                message_id: message_id.clone(),
                filename: attachment.name.clone(),
                mime_type: "application/pdf".into(),
                size: attachment.size,
                path: path.to_string_lossy().into_owned(),
            });
        }
        if cancel.is_cancelled() {
            return Err(ExecuteError::Rejected("Stopped before sending; nothing was sent.".into()));
        }
        let outgoing = OutgoingMessage {
            message: StoredMessage {
                id: message_id.clone(),
                thread_id: draft.thread_id.clone().unwrap_or_else(|| format!("thr-{}", proposal.id)),
                from: proposal.connection.account.clone(),
                to: draft.to.join(", "),
                cc: draft.cc.join(", "),
                bcc: draft.bcc.join(", "),
                subject: draft.subject.clone(),
                body: draft.body.clone(),
                sent_at: now_ms(),
                folder: "sent".into(),
                in_reply_to: draft.in_reply_to.clone(),
            },
            attachments,
        };
        // The Sent row and the receipt commit in one transaction; the id is derived from the
        // proposal, so a second attempt finds the first and writes nothing.
        let receipt = format!("Saved to local sent mail · {message_id}");
        let sent = self
            .store
            .send_local(&outgoing, Some((claim, &receipt)))
            .await
            .map_err(|err| ExecuteError::Rejected(format!("Hearth could not save the local send ({err}); nothing was sent.")))?;
        if !sent {
            return Err(ExecuteError::Rejected("This approval was no longer held, so nothing was sent.".into()));
        }
        Ok(Executed { receipt, settled: true })
    }

    /// An update (or a delete) of the event `request` names, built from that event as the
    /// calendar holds it now, with the version it was read at: approving acts on that version
    /// only, so an event changed in between is refused rather than overwritten.
    async fn current_event(&self, update: bool, request: &EventDraft) -> Result<(EventDraft, Target)> {
        let id = request
            .event_id
            .as_deref()
            .ok_or_else(|| CoreError::InvalidInput("`eventId` is required to change or delete an event; read_calendar gives it.".into()))?;
        let stored = self
            .store
            .get_event(id)
            .await?
            .ok_or_else(|| CoreError::NotFound(format!("There is no event {id}. Use read_calendar to find its id.")))?;
        let attendees: Vec<String> = serde_json::from_str(&stored.attendees)
            .map_err(|err| CoreError::CorruptRow(format!("the attendees of event {id} cannot be read ({err})")))?;
        let current = EventSnapshot {
            timing: timing_from_bounds(stored.starts_at, stored.ends_at, stored.all_day, &stored.time_zone)?,
            calendar_id: stored.calendar_id,
            title: stored.title,
            time_zone: stored.time_zone,
            location: stored.location,
            description: stored.description,
            attendees,
        };
        let draft = resolve_event(update, request, id, current)?;
        Ok((draft, Target { target: format!("event:{id}"), version: stored.version.to_string() }))
    }

    async fn write_event(&self, proposal: &ProposalRow, draft: &EventDraft, claim: ExecutionClaim<'_>) -> Result<Executed, ExecuteError> {
        let (starts_at, ends_at) = timing_bounds(&draft.timing, &draft.time_zone).map_err(|e| ExecuteError::Rejected(e.to_string()))?;
        let event = |id: String| StoredEvent {
            id,
            calendar_id: draft.calendar_id.clone(),
            title: draft.title.clone(),
            starts_at,
            ends_at,
            all_day: matches!(draft.timing, hearth_protocol::approvals::EventTiming::AllDay { .. }),
            time_zone: draft.time_zone.clone(),
            location: draft.location.clone(),
            description: draft.description.clone(),
            attendees: serde_json::to_string(&draft.attendees).unwrap_or_else(|_| "[]".into()),
            version: 1,
        };
        // The change and the receipt commit in one transaction: a failure means neither happened.
        let store_err = |e: crate::store::StoreError| {
            ExecuteError::Rejected(format!("Hearth could not save the calendar change ({e}); nothing changed."))
        };
        let changed =
            || ExecuteError::Rejected("The event changed after you reviewed this, so nothing was changed. Prepare it again.".into());
        let version: i64 = proposal.target_version.parse().unwrap_or(-1);
        match &proposal.draft {
            ProposalDraft::CalendarCreate(_) => {
                let id = format!("evt-{}", proposal.id);
                let receipt = format!("Added to the local calendar · {id}");
                let new = event(id);
                if !self.store.apply_calendar_change(CalendarChange::Insert(&new), Some((claim, &receipt))).await.map_err(store_err)? {
                    return Err(ExecuteError::Rejected("This approval was no longer held, so nothing was changed.".into()));
                }
                Ok(Executed { receipt, settled: true })
            }
            ProposalDraft::CalendarUpdate(_) => {
                let id = draft.event_id.clone().unwrap_or_default();
                let receipt = format!("Changed in the local calendar · {id}");
                let new = event(id);
                if !self
                    .store
                    .apply_calendar_change(CalendarChange::Update(&new, version), Some((claim, &receipt)))
                    .await
                    .map_err(store_err)?
                {
                    return Err(changed());
                }
                Ok(Executed { receipt, settled: true })
            }
            ProposalDraft::CalendarDelete(_) => {
                let id = draft.event_id.clone().unwrap_or_default();
                let receipt = format!("Deleted from the local calendar · {id}");
                if !self
                    .store
                    .apply_calendar_change(CalendarChange::Delete(&id, version), Some((claim, &receipt)))
                    .await
                    .map_err(store_err)?
                {
                    return Err(changed());
                }
                Ok(Executed { receipt, settled: true })
            }
            ProposalDraft::EmailSend(_) => Err(ExecuteError::Rejected("An email is not a calendar change.".into())),
            ProposalDraft::WebSubmit(_) | ProposalDraft::HeldCall(_) => {
                Err(ExecuteError::Rejected("A form is not a calendar change.".into()))
            }
        }
    }
}

/// How many of the newest messages `inbox` looks through.
const INBOX_SCAN: i64 = 50;

/// A stored message as a search hit (the body cut to a snippet).
fn mail_match(m: crate::store::mail::StoredMessage, attachments: i64) -> MailMatch {
    MailMatch {
        snippet: truncate_chars(&m.body.split_whitespace().collect::<Vec<_>>().join(" "), SNIPPET_CHARS).0,
        message_id: m.id,
        thread_id: m.thread_id,
        from: m.from,
        subject: m.subject,
        sent_at: m.sent_at,
        attachments: u16::try_from(attachments).unwrap_or(u16::MAX),
    }
}

impl Workspace for LocalWorkspace {
    fn connection(&self) -> BoxFuture<'_, Result<Connection>> {
        async move { Ok(Connection { id: LOCAL_CONNECTION_ID.into(), account: self.store.local_account().await? }) }.boxed()
    }

    fn search_mail<'a>(&'a self, query: &'a str) -> BoxFuture<'a, Result<MailSearchResult>> {
        async move {
            let terms: Vec<String> = query.split_whitespace().take(20).map(str::to_owned).collect();
            let limit = i64::try_from(MAX_SEARCH_RESULTS).unwrap_or(20);
            let mut rows = self.store.search_messages(&terms, limit).await?;
            let truncated = rows.len() > MAX_SEARCH_RESULTS;
            rows.truncate(MAX_SEARCH_RESULTS);
            let matches = rows.into_iter().map(|(m, attachments)| mail_match(m, attachments)).collect();
            Ok(MailSearchResult { query: query.to_owned(), matches, truncated })
        }
        .boxed()
    }

    fn inbox(&self) -> BoxFuture<'_, Result<Vec<MailMatch>>> {
        async move {
            let rows = self.store.search_messages(&[], INBOX_SCAN).await?;
            Ok(rows.into_iter().filter(|(m, _)| m.folder == "inbox").map(|(m, attachments)| mail_match(m, attachments)).collect())
        }
        .boxed()
    }

    fn read_thread<'a>(&'a self, thread_id: &'a str) -> BoxFuture<'a, Result<MailThread>> {
        async move {
            let mut all = self.store.thread_messages(thread_id).await?;
            if all.is_empty() {
                return Err(CoreError::NotFound(format!("There is no mail thread {thread_id}. Use search_mail to find the thread id.")));
            }
            let truncated = all.len() > MAX_THREAD_MESSAGES;
            let newest = all.split_off(all.len().saturating_sub(MAX_THREAD_MESSAGES));
            let mut messages = Vec::with_capacity(newest.len());
            for m in newest {
                let attachments = self
                    .store
                    .message_attachments(&m.id)
                    .await?
                    .into_iter()
                    .map(|a| AttachmentInfo { id: a.id, filename: a.filename, mime_type: a.mime_type, size: a.size })
                    .collect();
                let (body, body_truncated) = truncate_chars(&m.body, MAX_BODY_CHARS);
                messages.push(ThreadMessage {
                    id: m.id,
                    from: m.from,
                    to: split_addresses(&m.to),
                    cc: split_addresses(&m.cc),
                    subject: m.subject,
                    body,
                    body_truncated,
                    sent_at: m.sent_at,
                    folder: m.folder,
                    attachments,
                });
            }
            Ok(MailThread { thread_id: thread_id.to_owned(), messages, truncated })
        }
        .boxed()
    }

    fn read_calendar(&self, from: i64, to: i64) -> BoxFuture<'_, Result<CalendarPage>> {
        async move {
            let limit = i64::try_from(MAX_CALENDAR_EVENTS).unwrap_or(20);
            let mut events = self.store.calendar_range(from, to, limit + 1).await?;
            let truncated = events.len() > MAX_CALENDAR_EVENTS;
            events.truncate(MAX_CALENDAR_EVENTS);
            Ok(CalendarPage { events, truncated })
        }
        .boxed()
    }

    fn fetch_attachment<'a>(&'a self, attachment_id: &'a str) -> BoxFuture<'a, Result<(AttachmentInfo, Vec<u8>)>> {
        async move {
            let attachment = self.store.get_attachment(attachment_id).await?.ok_or_else(|| {
                CoreError::NotFound(format!("There is no attachment {attachment_id}. Read the mail thread to see its attachments' ids."))
            })?;
            let bytes = tokio::fs::read(&attachment.path)
                .await
                .map_err(|err| CoreError::NotFound(format!("The attachment {} could not be read ({err}).", attachment.filename)))?;
            let info =
                AttachmentInfo { id: attachment.id, filename: attachment.filename, mime_type: attachment.mime_type, size: attachment.size };
            Ok((info, bytes))
        }
        .boxed()
    }

    fn resolve(&self, draft: ProposalDraft) -> BoxFuture<'_, Result<(Connection, ProposalDraft, Target)>> {
        async move {
            let connection = self.connection().await?;
            let unversioned = |target: String| Target { target, version: "-".into() };
            let (draft, target) = match draft {
                ProposalDraft::EmailSend(mut email) => {
                    // Re-read even when the caller filled it: the card names the stored message.
                    email.reply_to = match &email.in_reply_to {
                        Some(id) => Some(reply_context(&self.store, id, email.thread_id.as_deref()).await?),
                        None => None,
                    };
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
                // The gate resolves a form itself; the mailbox has nothing to say about one.
                ProposalDraft::WebSubmit(_) | ProposalDraft::HeldCall(_) => {
                    return Err(CoreError::InvalidInput("A web form is not sent through the mailbox or the calendar.".into()));
                }
            };
            Ok((connection, draft, target))
        }
        .boxed()
    }

    fn reconcile<'a>(&'a self, proposal: &'a ProposalRow) -> BoxFuture<'a, Result<Reconciliation>> {
        // The local effects commit with their receipts, so an approval here is never left
        // uncertain; this answers from the database all the same, which is the authority.
        async move {
            let found = match &proposal.draft {
                ProposalDraft::EmailSend(_) => {
                    let id = format!("sent-{}", proposal.id);
                    self.store.get_message(&id).await?.map(|_| format!("Found in local sent mail · {id}"))
                }
                ProposalDraft::CalendarCreate(_) => {
                    let id = format!("evt-{}", proposal.id);
                    self.store.get_event(&id).await?.map(|_| format!("Found in the local calendar · {id}"))
                }
                // The version moves on with every change: the reviewed one gone means changed.
                ProposalDraft::CalendarUpdate(draft) | ProposalDraft::CalendarDelete(draft) => {
                    let id = draft.event_id.clone().unwrap_or_default();
                    let version: i64 = proposal.target_version.parse().unwrap_or(-1);
                    match self.store.get_event(&id).await? {
                        Some(event) if event.version == version => None,
                        Some(_) | None => Some(format!("The event {id} is no longer as you reviewed it: the change was made")),
                    }
                }
                ProposalDraft::WebSubmit(_) | ProposalDraft::HeldCall(_) => None,
            };
            Ok(found.map_or(Reconciliation::NotFound, Reconciliation::Happened))
        }
        .boxed()
    }

    fn execute<'a>(
        &'a self,
        proposal: &'a ProposalRow,
        claim: ExecutionClaim<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, std::result::Result<Executed, ExecuteError>> {
        async move {
            match &proposal.draft {
                ProposalDraft::EmailSend(draft) => self.send(proposal, draft, claim, cancel).await,
                ProposalDraft::CalendarCreate(draft) | ProposalDraft::CalendarUpdate(draft) | ProposalDraft::CalendarDelete(draft) => {
                    self.write_event(proposal, draft, claim).await
                }
                ProposalDraft::WebSubmit(_) | ProposalDraft::HeldCall(_) => {
                    Err(ExecuteError::Rejected("A web form is not sent through the mailbox.".into()))
                }
            }
        }
        .boxed()
    }
}

fn split_addresses(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|a| !a.is_empty()).map(str::to_owned).collect()
}
