//! Reading the owner's Gmail through its REST API (`gmail/v1`): search (`messages.list` then
//! `messages.get` for each hit) and a thread (`threads.get`), within the same bounds as the
//! local mailbox (20 hits, the newest 20 messages, 12,000 characters of text each).
//!
//! Message text is untrusted: an HTML-only message becomes text with `html2text` (parsed by
//! html5ever; nothing is fetched, no script runs, images are not loaded), and the tools mark all
//! of it as data written by others.

use std::time::Duration;

use base64::Engine;
use hearth_protocol::mail::{AttachmentInfo, MailMatch, MailSearchResult, MailThread, ThreadMessage};
use serde::Deserialize;

use super::oauth::GoogleAuth;
use crate::error::{CoreError, Result};
use crate::secret::ExposeSecret;
use crate::workspace::{MAX_BODY_CHARS, MAX_QUERY_CHARS, MAX_SEARCH_RESULTS, MAX_THREAD_MESSAGES, SNIPPET_CHARS, truncate_chars};

/// Gmail's API.
pub const GMAIL_BASE_URL: &str = "https://gmail.googleapis.com";

/// How deep a message's MIME tree is walked (real mail nests 3–5 levels).
const MAX_PART_DEPTH: usize = 16;

/// One connection's Gmail.
#[derive(Clone)]
pub struct Gmail {
    http: reqwest::Client,
    base_url: String,
    auth: GoogleAuth,
    connection_id: String,
}

impl std::fmt::Debug for Gmail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gmail").field("base_url", &self.base_url).field("connection_id", &self.connection_id).finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MessageList {
    #[serde(default)]
    messages: Vec<MessageRef>,
    #[serde(default)]
    next_page_token: Option<String>,
}

#[derive(Deserialize)]
struct MessageRef {
    id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Message {
    id: String,
    thread_id: String,
    #[serde(default)]
    label_ids: Vec<String>,
    /// Unix ms, as a decimal string.
    #[serde(default)]
    internal_date: String,
    #[serde(default)]
    payload: Part,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Part {
    #[serde(default)]
    part_id: String,
    #[serde(default)]
    mime_type: String,
    #[serde(default)]
    filename: String,
    #[serde(default)]
    headers: Vec<Header>,
    #[serde(default)]
    body: Body,
    #[serde(default)]
    parts: Vec<Part>,
}

#[derive(Deserialize)]
struct Header {
    name: String,
    value: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Body {
    #[serde(default)]
    size: i64,
    /// base64url.
    #[serde(default)]
    data: Option<String>,
    #[serde(default)]
    attachment_id: Option<String>,
}

#[derive(Deserialize)]
struct Thread {
    id: String,
    #[serde(default)]
    messages: Vec<Message>,
}

impl Gmail {
    /// `connection_id`'s Gmail at `base_url` ([`GMAIL_BASE_URL`]; tests give the fixture's).
    pub fn new(auth: GoogleAuth, connection_id: &str, base_url: &str) -> Result<Self> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|err| CoreError::Unavailable(format!("Gmail could not be set up: {err}")))?;
        Ok(Self { http, base_url: base_url.trim_end_matches('/').to_owned(), auth, connection_id: connection_id.to_owned() })
    }

    async fn get<T: serde::de::DeserializeOwned>(&self, path: &str, query: &[(&str, &str)]) -> Result<T> {
        let token = self.auth.access_token(&self.connection_id).await?;
        let url = reqwest::Url::parse_with_params(&format!("{}/gmail/v1/users/me/{path}", self.base_url), query)
            .map_err(|_| CoreError::InvalidInput("That Gmail address does not parse.".into()))?;
        let response = self
            .http
            .get(url)
            .bearer_auth(token.expose_secret())
            .send()
            .await
            .map_err(|err| CoreError::Unavailable(format!("Gmail could not be reached: {}", err.without_url())))?;
        let status = response.status();
        match status.as_u16() {
            200 => {}
            401 | 403 => {
                return Err(CoreError::NeedsSignIn(format!(
                    "Gmail refused Hearth's access ({status}); connect the account again in Settings → Accounts."
                )));
            }
            404 => return Err(CoreError::NotFound("Gmail has no such message or conversation.".into())),
            _ => return Err(CoreError::Unavailable(format!("Gmail answered {status}; try again in a moment."))),
        }
        let bytes = response.bytes().await.map_err(|err| CoreError::Unavailable(format!("Gmail's answer was cut off: {}", err.without_url())))?;
        // serde's message may quote mail: only that it did not parse.
        serde_json::from_slice(&bytes).map_err(|_| CoreError::Unavailable("Gmail answered in a shape Hearth does not know.".into()))
    }

    /// Messages matching `query` (Gmail's own search syntax), newest first, at most 20.
    pub async fn search(&self, query: &str) -> Result<MailSearchResult> {
        let query = query.trim();
        if query.is_empty() || query.chars().count() > MAX_QUERY_CHARS {
            return Err(CoreError::InvalidInput(format!("Search for 1 to {MAX_QUERY_CHARS} characters.")));
        }
        let limit = (MAX_SEARCH_RESULTS + 1).to_string();
        let list: MessageList = self.get("messages", &[("q", query), ("maxResults", &limit)]).await?;
        let truncated = list.messages.len() > MAX_SEARCH_RESULTS || list.next_page_token.is_some();
        let mut matches = Vec::new();
        for hit in list.messages.iter().take(MAX_SEARCH_RESULTS) {
            let message: Message = self.get(&format!("messages/{}", path_segment(&hit.id)?), &[("format", "full")]).await?;
            matches.push(summary(&message));
        }
        Ok(MailSearchResult { query: query.to_owned(), matches, truncated })
    }

    /// The newest 20 messages of a conversation, oldest first.
    pub async fn thread(&self, thread_id: &str) -> Result<MailThread> {
        let thread: Thread = self.get(&format!("threads/{}", path_segment(thread_id)?), &[("format", "full")]).await?;
        let mut messages: Vec<&Message> = thread.messages.iter().collect();
        messages.sort_by_key(|m| sent_at(m));
        let truncated = messages.len() > MAX_THREAD_MESSAGES;
        let newest = messages.split_off(messages.len().saturating_sub(MAX_THREAD_MESSAGES));
        Ok(MailThread { thread_id: thread.id, messages: newest.into_iter().map(thread_message).collect(), truncated })
    }
}

/// An id from outside as one path segment: Gmail's ids are hex and URL-safe; anything else is
/// refused rather than escaped into another path.
fn path_segment(id: &str) -> Result<&str> {
    if !id.is_empty() && id.len() <= 200 && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_')) {
        Ok(id)
    } else {
        Err(CoreError::InvalidInput("That is not a Gmail message or conversation id.".into()))
    }
}

fn header<'m>(part: &'m Part, name: &str) -> &'m str {
    part.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map_or("", |h| h.value.as_str())
}

/// Addresses of an address header, read by `mail-parser` (quoted names with commas and all).
fn addresses(value: &str) -> Vec<String> {
    if value.is_empty() {
        return Vec::new();
    }
    let raw = format!("To: {value}\r\n\r\n");
    let Some(parsed) = mail_parser::MessageParser::default().parse_headers(raw.as_bytes()) else { return Vec::new() };
    parsed
        .to()
        .map(|list| list.iter().filter_map(|a| a.address.as_deref().map(str::to_owned)).collect())
        .unwrap_or_default()
}

fn sent_at(message: &Message) -> i64 {
    message.internal_date.parse().unwrap_or(0)
}

fn folder(message: &Message) -> &'static str {
    if message.label_ids.iter().any(|l| l == "SENT") { "sent" } else { "inbox" }
}

fn decode(data: &str) -> String {
    // Gmail pads sometimes and sometimes not.
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(data.trim_end_matches('=')).unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Every part of the tree, depth-first, to [`MAX_PART_DEPTH`].
fn parts(root: &Part) -> Vec<&Part> {
    let mut out = Vec::new();
    let mut stack = vec![(root, 0usize)];
    while let Some((part, depth)) = stack.pop() {
        out.push(part);
        if depth < MAX_PART_DEPTH {
            stack.extend(part.parts.iter().rev().map(|p| (p, depth + 1)));
        }
    }
    out
}

fn is_attachment(part: &Part) -> bool {
    !part.filename.is_empty() && part.body.attachment_id.is_some()
}

/// The message's text: its first text/plain part, else its first text/html as text.
fn text_of(message: &Message) -> String {
    let all = parts(&message.payload);
    let inline = |mime: &str| all.iter().find(|p| p.mime_type.eq_ignore_ascii_case(mime) && !is_attachment(p)).and_then(|p| p.body.data.as_deref());
    if let Some(plain) = inline("text/plain") {
        return decode(plain);
    }
    if let Some(html) = inline("text/html") {
        let html = decode(html);
        // A wide wrap: the text is for reading, not a terminal.
        return html2text::from_read(html.as_bytes(), 100).unwrap_or_default();
    }
    String::new()
}

fn attachments_of(message: &Message) -> Vec<AttachmentInfo> {
    parts(&message.payload)
        .into_iter()
        .filter(|p| is_attachment(p))
        .map(|p| AttachmentInfo {
            // The part's id, not Gmail's long attachment id: short, and stable for the message.
            id: format!("{}.{}", message.id, p.part_id),
            filename: crate::files::sanitize_file_name(&p.filename),
            mime_type: p.mime_type.clone(),
            size: p.body.size,
        })
        .collect()
}

fn summary(message: &Message) -> MailMatch {
    let text = text_of(message);
    MailMatch {
        message_id: message.id.clone(),
        thread_id: message.thread_id.clone(),
        from: header(&message.payload, "From").to_owned(),
        subject: header(&message.payload, "Subject").to_owned(),
        snippet: truncate_chars(&text.split_whitespace().collect::<Vec<_>>().join(" "), SNIPPET_CHARS).0,
        sent_at: sent_at(message),
        attachments: u16::try_from(attachments_of(message).len()).unwrap_or(u16::MAX),
    }
}

fn thread_message(message: &Message) -> ThreadMessage {
    let (body, body_truncated) = truncate_chars(&text_of(message), MAX_BODY_CHARS);
    ThreadMessage {
        id: message.id.clone(),
        from: header(&message.payload, "From").to_owned(),
        to: addresses(header(&message.payload, "To")),
        cc: addresses(header(&message.payload, "Cc")),
        subject: header(&message.payload, "Subject").to_owned(),
        body,
        body_truncated,
        sent_at: sent_at(message),
        folder: folder(message).to_owned(),
        attachments: attachments_of(message),
    }
}
