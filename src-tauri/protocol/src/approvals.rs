//! Proposals: what a prepare tool asks the owner to approve, exactly as the owner will see
//! it, and the one IPC command that decides them.
//!
//! A proposal's `hash` covers its normalized draft, the connection (id and account), the
//! target and the target's version. The UI sends back the hash of what it displayed, so an
//! approval can only ever apply to the draft that was on screen.

use serde::{Deserialize, Serialize};

use crate::error::IpcError;
use crate::ipc::validate_id;

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
}

impl ProposalKind {
    /// Stored spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProposalKind::EmailSend => "email.send",
            ProposalKind::CalendarCreate => "calendar.create",
            ProposalKind::CalendarUpdate => "calendar.update",
            ProposalKind::CalendarDelete => "calendar.delete",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::EmailSend, Self::CalendarCreate, Self::CalendarUpdate, Self::CalendarDelete]
            .into_iter()
            .find(|k| k.as_str() == text)
    }
}

/// Where a proposal is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProposalStatus {
    /// Waiting for the owner.
    AwaitingReview,
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
    /// Every status.
    pub const ALL: [ProposalStatus; 7] = [
        Self::AwaitingReview,
        Self::Executing,
        Self::Succeeded,
        Self::Failed,
        Self::OutcomeUnknown,
        Self::Denied,
        Self::Expired,
    ];

    /// Stored spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::AwaitingReview => "awaiting_review",
            Self::Executing => "executing",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::OutcomeUnknown => "outcome_unknown",
            Self::Denied => "denied",
            Self::Expired => "expired",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
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
    pub file_id: String,
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

/// A normalized calendar event, exactly as it will be written.
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
}

impl ProposalDraft {
    /// The kind.
    pub const fn kind(&self) -> ProposalKind {
        match self {
            Self::EmailSend(_) => ProposalKind::EmailSend,
            Self::CalendarCreate(_) => ProposalKind::CalendarCreate,
            Self::CalendarUpdate(_) => ProposalKind::CalendarUpdate,
            Self::CalendarDelete(_) => ProposalKind::CalendarDelete,
        }
    }
}

/// A proposal as the approval card shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalView {
    /// Proposal id.
    pub id: String,
    /// The task waiting on it, if it came from a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Where it is.
    pub status: ProposalStatus,
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
    pub proposal_id: String,
}

impl ApprovalGetParams {
    /// Checks the id.
    pub fn validate(&self) -> Result<(), IpcError> {
        validate_id("proposalId", &self.proposal_id)
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
    pub proposal_id: String,
    /// The hash of the draft the owner was shown.
    pub hash: String,
    /// Approve or deny.
    pub decision: Decision,
}

impl ApprovalDecideParams {
    /// Checks the id and the hash's shape.
    pub fn validate(&self) -> Result<(), IpcError> {
        validate_id("proposalId", &self.proposal_id)?;
        if self.hash.len() != 64 || !self.hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(IpcError::invalid("hash must be the 64-character sha256 shown with the proposal."));
        }
        Ok(())
    }
}

/// What `prepare_email` and `prepare_event` return (JSON in `TOOL_CALL_RESULT.content`):
/// the card fetches the proposal by id and shows it for review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PrepareResult {
    /// The proposal awaiting review.
    pub proposal_id: String,
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
        });
        let json = serde_json::to_value(&draft).unwrap();
        assert_eq!(json["kind"], "email.send");
        assert_eq!(json["draft"]["to"][0], "a@b.example");
        assert_eq!(serde_json::from_value::<ProposalDraft>(json).unwrap(), draft);
        for s in ProposalStatus::ALL {
            assert_eq!(ProposalStatus::parse(s.as_str()), Some(s));
        }
    }

    #[test]
    fn decide_needs_a_sha256() {
        let ok = ApprovalDecideParams { proposal_id: "p1".into(), hash: "a".repeat(64), decision: Decision::Approve };
        assert!(ok.validate().is_ok());
        assert!(ApprovalDecideParams { hash: "abc".into(), ..ok.clone() }.validate().is_err());
        assert!(ApprovalDecideParams { hash: "z".repeat(64), ..ok }.validate().is_err());
    }
}
