//! Mail as the mail tools return it and the mail card shows it.
//!
//! Message text is untrusted data written by other people; tool results say so to the model.

use serde::{Deserialize, Serialize};

use crate::error::IpcError;
use crate::ids::validate_id;

/// One search hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MailMatch {
    /// Message id.
    pub message_id: String,
    /// Its conversation.
    pub thread_id: String,
    /// Sender.
    pub from: String,
    /// Subject.
    pub subject: String,
    /// Up to 240 characters of the body.
    pub snippet: String,
    /// Unix ms.
    pub sent_at: i64,
    /// How many attachments it carries.
    #[serde(default)]
    pub attachments: u16,
}

/// Result of `search_mail`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MailSearchResult {
    /// The query as run.
    pub query: String,
    /// At most 20 hits, newest first.
    pub matches: Vec<MailMatch>,
    /// More matched than were returned.
    pub truncated: bool,
}

/// An attachment's summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentInfo {
    /// Attachment id (what import_pdf takes).
    pub id: String,
    /// File name.
    pub filename: String,
    /// MIME type.
    pub mime_type: String,
    /// Bytes.
    pub size: i64,
}

/// One message of a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadMessage {
    /// Message id.
    pub id: String,
    /// Sender.
    pub from: String,
    /// Recipients.
    pub to: Vec<String>,
    /// Copy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cc: Vec<String>,
    /// Subject.
    pub subject: String,
    /// Plain text, at most 12,000 characters.
    pub body: String,
    /// The body was cut.
    #[serde(default)]
    pub body_truncated: bool,
    /// Unix ms.
    pub sent_at: i64,
    /// `inbox` or `sent`.
    pub folder: String,
    /// Attachments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<AttachmentInfo>,
}

/// Result of `read_mail_thread` and answer to `mail_thread_get`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MailThread {
    /// The conversation.
    pub thread_id: String,
    /// The last 20 messages, oldest first.
    pub messages: Vec<ThreadMessage>,
    /// Older messages were left out.
    pub truncated: bool,
}

/// `mail_thread_get`: the mail card's thread viewer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MailThreadGetParams {
    /// The conversation.
    pub thread_id: String,
}

impl MailThreadGetParams {
    /// Checks the id.
    pub fn validate(&self) -> Result<(), IpcError> {
        validate_id("threadId", &self.thread_id)
    }
}
