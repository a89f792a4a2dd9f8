//! Proposals: what a prepare tool asks the owner to approve, exactly as the owner will see
//! it, and the one IPC command that decides them.
//!
//! A proposal's `hash` covers its normalized draft, the connection (id and account), the
//! target and the target's version. The UI sends back the hash of what it displayed, so an
//! approval can only ever apply to the draft that was on screen.

use serde::{Deserialize, Serialize};

use crate::error::IpcError;
use crate::ids::{FileId, ProposalId, TaskId, ThreadId};

/// What approving a proposal does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ProposalKind {
    /// Send an email.
    #[serde(rename = "email.send")]
    EmailSend,
    /// Create a calendar event.
    #[serde(rename = "calendar.create")]
    CalendarCreate,
    /// Change a calendar event.
    #[serde(rename = "calendar.update")]
    CalendarUpdate,
    /// Delete a calendar event.
    #[serde(rename = "calendar.delete")]
    CalendarDelete,
    /// Send a web form from the agent's browser (a task's submission).
    #[serde(rename = "web.submit")]
    WebSubmit,
    /// Run one tool call the agent asked for after it read content from outside the owner
    /// (the trust policy held it for the owner).
    #[serde(rename = "agent.call")]
    HeldCall,
}

impl ProposalKind {
    /// Stored spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProposalKind::EmailSend => "email.send",
            ProposalKind::CalendarCreate => "calendar.create",
            ProposalKind::CalendarUpdate => "calendar.update",
            ProposalKind::CalendarDelete => "calendar.delete",
            ProposalKind::WebSubmit => "web.submit",
            ProposalKind::HeldCall => "agent.call",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::EmailSend, Self::CalendarCreate, Self::CalendarUpdate, Self::CalendarDelete, Self::WebSubmit, Self::HeldCall]
            .into_iter()
            .find(|k| k.as_str() == text)
    }
}

/// Where a proposal is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ProposalStatus {
    /// Waiting for the owner.
    AwaitingReview,
    /// Approved, and waiting out the owner's undo window before it is carried out
    /// (`leaves_at`): Undo within it performs nothing. Only the owner's own approval of an
    /// email or an event change waits; a window of 0 in Settings turns it off.
    Leaving,
    /// Taken back by the owner within the undo window (or stopped with its task before it
    /// left): nothing was sent or changed.
    Undone,
    /// Approved; being carried out now.
    Executing,
    /// Done; `receipt` says what happened.
    Succeeded,
    /// Refused by the provider before anything happened.
    Failed,
    /// It may or may not have happened; the owner must check. Never retried automatically.
    OutcomeUnknown,
    /// The owner said no.
    Denied,
    /// Not decided within 30 minutes.
    Expired,
}

impl ProposalStatus {
    /// Every variant, in declaration order (derived: strum's `VariantArray`).
    pub const ALL: &'static [Self] = <Self as strum::VariantArray>::VARIANTS;

    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses the stored spelling.
    pub fn parse(text: &str) -> Option<Self> {
        text.parse().ok()
    }
}

/// Who asked for a proposal. The card shows it, so the owner knows whether a draft came from
/// their own chat, a background task, an AG-UI client of Hearth's endpoint, or an external
/// agent — none of which can approve it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ProposalOrigin {
    /// The owner's own chat in the window.
    OwnerChat,
    /// A background task.
    Task,
    /// A client of Hearth's AG-UI endpoint.
    AguiEndpoint,
    /// An external agent Hearth talks to over AG-UI.
    ExternalAgent,
    /// A chat sent from one of the owner's paired devices.
    PairedDevice,
}

impl ProposalOrigin {
    /// Every variant, in declaration order (derived: strum's `VariantArray`).
    pub const ALL: &'static [Self] = <Self as strum::VariantArray>::VARIANTS;

    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses the stored spelling.
    pub fn parse(text: &str) -> Option<Self> {
        text.parse().ok()
    }

    /// How the card names it.
    pub const fn label(self) -> &'static str {
        match self {
            Self::OwnerChat => "your chat",
            Self::Task => "a background task",
            Self::AguiEndpoint => "an app using Hearth's AG-UI endpoint",
            Self::ExternalAgent => "the external agent",
            Self::PairedDevice => "a chat from your paired device",
        }
    }
}

/// The account a proposal acts as.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Connection {
    /// Which connection (`local` for the sample workspace).
    pub id: String,
    /// The account's address.
    pub account: String,
}

/// A file attached to an email draft, as the owner sees it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DraftAttachment {
    /// The file in Files.
    pub file_id: FileId,
    /// Its name.
    pub name: String,
    /// Bytes.
    pub size: i64,
    /// sha256 of the bytes, so a changed file is a changed draft.
    pub sha256: String,
}

/// A normalized email, exactly as it will be sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmailDraft {
    /// Recipients (lower-cased addresses, in the order given, no duplicates).
    pub to: Vec<String>,
    /// Copy.
    #[serde(default)]
    pub cc: Vec<String>,
    /// Blind copy.
    #[serde(default)]
    pub bcc: Vec<String>,
    /// One line.
    pub subject: String,
    /// Plain text.
    pub body: String,
    /// Attached files.
    #[serde(default)]
    pub attachments: Vec<DraftAttachment>,
    /// The conversation it replies in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    /// The message it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_reply_to: Option<String>,
    /// The message it answers as the card names it, read from the mailbox when the draft was
    /// prepared (never taken from the model), so the owner sees which conversation the reply
    /// lands in — and the hash covers it. Set exactly when `in_reply_to` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<ReplyContext>,
}

/// The stored message an email replies to: "Replying to: <subject> — from <sender>".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplyContext {
    /// The message's id (the same as the draft's `in_reply_to`).
    pub message_id: String,
    /// Its subject.
    pub subject: String,
    /// Its sender, as the mailbox holds it.
    pub from: String,
}

/// When an event happens: whole days, or times with a UTC offset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum EventTiming {
    /// `YYYY-MM-DD`, end exclusive.
    #[serde(rename_all = "camelCase")]
    AllDay {
        /// First day.
        start_date: String,
        /// Day after the last.
        end_date: String,
    },
    /// RFC 3339 with offsets, normalized to UTC `Z`.
    #[serde(rename_all = "camelCase")]
    Timed {
        /// Start.
        start: String,
        /// End (after start).
        end: String,
    },
}

/// A normalized calendar event, exactly as it will be written (create, update) or as it is
/// in the calendar now (delete).
///
/// For update and delete the fields are never the model's words: the workspace reads the
/// target event when the proposal is prepared and builds the draft from it (delete: the event
/// as it is; update: the event with the requested changes applied, and `before`), so the card
/// shows the event that will change and the hash binds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventDraft {
    /// Which calendar.
    pub calendar_id: String,
    /// The event changed or deleted (update and delete only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    /// Title.
    pub title: String,
    /// When.
    pub timing: EventTiming,
    /// IANA time zone.
    pub time_zone: String,
    /// Where.
    #[serde(default)]
    pub location: String,
    /// Notes.
    #[serde(default)]
    pub description: String,
    /// Invitees.
    #[serde(default)]
    pub attendees: Vec<String>,
    /// Update only: the event as it was when the proposal was prepared, so the card can show
    /// before → after for each changed field. Approving applies only to that version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<EventSnapshot>,
    /// Update only, and only on the way from the prepare tool to the workspace: the fields
    /// the model asked to change. The workspace applies them to the current event and drops
    /// them, so a stored proposal (and every card) never carries them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<EventChanges>,
}

impl EventDraft {
    /// The event's fields, without the update bookkeeping.
    pub fn snapshot(&self) -> EventSnapshot {
        EventSnapshot {
            calendar_id: self.calendar_id.clone(),
            title: self.title.clone(),
            timing: self.timing.clone(),
            time_zone: self.time_zone.clone(),
            location: self.location.clone(),
            description: self.description.clone(),
            attendees: self.attendees.clone(),
        }
    }
}

/// A calendar event's fields as they are at one moment (an update's `before`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventSnapshot {
    /// Which calendar.
    pub calendar_id: String,
    /// Title.
    pub title: String,
    /// When.
    pub timing: EventTiming,
    /// IANA time zone.
    pub time_zone: String,
    /// Where.
    #[serde(default)]
    pub location: String,
    /// Notes.
    #[serde(default)]
    pub description: String,
    /// Invitees.
    #[serde(default)]
    pub attendees: Vec<String>,
}

/// What an update asks to change; `None` keeps the event's value. Already normalized.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventChanges {
    /// Move it to this calendar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calendar_id: Option<String>,
    /// New title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// New start and end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<EventTiming>,
    /// New time zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// New place (empty clears it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// New notes (empty clears them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// New invitees (the whole list; empty clears it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attendees: Option<Vec<String>>,
}

impl EventChanges {
    /// Whether it changes nothing at all.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// `event` with these changes applied.
    pub fn apply(&self, event: &EventSnapshot) -> EventSnapshot {
        let pick = |change: &Option<String>, now: &String| change.clone().unwrap_or_else(|| now.clone());
        EventSnapshot {
            calendar_id: pick(&self.calendar_id, &event.calendar_id),
            title: pick(&self.title, &event.title),
            timing: self.timing.clone().unwrap_or_else(|| event.timing.clone()),
            time_zone: pick(&self.time_zone, &event.time_zone),
            location: pick(&self.location, &event.location),
            description: pick(&self.description, &event.description),
            attendees: self.attendees.clone().unwrap_or_else(|| event.attendees.clone()),
        }
    }
}

/// How a reviewed submission is set off: the way the task asked to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubmitGesture {
    /// A click on the form's submit button.
    Click,
    /// Enter pressed in one of the form's fields (or on its button).
    PressEnter,
}

/// One field a form sends, as the browser would encode it (`FormData` of the form with its
/// submitter), in the form's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FormField {
    /// The name the site receives.
    pub name: String,
    /// The field's label on the page, when it has one.
    #[serde(default)]
    pub label: String,
    /// The value sent. A password's is never stored or shown (`hidden`); the proposal's
    /// target version still binds it.
    pub value: String,
    /// The value is a password: shown as hidden, bound by the version only.
    #[serde(default)]
    pub hidden: bool,
    /// A file chosen for upload (`value` is its name).
    #[serde(default)]
    pub file: bool,
}

/// A form the agent's browser would send, exactly as the owner reviews it: the page it is on,
/// the button or field that sends it, where it goes, and every field it carries. Approving
/// sends it only while the open page still lists the same elements and the form still holds
/// these values (its `formVersion`); anything changed needs a new review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebSubmitDraft {
    /// The browser profile the page is open in (its logins are what the site sees).
    pub profile: String,
    /// The page's address.
    pub page_url: String,
    /// Its title.
    pub page_title: String,
    /// The element (`<state>:<index>` from page_elements) the submission goes through.
    #[serde(rename = "ref")]
    pub reference: String,
    /// Click it, or press Enter in it.
    pub gesture: SubmitGesture,
    /// The element as listed: its role and name (`button "Pay"`).
    pub element: String,
    /// `GET` or `POST`.
    pub method: String,
    /// Where the form sends its fields (an absolute http(s) address).
    pub destination: String,
    /// What it sends.
    pub fields: Vec<FormField>,
    /// sha256 over the page state, the gesture, method, destination and every field's name
    /// and value (passwords included): the version an approval needs to find.
    pub form_version: String,
}

/// What will happen, by kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "draft")]
pub enum ProposalDraft {
    /// Send this email.
    #[serde(rename = "email.send")]
    EmailSend(EmailDraft),
    /// Create this event.
    #[serde(rename = "calendar.create")]
    CalendarCreate(EventDraft),
    /// Change an event to this.
    #[serde(rename = "calendar.update")]
    CalendarUpdate(EventDraft),
    /// Delete this event.
    #[serde(rename = "calendar.delete")]
    CalendarDelete(EventDraft),
    /// Send this form from the agent's browser.
    #[serde(rename = "web.submit")]
    WebSubmit(WebSubmitDraft),
    /// Run this tool call, which the agent asked for after reading outside content.
    #[serde(rename = "agent.call")]
    HeldCall(HeldCallDraft),
}

/// A tool call the trust policy held for the owner: the exact call, where it would run, and
/// the outside content that was in the agent's context when it asked. Approving it runs
/// exactly this call once, under the key it was asked under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HeldCallDraft {
    /// The tool.
    pub tool: HeldTool,
    /// Its arguments, exactly as they will run (a JSON object).
    pub arguments: serde_json::Value,
    /// What the call would do, in the owner's words (`Make a schedule "Inbox digest"…`).
    pub summary: String,
    /// Why it waits for the owner.
    pub reason: String,
    /// The outside content in the agent's context when it asked, oldest first.
    pub sources: Vec<crate::provenance::OutsideSource>,
    /// The journal scope the call runs in (`thread:<id>`, `task:<id>`).
    pub op_scope: String,
    /// The operation id within that scope: the same call asked again finds this proposal.
    pub op_id: String,
    /// The conversation it came from, when it came from one (its browser profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<ThreadId>,
}

/// The tool a held call runs: one of Hearth's own, or a tool of one of the owner's MCP
/// servers. Hearth's is stored as its wire name (as held calls always were), an MCP tool as
/// `{server, tool}`, so drafts stored before MCP read back unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HeldTool {
    /// One of Hearth's tools.
    Hearth(crate::ToolName),
    /// A tool of an MCP server.
    Mcp(crate::mcp::McpToolRef),
}

impl HeldTool {
    /// The name its journal rows and its card's version carry: Hearth's wire name, or
    /// `mcp__<server>__<tool>` (even for a tool whose name is not offered to a model).
    pub fn journal_name(&self) -> String {
        match self {
            Self::Hearth(tool) => tool.as_str().to_owned(),
            Self::Mcp(tool) => format!("{}{}__{}", crate::mcp::MCP_PREFIX, tool.server, tool.tool),
        }
    }
}

impl std::fmt::Display for HeldTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Hearth(tool) => write!(f, "{tool}"),
            Self::Mcp(tool) => write!(f, "{tool}"),
        }
    }
}

impl ProposalDraft {
    /// The kind.
    pub const fn kind(&self) -> ProposalKind {
        match self {
            Self::EmailSend(_) => ProposalKind::EmailSend,
            Self::CalendarCreate(_) => ProposalKind::CalendarCreate,
            Self::CalendarUpdate(_) => ProposalKind::CalendarUpdate,
            Self::CalendarDelete(_) => ProposalKind::CalendarDelete,
            Self::WebSubmit(_) => ProposalKind::WebSubmit,
            Self::HeldCall(_) => ProposalKind::HeldCall,
        }
    }
}

/// A proposal as the approval card shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalView {
    /// Proposal id.
    pub id: ProposalId,
    /// The task waiting on it, if it came from a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<TaskId>,
    /// Where it is.
    pub status: ProposalStatus,
    /// Who asked for it.
    pub origin: ProposalOrigin,
    /// What will happen.
    #[serde(flatten)]
    pub draft: ProposalDraft,
    /// The account it acts as.
    pub connection: Connection,
    /// The hash to send back with a decision (sha256 hex).
    pub hash: String,
    /// Unix ms.
    pub created_at: i64,
    /// After this (Unix ms) it can no longer be approved.
    pub expires_at: i64,
    /// What happened, once it did ("Saved to local sent mail · …").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<String>,
    /// Why it failed or is uncertain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The content from outside the owner that was in the agent's context when it asked
    /// (empty: only the owner's own words).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<crate::provenance::OutsideSource>,
    /// The standing order that approved it in the owner's place, when one did (its receipt
    /// cites it; the owner never saw a card for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mandate_id: Option<String>,
    /// While `leaving`: when (Unix ms) it is carried out unless the owner presses Undo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaves_at: Option<i64>,
    /// Once it failed or its outcome is unknown: the failure id the card shows, which opens
    /// its timeline in Activity → Failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_id: Option<crate::ids::FailureId>,
}

/// Answer to `approval_list`: awaiting review first, then the most recent others.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalListResponse {
    /// The proposals.
    pub proposals: Vec<ProposalView>,
}

/// `approval_get`: one proposal (the approval card in chat and Activity).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalGetParams {
    /// The proposal.
    pub proposal_id: ProposalId,
}

impl ApprovalGetParams {
    /// Nothing left to check: the proposal id checked itself when it was parsed. Kept so
    /// every command reads alike (parse, validate, call the core).
    pub fn validate(&self) -> Result<(), IpcError> {
        Ok(())
    }
}

/// The owner's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Do it.
    Approve,
    /// Don't.
    Deny,
}

/// `approval_decide`: only the app window can call it; no tool, model or harness can.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalDecideParams {
    /// The proposal.
    pub proposal_id: ProposalId,
    /// The hash of the draft the owner was shown.
    pub hash: String,
    /// Approve or deny.
    pub decision: Decision,
}

impl ApprovalDecideParams {
    /// Checks the hash's shape (the proposal id checked itself when it was parsed).
    pub fn validate(&self) -> Result<(), IpcError> {
        check_hash(&self.hash)
    }
}

/// What the owner asks of an approved action that is waiting out its undo window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeavingAction {
    /// Take it back: nothing is sent or changed, and its task hears it was undone.
    Undo,
    /// Carry it out now rather than at the end of the window.
    SendNow,
}

/// `approval_leaving`: Undo or Send now on an approved action in its undo window. Only the
/// app window (or a paired device that may decide approvals) calls it, as `approval_decide`.
/// No hash: it binds to the approval already given, and neither action can change what is
/// carried out — Undo only prevents it, Send now only carries out what the owner approved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalLeavingParams {
    /// The proposal.
    pub proposal_id: ProposalId,
    /// Undo, or send now.
    pub action: LeavingAction,
}

impl ApprovalLeavingParams {
    /// Nothing left to check: the proposal id checked itself when it was parsed.
    pub fn validate(&self) -> Result<(), IpcError> {
        Ok(())
    }
}

/// What the owner asks of an approved action whose outcome is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recheck {
    /// Look where the provider keeps it (Sent, the calendar): found, it becomes `succeeded`;
    /// not found, it stays `outcome_unknown` with a note saying so. Never acts.
    Check,
    /// Look first, exactly as `Check`; only when it is not found, carry the approved action out
    /// again — the same message (the same Message-ID), the same event id, the same reviewed
    /// version. Not offered for a web form (only the site knows whether it went).
    Retry,
}

/// `approval_recheck`: only the app window can call it, as `approval_decide`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRecheckParams {
    /// The proposal.
    pub proposal_id: ProposalId,
    /// The hash of the draft the owner was shown.
    pub hash: String,
    /// Check, or check and retry.
    pub action: Recheck,
}

impl ApprovalRecheckParams {
    /// Checks the hash's shape (the proposal id checked itself when it was parsed).
    pub fn validate(&self) -> Result<(), IpcError> {
        check_hash(&self.hash)
    }
}

/// The hash a decision sends back is the 64-character sha256 hex the card showed.
fn check_hash(hash: &str) -> Result<(), IpcError> {
    if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(IpcError::invalid("hash must be the 64-character sha256 shown with the proposal."));
    }
    Ok(())
}

/// What `prepare_email`, `prepare_event` and `prepare_form_submission` return (JSON in `TOOL_CALL_RESULT.content`):
/// the card fetches the proposal by id and shows it for review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PrepareResult {
    /// The proposal awaiting review.
    pub proposal_id: ProposalId,
    /// What it does.
    pub kind: ProposalKind,
    /// Its status when the call returned.
    pub status: ProposalStatus,
    /// For the model: nothing was sent; the owner reviews it in the app.
    pub note: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn draft_is_tagged_by_kind() {
        let draft = ProposalDraft::EmailSend(EmailDraft {
            to: vec!["a@b.example".into()],
            cc: vec![],
            bcc: vec![],
            subject: "Hi".into(),
            body: "Body".into(),
            attachments: vec![],
            thread_id: None,
            in_reply_to: None,
            reply_to: None,
        });
        let json = serde_json::to_value(&draft).unwrap();
        assert_eq!(json["kind"], "email.send");
        assert_eq!(json["draft"]["to"][0], "a@b.example");
        assert!(json["draft"].get("replyTo").is_none(), "a new email names no message");
        assert_eq!(serde_json::from_value::<ProposalDraft>(json).unwrap(), draft);
        for &s in ProposalStatus::ALL {
            assert_eq!(ProposalStatus::parse(s.as_str()), Some(s));
        }
        for &o in ProposalOrigin::ALL {
            assert_eq!(ProposalOrigin::parse(o.as_str()), Some(o));
        }
    }

    #[test]
    fn a_reply_names_the_message_it_answers_in_camel_case() {
        let draft = EmailDraft {
            to: vec!["a@b.example".into()],
            cc: vec![],
            bcc: vec![],
            subject: "Re: Visit".into(),
            body: "Yes".into(),
            attachments: vec![],
            thread_id: Some("thr-1".into()),
            in_reply_to: Some("msg-1".into()),
            reply_to: Some(ReplyContext { message_id: "msg-1".into(), subject: "Visit".into(), from: "Ada <a@b.example>".into() }),
        };
        let json = serde_json::to_value(&draft).unwrap();
        assert_eq!(json["inReplyTo"], "msg-1");
        assert_eq!(json["replyTo"], serde_json::json!({ "messageId": "msg-1", "subject": "Visit", "from": "Ada <a@b.example>" }));
        assert_eq!(serde_json::from_value::<EmailDraft>(json).unwrap(), draft);
    }

    fn event() -> EventSnapshot {
        EventSnapshot {
            calendar_id: "primary".into(),
            title: "Dentist".into(),
            timing: EventTiming::Timed { start: "2026-12-01T15:00:00Z".into(), end: "2026-12-01T15:45:00Z".into() },
            time_zone: "Europe/Berlin".into(),
            location: "Bright Smile".into(),
            description: String::new(),
            attendees: vec![],
        }
    }

    #[test]
    fn changes_apply_field_by_field_and_keep_the_rest() {
        let now = event();
        assert!(EventChanges::default().is_empty());
        assert_eq!(EventChanges::default().apply(&now), now, "no change keeps every field");
        let moved = EventChanges {
            timing: Some(EventTiming::Timed { start: "2026-12-02T15:00:00Z".into(), end: "2026-12-02T16:00:00Z".into() }),
            location: Some(String::new()),
            ..EventChanges::default()
        };
        assert!(!moved.is_empty());
        let after = moved.apply(&now);
        assert_eq!(after.timing, EventTiming::Timed { start: "2026-12-02T15:00:00Z".into(), end: "2026-12-02T16:00:00Z".into() });
        assert_eq!(after.location, "", "an empty location clears it");
        assert_eq!((after.title.as_str(), after.time_zone.as_str()), ("Dentist", "Europe/Berlin"));
    }

    #[test]
    fn an_update_carries_its_before_and_never_its_request_once_resolved() {
        let now = event();
        let draft = EventDraft {
            calendar_id: now.calendar_id.clone(),
            event_id: Some("evt-dentist".into()),
            title: "Dentist (moved)".into(),
            timing: now.timing.clone(),
            time_zone: now.time_zone.clone(),
            location: now.location.clone(),
            description: String::new(),
            attendees: vec![],
            before: Some(now.clone()),
            changes: None,
        };
        let json = serde_json::to_value(ProposalDraft::CalendarUpdate(draft.clone())).unwrap();
        assert_eq!(json["kind"], "calendar.update");
        assert_eq!(json["draft"]["before"]["title"], "Dentist");
        assert_eq!(json["draft"]["before"]["timeZone"], "Europe/Berlin");
        assert!(json["draft"].get("changes").is_none(), "a resolved draft carries no request");
        assert_eq!(serde_json::from_value::<ProposalDraft>(json).unwrap(), ProposalDraft::CalendarUpdate(draft.clone()));
        assert_eq!(draft.snapshot(), EventSnapshot { title: "Dentist (moved)".into(), ..now });
    }

    #[test]
    fn a_web_form_is_tagged_and_names_its_element_ref_and_fields() {
        let draft = ProposalDraft::WebSubmit(WebSubmitDraft {
            profile: "task-t1".into(),
            page_url: "https://shop.example/checkout".into(),
            page_title: "Checkout".into(),
            reference: "0123456789ab:3".into(),
            gesture: SubmitGesture::PressEnter,
            element: "textbox \"Name\"".into(),
            method: "POST".into(),
            destination: "https://shop.example/order".into(),
            fields: vec![FormField { name: "pin".into(), label: "PIN".into(), value: String::new(), hidden: true, file: false }],
            form_version: "b".repeat(64),
        });
        let json = serde_json::to_value(&draft).unwrap();
        assert_eq!(json["kind"], "web.submit");
        assert_eq!(json["draft"]["ref"], "0123456789ab:3");
        assert_eq!(json["draft"]["gesture"], "press_enter");
        assert_eq!(json["draft"]["fields"][0]["hidden"], true);
        assert_eq!(serde_json::from_value::<ProposalDraft>(json).unwrap(), draft);
        assert_eq!(draft.kind(), ProposalKind::WebSubmit);
        assert_eq!(ProposalKind::parse("web.submit"), Some(ProposalKind::WebSubmit));
    }

    #[test]
    fn decide_needs_a_sha256() {
        let ok = ApprovalDecideParams { proposal_id: ProposalId::parse("p1").unwrap(), hash: "a".repeat(64), decision: Decision::Approve };
        assert!(ok.validate().is_ok());
        assert!(ApprovalDecideParams { hash: "abc".into(), ..ok.clone() }.validate().is_err());
        assert!(ApprovalDecideParams { hash: "z".repeat(64), ..ok }.validate().is_err());
    }
}
